"""A heavy request answered off the event loop runs with the garbage collector paused.

Reproducer (issue 9, eighth session, ``bench_isolation.py`` case ``tools100k``): while a 14 MB body
of 100,000 declared tools was validated, its 1.5 million parsed objects were walked by full
collections the validation's allocations triggered, three passes of 0.24-0.40 s each holding the
interpreter: another client waited up to 516 ms. Paused (``mockoss.collector.COLLECTOR``), the
longest stall left is the body's JSON parse (~0.1 s, in process). Structural checks, not timed.
"""

from __future__ import annotations

import gc

import pytest

from mockoss.server import offload
from mockoss.server.core import MockServer


def test_the_collector_is_paused_while_a_heavy_request_is_answered_and_back_after(monkeypatch):
    server = MockServer(scenario="clean-answer")
    before = gc.get_threshold()
    assert before[0] != 0  # else a pause left by an earlier test would pass for this one
    seen = []
    real = server.respond
    monkeypatch.setattr(server, "respond", lambda *a, **k: seen.append(gc.get_threshold()) or real(*a, **k))
    reply, _ = offload._respond_counting(server, "chat", b'{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"hi"}]}', {})
    assert reply.status == 200
    assert seen == [(0, *before[1:])]  # no automatic collection inside
    assert gc.get_threshold() == before


def test_the_collector_is_back_when_the_answer_raises(monkeypatch):
    server = MockServer(scenario="clean-answer")
    before = gc.get_threshold()

    def broken(*_args, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(server, "respond", broken)
    with pytest.raises(RuntimeError):
        offload._respond_counting(server, "chat", b"{}", {})
    assert gc.get_threshold() == before
