"""Ids drawn in runs (issue 9: a vllm-mlx completion stream draws a new id per chunk, 10,682 for a
10,000-token answer): the same ids, in the same order, as drawn one by one."""

from __future__ import annotations

import json

import pytest

from mockoss.profiles.base import IdSource
from mockoss.profiles.replay import IdRecorder
from mockoss.profiles.vllm_mlx import completions
from mockoss.server.core import MockServer
from mockoss.steps import final, script


@pytest.mark.parametrize("seed", [0, 7, "seed"])
def test_a_run_of_draws_is_the_draws_one_by_one(seed):
    one, run = IdSource(seed, 12345), IdSource(seed, 12345)
    expected = [one.next16("x"), *[one.next() for _ in range(300)], one.digits(6), one.next()]
    got = [run.next16("x"), *run.hex_run(300), run.digits(6), *run.hex_run(1)]
    assert got == expected
    assert run.hex_run(0) == [] and run.next() == one.next()


def test_the_completion_stream_replay_draws_chunk_ids_in_runs(monkeypatch):
    recorder = IdRecorder()
    markers = [recorder.call(completions._chunk_id) for _ in range(5)] + [recorder.value("model"), recorder.next(), recorder.call(completions._chunk_id)]
    assert len(markers) == 8
    calls, values = recorder.frozen(), {"model": b'"m"'}
    runs = []
    original = IdSource.hex_run
    monkeypatch.setattr(IdSource, "hex_run", lambda self, count: runs.append(count) or original(self, count))
    assert completions._replayed(calls, IdSource(3, 9), values) == IdRecorder.replay(calls, IdSource(3, 9), values)
    assert runs == [5, 1]  # two runs, not six draws


def test_a_streamed_vllm_mlx_completion_keeps_its_ids():
    server = MockServer(script(final("one two three four five six seven")), profile="vllm-mlx")
    raw = json.dumps({"model": server.served_model_names[0], "prompt": "hi", "stream": True}).encode()
    first = server.handle("completions", raw, {})  # built, then memoised and replayed
    second = server.handle("completions", raw, {})
    ids = [json.loads(f[6:])["id"] for f in (first.frames or ()) if f.startswith(b"data: {")]
    again = [json.loads(f[6:])["id"] for f in (second.frames or ()) if f.startswith(b"data: {")]
    assert len(ids) > 3 and len(set(ids)) == len(ids) and len(set(ids) | set(again)) == 2 * len(ids)
    assert ids[0] == "cmpl-" + IdSource(0, 0).next()[:8] and again[0] == "cmpl-" + IdSource(0, 1).next()[:8]
