"""What a client gets when `mockoss serve` stops with its request in flight (issue 9,
eleventh-session breaker, finding 8; mockoss.server.run's docstring).

Past the stop's grace (``SHUTDOWN_GRACE_S``), uvicorn cancels the requests still in flight and
answered one whose response had not started with its own ``text/plain`` "Internal Server Error"
500: an error no scenario asked for. Now such a request gets a 503 in the profile's error shape
saying the server is stopping, with ``Connection: close``; a stream already started is cut (its
connection closed, nothing appended). The server runs in a subprocess; ``respond`` never returns
for a big body (a stand-in for a build of tens of seconds on a worker thread).
"""

from __future__ import annotations

import json
import signal
import time

import pytest
from stop_support import line, serving  # tests/server is on sys.path

from mockoss.server.app import STOPPING_MESSAGE

_SERVER = r"""
import sys, threading
from mockoss.server.core import MockServer
original = MockServer.respond
def respond(self, endpoint, raw, headers, step=None):
    if len(raw) > 300_000:
        print("BUILDING", flush=True)
        threading.Event().wait()
    return original(self, endpoint, raw, headers, step)
MockServer.respond = respond
from mockoss.cli import main
sys.exit(main(["serve", "--port", "0", "--scenario", "clean-answer"] + sys.argv[1:]))
"""


def _stop_during(sig: signal.Signals, request: bytes, wait_for: str, *flags: str) -> tuple[bytes, str]:
    """Start serve, send ``request``, wait for ``wait_for`` in its output, send ``sig``: what the
    client received until the connection closed, and the server's remaining output."""
    with serving(_SERVER, *flags) as served:
        served.send(request)
        if wait_for:
            line(served.process, wait_for)
        else:
            time.sleep(0.5)  # the request reaches the app
        output = served.stop(sig, read_output=True)
        return served.received(), output


def _post(body: bytes, length: int | None = None) -> bytes:
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode()
        + body
    )


def _assert_stopping_503(got: bytes) -> None:
    assert b"Internal Server Error" not in got
    head, _, body = got.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0] == "HTTP/1.1 503 Service Unavailable", got[:200]
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers["content-type"] == "application/json" and headers["connection"] == "close"
    # The vLLM profile's error shape (the default profile), with mockoss's words.
    error = json.loads(body)["error"]
    assert error["message"] == STOPPING_MESSAGE and error["code"] == 503 and set(error) == {"message", "type", "param", "code"}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_request_held_in_a_build_gets_a_503_in_the_profile_shape(sig: signal.Signals) -> None:
    body = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "word " * 70_000}]}).encode()
    got, output = _stop_during(sig, _post(body), "BUILDING")
    _assert_stopping_503(got)
    assert "timeout graceful shutdown exceeded" not in output and "mockoss: stopping: 1 request(s)" in output


def test_a_body_still_arriving_gets_the_503_too() -> None:
    got, _ = _stop_during(signal.SIGTERM, _post(b'{"model": "openai/gpt-oss-20b", "mess', length=1_000), "")
    _assert_stopping_503(got)


def test_a_started_stream_is_cut_without_a_second_answer() -> None:
    body = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "go"}], "stream": True}).encode()
    # 5 tokens a second: the stream is still running when the grace ends.
    got, _ = _stop_during(signal.SIGTERM, _post(body), "", "--tokens-per-s", "5")
    assert got.startswith(b"HTTP/1.1 200 OK\r\n") and got.count(b"HTTP/1.1") == 1
    assert b"data: " in got and b"[DONE]" not in got and not got.endswith(b"0\r\n\r\n")
