"""Durable recording: a client never holds an answer the recording lacks; kills leave a valid scenario.

The full-size runs (20 ``kill -9`` tries, 250 streams under SIGTERM) are
``benchmarks/bench_recording.py``; these run the same code at a size the default run affords.
"""

import importlib.util
import shutil
import signal
import time
from pathlib import Path

import pytest
import yaml
from upstream_helpers import CHAT, RESPONSES, completion_step, scenario, stopped

from mockoss.scenario.loader import load_scenario
from mockoss.server.core import MockServer
from mockoss.upstream import Recorder, Upstream
from mockoss.upstream.journal import Journal

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_recording.py"
_spec = importlib.util.spec_from_file_location("bench_recording", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

SLOW_WRITE_S = 0.3


@pytest.fixture
def slow_disk(monkeypatch):
    """Every recording write takes 0.3 s more: a response that does not wait for it would arrive first."""
    original = Journal._append

    def slow(self, data):
        time.sleep(SLOW_WRITE_S)
        original(self, data)

    monkeypatch.setattr(Journal, "_append", slow)


def _steps(path):
    return yaml.safe_load(path.read_text())["steps"] if path.exists() else []


@pytest.mark.parametrize("stream", [False, True])
def test_mock_mode_answer_arrives_only_once_its_step_is_on_disk(serve, http, tmp_path, slow_disk, stream):
    recorder = Recorder(tmp_path, "held")
    mock = serve(MockServer(scenario=scenario(completion_step(), completion_step()), recorder=recorder))
    for n in range(2):
        began = time.perf_counter()
        response = http.post(mock.url + "/v1/chat/completions", json={**CHAT, "stream": stream})
        assert response.status_code == 200
        # The file is read the moment the client holds the answer: the step is already there.
        assert len(_steps(tmp_path / "held.yaml")) == n + 1
        assert time.perf_counter() - began >= SLOW_WRITE_S


def test_pass_through_stream_last_chunk_waits_for_the_step(serve, http, tmp_path, slow_disk):
    upstream = serve(MockServer(scenario=scenario(completion_step())))
    recorder = Recorder(tmp_path, "relay")
    with stopped(serve(MockServer(upstream=Upstream(upstream.url), recorder=recorder))) as proxy:
        for path, body in (("/v1/chat/completions", {**CHAT, "stream": True}), ("/v1/responses", RESPONSES)):
            response = http.post(proxy.url + path, json=body)
            assert response.status_code == 200
            steps = _steps(tmp_path / "relay.yaml")
            assert steps and (steps[-1]["replay"].get("body") or "".join(steps[-1]["replay"]["frames"])) == response.text


def test_recording_cut_at_any_exchange_boundary_is_a_valid_scenario(serve, http, tmp_path, monkeypatch):
    boundaries = []
    original = Journal._append

    def tracked(self, data):
        original(self, data)
        boundaries.append(self.path.stat().st_size)

    monkeypatch.setattr(Journal, "_append", tracked)
    recorder = Recorder(tmp_path, "cut")
    mock = serve(MockServer(scenario=scenario(completion_step(), name="cut"), recorder=recorder))
    for n in range(5):
        http.post(mock.url + "/v1/chat/completions", json={**CHAT, "stream": n % 2 == 1})
    recorder.flush()
    whole = (tmp_path / "cut.yaml").read_bytes()
    assert len(boundaries) == 5 and boundaries[-1] == len(whole)
    for count, size in enumerate(boundaries, 1):
        cut = tmp_path / f"cut-{count}.yaml"
        cut.write_bytes(whole[:size])
        loaded = load_scenario(str(cut))
        assert len(loaded.rules[0].steps) == count


def test_close_is_idempotent_and_a_later_exchange_appends(serve, http, tmp_path):
    recorder = Recorder(tmp_path, "reopen")
    mock = serve(MockServer(scenario=scenario(completion_step(), name="reopen"), recorder=recorder))
    http.post(mock.url + "/v1/chat/completions", json=CHAT)
    recorder.close()
    recorder.close()
    http.post(mock.url + "/v1/chat/completions", json=CHAT)
    recorder.flush()
    assert len(load_scenario(str(tmp_path / "reopen.yaml")).rules[0].steps) == 2


@pytest.mark.skipif(shutil.which("true") is None, reason="needs a POSIX system")
def test_kill_9_right_after_the_response_loses_nothing(tmp_path):
    result = bench.kill9(tmp_path, tries=2, per_try=2)
    assert result["held"] == 4
    assert result["lost"] == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_with_streams_in_flight_records_every_complete_stream(tmp_path, sig):
    result = bench.sigterm(tmp_path, 20, sig)
    assert result["held"] == 20, result
    assert result["lost"] == 0, result
    assert result["exit"] in (-sig, 0), result  # it exits (uvicorn re-raises the signal after closing)


def test_a_failing_disk_is_logged_and_never_holds_a_response(serve, http, tmp_path, monkeypatch, caplog):
    def broken(self, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Journal, "_append", broken)
    recorder = Recorder(tmp_path, "full")
    mock = serve(MockServer(scenario=scenario(completion_step(), name="full"), recorder=recorder))
    response = http.post(mock.url + "/v1/chat/completions", json=CHAT)
    assert response.status_code == 200
    recorder.flush(timeout=5)
    assert "could not write 1 entries" in caplog.text and "No space left on device" in caplog.text
