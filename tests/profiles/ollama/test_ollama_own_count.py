"""Ollama's /v1 prompt count is the server core's ctx.prompt_tokens (issue 9: cost what is new).

Since 36a4a4f Ollama's OpenAI layer reports its own prompt count (``profiles/ollama/prompt.py
openai_prompt_tokens``, ollama/ollama's template rendered and encoded), which the profile's
surface put in place of the Harmony count the server core had made for every request. The core
now asks the profile (``own_prompt_tokens``, :mod:`mockoss.server.profile_hooks`): a short /v1
request has no Harmony prompt counted, and its prompt is encoded once, not once per caller.
"""

from __future__ import annotations

import json

import pytest

from mockoss.profiles.ollama import prompt
from mockoss.server import profile_hooks
from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"
BODIES = {
    "chat": {"model": MODEL, "messages": [{"role": "user", "content": "Count me once, please."}], "stream": False},
    "responses": {"model": MODEL, "input": "Count me once, please.", "stream": False},
}


@pytest.mark.parametrize("endpoint", ["chat", "responses"])
def test_a_v1_request_is_counted_by_ollama_alone_and_once(endpoint, monkeypatch):
    harmony, encoded = [], []
    real_count, real_encode = profile_hooks.prompt_tokens, prompt._encode
    monkeypatch.setattr(profile_hooks, "prompt_tokens", lambda *args: harmony.append(args[0]) or real_count(*args))
    monkeypatch.setattr(prompt, "_encode", lambda text: encoded.append(text) or real_encode(text))
    server = MockServer("clean-answer", profile="ollama")
    server.reset()
    body = {**BODIES[endpoint], "seed_text": endpoint}  # a body this process has not counted
    reply = server.respond(endpoint, json.dumps(body).encode(), {})[0]
    usage = json.loads(reply.body)["usage"]
    assert usage.get("prompt_tokens", usage.get("input_tokens")) == len(real_encode(encoded[0]))
    assert harmony == []
    assert len(encoded) == 1


def test_the_native_routes_still_count_the_harmony_prompt(monkeypatch):
    harmony = []
    real_count = profile_hooks.prompt_tokens
    monkeypatch.setattr(profile_hooks, "prompt_tokens", lambda *args: harmony.append(args[0]) or real_count(*args))
    server = MockServer("clean-answer", profile="ollama")
    body = {"model": MODEL, "messages": [{"role": "user", "content": "native"}], "stream": False}
    assert server.respond("ollama.chat", json.dumps(body).encode(), {})[0].status == 200
    assert harmony == ["ollama.chat"]
