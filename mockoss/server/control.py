"""The control plane: ``/mockoss/*`` routes, per-test sessions, the request log, metrics, safety.

**Sessions.** A *test id* names one test's private copy of the fake server: its own scenario
selection, rule cursors, conversation sessions, request numbering (so ids are those a dedicated
server would give) and request log. A request picks its test id with the header
``X-Mockoss-Test-Id: ID`` or the path prefix ``/s/ID/`` (``http://HOST:PORT/s/ID/v1`` as a
client's base URL: no header needed). Requests without one use the default session (the server
as started). A session is created on first use as a copy of the server's start-up configuration
(scenario, profile, switches, model names, seed, transport, recorder); at most
:data:`MAX_SESSIONS` are kept, the least recently used is dropped. With ``--upstream`` the
proxy answers every request as the server as started; a test id then only keeps its own request
log (a reset of it clears that log).

**Routes** (a FastAPI sub-application with its own OpenAPI description at
``/mockoss/openapi.json``; the emulated server's routes are not in it). Every route takes the
session as ``?test_id=ID`` or the ``X-Mockoss-Test-Id`` header (absent: the default session):

* ``GET /mockoss/ready``: readiness (200 once serving), distinct from the profile's ``/health``.
* ``POST /mockoss/scenario?name=N``: load a scenario (YAML or JSON body, validated: errors give
  line and field) and select it for the session; ``GET`` shows the selected one. Compiled on a
  worker thread; at most ``ControlOptions.max_scenario_bytes`` (413), and the sessions keep a
  bounded total of uploads (:class:`mockoss.server.control_routes._Uploads`).
* ``POST /mockoss/reset``: rewind the session's scenarios and clear its log (``?all=true``: every
  session, and the metrics).
* ``GET /mockoss/requests``: the session's request log, every route (probes included), oldest
  first; ``?session=KEY`` keeps one conversation (``X-Mockoss-Session``). Bounded in bytes, a long
  log built and sent a part at a time, its readers taking turns (:mod:`mockoss.server.control_log`).
* ``GET /mockoss/sessions``: the test ids with state; ``DELETE /mockoss/sessions/ID`` drops one.
* ``GET /mockoss/metrics``: Prometheus text (:mod:`prometheus_client`).

**Safety**: the control routes refuse foreign ``Host`` names, cross-origin requests and form
content types, and need the admin token when one is set (:mod:`mockoss.server.control_guard`).
The emulated API itself stays open, as the real servers' are. **Metrics**:
:mod:`mockoss.server.control_metrics`. ``--access-log`` prints one line per request to stderr.
"""

from __future__ import annotations

import itertools
import logging
import re
import sys
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mockoss.endpoints import endpoint_for_path
from mockoss.profiles.registry import QUIET_RELEASES
from mockoss.scenario.player import SESSION_HEADER, session_key
from mockoss.server import control_log
from mockoss.server.control_guard import ControlOptions, accepted_hosts, error
from mockoss.server.control_guard import refusal as guard
from mockoss.server.control_log import (
    CONTROL_LOG_BYTES,
    SESSION_CONTROL_LOG_BYTES,
    LogEntry,
    cut_path,
    drop_oldest,
    entry_bytes,
)
from mockoss.server.control_metrics import Metrics
from mockoss.server.records import REQUEST_RECORDS
from mockoss.server.request_headers import header_map
from mockoss.server.responses import to_response

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mockoss.server.core import MockServer
    from mockoss.server.records import RecordedRequest

__all__ = ["MAX_SESSIONS", "TEST_ID_HEADER", "ControlOptions", "ControlPlane", "frame_separator", "header_map", "install", "route_path"]

logger = logging.getLogger("mockoss")

