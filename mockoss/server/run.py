"""Run a :class:`MockServer` over HTTP with uvicorn: in the foreground (CLI) or in a thread (pytest).

Stopping ``mockoss serve`` (``SIGTERM``, ``SIGINT``/Ctrl-C): it stops accepting, closes idle
connections, gives requests in flight :data:`SHUTDOWN_GRACE_S` to finish, then cancels them and
closes their connections, runs the lifespan's shutdown (an upstream's client, the recorder:
:mod:`mockoss.server.durable`) and exits as the signal asks (uvicorn re-raises it: killed by
``SIGTERM``; ``SIGINT`` ends the command with status 0 after its own clean-up). What a CI job
expects of a fake server it started: gone within about a second, whatever it was doing. uvicorn's
default waits for every request in flight without limit (``timeout_graceful_shutdown=None``;
Kludex/uvicorn 0.54.0 ``uvicorn/server.py`` ``Server.shutdown``), and a request whose reply is
being built on a worker thread cannot be cut short. Measured (``/tmp/o/term.py``, issue 9, task
O): the first streamed request of a 40,000-token answer (sglang) to a client that does not read,
``SIGTERM`` or ``SIGINT`` 1.5 s in: exit after 30.2-30.6 s before, 0.7-0.8 s now; a build held on
a worker thread (``tests/server/test_stop_promptly.py``): never before, ~0.6 s now. Such builds
run on daemon threads (:mod:`mockoss.workers`) whose awaiting task
returns when cancelled, so neither the event loop's close nor the interpreter's exit waits for
them; a reply cut this way is neither sent nor recorded, and a recording keeps every exchange
that finished. A stream longer than the grace (a paced one, a slow client) is cut the same way:
its connection is closed part-way. ``tests/server/test_stop_promptly.py`` checks both signals.

What a client whose response had not started gets: ``503`` in the active profile's error shape,
saying that the server is stopping, with ``Connection: close``
(:data:`mockoss.server.app.STOPPING_MESSAGE`, sent by mockoss's own app when the cancellation
reaches it). uvicorn's own answer there was a ``text/plain`` "Internal Server Error" 500 (its
request cycle's ``run_asgi`` answers any exception before the response started so), an error no
scenario asked for and in no profile's shape (eleventh-session breaker, finding 8). Why a 503
rather than closing the connection without an answer: the real servers do not agree on one (vLLM
cancels its whole ``uvicorn`` server task on SIGINT and SIGTERM and its engine goes away under the
requests, ``vllm-project/vllm@02828a1:vllm/entrypoints/launcher.py`` ``serve_http``; a killed
process closes every connection), so none is a contract a test could rely on; a bare close reads
as "server disconnected without sending a response", which says nothing of why, while the 503 says
it in the body a test author sees, and SDKs retry both alike (a connection error and a 503 are
both retried by the OpenAI SDKs). ``tests/server/test_stop_reply.py`` checks it. uvicorn's
``ERROR`` line about the cancelled tasks is logged as a mockoss warning that says the same.

Except with ``--record``: there the exchanges in flight are what the user asked to keep, so the
server says how many it waits for and waits, up to 600 s or a second SIGTERM/SIGINT, then cuts
the rest as above (:mod:`mockoss.server.record_stop`), and :mod:`mockoss.server.durable`'s
promise stands: every stream a client received whole is in the recording
(``tests/upstream/test_record_durable.py``).
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import logging
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.requests import ClientDisconnect
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from mockoss.server.app import create_app
from mockoss.server.control import ControlOptions
from mockoss.server.core import MockServer
from mockoss.server.limits import DEFAULT_REQUEST_TIMEOUT_S, timed_protocol
from mockoss.server.record_stop import RecordingServer
from mockoss.server.transport import StreamAborted

__all__ = ["OPEN_FILES_WANTED", "SHUTDOWN_GRACE_S", "ThreadedServer", "bind", "raise_open_files_limit", "serve_forever"]

#: Seconds ``mockoss serve`` lets requests in flight finish once told to stop (module docstring).
SHUTDOWN_GRACE_S = 0.5


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """Bind a listening TCP socket; port 0 picks a free port.

    Raises:
        OSError: the address is in use or cannot be bound.
    """
    if not 0 <= port <= 65535:
        raise OSError(f"port must be 0-65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio and uvloop set TCP_NODELAY on accepted connections only
    # when the listening socket says it is TCP; without it every small response waits ~40 ms
    # for Nagle's algorithm and the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def base_url(sock: socket.socket) -> str:
    """``http://HOST:PORT`` of a bound socket (IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class _ExpectedDisconnects(logging.Filter):
    """Drop uvicorn's "Exception in ASGI application" records for connection drops that are the
    point (a profile or transport fault ending a stream), the client's doing (it left mid-body) or
    the server's stop (a request cancelled after :data:`SHUTDOWN_GRACE_S`; uvicorn logs its own
    line saying how many); every other error is still logged with its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, (StreamAborted, ClientDisconnect, asyncio.CancelledError)):
                return False
            exc = exc.__cause__ or exc.__context__ or _only_member(exc)
        return True


def _only_member(exc: BaseException) -> BaseException | None:
    """The single exception inside an ExceptionGroup (Starlette's task groups wrap them)."""
    members = getattr(exc, "exceptions", None)
    return members[0] if members and len(members) == 1 else None


_FILTER = _ExpectedDisconnects()
logging.getLogger("uvicorn.error").addFilter(_FILTER)

#: uvicorn 0.54's line when a stop's grace ran out (``uvicorn/server.py`` ``Server.shutdown``).
_UVICORN_CANCEL = "Cancel %s running task(s), timeout graceful shutdown exceeded"


class _StopWords(logging.Filter):
    """uvicorn's ``ERROR`` line for the requests a stop cancelled, as a warning in mockoss's words:
    the cut is what ``mockoss serve`` promises at a stop (module docstring), not an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == _UVICORN_CANCEL:
            record.msg = (
                f"mockoss: stopping: %s request(s) still in flight after {SHUTDOWN_GRACE_S:g} s cancelled "
                "(one not yet answered gets 503; a stream is cut)"
            )
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        return True


logging.getLogger("uvicorn.error").addFilter(_StopWords())


def _config(
    server: MockServer,
    log_level: str,
    request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S,
    control: ControlOptions | None = None,
) -> uvicorn.Config:
    # The lifespan only closes an upstream's HTTP client and the recorder (mockoss.upstream); without them, skip it.
    lifespan = "on" if server.upstream is not None or server.recorder is not None else "off"
    # uvicorn's own protocol (httptools when installed, else h11), plus a deadline for the request
    # head: idle and half-sent connections are closed (mockoss.server.limits).
    http: Any = "auto" if request_timeout_s is None else timed_protocol(AutoHTTPProtocol, request_timeout_s)
    app = create_app(server, request_timeout_s=request_timeout_s, control=control)
    # proxy_headers off: uvicorn's ProxyHeadersMiddleware reads X-Forwarded-* on every request
    # from a trusted (loopback) peer to rewrite the client address and scheme, which mockoss never
    # uses but for its access log (~1 us a request, issue 9).
    return uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        lifespan=lifespan,
        http=http,
        proxy_headers=False,
        ws=_websocket_protocol(),
    )


def _websocket_protocol() -> Callable[..., asyncio.Protocol] | None:
    """What uvicorn's ``ws="auto"`` would pick, imported only when a client asks for a WebSocket.

    mockoss serves no WebSocket route, yet ``ws="auto"`` imports the ``websockets`` package (or
    ``wsproto``) when uvicorn loads its config: 7-10 ms of CPU and 0.6 MB of every ``mockoss serve`` start
    (issue 9, benchmarks/bench_start.py). ``ws="none"`` would avoid it but change the answer: an
    ``Upgrade: websocket`` request would be served as plain HTTP, with two warnings logged per
    request ("Unsupported upgrade request", "No supported WebSocket library detected"), instead of
    the 403 that the WebSocket protocol answers a path without a WebSocket route (what a vLLM
    server, uvicorn with ``websockets`` installed, answers too). uvicorn accepts any callable as
    ``ws`` and calls it with keyword arguments per upgrade request (Kludex/uvicorn 0.54.0
    ``uvicorn/config.py`` ``Config.load``, ``protocols/http/httptools_impl.py``
    ``handle_websocket_upgrade``): this factory defers the import to that first call. Without
    either library installed, ``None``, as ``"auto"`` gives (the request is served as HTTP).
    """
    if importlib.util.find_spec("websockets") is None and importlib.util.find_spec("wsproto") is None:
        return None

    def websocket_protocol(**kwargs: Any) -> asyncio.Protocol:
        from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

        assert AutoWebSocketsProtocol is not None  # find_spec found a library above
        return AutoWebSocketsProtocol(**kwargs)

    return websocket_protocol


def serve_forever(
    server: MockServer,
    sock: socket.socket,
    *,
    log_level: str = "warning",
    request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S,
    control: ControlOptions | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C). ``control``: the control routes' token, allowed hosts and
    access log (:mod:`mockoss.server.control`).

    ``request_timeout_s``: seconds a client has to send a request head (after connecting or after
    its previous response) and, separately, its body; ``None``: no deadline.
    """
    config = _config(server, log_level, request_timeout_s, control)
    # Then in-flight requests are cut (module docstring); a recording server waits for them, up to
    # RECORD_GRACE_S or a second signal, saying so (mockoss.server.record_stop).
    config.timeout_graceful_shutdown = SHUTDOWN_GRACE_S if server.recorder is None else None
    raise_open_files_limit()
    # Everything loaded so far (encoding, scenarios, app) lives for the whole process: move it out
    # of the garbage collector's sight so collections stay short under load. The CLI pauses the
    # collector while it starts (mockoss.cli.main), and it is not run here before freezing: a full
    # collection of the ~100,000 start-up objects cost ~50 ms of the cold start (issue 9,
    # benchmarks/bench_start.py) to free ~1,400 objects (~0.4 MB of RSS: the argparse parser and
    # import-time temporaries), which now stay. gc.disable() early, gc.freeze() without a
    # collection, is the pattern the gc module's documentation gives for long-lived start-up state.
    gc.freeze()
    gc.enable()
    # A full collection walks everything the server keeps (request log, prompt caches: ~25 ms at
    # 10,000 logged requests) and ran every ~7,000 unique requests under load, ~1.4 us a request in
    # process, more over HTTP (benchmarks/README.md, "Where the time goes"). The objects a request
    # leaves behind are freed by reference counting when the log or a cache drops them; only
    # cycles wait for a full collection, which now comes after 100 middle-generation collections
    # instead of 10 (and still only when the survivors grew by a quarter, CPython's own rule).
    first, middle, _ = gc.get_threshold()
    gc.set_threshold(first, middle, 100)
    # While a big request runs on a worker thread (mockoss.server.offload), the event loop waits up
    # to one switch interval for the GIL at every await; 1 ms instead of 5 keeps another client's
    # small request (a dozen such waits) within its fair share. Only this process is affected.
    sys.setswitchinterval(0.001)
    (uvicorn.Server(config) if server.recorder is None else RecordingServer(config)).run(sockets=[sock])


#: The soft limit on open files ``mockoss serve`` asks for (at most the hard limit).
OPEN_FILES_WANTED = 65_536


def raise_open_files_limit(wanted: int = OPEN_FILES_WANTED) -> None:
    """Raise this process's soft ``RLIMIT_NOFILE`` towards ``min(wanted, hard limit)``; never lower it.

    Every connection holds a descriptor, and Linux's default soft limit is often 1,024 under a far
    higher hard limit. When accept() fails with EMFILE, asyncio's own event loop (a plain install,
    without uvloop) logs a traceback and schedules a retry for every one of uvicorn's 2,048 backlog
    slots, each second (CPython 3.11 ``asyncio/selector_events.py`` ``_accept_connection`` loops on
    after the error): a reviewer measured 28 s of CPU in 30 s and 176 MB of log with 1,100 idle
    sockets against 1,024 descriptors; with uvloop new connections are refused meanwhile. Idle
    connections are closed after ``--request-timeout``; a higher soft limit keeps that window out
    of reach of ordinary clients. Servers commonly raise it the same way (nginx's
    ``worker_rlimit_nofile``). Platforms without :mod:`resource` are left as they are.
    """
    try:
        import resource
    except ImportError:  # Windows
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):  # not allowed here: keep the limit as it is
            pass


