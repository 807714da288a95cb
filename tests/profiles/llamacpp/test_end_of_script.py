"""A script without an end token on the llama-server profiles: the scripted engine then emits
``<|endoftext|>`` (an end-of-generation token for llama-server: llama.cpp b9553
``src/llama-vocab.cpp:2750-2856``, read at Telosnex/fllama@1d28604d), so the answer has one more
generated token, and a limit equal to the script's length cuts it (``length``). The ``llamacpp``
profile counted the script alone while ``ollama`` (the same llama-server underneath) counted the
end token: the seventeenth session's review. Shared: :mod:`mockoss.profiles.llama_server`.
"""

from __future__ import annotations

import json

import pytest

from mockoss.server.core import MockServer

SCRIPT_TOKENS = 20  # answer-cut-inside-header: 20 tokens, no <|return|>, <|call|> or <|endoftext|>


def _chat(profile: str, model: str, max_tokens: int | None) -> tuple[int, str]:
    server = MockServer(scenario="answer-cut-inside-header", profile=profile)
    body: dict = {"model": model, "messages": [{"role": "user", "content": "x"}]}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    reply = json.loads(server.handle("chat", json.dumps(body).encode(), {"content-type": "application/json"}).body)
    return reply["usage"]["completion_tokens"], reply["choices"][0]["finish_reason"]


@pytest.mark.parametrize(
    ("profile", "model"), [("llamacpp", "gpt-oss"), ("llamacpp@b9553", "gpt-oss"), ("ollama", "gpt-oss:20b")]
)
def test_the_engine_end_token_is_counted_alike_on_llama_server_profiles(profile: str, model: str) -> None:
    assert _chat(profile, model, None) == (SCRIPT_TOKENS + 1, "stop")
    assert _chat(profile, model, SCRIPT_TOKENS) == (SCRIPT_TOKENS, "length")
    assert _chat(profile, model, SCRIPT_TOKENS + 1) == (SCRIPT_TOKENS + 1, "stop")