TEST_ID_HEADER = "x-mockoss-test-id"
#: Sessions kept at once; the least recently used one is dropped beyond it.
MAX_SESSIONS = 256
#: Bytes of request log (bodies, completions) one test-id session keeps: with :data:`MAX_SESSIONS`
#: the sessions hold at most 1 GiB together, besides the default session's own bound. Fewer than
#: the session's entries (``SESSION_CONTROL_LOG_BYTES``, 8 MiB): an entry that outlives its body
#: shows ``"body_dropped": true`` (README, Limits; eleventh-session breaker, finding 4).
SESSION_LOG_BYTES = 4 * 1024 * 1024
#: Bytes of kept validations (``MockServer._validate``) one test-id session keeps: 256 MiB for
#: :data:`MAX_SESSIONS` sessions together.
SESSION_VALID_BODY_BYTES = 1024 * 1024
#: Bytes of kept responses (``gptoss-reference``'s store, :class:`mockoss.profiles.response_store.KeptResponses`)
#: one test-id session keeps: 256 MiB for :data:`MAX_SESSIONS` sessions together (16 MiB each
#: would be 4 GiB: the breaker's M1, 14th session).
SESSION_KEPT_BYTES = 1024 * 1024
#: Log entries kept per session when the server keeps an unbounded request log.
DEFAULT_LOG_LIMIT = 10_000
_TEST_ID = re.compile(r"[A-Za-z0-9._~:@+=-]{1,200}")
_PREFIX = re.compile(r"^/s/([^/]+)(/.*)$")
_SCENARIO_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass
class _Session:
    server: MockServer
    log: deque[LogEntry]
    last_used: float = field(default_factory=time.monotonic)
    #: Times the log was cleared: a request that began before a reset and ends after it (the
    #: client has its answer, the test has moved on) is not logged into the next test's log.
    epoch: int = 0
    #: Bytes the log's entries hold (their last item's sum), under :attr:`lock`.
    bytes: int = 0
    #: The plane's log lock (appends and evictions run on the event loop, a fixture's reset of
    #: the server as started on the test's thread).
    lock: threading.Lock = field(default_factory=threading.Lock)

    def clear(self) -> None:
        with self.lock:
            self.log.clear()
            self.bytes = 0
            self.epoch += 1


