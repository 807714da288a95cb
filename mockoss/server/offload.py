"""Keep big requests from delaying small ones: count big prompts in a worker process, answer
big requests on a worker thread.

Why a process and not only a thread: the cost of a big request is rendering its prompt through
openai-harmony for ``usage.prompt_tokens`` (0.76 s for a 10 MB message, 8 s for 100,000 short
messages), and that Rust call holds the GIL from start to end, so a thread would stall every
other thread, the event loop included, just as long. One worker process
(:mod:`mockoss.server.prompt_worker`, started on the first big request) does that render on the
other core while the server keeps answering; the count comes back exact
(:func:`mockoss.endpoints.prompt_tokens`, the same function). It costs ~60 MB of memory once
started, and nothing until then. The rest of a big request (JSON
parse, validation, the reply) runs on a worker thread, where the interpreter switches to the
event loop every few milliseconds.

Small requests (below :data:`OFFLOAD_BYTES`) stay on the event loop, where they are cheapest,
unless a big one is in flight: then they take a thread too, so that the event loop never waits
on the server lock a worker thread holds (see :class:`Gate`).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

import anyio.to_thread

from mockoss.endpoints import prompt_cache_generation
from mockoss.server.prompt_worker import read_frame, write_frame

if TYPE_CHECKING:
    from mockoss.profiles.base import Reply
    from mockoss.server.core import MockServer
    from mockoss.server.transport import Delivery

__all__ = ["OFFLOAD_BYTES", "Gate", "count_prompt_tokens", "shutdown"]

logger = logging.getLogger("mockoss")

#: Bodies at least this big (bytes) are counted in the worker process and answered on a thread:
#: rendering 256 KiB of prompt costs ~20 ms (one message) to ~0.5 s (thousands of short ones).
OFFLOAD_BYTES = 256 * 1024

class _Worker:
    """One ``python -m mockoss.server.prompt_worker`` subprocess, used by one thread at a time.

    Started on first use; restarted after it dies. It exits by itself when the server process goes
    away (its stdin closes).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "mockoss.server.prompt_worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
            )
        return self._process

    def count(self, endpoint: str, raw: bytes) -> int | None:
        """Blocking (call it on a thread; pipe I/O releases the GIL). ``None`` if the worker failed."""
        with self._lock:
            process = self._start()
            try:
                head = f"{endpoint}\0{prompt_cache_generation()}\0".encode()
                write_frame(process.stdin, head + raw)  # type: ignore[arg-type]
                answer = read_frame(process.stdout)  # type: ignore[arg-type]
            except OSError:
                answer = None
            if answer is None:
                self.stop()
                return None
            return int(answer)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            for pipe in (process.stdin, process.stdout):
                if pipe is not None:
                    pipe.close()


_worker = _Worker()


def shutdown() -> None:
    """Stop the worker process, if one was started (a later big request starts a new one)."""
    with _worker._lock:
        _worker.stop()


async def count_prompt_tokens(endpoint: str, raw: bytes) -> int | None:
    """:func:`mockoss.endpoints.prompt_tokens` of ``raw``, computed in the worker process.

    Returns ``None`` (count in-process instead) if the worker process cannot be used.
    """
    try:
        counted = await anyio.to_thread.run_sync(_worker.count, endpoint, raw)
    except OSError as exc:  # cannot start it
        logger.warning("mockoss: prompt-count worker unavailable (%s: %s); counting in-process", type(exc).__name__, exc)
        return None
    if counted is None:
        logger.warning("mockoss: the prompt-count worker failed; counting in-process")
    return counted


def _respond_counted(
    server: MockServer, endpoint: str, raw: bytes, headers: Mapping[str, str], counted: int | None
) -> tuple[Reply, Delivery | None]:
    from mockoss.server.core import PRECOUNTED_PROMPT_TOKENS

    token = PRECOUNTED_PROMPT_TOKENS.set(counted)
    try:
        return server.respond(endpoint, raw, headers)
    finally:
        PRECOUNTED_PROMPT_TOKENS.reset(token)


class Gate:
    """Decides, per request, where :meth:`MockServer.respond` runs (one per app; event-loop only).

    ``busy`` counts requests answered off the loop. While it is 0 no worker thread can hold the
    server lock, so a small request on the loop never blocks on it.
    """

    def __init__(self, offload_bytes: int = OFFLOAD_BYTES) -> None:
        self.offload_bytes = offload_bytes
        self.busy = 0

    async def respond(
        self, server: MockServer, endpoint: str, raw: bytes, headers: Mapping[str, str]
    ) -> tuple[Reply, Delivery | None]:
        """Answer on the loop (small, nothing in flight) or on a worker thread (big, or while a
        big one is in flight), a big body's prompt counted in the worker process first."""
        big = len(raw) >= self.offload_bytes
        if not big and self.busy == 0:
            return server.respond(endpoint, raw, headers)
        self.busy += 1
        try:
            counted = await count_prompt_tokens(endpoint, raw) if big else None
            return await anyio.to_thread.run_sync(_respond_counted, server, endpoint, raw, headers, counted)
        finally:
            self.busy -= 1
