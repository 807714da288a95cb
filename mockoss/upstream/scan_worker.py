"""A helper subprocess for CPU-heavy pure functions, so that their long C calls (regex scans of
megabytes) hold another process's GIL, not the server's.

The recorder's secret scans of big texts run there (:mod:`mockoss.upstream.scrub`,
``WORKER_CHARS``; issue 9 review, eighth session, finding 1). Frames both ways as the prompt
worker's (:func:`mockoss.server.prompt_worker.write_frame`): a length, then a pickle:
``(operation, args)`` one way, ``("ok", result)`` or ``("error", text)`` the other. Both ends are this package's code in this package's
interpreter (``sys.executable``).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from mockoss.server.prompt_worker import read_frame, stop_child, write_frame

__all__ = ["ScanWorker", "serve"]

class ScanWorker:
    """One ``python -c <command>`` subprocess running :func:`serve`, used by one thread at a time.

    Args:
        command: Python source that imports and calls the worker's loop (a function that calls
            :func:`serve` with its operations).

    Started on first use, restarted after it dies; it exits by itself when this process goes away
    (its stdin closes). ``asked`` counts the answers it gave.
    """

    def __init__(self, command: str) -> None:
        self._command = command
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self.asked = 0

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-c", self._command],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
            )
        return self._process

    def warm(self) -> None:
        """Start the process now if it is not running (its start-up then overlaps other work);
        nothing if it is in use (so running), and a worker that cannot start is left to
        :meth:`ask`'s fallback."""
        if self._lock.acquire(blocking=False):
            try:
                with contextlib.suppress(OSError):
                    self._start()
            finally:
                self._lock.release()

    def ask(self, operation: str, *args: Any) -> Any:
        """The worker's answer to ``operation`` on ``args`` (both pickled); ``None`` if the
        worker failed or raised (the caller computes it here instead). Blocking: the pipe I/O
        releases the GIL."""
        request = pickle.dumps((operation, args), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            try:
                process = self._start()
                write_frame(process.stdin, request)
                answer = read_frame(process.stdout)
            except OSError:
                answer = None
            if answer is None:
                self.stop()
                return None
            self.asked += 1
        status, result = pickle.loads(answer)  # our own child process
        return result if status == "ok" else None

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop_child(process)


def serve(operations: Mapping[str, Callable[..., Any]]) -> None:
    """The worker's loop: answer framed requests on stdin with ``operations[name](*args)`` until
    stdin closes. Standard output carries the answers only (anything printed goes to stderr)."""
    requests, answers = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    while (request := read_frame(requests)) is not None:
        try:
            operation, args = pickle.loads(request)  # from the parent process
            answer: tuple[str, Any] = ("ok", operations[operation](*args))
        except Exception as exc:  # noqa: BLE001  # reported to the parent, which computes it itself
            answer = ("error", f"{type(exc).__name__}: {exc}")
        write_frame(answers, pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
