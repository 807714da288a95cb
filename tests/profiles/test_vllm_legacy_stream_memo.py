"""The 2025 vLLM chat stream (``chat_legacy_stream``) encodes a completion's deltas once per request
shape (issue 9, eighth session: a 10,000-token answer's deltas were joined and encoded again on
every request, ~24 ms each on the event loop with every other client waiting).

Structural, not timed: the second identical request must not build the pieces again, and its frames
must be the first's with the second request's ids; ``continuous_usage_stats`` (usage in every
chunk) joins its running usage to the same pieces. Byte identity with the former code was checked over every
shipped scenario and request shape (the session's byte-compare harness, 0 of 11,816 differ).
"""

from __future__ import annotations

import json

import pytest

import mockoss.profiles.vllm.chat_legacy_stream as legacy
from mockoss.harmony import Completion
from mockoss.server.core import MockServer

LONG = " ".join(["word"] * 3000)
TEXT = (
    "<|channel|>analysis<|message|>Plan the call.<|end|><|start|>assistant to=functions.get_weather"
    '<|channel|>commentary <|constrain|>json<|message|>{"city": "Paris"}<|call|>'
)


def _server(tmp_path, text: str, profile: str) -> MockServer:
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps({"version": 1, "steps": [{"completion": {"raw": text}}]}))
    return MockServer(scenario=str(path), profile=profile)


@pytest.mark.parametrize("profile", ["vllm-2025", "vllm-0.10.1"])
@pytest.mark.parametrize(
    "text", [f"<|channel|>final<|message|>{LONG}<|return|>", TEXT], ids=["long answer", "tool call"]
)
def test_a_repeated_stream_reuses_its_encoded_deltas(tmp_path, monkeypatch, profile, text):
    calls = []
    real = legacy._pieces
    monkeypatch.setattr(legacy, "_pieces", lambda *a: calls.append(1) or real(*a))
    Completion.from_text(text)._memo.clear()  # the content-keyed completion may be shared with other tests
    body = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    body["tools"] = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    raw = json.dumps(body).encode()
    first = _server(tmp_path, text, profile).respond("chat", raw, {})[0]
    server = _server(tmp_path, text, profile)
    server.respond("chat", raw, {})
    second = server.respond("chat", raw, {})[0]
    assert len(calls) == 1
    assert first.status == second.status == 200 and len(first.frames) == len(second.frames) > 3
    # Same frames but for the request's ids (another request index, so other ids).
    strip = lambda frames: [json.loads(f[6:]) | {"id": None} if f.startswith(b"data: {") else f for f in frames]
    first_chunks, second_chunks = strip(first.frames), strip(second.frames)
    for a, b in zip(first_chunks, second_chunks):
        if isinstance(a, dict):
            for choice in a["choices"] + b["choices"]:
                for call in choice["delta"].get("tool_calls") or []:
                    call.pop("id", None)
    assert first_chunks == second_chunks


def test_continuous_usage_joins_running_usage_to_the_same_pieces(tmp_path, monkeypatch):
    """``continuous_usage_stats`` frames are the memoised pieces with each chunk's running usage
    joined in (the one selection of which tokens send a chunk, :func:`legacy._pieces`)."""
    calls = []
    real = legacy._pieces
    monkeypatch.setattr(legacy, "_pieces", lambda *a: calls.append(1) or real(*a))
    text = f"<|channel|>final<|message|>{LONG[:200]}<|return|>"
    Completion.from_text(text)._memo.clear()
    body = {
        "model": "openai/gpt-oss-20b",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True},
    }
    server = _server(tmp_path, text, "vllm-2025")
    replies = [server.respond("chat", json.dumps(body).encode(), {})[0] for _ in range(2)]
    assert len(calls) == 1
    for reply in replies:
        chunks = [json.loads(f[6:]) for f in reply.frames if f.startswith(b"data: {")]
        done = [c["usage"]["completion_tokens"] for c in chunks if c["choices"]]
        assert done[0] == 0 and done == sorted(set(done)) and len(done) > 30  # running usage: one more token per chunk
        assert chunks[-1]["usage"]["completion_tokens"] == done[-1]  # the usage chunk counts what the last chunk did
