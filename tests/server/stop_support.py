"""What the stop tests (``test_stop_promptly.py``, ``test_stop_reply.py``,
``test_stop_side_routes.py``) share: `mockoss serve` started in a subprocess from a script, its
base URL read from its output, a request sent, a signal sent, and its exit waited for."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

# Generous, only there so that code that does not stop fails instead of hanging.
WAIT_S = 15.0


def line(process: subprocess.Popen[str], pattern: str) -> re.Match[str]:
    """The first match of ``pattern`` in the next lines of the server's output (60 s at most)."""
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        text = process.stdout.readline()
        if not text:
            break
        seen.append(text)
        found = re.search(pattern, text)
        if found:
            return found
    raise AssertionError(f"no {pattern!r} in the server's output: {''.join(seen)}")


class Served:
    """A `mockoss serve` subprocess and the one client connection a test opens to it."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.client: socket.socket | None = None

    def send(self, request: bytes) -> socket.socket:
        """Wait for the base URL, connect and send ``request`` (raw HTTP bytes)."""
        port = int(line(self.process, r"base URL: http://127\.0\.0\.1:(\d+)").group(1))
        self.client = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S + 10)
        self.client.sendall(request)
        return self.client

    def stop(self, sig: signal.Signals, detail: str = "", *, read_output: bool = False) -> str:
        """Send ``sig`` and wait ``WAIT_S`` for the exit (the test fails past it, ``detail``
        appended to the message); with ``read_output``, the server's remaining output (else "")."""
        self.process.send_signal(sig)
        try:
            if read_output:
                return self.process.communicate(timeout=WAIT_S)[0]
            self.process.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {WAIT_S:g} s after {sig.name}{detail}")
        return ""

    def received(self) -> bytes:
        """What the client received until the connection closed."""
        assert self.client is not None
        got = b""
        while chunk := self.client.recv(1 << 16):
            got += chunk
        return got


@contextmanager
def serving(script: str, *flags: str) -> Iterator[Served]:
    """Run ``script`` (``python -c``, with ``flags`` as its arguments), output and errors on one
    pipe; afterwards the client is closed and the server killed if still running."""
    process = subprocess.Popen([sys.executable, "-c", script, *flags], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    served = Served(process)
    try:
        yield served
    finally:
        if served.client is not None:
            served.client.close()
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()  # type: ignore[union-attr]
