"""Ollama's own /v1 prompt counts live in the whole-body count cache, which ``MockServer.reset`` empties.

Commit 36a4a4f kept them in a 16 MB cache of their own (``profiles/ollama/prompt.py``) because
``endpoints.body_count`` would have made an import circle, and nothing cleared it: a test resetting
the server between cases still got the counts of the case before (mockoss issue 9, item 3: caches
bounded in bytes, cleared by reset). The cache now lives in :mod:`mockoss.body_counts`, below
:mod:`mockoss.endpoints`, which both import (``tests/test_import_layers.py``).
"""

from __future__ import annotations

import json

import pytest

from mockoss import body_counts
from mockoss.profiles.ollama import prompt
from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"
BODIES = {
    "chat": {"model": MODEL, "messages": [{"role": "user", "content": "Weather in Oslo, reset?"}], "stream": False},
    "responses": {"model": MODEL, "input": "Weather in Oslo, reset?", "stream": False},
}


@pytest.fixture
def encodings(monkeypatch):
    """How many prompts Ollama's count encoded."""
    calls = []
    original = prompt._encode

    def counting(text):
        calls.append(text)
        return original(text)

    monkeypatch.setattr(prompt, "_encode", counting)
    return calls


@pytest.mark.parametrize("endpoint", ["chat", "responses"])
def test_reset_forgets_the_openai_layer_s_counts(endpoint, encodings):
    server = MockServer("clean-answer", profile="ollama")
    raw = json.dumps(BODIES[endpoint]).encode()
    counts = [server.respond(endpoint, raw, {})[0] for _ in range(3)]
    assert len(encodings) == 2  # kept from the body's second sending, found on its third
    kind = prompt._KINDS[endpoint]
    usage = json.loads(counts[2].body)["usage"]
    assert body_counts.COUNTS.get((kind, raw)) == usage.get("prompt_tokens", usage.get("input_tokens"))
    encodings.clear()
    server.reset()
    assert body_counts.COUNTS.get((kind, raw)) is None
    again = server.respond(endpoint, raw, {})[0]
    assert len(encodings) == 1  # counted afresh
    assert again.body == counts[0].body  # the same count, the same reply


def test_the_kinds_are_not_endpoint_names():
    """``endpoints.prompt_tokens`` keys mockoss's own count of an endpoint by its name in the
    same cache: Ollama's count of the same bytes must not answer for it (nor the reverse)."""
    from mockoss.endpoints import ENDPOINTS

    assert not set(prompt._KINDS.values()) & set(ENDPOINTS)
