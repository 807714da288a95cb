"""Bounded pools of daemon worker threads, for work that a stopping server must not wait for.

Why not ``anyio.to_thread`` or :class:`concurrent.futures.ThreadPoolExecutor`: both keep
non-daemon threads that the interpreter joins when it exits (anyio's ``WorkerThread``; the
executor's ``_python_exit`` hook), and an awaiting task cancelled meanwhile (``to_thread.run_sync``
without ``abandon_on_cancel``) waits for its thread too. A request answered off the event loop may
build a plan for tens of seconds (the first streamed reply of a 40,000-token answer); when
``mockoss serve`` is stopped, nobody will read that reply, and waiting for it held the process
29 s after ``SIGTERM`` (issue 9, task O; :mod:`mockoss.server.run` says what a stop does now).
A pool here is a queue and at most ``limit`` daemon threads, each leaving after
:data:`IDLE_S` seconds without work; a call beyond the limit waits in the queue, in order.

Used by the off-loop gate (:class:`mockoss.server.offload.Gate`, :func:`run_off_loop`; one pool per
app, as anyio's default limiter is one per event loop), and through the gate's pool by the side
routes' heavy bodies (:func:`mockoss.server.offload.probe_elsewhere`) and the proxy's off-loop work
(:class:`mockoss.upstream.proxy.Proxy`, :func:`mockoss.upstream.raw.ask_upstream`), and by the
recorder's scans of big bodies (:func:`mockoss.upstream.scrub.scan_first`, whose thread per body
was unbounded).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["IDLE_S", "DaemonPool", "run_off_loop"]

_T = TypeVar("_T")

#: Seconds an idle worker thread waits for work before it leaves.
IDLE_S = 10.0


class DaemonPool:
    """At most ``limit`` daemon threads named ``name`` running submitted calls, oldest first.

    Thread-safe. ``threads`` is the number alive (for tests and metrics)."""

    def __init__(self, limit: int, name: str) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit, self.name = limit, name
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue: deque[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = deque()
        self._idle = 0
        self.threads = 0

    def submit(self, fn: Callable[..., _T], *args: Any) -> Future[_T]:
        """``fn(*args)`` on a worker thread; its future. A future cancelled before its call
        starts is never called.

        Raises:
            RuntimeError: a thread was needed and could not be started (``can't start new
                thread``); the call is then not queued and ``threads`` is as before (issue 9,
                the eleventh session's review, finding 6: it stayed one higher for good)."""
        future: Future[_T] = Future()
        with self._lock:
            self._queue.append((future, fn, args))
            if len(self._queue) > self._idle and self.threads < self.limit:
                self.threads += 1
                try:
                    threading.Thread(target=self._work, name=self.name, daemon=True).start()
                except BaseException:  # "can't start new thread": the call is not queued, the count not kept
                    self.threads -= 1
                    self._queue.pop()
                    raise
            else:
                self._wake.notify()
        return future

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._idle += 1
                    self._wake.wait_for(lambda: self._queue, timeout=IDLE_S)
                    self._idle -= 1
                    if not self._queue:
                        self.threads -= 1
                        return
                future, fn, args = self._queue.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001  # handed to the waiter, as concurrent.futures does
                future.set_exception(exc)
            else:
                future.set_result(result)
            del future, fn, args  # nothing of the call outlives it while the thread idles


async def run_off_loop(pool: DaemonPool, fn: Callable[..., _T], *args: Any, done: Callable[[], None] | None = None) -> _T:
    """``fn(*args)`` on ``pool``, in a copy of the caller's context (as ``anyio.to_thread``
    runs it), awaited on the event loop. ``done`` is called on the loop once the call has ended
    (or was cancelled before it started), not when the awaiting task is cancelled: a cancelled
    await returns at once and leaves the call to finish on its thread. If the call cannot be
    submitted (:meth:`DaemonPool.submit` raised), ``done`` is called before the error is raised,
    so a count the caller raised for the call (``Gate.busy``) is not left raised for good."""
    loop = asyncio.get_running_loop()
    try:
        future = pool.submit(contextvars.copy_context().run, fn, *args)
    except BaseException:
        if done is not None:
            done()
        raise
    if done is not None:

        def ended(_: Future[Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the server stopped
                loop.call_soon_threadsafe(done)

        future.add_done_callback(ended)
    return await asyncio.wrap_future(future)