#: Seconds :meth:`ThreadedServer.stop` waits, after the grace, before it says the thread is stuck.
_STOP_BOUND_S = 10.0


class ThreadedServer:
    """A uvicorn server on a free loopback port, in a daemon thread (the pytest fixtures' server).

    It stops as ``mockoss serve`` does without ``--record``: what is in flight after
    :data:`SHUTDOWN_GRACE_S` is cut (:meth:`stop`), a recording one included, since the test that
    sent it is over.

    Attributes:
        url: ``http://127.0.0.1:PORT``.
        server: the :class:`MockServer` it serves.
    """

    def __init__(
        self, server: MockServer, host: str = "127.0.0.1", request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S
    ) -> None:
        self.server = server
        self._sock = bind(host, 0)
        self.url = base_url(self._sock)
        config = _config(server, "warning", request_timeout_s)
        # What a stop of ``mockoss serve`` does (module docstring): requests still in flight after
        # the grace are cut. uvicorn's default waited for them without limit, so a stream a test
        # left open (stalled, or not read) held the fixture's teardown 10 s (t18 breaker, finding 1).
        config.timeout_graceful_shutdown = SHUTDOWN_GRACE_S
        self._uvicorn = uvicorn.Server(config)
        self._uvicorn.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def start(self, timeout: float = 10.0) -> ThreadedServer:
        """Start and wait until the server accepts connections.

        Raises:
            RuntimeError: it did not start within ``timeout`` seconds.
        """
        self._thread.start()
        deadline = threading.Event()
        for _ in range(int(timeout * 100)):
            if self._uvicorn.started:
                return self
            if not self._thread.is_alive():
                break
            deadline.wait(0.01)
        raise RuntimeError(f"mockoss server did not start on {self.url}")

    def stop(self) -> None:
        """Stop serving and wait for the server's thread to end: within about
        :data:`SHUTDOWN_GRACE_S` + 0.2 s, also with streams or requests still open (they are cut
        as ``mockoss serve`` cuts them at a stop: a stream is closed part-way, a request not yet
        answered gets mockoss's 503; the log says how many, as a warning). A recording server
        (:mod:`mockoss.server.durable`) keeps every exchange that finished before the cut.

        Raises:
            RuntimeError: the thread was still running :data:`_STOP_BOUND_S` seconds after the
                grace (not seen: a reply built on a worker thread returns when cancelled).
        """
        self._uvicorn.should_exit = True
        self._thread.join(timeout=SHUTDOWN_GRACE_S + _STOP_BOUND_S)
        self._sock.close()
        if self._thread.is_alive():
            raise RuntimeError(
                f"mockoss server on {self.url} did not stop within {SHUTDOWN_GRACE_S + _STOP_BOUND_S:g} s"
            )
