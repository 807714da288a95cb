"""`mockoss serve` stops promptly while a side route's heavy body (vLLM's ``/tokenize``) or the
proxy's off-loop work (raw mode's prompt) is held on a worker thread, not only a scripted reply
(tests/server/test_stop_promptly.py). Issue 9, the eleventh session's review, finding 3: those
calls ran on ``anyio.to_thread`` (non-daemon threads that a cancelled await and the interpreter's
exit wait for): a heavy ``/tokenize`` held 20 s kept ``SIGINT`` from ending serve for 21.3 s.

The server runs in a subprocess whose held call never returns, after saying so on stdout; the
bound below is generous and only there so that the old code fails instead of hanging.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

_HOLD = r"""
import sys, threading
def hold(cls, name):
    original = getattr(cls, name)
    def held(self, *args, **kwargs):
        print("HOLDING " + threading.current_thread().name, flush=True)
        threading.Event().wait()
    setattr(cls, name, held)
"""

# A side route's heavy body (side_route_heavy: 32 KiB) is answered by probe_elsewhere on a thread.
_PROBE = _HOLD + r"""
from mockoss.server.core import MockServer
original = MockServer.probe
def probe(self, method, path, body):
    if len(body) > 100_000:
        print("HOLDING " + threading.current_thread().name, flush=True)
        threading.Event().wait()
    return original(self, method, path, body)
MockServer.probe = probe
from mockoss.cli import main
sys.exit(main(["serve", "--port", "0", "--scenario", "clean-answer", "--profile", "vllm"]))
"""

# Raw mode prepares a heavy body's upstream request on a thread (Proxy._off_loop): held there, the
# upstream (nothing listens) is never reached.
_PROXY = _HOLD + r"""
from mockoss.upstream.proxy import Proxy
hold(Proxy, "_prepare")
from mockoss.cli import main
sys.exit(main(["serve", "--port", "0", "--profile", "vllm", "--upstream", "http://127.0.0.1:9", "--upstream-mode", "raw"]))
"""

WAIT_S = 15.0

_CASES = {
    "tokenize": (_PROBE, "/tokenize", {"model": "openai/gpt-oss-20b", "prompt": "word " * 30_000}),
    "proxy": (_PROXY, "/v1/chat/completions", {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "word " * 70_000}]}),
}


def _line(process: subprocess.Popen[str], pattern: str) -> re.Match[str]:
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"no {pattern!r} in the server's output: {''.join(seen)}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_stops_promptly_while_off_loop_work_is_held(case: str, sig: signal.Signals) -> None:
    script, path, payload = _CASES[case]
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    client = None
    try:
        port = int(_line(process, r"base URL: http://127\.0\.0\.1:(\d+)").group(1))
        body = json.dumps(payload).encode()
        client = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S + 10)
        client.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n".encode()
            + f"Content-Length: {len(body)}\r\n\r\n".encode() + body
        )
        # Held on a worker thread, not on the event loop (which hears the signal meanwhile).
        assert _line(process, r"HOLDING (\S+)").group(1) != "MainThread"
        process.send_signal(sig)
        try:
            process.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {WAIT_S:g} s after {sig.name}, a {case} call held on a worker thread")
        assert process.returncode == (-signal.SIGTERM if sig == signal.SIGTERM else 0)
    finally:
        if client is not None:
            client.close()
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()  # type: ignore[union-attr]
