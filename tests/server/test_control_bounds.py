"""Bounds of the control plane (mockoss/server/control.py, control_log.py, control_metrics.py):
the per-session request logs in bytes, the log's readers, the metrics' label sets.
Issue 9 review, eighth session, findings 3, 6 and 7."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

import httpx
import pytest

from mockoss.server import control, control_log
from mockoss.server.control import ControlPlane
from mockoss.server.control_log import LOG_PATH_CHARS, log_entry
from mockoss.server.control_metrics import MAX_SCENARIO_LABELS, OTHER_SCENARIOS, Metrics
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer
from mockoss.workers import DaemonPool

#: vLLM and SGLang refuse a body not sent as application/json (mockoss.server.content_type).
JSON_TYPE = {"content-type": "application/json"}

LONG = "/v1/" + "a" * 60_000


def _scope(path: str, test_id: str | None = None, method: str = "GET") -> dict:
    headers = [(b"x-mockoss-test-id", test_id.encode())] if test_id else []
    return {"type": "http", "method": method, "path": path, "headers": headers}


def _held(plane: ControlPlane) -> int:
    """The strings the logs hold, counted independently of the plane's own count."""
    sessions = [plane._default, *plane._sessions.values()]
    return sum(sys.getsizeof(entry[2]) + sys.getsizeof(entry[5] or "") for found in sessions for entry in found.log)


def test_a_long_path_is_logged_cut_and_marked():
    """Issue 9 review, eighth session, finding 3: every probe kept its whole path (up to ~65 KB)."""
    plane = ControlPlane(MockServer("clean-answer"))
    plane.log(_scope(LONG, "t0"), None, 404, 0, 0.001)
    plane.log(_scope("/v1/models", "t0"), None, 200, 0, 0.001)
    cut, whole = (log_entry(e)["path"] for e in plane.session("t0").log)
    assert whole == "/v1/models"
    assert cut.startswith(LONG[:LOG_PATH_CHARS]) and len(cut) < LOG_PATH_CHARS + 80
    assert f"{len(LONG) - LOG_PATH_CHARS:,} more characters not logged" in cut and cut.isascii()


def test_each_session_log_is_bounded_in_bytes_oldest_first():
    """Issue 9 review, eighth session, finding 3: 5,000 probes with 64 KB paths in each of 3
    sessions held ~1 GB (10,000 entries a session, none counted in bytes)."""
    plane = ControlPlane(MockServer("clean-answer"))
    plane.session_log_bytes = 256 * 1024
    for session in ("t0", "t1", "t2"):
        for i in range(2000):
            plane.log(_scope(f"{LONG}{i}", session), None, 404, 0, 0.001)
    for session in ("t0", "t1", "t2"):
        log = plane.session(session).log
        held = sum(sys.getsizeof(entry[2]) for entry in log)
        assert 0 < held <= 256 * 1024 and len(log) < 2000
        assert log[-1][2].startswith(f"{LONG[:LOG_PATH_CHARS]}") and log[-1][0] > log[0][0]  # the newest kept
    assert 0 < _held(plane) <= plane.log_bytes_held() <= 3 * 256 * 1024  # the plane counts no less than the strings


def test_all_session_logs_together_are_bounded_and_the_oldest_entries_go_first(monkeypatch):
    monkeypatch.setattr(control_log, "CONTROL_LOG_CHECK_BYTES", 16 * 1024)
    plane = ControlPlane(MockServer("clean-answer"))
    plane.session_log_bytes, plane.log_bytes = 256 * 1024, 1024 * 1024
    for session in range(12):  # 12 x 256 KiB of entries, 3 MiB, in turn
        for i in range(200):
            plane.log(_scope(f"{LONG}{i}", f"t{session}"), None, 404, 0, 0.001)
    assert plane.log_bytes_held() <= 1024 * 1024 + 16 * 1024 and _held(plane) <= 1024 * 1024 + 16 * 1024
    kept = {key: len(found.log) for key, found in plane._sessions.items()}
    assert kept["t0"] == kept["t1"] == 0 and kept["t11"] > 0  # the oldest sessions' entries went first


def test_ordinary_logs_keep_their_10000_entries_and_reset_frees_the_bytes():
    plane = ControlPlane(MockServer("clean-answer"))
    for _ in range(control.DEFAULT_LOG_LIMIT + 5):
        plane.log(_scope("/v1/chat/completions", "a-test-id-of-some-length", "POST"), None, 200, 0, 0.001)
        plane.log(_scope("/v1/chat/completions", None, "POST"), None, 200, 0, 0.001)
    assert len(plane.session("a-test-id-of-some-length").log) == len(plane._default.log) == control.DEFAULT_LOG_LIMIT
    plane.session("a-test-id-of-some-length").clear()
    plane.base.reset()  # the fixture's reset of the server as started clears the default log
    assert plane.log_bytes_held() == 0 and not plane._default.log


# -- finding 6: readers of a long log ------------------------------------------------------------


def _chat(text: str) -> bytes:
    return json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": text}]}).encode()


def _snapshot(server: MockServer) -> tuple[list, dict]:
    records = {r.index: r for r in server.requests}
    names = control_log._LOG_FIELDS
    entries = [tuple(r.index if n == "index" else 0.0 if n == "ms" else None for n in names) + (0,) for r in server.requests]
    return entries, records


