"""Bounded daemon worker threads (mockoss.workers; issue 9, task O): the recorder's scans of big
bodies run on at most two threads however many arrive at once (one thread per body before), small
bodies never wait for them, and the pool's threads are daemon threads (a stopping server does not
wait for them: tests/server/test_stop_promptly.py); each app's gate has its own pool, and a thread
that cannot start leaves no count raised (issue 9, the eleventh session's review, findings 6, 7, 9)."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future

import pytest

from mockoss.server import offload
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


def test_pool_runs_calls_on_at_most_limit_daemon_threads() -> None:
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
    assert futures[4].cancelled() and sorted(started) == [0, 1, 2, 3]  # two threads: any order


def test_pool_runs_queued_calls_in_order() -> None:
    """Issue 9, the eleventh session's review, finding 9: the test above sorts what started (two
    threads race), so the order was never asserted; one thread shows it. (A pool taking the newest
    call first, ``popleft`` made ``pop``, fails here and passed there.)"""
    pool = DaemonPool(1, "mockoss-test-pool")
    gate = threading.Event()
    started: list[int] = []

    def work(n: int) -> int:
        started.append(n)
        gate.wait(60)
        return n

    first = pool.submit(work, 0)
    _until(lambda: started == [0])
    futures = [first] + [pool.submit(work, n) for n in range(1, 6)]
    futures[3].cancel()  # still queued: skipped, the rest keep their order
    gate.set()
    assert [future.result(timeout=60) for future in futures if not future.cancelled()] == [0, 1, 2, 4, 5]
    assert started == [0, 1, 2, 4, 5] and pool.threads == 1


def _failing_start(monkeypatch: pytest.MonkeyPatch) -> None:
    def start(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", start)


def test_a_thread_that_cannot_start_leaves_no_count_and_no_queued_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 9, the eleventh session's review, finding 6: ``threads`` stayed one higher for good
    (and the call stayed queued for a thread that never came)."""
    pool = DaemonPool(2, "mockoss-test-pool")
    called: list[int] = []
    with monkeypatch.context() as patched:
        _failing_start(patched)
        with pytest.raises(RuntimeError, match="can't start new thread"):
            pool.submit(called.append, 1)
        assert pool.threads == 0
    assert pool.submit(called.append, 2).result(timeout=60) is None
    assert called == [2] and pool.threads == 1


class _Server:
    """A stand-in for MockServer: ``respond`` waits for ``release`` (if any), counting its calls."""

    def __init__(self, release: threading.Event | None = None) -> None:
        self.release, self.calls, self._lock = release, 0, threading.Lock()

    def respond(self, endpoint: str, raw: bytes, headers: object) -> tuple[str, None]:
        with self._lock:
            self.calls += 1
        if self.release is not None:
            self.release.wait(60)
        return "answered", None


BIG = b"x" * offload.OFFLOAD_BYTES  # is_heavy: answered off the loop


def test_gate_busy_falls_back_when_its_thread_cannot_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 9, the eleventh session's review, finding 6: ``Gate.busy`` was raised before the call
    was submitted and lowered only when its thread ended, so a thread that could not start left it
    raised for good (every small request off the loop from then on)."""
    gate, server = offload.Gate(), _Server()

    async def ask() -> tuple[str, None]:
        return await gate.respond(server, "chat", BIG, {})  # type: ignore[arg-type,return-value]

    with monkeypatch.context() as patched:
        _failing_start(patched)
        with pytest.raises(RuntimeError, match="can't start new thread"):
            asyncio.run(ask())
    assert gate.busy == 0 and gate.threads.threads == 0 and server.calls == 0
    assert asyncio.run(ask()) == ("answered", None) and gate.busy == 0 and server.calls == 1


def test_each_gate_has_its_own_threads() -> None:
    """Issue 9, the eleventh session's review, finding 7: one pool of 40 threads served every app
    in the process, so one server's 40 held builds queued another server's request (pytest runs
    several servers in one process); anyio's limiter, before, was one per event loop. Here app
    A's 40 builds are held while app B answers."""
    from mockoss.server.app import create_app
    from mockoss.server.core import MockServer

    held, free = offload.Gate(), offload.Gate()
    release = threading.Event()
    busy, quick = _Server(release), _Server()
    limit = 40  # offload.THREADS (asserted below, after the part the old code fails)

    async def run() -> object:
        tasks = [asyncio.ensure_future(held.respond(busy, "chat", BIG, {})) for _ in range(limit)]  # type: ignore[arg-type]
        try:
            while busy.calls < limit:
                await asyncio.sleep(0.01)
            return await asyncio.wait_for(free.respond(quick, "chat", BIG, {}), 20)  # type: ignore[arg-type]
        finally:
            release.set()
            await asyncio.gather(*tasks)

    assert asyncio.run(run()) == ("answered", None)
    assert offload.THREADS == limit and held.threads.threads == limit and free.threads.threads == 1
    apps = [create_app(MockServer(profile="vllm")) for _ in range(2)]
    assert apps[0].state.mockoss_gate.threads is not apps[1].state.mockoss_gate.threads
