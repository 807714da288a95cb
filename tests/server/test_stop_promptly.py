"""`mockoss serve` stops promptly on SIGTERM and SIGINT while a reply is being built on a worker
thread, closing the connection in flight (mockoss.server.run's docstring; issue 9, task O).

The server runs in a subprocess whose ``MockServer.respond`` never returns for a big body (one that
the off-loop gate answers on a worker thread): a stand-in for a build of tens of seconds (the first
streamed reply of a 40,000-token answer took 29 s to let the server exit before). Before the
change the server waited for it without limit (uvicorn's graceful shutdown) and then the
interpreter joined the thread; the bound below is generous (several seconds) and only there so
that the old code fails instead of hanging.
"""

from __future__ import annotations

import json
import signal

import pytest
from stop_support import line, serving  # tests/server is on sys.path

# respond() blocks for ever on a big body, after saying so on stdout.
_SERVER = r"""
import sys, threading
from mockoss.server.core import MockServer
original = MockServer.respond
def respond(self, endpoint, raw, headers, step=None):
    if len(raw) > 300_000:
        print("BUILDING " + threading.current_thread().name, flush=True)
        threading.Event().wait()
    return original(self, endpoint, raw, headers, step)
MockServer.respond = respond
from mockoss.cli import main
sys.exit(main(["serve", "--port", "0", "--scenario", "clean-answer"]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stops_promptly_during_an_off_loop_build(sig: signal.Signals) -> None:
    with serving(_SERVER) as served:
        body = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "word " * 70_000}]}).encode()
        served.send(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode() + body
        )
        # The build runs on a worker thread, not on the event loop (which is what lets the
        # server hear the signal and stop while it runs).
        assert line(served.process, r"BUILDING (\S+)").group(1) != "MainThread"
        served.stop(sig, ", a build in flight")
        # The connection in flight was closed after mockoss's 503 for a request cancelled before
        # its response started (tests/server/test_stop_reply.py checks what it says).
        got = served.received()
        assert got.startswith(b"HTTP/1.1 503 ")
        assert served.process.returncode == (-signal.SIGTERM if sig == signal.SIGTERM else 0)
