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
import signal

import pytest
from stop_support import line, serving  # tests/server is on sys.path

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

_CASES = {
    "tokenize": (_PROBE, "/tokenize", {"model": "openai/gpt-oss-20b", "prompt": "word " * 30_000}),
    "proxy": (_PROXY, "/v1/chat/completions", {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "word " * 70_000}]}),
}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_stops_promptly_while_off_loop_work_is_held(case: str, sig: signal.Signals) -> None:
    script, path, payload = _CASES[case]
    with serving(script) as served:
        body = json.dumps(payload).encode()
        served.send(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n".encode()
            + f"Content-Length: {len(body)}\r\n\r\n".encode() + body
        )
        # Held on a worker thread, not on the event loop (which hears the signal meanwhile).
        assert line(served.process, r"HOLDING (\S+)").group(1) != "MainThread"
        served.stop(sig, f", a {case} call held on a worker thread")
        assert served.process.returncode == (-signal.SIGTERM if sig == signal.SIGTERM else 0)
