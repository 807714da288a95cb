"""Bounded daemon worker threads (mockoss.workers; issue 9, task O): the recorder's scans of big
bodies run on at most two threads however many arrive at once (one thread per body before), small
bodies never wait for them, and the pool's threads are daemon threads (a stopping server does not
wait for them: tests/server/test_stop_promptly.py)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future

import pytest

from mockoss.upstream import scrub
from mockoss.workers import DaemonPool


def _scan_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "mockoss-record-scan"]


def _until(check, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not reached"
        time.sleep(0.01)


def test_big_body_scans_share_two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    scanning: list[str] = []

    def find_secrets(text: str, *, entropy: bool = True) -> list[tuple[int, int, str]]:
        if text.startswith("body"):
            scanning.append(text[:8])
            release.wait(60)
        return []

    monkeypatch.setattr(scrub, "find_secrets", find_secrets)
    monkeypatch.setattr(scrub._worker, "warm", lambda: None)  # no helper process in this test
    big = [(f'{{"messages": [{{"role": "user", "content": "body{n:04d} ' + "x" * scrub.PRESCAN_BYTES + '"}]}').encode() for n in range(6)]
    submitted: list[int] = []

    def submitter(n: int):  # type: ignore[no-untyped-def]
        def submit() -> Future[None]:
            submitted.append(n)
            done: Future[None] = Future()
            done.set_result(None)
            return done

        return submit

    before = len(_scan_threads())
    try:
        tickets = [scrub.scan_first(raw, submitter(n)) for n, raw in enumerate(big)]
        _until(lambda: len(scanning) >= 2)
        time.sleep(0.2)  # room for any further thread to start, which it must not
        assert len(scanning) == 2
        assert len(_scan_threads()) - before <= 2
        # A small body is handed on at once, while the big ones wait.
        small = scrub.scan_first(b'{"messages": []}', submitter(99))
        assert small.done() and submitted == [99]
    finally:
        release.set()
    for ticket in tickets:
        ticket.result(timeout=60)
    assert sorted(submitted) == [0, 1, 2, 3, 4, 5, 99]
    assert sorted(scanning) == [f"body{n:04d}" for n in range(6)]


def test_pool_runs_calls_in_order_on_at_most_limit_daemon_threads() -> None:
    pool = DaemonPool(2, "mockoss-test-pool")
    gate = threading.Event()
    started: list[int] = []

    def work(n: int) -> int:
        started.append(n)
        gate.wait(60)
        return n * 10

    futures = [pool.submit(work, n) for n in range(5)]
    _until(lambda: len(started) == 2)
    assert pool.threads == 2
    threads = [thread for thread in threading.enumerate() if thread.name == "mockoss-test-pool"]
    assert len(threads) == 2 and all(thread.daemon for thread in threads)
    futures[4].cancel()  # still queued: never called
    gate.set()
    assert [future.result(timeout=60) for future in futures[:4]] == [0, 10, 20, 30]
    assert futures[4].cancelled() and sorted(started) == [0, 1, 2, 3]