class ControlPlane:
    """Sessions, their request logs, metrics and the guard of one app (see the module docstring).

    Args:
        base: the server as started (the default session).
        options: see :class:`ControlOptions`.
    """

    def __init__(self, base: MockServer, options: ControlOptions | None = None, *, upstream: bool = False) -> None:
        self.base, self.options, self.upstream = base, options or ControlOptions(), upstream
        limit = base.request_log_limit or DEFAULT_LOG_LIMIT
        self._log_limit = limit
        self._lock = threading.Lock()
        #: Guards every session's log and byte count (:meth:`_append`, :meth:`_trim_all`, clear).
        self._log_lock = threading.Lock()
        #: Bytes of entries logged since :data:`CONTROL_LOG_BYTES` was last checked.
        self._unchecked = 0
        self.session_log_bytes = SESSION_CONTROL_LOG_BYTES
        self.log_bytes = CONTROL_LOG_BYTES
        self._default = _Session(base, deque(), lock=self._log_lock)
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._seq = itertools.count(1)  # next() is atomic: no lock per request
        self.started = time.time()
        self.metrics = Metrics(lambda: len(self._sessions), base.recorder)
        # A reset of the server as started (the pytest fixture resets it in-process before every
        # test) clears the default session's log too.
        original_reset = base.reset

        def reset() -> None:
            original_reset()
            self._default.clear()

        base.reset = reset  # type: ignore[method-assign]

    # -- sessions --------------------------------------------------------------------------------

    def session(self, test_id: str | None, *, create: bool = True) -> _Session | None:
        """The session of ``test_id`` (``None``/empty: the default one), created on first use."""
        if not test_id:
            return self._default
        with self._lock:
            found = self._sessions.get(test_id)
            if found is not None:
                self._sessions.move_to_end(test_id)
                found.last_used = time.monotonic()
                return found
            if not create:
                return None
            # With an upstream the proxy answers for the server as started: a session has its own
            # log only (the upstream's state is not ours to split).
            server = self.base if self.upstream else self._copy()
            found = self._sessions[test_id] = _Session(server, deque(), lock=self._log_lock)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
            return found

    def _copy(self) -> MockServer:
        from mockoss.server.core import MockServer

        base = self.base
        quiet = QUIET_RELEASES.set(True)  # the server's profile name warned when it was built
        try:
            copy = MockServer(
                scenario=base.scenario,
                profile=base.profile,
                switches=dict(base.switches),
                served_model_names=tuple(base.served_model_names) if getattr(base, "_models_explicit", False) else None,
                seed=base.seed,
                created=base.created,
                request_log_limit=base.request_log_limit or DEFAULT_LOG_LIMIT,
                transport=base.transport,
                recorder=base.recorder,
                scenario_dirs=base.scenario_dirs,  # a session names the operator's files too
            )
        finally:
            QUIET_RELEASES.reset(quiet)
        copy.max_scenario_dir_bytes = base.max_scenario_dir_bytes
        if hasattr(copy, "request_log_bytes"):  # a bounded RequestLog: give each session its share
            copy.requests.max_bytes = copy.request_log_bytes = SESSION_LOG_BYTES
        copy._valid_bodies.limit = SESSION_VALID_BODY_BYTES  # and of kept validations (16 MiB each: 4 GiB in all)
        copy.kept.budget = SESSION_KEPT_BYTES  # and of kept responses
        if hasattr(base, "auto_session"):
            copy.auto_session = base.auto_session  # type: ignore[attr-defined]
        for name, scenario in list(getattr(base, "_scenarios", {}).items()):
            copy._scenarios.setdefault(name, scenario)
        return copy

    def guarded(self, app: ASGIApp) -> ASGIApp:
        """``app`` under this plane's guard, log and metrics middleware (the ``/s/ID`` prefix,
        the test id, the control routes' guard, :meth:`log`), as :func:`install` wraps the whole app."""
        return _Guarded(app, self)

    def server_for(self, scope: Scope) -> MockServer:
        """The :class:`MockServer` answering a request (its test id's session)."""
        return self.session(_test_id(scope)).server  # type: ignore[union-attr]

    def epoch(self, test_id: str | None) -> int:
        """The :attr:`_Session.epoch` of ``test_id``'s session (0 if it has none yet)."""
        found = self.session(test_id, create=False) if test_id is None or _TEST_ID.fullmatch(test_id) else None
        return found.epoch if found is not None else 0

    def log(
        self, scope: Scope, record: RecordedRequest | None, status: int, frames: int, seconds: float, epoch: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Add a finished request (``record``: its generation log record, if any) to its
        session's log, the metrics and the access log. ``epoch``: the session's :meth:`epoch` when
        the request began; if the session was reset since, the request stays out of its log.
        ``headers``: ``header_map(scope)``, when the caller has it."""
        if headers is None:
            headers = header_map(scope)
        test_id = headers.get(TEST_ID_HEADER) or None
        path = scope.get("path", "")
        if path.startswith("/mockoss/"):
            endpoint = "control"
        elif record is not None:
            endpoint = record.endpoint
        else:
            found = endpoint_for_path(path)
            endpoint = found.name if found is not None and scope.get("method") == "POST" else "probe"
        seq = next(self._seq)
        if endpoint != "control" and (test_id is None or _TEST_ID.fullmatch(test_id)):
            target = self.session(test_id) if test_id else self._default
            if epoch is None or target.epoch == epoch:  # type: ignore[union-attr]
                session = headers.get(SESSION_HEADER)
                if session is not None:
                    session = session_key(session)  # as the player keeps it: bounded bytes per entry
                # Only the record's index and names: its body and completion stay in the server's
                # own (byte-bounded) log. Scalars only, so the garbage collector stops tracking the
                # entry at its first pass; spelt out as a dict when read (log_entry).
                # A long path is kept cut, and the entry counted in bytes (issue 9 review, eighth
                # session, finding 3: 64 KB probe paths, 10,000 a session, held ~1 GB).
                method, kept = scope.get("method"), cut_path(path)
                size = entry_bytes(method, kept, test_id, session)
                if record is None:
                    entry: LogEntry = (seq, method, kept, status, endpoint, test_id, session, seconds, None, None, None, None, None, size)
                else:
                    entry = (seq, method, kept, status, endpoint, test_id, session, seconds, record.index, record.scenario, record.rule, record.turn, record.step, size)
                self._append(target, entry, size, epoch)  # type: ignore[arg-type]
        self.metrics.observe(endpoint, status, record.scenario if record is not None else None, frames)
        if self.options.access_log:
            client = scope.get("client") or ("-", 0)
            extra = f" test_id={test_id}" if test_id else ""
            print(
                f'{client[0]}:{client[1]} "{scope.get("method")} {path}" {status} {seconds * 1000:.1f}ms{extra}',
                file=sys.stderr,
                flush=True,
            )


    def _append(self, target: _Session, entry: LogEntry, size: int, epoch: int | None) -> None:
        """Add ``entry`` (``size`` bytes) to ``target``'s log; drop the log's oldest entries beyond
        the count limit or :attr:`session_log_bytes`, and every :data:`CONTROL_LOG_CHECK_BYTES`
        the oldest entries of any session beyond :attr:`log_bytes`."""
        with self._log_lock:
            if epoch is not None and target.epoch != epoch:
                return  # reset between the check and here
            log = target.log
            log.append(entry)
            target.bytes += size
            while len(log) > self._log_limit or (target.bytes > self.session_log_bytes and len(log) > 1):
                target.bytes -= log.popleft()[-1]
            self._unchecked += size
            if self._unchecked >= control_log.CONTROL_LOG_CHECK_BYTES:
                self._unchecked = 0
                self._trim_all()

    def _trim_all(self) -> None:
        """:func:`drop_oldest` of all sessions' logs down to :attr:`log_bytes`. Under :attr:`_log_lock`."""
        drop_oldest([self._default, *list(self._sessions.values())], self.log_bytes)

    def log_bytes_held(self) -> int:
        """Bytes all sessions' logs hold together (:func:`entry_bytes` of each entry)."""
        with self._log_lock:
            return sum(s.bytes for s in [self._default, *list(self._sessions.values())])


def frame_separator(media_type: str) -> bytes | None:
    """What ends each frame of a stream of ``media_type``, counted for the log and metrics: an SSE
    event's blank line, an NDJSON line's newline; ``None`` for any other type."""
    if media_type.startswith("text/event-stream"):
        return b"\n\n"
    if media_type.startswith("application/x-ndjson"):
        return b"\n"
    return None


def route_path(path: str) -> str:
    """``path`` without its ``/s/ID`` test-id prefix (what the routes see)."""
    if path.startswith("/s/"):
        prefixed = _PREFIX.match(path)
        if prefixed is not None:
            return prefixed.group(2)
    return path


def _test_id(scope: Scope) -> str | None:
    return header_map(scope).get(TEST_ID_HEADER) or None


class _Guarded:
    """ASGI middleware: the ``/s/ID/`` prefix, the control routes' guard, the log and metrics."""

    def __init__(self, app: ASGIApp, plane: ControlPlane) -> None:
        self.app, self.plane = app, plane
        self._hosts = accepted_hosts(plane.options)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        prefixed = _PREFIX.match(path) if path.startswith("/s/") else None
        if prefixed is not None:
            scope = dict(scope)
            path = prefixed.group(2)
            scope["path"], scope["raw_path"] = path, path.encode()
            # First, so that the prefix wins over a header (first value wins, see _header_map).
            scope["headers"] = [(TEST_ID_HEADER.encode(), prefixed.group(1).encode()), *scope["headers"]]
            scope.pop("state", None)
        headers = header_map(scope)
        test_id = headers.get(TEST_ID_HEADER)
        began = time.perf_counter()
        epoch = self.plane.epoch(test_id)
        status, frames = 500, 0
        refusal = None
        if test_id is not None and not _TEST_ID.fullmatch(test_id):
            message = f"mockoss: {TEST_ID_HEADER}: 1-200 characters of letters, digits and ._~:@+=- please"
            if path.startswith("/mockoss/") or path == "/mockoss":
                refusal = error(400, message)
            else:  # the emulated API: the profile's error shape, as every other 400 there
                found = endpoint_for_path(path)
                refusal = to_response(self.plane.base.error_reply(found.name if found is not None else "chat", 400, message))
        elif path.startswith("/mockoss/") or path == "/mockoss":
            refusal = guard(scope, headers, self.plane.options, self._hosts)
        separator: bytes | None = None  # of a stream's frames, once its content type is known
        records: list[RecordedRequest] = []
        logged = False

        def finish() -> None:
            nonlocal logged
            if not logged:
                logged = True
                self.plane.log(scope, records[-1] if records else None, status, frames, time.perf_counter() - began, epoch)

        async def watched(message: Message) -> None:
            nonlocal status, frames, separator
            if message["type"] == "http.response.body":
                if separator is not None:  # runs once per stream write
                    frames += message.get("body", b"").count(separator)
                if not message.get("more_body", False):
                    # Logged before the last byte leaves: a client that has its answer finds it in
                    # GET /mockoss/requests, and a reset after it cannot be overtaken by it.
                    finish()
            elif message["type"] == "http.response.start":
                status = message["status"]
                for name, value in message.get("headers", ()):
                    if name.lower() == b"content-type":
                        separator = frame_separator(value.decode("latin-1")) or separator
            await send(message)

        token = REQUEST_RECORDS.set(records)
        try:
            if refusal is not None:
                await refusal(scope, receive, watched)
            else:
                await self.app(scope, receive, watched)
        finally:
            REQUEST_RECORDS.reset(token)
            finish()  # a request that ended without its last body message (an error, a disconnect)


def install(app: Starlette, server: MockServer, options: ControlOptions | None = None, *, upstream: bool = False) -> ControlPlane:
    """Wrap ``app`` in the guard, log and metrics middleware of a new control plane and return it.
    The ``/mockoss`` routes are :func:`mockoss.server.control_routes.control_app`, which the app
    mounts (:func:`mockoss.server.app.create_app` builds them on the first ``/mockoss`` request)."""
    plane = ControlPlane(server, options, upstream=upstream)
    server.max_scenario_dir_bytes = plane.options.max_scenario_bytes  # the uploads' cap, on --scenario-dir files too
    app.add_middleware(_Guarded, plane=plane)
    return plane
