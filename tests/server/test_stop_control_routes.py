"""`mockoss serve` stops promptly while a control route's job is held on a worker thread: an
upload's compile (``POST /mockoss/scenario``), the request log's JSON (``GET /mockoss/requests``)
or a metrics render (``GET /mockoss/metrics``), as it does for a scripted reply
(tests/server/test_stop_promptly.py) and a side route (tests/server/test_stop_side_routes.py).

Those jobs ran on ``anyio.to_thread`` (non-daemon threads; a cancelled await waits for its call):
one held kept ``SIGINT`` from ending serve until it ended (twelfth session, task T;
mockoss.server.control_routes' docstring); the SIGINT cases fail on that code. ``SIGTERM`` passed
there too (uvicorn re-raises it and its default action ends the process without joining threads):
kept so that neither signal regresses. The server runs in a subprocess whose held call
never returns, after saying so on stdout; the bound (stop_support.WAIT_S) is generous and only there
so that the old code fails instead of hanging.
"""

from __future__ import annotations

import signal

import pytest
from stop_support import line, serving  # tests/server is on sys.path

_HOLD = r"""
import sys, threading
def held(*args, **kwargs):
    print("HOLDING " + threading.current_thread().name, flush=True)
    threading.Event().wait()
"""

_MAIN = r"""
from mockoss.cli import main
sys.exit(main(["serve", "--port", "0", "--scenario", "clean-answer"]))
"""

_SCENARIO = b"name: up\nsteps:\n  - say: hello\n"

# (what is held, the request that reaches it)
_CASES = {
    "upload": (
        "from mockoss.server import control_routes\ncontrol_routes._load_text = held\n",
        b"POST /mockoss/scenario?name=up HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
        + f"Content-Length: {len(_SCENARIO)}\r\n\r\n".encode()
        + _SCENARIO,
    ),
    "log": (
        "from mockoss.server.control_log import LogWriter\nLogWriter.take = held\n",
        b"GET /mockoss/requests HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    ),
    "metrics": (
        "from mockoss.server.control_metrics import Metrics\nMetrics.render = held\n",
        b"GET /mockoss/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    ),
}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_stops_promptly_while_a_control_route_job_is_held(case: str, sig: signal.Signals) -> None:
    patch, request = _CASES[case]
    with serving(_HOLD + patch + _MAIN) as served:
        served.send(request)
        # Held on a worker thread, not on the event loop (which hears the signal meanwhile).
        assert line(served.process, r"HOLDING (\S+)").group(1) != "MainThread"
        served.stop(sig, f", a control route's {case} job held on a worker thread")
        assert served.process.returncode == (-signal.SIGTERM if sig == signal.SIGTERM else 0)
        # The request in flight got the stopping server's answer (tests/server/test_stop_reply.py).
        assert served.received().startswith(b"HTTP/1.1 503 ")
