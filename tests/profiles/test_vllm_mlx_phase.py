"""vllm-mlx's gpt_oss reasoning phases, kept up to date delta by delta (issue 9).

``GptOssReasoningParser.extract_reasoning_streaming`` (waybarrios/vllm-mlx@v0.6.0) scans the whole
previous and current text for headers on every delta; mockoss did the same, so a stream's first
build was quadratic in its length (10,000 tokens: ~0.25 s). :class:`PhaseTracker` reads only each
delta and must give the very phases of the full scan (``parsers._phase``) for any text and any
cut into deltas, partial special tokens included.
"""

from __future__ import annotations

import json
import random

from mockoss.harmony.completion import clear_completion_cache
from mockoss.profiles.vllm_mlx import parsers
from mockoss.profiles.vllm_mlx.parsers import _GPT_OSS_HEADER, _STRUCTURAL, _phase
from mockoss.profiles.vllm_mlx.phase import PhaseTracker
from mockoss.server.core import MockServer

PIECES = [
    "<|channel|>", "analysis", "final", "commentary", "<|message|>", "<|constrain|>", "json", "<|end|>", "<|start|>", "assistant",
    "<|return|>", "<|call|>", "<", "|", "x", " to=functions.f", "hello ", "<|mess", "age|>", "<|chan", "nel|>", "fin", "al", "<|con", "strain|>",
]
TEXT = (
    "<|channel|>analysis<|message|>think a bit<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json"
    '<|message|>{"a":1}<|call|><|start|>assistant<|channel|>final <|constrain|>x<|message|>answer<|return|>'
)


def test_phases_equal_the_full_scan_for_any_cut():
    rng = random.Random(9)
    for trial in range(3000):
        tracker = PhaseTracker(_GPT_OSS_HEADER, _STRUCTURAL)
        source = TEXT if trial % 2 else "".join(rng.choice(PIECES) for _ in range(30))
        text, i = "", 0
        while i < len(source):
            n = rng.randint(0, 6)
            delta = source[i : i + n]
            i += n
            previous, text = text, text + delta
            assert tracker.phases(previous, text, delta) == (_phase(previous), _phase(text)), (previous, delta)


def test_a_text_that_does_not_extend_the_last_is_read_whole():
    tracker = PhaseTracker(_GPT_OSS_HEADER, _STRUCTURAL)
    assert tracker.phases("", "<|channel|>final<|message|>a", "<|channel|>final<|message|>a") == ("init", "final")
    other = "<|channel|>analysis<|message|>b"
    assert tracker.phases(other, other + "<|end|>", "<|end|>") == ("analysis", "transition")


def test_a_stream_does_not_scan_the_whole_text_per_delta(tmp_path, monkeypatch):
    """The streamed chat's reasoning parser no longer calls the full scan (twice per delta)."""
    monkeypatch.setattr(parsers, "_phase", lambda text: (_ for _ in ()).throw(AssertionError("full scan")))
    path = tmp_path / "s.json"
    messages = [{"channel": "analysis", "content": "Think " * 50}, {"channel": "final", "content": "Answer " * 50}]
    path.write_text(json.dumps({"version": 1, "steps": [{"completion": {"messages": messages}}]}))
    clear_completion_cache()
    server = MockServer(str(path), profile="vllm-mlx")
    body = {"model": server.info.served_model_names[0], "messages": [{"role": "user", "content": "hi"}], "stream": True}
    reply = server.respond("chat", json.dumps(body).encode(), {})[0]
    assert reply.status == 200 and any(b'"reasoning_content":"Think' in frame for frame in reply.frames)
