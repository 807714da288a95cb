"""`mockoss serve --record` stopped while a stream stalls: it says what it waits for, a second signal ends the wait.

Breaker report, session 12, finding 4 (/tmp/brk12/atk/sig2.py): the recording server waited up to
600 s without a word, a second SIGTERM did nothing and a SIGINT then printed two tracebacks. uvicorn's
second-signal handling read in Kludex/uvicorn 0.55.0 ``uvicorn/server.py`` (``handle_exit``,
``shutdown``); what mockoss does instead: mockoss/server/record_stop.py.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import sys
import threading
import time

import pytest
from stop_support import WAIT_S, line, serving  # tests/server is on sys.path

from mockoss.scenario.loader import load_scenario

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SCENARIO = """\
version: 1
steps:
  - completion: {messages: [{channel: final, content: "Recorded in full."}]}
  - completion: {messages: [{channel: final, content: "Hello there friend."}]}
    transport: {stall_after_frames: 2, stall_ms: forever}
"""

STALL = {
    "version": 1,
    "steps": [
        {
            "completion": {"raw": "<|channel|>final<|message|>Hi there.<|return|>"},
            "transport": {"stall_after_frames": 1},
        }
    ],
}

SERVE = "import sys\nfrom mockoss.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def _request(stream: bool) -> bytes:
    body = json.dumps(
        {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    )
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return (head + ("Connection: close\r\n" if not stream else "") + "\r\n" + body).encode()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (signal.SIGTERM, signal.SIGTERM),
        (signal.SIGTERM, signal.SIGINT),
        (signal.SIGINT, signal.SIGINT),
        (signal.SIGINT, signal.SIGTERM),
    ],
)
def test_a_second_signal_ends_the_wait_and_keeps_what_finished(tmp_path, first, second):
    scenario = tmp_path / "stall.yaml"
    scenario.write_text(SCENARIO)
    flags = ("serve", "--port", "0", "--scenario", str(scenario), "--record", str(tmp_path / "rec"))
    with serving(SERVE, *flags) as served:
        done = served.send(_request(stream=False))
        got = b""
        while chunk := done.recv(1 << 16):
            got += chunk
        assert b"Recorded in full." in got
        stalled = socket.create_connection(done.getpeername(), timeout=WAIT_S + 10)
        served.client = stalled
        done.close()
        stalled.sendall(_request(stream=True))
        assert stalled.recv(1 << 16).startswith(b"HTTP/1.1 200")  # the stream began, then stalls
        time.sleep(0.5)
        served.process.send_signal(first)
        said = line(served.process, r"mockoss: stopping: .*").group(0)
        assert said.startswith("mockoss: stopping: waiting for 1 request(s) in flight to finish and be recorded")
        assert "at most 600 s" in said and "again stops now" in said
        time.sleep(1.0)
        assert served.process.poll() is None  # it waits: the stream may still end and be recorded
        started = time.monotonic()
        output = served.stop(second, " (second signal)", read_output=True)
        assert time.monotonic() - started < 5
    assert "1 request(s) still in flight cut (second signal)" in output
    assert "Traceback" not in output and "ERROR" not in output, output
    # The process ends by the signal uvicorn raises last (SIGTERM: killed by it; SIGINT: status 0).
    assert served.process.returncode == (-signal.SIGTERM if signal.SIGTERM in (first, second) else 0)
    recording = tmp_path / "rec" / "stall.yaml"
    recorded = load_scenario(recording)  # closed, and a valid scenario
    # Mock mode records a scripted step as it is served: the stalled one is there too, with its stall.
    assert [step.completion.text.split("<|message|>")[1] for step in recorded.steps[:2]] == [
        "Recorded in full.<|return|>",
        "Hello there friend.<|return|>",
    ]


def test_the_wait_is_bounded(capfd):
    """Past the bound (600 s; 1 s here) the stream still in flight is cut as by a second signal."""
    from mockoss.server.core import MockServer
    from mockoss.server.record_stop import RecordingServer
    from mockoss.server.run import _config, bind

    sock = bind()
    server = RecordingServer(_config(MockServer(scenario=STALL), "warning", None), grace_s=1.0)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]  # not the main thread
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    client = socket.create_connection(sock.getsockname(), timeout=10)
    client.sendall(_request(stream=True))
    assert client.recv(1 << 16).startswith(b"HTTP/1.1 200")
    started = time.monotonic()
    server.should_exit = True
    thread.join(10)
    assert not thread.is_alive() and 1.0 <= time.monotonic() - started < 4
    err = capfd.readouterr().err
    assert "waiting for 1 request(s) in flight" in err and "at most 1 s" in err
    assert "1 request(s) still in flight cut (1 s passed)" in err
    client.close()
    sock.close()