@pytest.mark.parametrize("odd", [None, "nan"])
def test_a_long_log_is_built_a_part_at_a_time_with_the_same_json(odd, monkeypatch):
    """Issue 9 review, eighth session, finding 6: each reader built the whole log's JSON before
    its first byte went out (16 readers of a 67 MB log: 1.36 GB). A log longer than
    LOG_BUFFER_BYTES is built and sent LOG_SLICE_BYTES at a time; a NaN met after the start was
    sent is written in ASCII in its own item (same values)."""
    monkeypatch.setattr(control_log, "LOG_SLICE_BYTES", 4096)
    server = MockServer("clean-answer")
    for i in range(40):
        body = _chat(f"héllo {i} " * 100)
        if odd and i == 30:
            body = body.replace(b'"messages"', b'"temperature":NaN,"messages"')
        server.respond("chat", body, {})
    entries, records = _snapshot(server)
    expected = json.loads(b"[" + b",".join(control_log.log_parts(entries, records)) + b"]")
    writer = control_log.LogWriter(entries, dict(records))
    sizes: list[int] = []
    real = writer.take

    def take(budget):
        parts = real(budget)
        sizes.append(sum(map(len, parts)) - (max(map(len, parts)) if parts else 0))
        return parts

    writer.take = take  # type: ignore[method-assign]
    first = writer.take(8192)
    assert not writer.done and len(first) < len(entries)

    async def run() -> bytes:
        return b"".join([chunk async for chunk in control_log.streamed(writer, first, DaemonPool(1, "mockoss-log"))])

    body = asyncio.run(run())
    assert json.loads(body) == expected and len(sizes) > 5
    assert max(sizes) < 8192  # each take stops at its budget (less the one item that passes it)
    assert not writer.records  # each record let go once written
    if odd:
        assert expected[30]["body"]["temperature"] == "NaN"
        assert not body[: body.index(b'"NaN"')].isascii()  # earlier items were sent as UTF-8


def test_concurrent_readers_take_turns_and_each_gets_the_whole_log(monkeypatch):
    """Issue 9 review, eighth session, finding 6: concurrent readers each built the whole log at
    once on a thread of its own (memory times readers, threads contending with the event loop).
    Now at most LOG_WRITES parts are built at a time, all readers together."""
    monkeypatch.setattr(control_log, "LOG_BUFFER_BYTES", 8192)
    monkeypatch.setattr(control_log, "LOG_SLICE_BYTES", 4096)
    inside, most, lock = [0], [0], threading.Lock()
    real = control_log._entry_json

    def watched(entry, records):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            time.sleep(0.001)  # lets another builder in, if any may run
            return real(entry, records)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(control_log, "_entry_json", watched)
    threaded = ThreadedServer(MockServer("clean-answer")).start()
    try:
        with httpx.Client(timeout=60) as client:
            for i in range(30):
                client.post(threaded.url + "/v1/chat/completions", headers=JSON_TYPE, content=_chat(f"hello {i} " * 50))
        results: list[httpx.Response] = []

        def read() -> None:
            with httpx.Client(timeout=60) as client:
                results.append(client.get(threaded.url + "/mockoss/requests"))

        readers = [threading.Thread(target=read) for _ in range(6)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()
    finally:
        threaded.stop()
    assert most[0] == control_log.LOG_WRITES == 1
    assert [len(r.json()) for r in results] == [30] * 6 and len({r.content for r in results}) == 1
    assert all("content-length" not in r.headers for r in results)  # streamed, not built whole first


# -- finding 7: metrics ---------------------------------------------------------------------------


def _series(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("mockoss_requests_total{")]


def test_metrics_keep_a_bounded_set_of_scenario_labels():
    """Issue 9 review, eighth session, finding 7: one label set per scenario name forever
    (10,000 uploaded names: 10,003 series, 3.4 MB, 0.4 s to render on the event loop)."""
    metrics = Metrics(lambda: 0, None)
    for i in range(MAX_SCENARIO_LABELS + 500):
        metrics.observe("chat", 200, f"test-{i}", 0)
    metrics.observe("chat", 200, "test-0", 0)  # an admitted name keeps its own series
    series = _series(metrics.render()[0].decode())
    assert len(series) == MAX_SCENARIO_LABELS + 1
    assert f'mockoss_requests_total{{endpoint="chat",scenario="{OTHER_SCENARIOS}",status="200"}} 500.0' in series
    assert 'mockoss_requests_total{endpoint="chat",scenario="test-0",status="200"} 2.0' in series
    metrics.clear()
    metrics.observe("chat", 200, "new-name", 0)
    assert _series(metrics.render()[0].decode()) == ['mockoss_requests_total{endpoint="chat",scenario="new-name",status="200"} 1.0']


def test_reset_all_clears_the_metrics_and_they_are_rendered_off_the_event_loop(monkeypatch):
    rendered_on: list[str] = []
    real = Metrics.render

    def render(self):
        rendered_on.append(threading.current_thread().name)
        return real(self)

    monkeypatch.setattr(Metrics, "render", render)
    threaded = ThreadedServer(MockServer("clean-answer")).start()
    try:
        with httpx.Client(timeout=30) as client:
            client.post(threaded.url + "/v1/chat/completions", headers=JSON_TYPE, content=_chat("hi"))
            before = client.get(threaded.url + "/mockoss/metrics").text
            assert client.post(threaded.url + "/mockoss/reset", params={"all": "true"}).status_code == 204
            after = client.get(threaded.url + "/mockoss/metrics").text
    finally:
        threaded.stop()
    assert any('scenario="clean-answer"' in line for line in _series(before))
    assert not any('scenario="clean-answer"' in line for line in _series(after))
    # On the control app's daemon pool (mockoss.server.control_routes).
    assert rendered_on and all(name == "mockoss-metrics" for name in rendered_on), rendered_on
