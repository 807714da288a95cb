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
  line and field) and select it for the session; ``GET`` shows the selected one.
* ``POST /mockoss/reset``: rewind the session's scenarios and clear its log (``?all=true``: every session).
* ``GET /mockoss/requests``: the session's request log, every route (probes included), oldest
  first; ``?session=KEY`` keeps one conversation (``X-Mockoss-Session``).
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
import tempfile
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mockoss import __version__
from mockoss.endpoints import endpoint_for_path
from mockoss.scenario.conversation import LowerCaseHeaders
from mockoss.server.control_guard import ControlOptions, accepted_hosts, error
from mockoss.server.control_guard import refusal as guard
from mockoss.server.control_metrics import Metrics
from mockoss.server.records import REQUEST_RECORDS

if TYPE_CHECKING:
    from mockoss.server.core import MockServer
    from mockoss.server.records import RecordedRequest

__all__ = ["MAX_SESSIONS", "TEST_ID_HEADER", "ControlOptions", "ControlPlane", "header_map", "install", "route_path"]

logger = logging.getLogger("mockoss")

TEST_ID_HEADER = "x-mockoss-test-id"
SESSION_HEADER = "x-mockoss-session"
#: Sessions kept at once; the least recently used one is dropped beyond it.
MAX_SESSIONS = 256
#: Bytes of request log (bodies, completions) one test-id session keeps: with :data:`MAX_SESSIONS`
#: the sessions hold at most 1 GiB together, besides the default session's own bound.
SESSION_LOG_BYTES = 4 * 1024 * 1024
#: Log entries kept per session when the server keeps an unbounded request log.
DEFAULT_LOG_LIMIT = 10_000
_TEST_ID = re.compile(r"[A-Za-z0-9._~:@+=-]{1,200}")
_PREFIX = re.compile(r"^/s/([^/]+)(/.*)$")
_SCENARIO_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass
class _Session:
    server: MockServer
    log: deque[dict[str, Any]]
    last_used: float = field(default_factory=time.monotonic)
    #: Times the log was cleared: a request that began before a reset and ends after it (the
    #: client has its answer, the test has moved on) is not logged into the next test's log.
    epoch: int = 0

    def clear(self) -> None:
        self.log.clear()
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
        self._default = _Session(base, deque(maxlen=limit))
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
            found = self._sessions[test_id] = _Session(server, deque(maxlen=self._log_limit))
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
            return found

    def _copy(self) -> MockServer:
        from mockoss.server.core import MockServer

        base = self.base
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
        )
        if hasattr(copy, "request_log_bytes"):  # a bounded RequestLog: give each session its share
            copy.requests.max_bytes = copy.request_log_bytes = SESSION_LOG_BYTES
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
        self, scope: Scope, record: RecordedRequest | None, status: int, frames: int, seconds: float, epoch: int | None = None
    ) -> None:
        """Add a finished request (``record``: its generation log record, if any) to its
        session's log, the metrics and the access log. ``epoch``: the session's :meth:`epoch` when
        the request began; if the session was reset since, the request stays out of its log."""
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
        entry = {
            "seq": seq,
            "method": scope.get("method"),
            "path": path,
            "status": status,
            "endpoint": endpoint,
            "test_id": test_id,
            "session": headers.get(SESSION_HEADER),
            "ms": round(seconds * 1000, 3),
            # Only the index: the body and completion stay in the server's own (byte-bounded) log.
            "index": record.index if record is not None else None,
            "scenario": record.scenario if record is not None else None,
            "rule": record.rule if record is not None else None,
            "turn": record.turn if record is not None else None,
            "step": record.step if record is not None else None,
        }
        if endpoint != "control" and (test_id is None or _TEST_ID.fullmatch(test_id)):
            target = self.session(test_id)
            if epoch is None or target.epoch == epoch:  # type: ignore[union-attr]
                target.log.append(entry)  # type: ignore[union-attr]
        self.metrics.observe(endpoint, status, record.scenario if record is not None else None, frames)
        if self.options.access_log:
            client = scope.get("client") or ("-", 0)
            extra = f" test_id={test_id}" if test_id else ""
            print(
                f'{client[0]}:{client[1]} "{scope.get("method")} {path}" {status} {seconds * 1000:.1f}ms{extra}',
                file=sys.stderr,
                flush=True,
            )

    # -- routes ----------------------------------------------------------------------------------

    def app(self) -> FastAPI:
        """The ``/mockoss`` sub-application (mount it at ``/mockoss``)."""
        control = FastAPI(
            title="mockoss control API",
            version=__version__,
            description=(
                "Control routes of a mockoss fake server: sessions per test id, run-time scenarios, "
                "the request log, readiness and metrics. The emulated server's own API (/v1/..., /api/...) "
                "is not described here."
            ),
            docs_url="/docs",
            redoc_url=None,
            openapi_url="/openapi.json",
        )
        plane = self

        def chosen(request: Request, test_id: str | None) -> str | None:
            return test_id or request.headers.get(TEST_ID_HEADER) or None

        @control.get("/ready", summary="Readiness: 200 once the server answers requests")
        async def ready() -> dict[str, Any]:
            scenario = plane.base.scenario
            return {
                "ready": True,
                "version": __version__,
                "profile": plane.base.profile,
                "scenario": getattr(scenario, "name", None),
                "upstream": plane.upstream,
            }

        @control.post("/scenario", summary="Load a scenario (YAML or JSON body) and select it for a session")
        async def load(
            request: Request, name: str = Query("uploaded", description="scenario name"), test_id: str | None = Query(None)
        ) -> Response:
            if not _SCENARIO_NAME.fullmatch(name):
                return error(400, f"name must be letters, digits, '.', '_' or '-', got {name!r}")
            raw = await request.body()
            try:
                scenario = _load_text(raw, name)
                target = plane.session(chosen(request, test_id))
                target.server.use_scenario(scenario)  # type: ignore[union-attr]
            except ValueError as exc:  # ScenarioError is a ValueError
                return error(400, str(exc))
            rules = getattr(scenario, "rules", ())
            return JSONResponse(
                {"name": scenario.name, "test_id": chosen(request, test_id), "rules": len(rules), "steps": sum(len(r.steps) for r in rules)}
            )

        @control.get("/scenario", summary="The scenario a session answers with")
        async def selected(request: Request, test_id: str | None = Query(None)) -> dict[str, Any]:
            target = plane.session(chosen(request, test_id))
            scenario = target.server.scenario  # type: ignore[union-attr]
            return {"name": getattr(scenario, "name", None), "test_id": chosen(request, test_id)}

        @control.post("/reset", status_code=204, summary="Rewind a session's scenarios and clear its log")
        async def reset(request: Request, test_id: str | None = Query(None), all: bool = Query(False)) -> Response:  # noqa: A002
            sessions = [plane._default, *plane._sessions.values()] if all else [plane.session(chosen(request, test_id))]
            for target in sessions:
                if target.server is not plane.base or target is plane._default:
                    target.server.reset()  # type: ignore[union-attr]
                target.clear()  # type: ignore[union-attr]
            return Response(status_code=204)

        @control.get("/requests", summary="A session's request log, every route, oldest first")
        async def requests(
            request: Request,
            test_id: str | None = Query(None),
            session: str | None = Query(None, description="keep one conversation (X-Mockoss-Session)"),
        ) -> Response:
            target = plane.session(chosen(request, test_id), create=False)
            if target is None:
                return JSONResponse([])
            records = {r.index: r for r in list(target.server.requests)}
            out = [_entry_json(e, records) for e in list(target.log) if session is None or e["session"] == session]
            try:
                return JSONResponse(out)
            except ValueError:  # a body held NaN or Infinity: Python's json reads them, JSON has no such numbers
                return JSONResponse(_finite(out))

        @control.get("/sessions", summary="Test ids with state")
        async def sessions() -> list[dict[str, Any]]:
            with plane._lock:
                items = list(plane._sessions.items())
            return [{"test_id": key, "requests": len(s.log), "scenario": getattr(s.server.scenario, "name", None)} for key, s in items]

        @control.delete("/sessions/{test_id}", status_code=204, summary="Drop a test id's session")
        async def drop(test_id: str) -> Response:
            with plane._lock:
                plane._sessions.pop(test_id, None)
            return Response(status_code=204)

        @control.get("/metrics", summary="Prometheus metrics", response_class=PlainTextResponse)
        async def metrics() -> Response:
            body, content_type = plane.metrics.render()
            return Response(body, media_type=content_type)

        return control


def _load_text(raw: bytes, name: str) -> Any:
    """A scenario from YAML or JSON bytes, validated by the same loader as files: errors name the
    upload (``upload:NAME.yaml``), the line and the field."""
    from mockoss.scenario.loader import load_scenario

    with tempfile.TemporaryDirectory(prefix="mockoss-upload-") as directory:
        path = Path(directory) / f"{name}.yaml"
        path.write_bytes(raw)
        try:
            return load_scenario(str(path))
        except ValueError as exc:
            raise type(exc)(str(exc).replace(str(path), f"upload:{name}.yaml")) from None


def _finite(data: Any) -> Any:
    """``data`` with each float that JSON cannot hold (``NaN``, ``±Infinity``, which a client may
    send and Python's ``json.loads`` accepts) replaced by its JavaScript spelling as a string."""
    if isinstance(data, float) and data != data:
        return "NaN"
    if isinstance(data, float) and data in (float("inf"), float("-inf")):
        return "Infinity" if data > 0 else "-Infinity"
    if isinstance(data, dict):
        return {key: _finite(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_finite(value) for value in data]
    return data


def _entry_json(entry: dict[str, Any], records: dict[int, RecordedRequest]) -> dict[str, Any]:
    """A log entry with its request body, completion and server log lines from the server's log
    (``None`` and ``[]`` once that log has dropped them)."""
    record = records.get(entry["index"]) if entry["index"] is not None else None
    return {
        **entry,
        "body": record.body if record is not None else None,
        "completion": record.completion if record is not None else None,
        "server_log": list(record.server_log) if record is not None else [],
    }


def header_map(scope: Scope) -> dict[str, str]:
    """The request headers as a dict (lower-case names; for a repeated header the first value
    wins, as ``Headers.get`` does), built once per request and kept in ``scope["state"]``."""
    state = scope.get("state")
    cached = state.get("mockoss.headers") if state is not None else None
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    headers = LowerCaseHeaders()
    for name, value in scope.get("headers", ()):
        headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    scope.setdefault("state", {})["mockoss.headers"] = headers
    return headers


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
            refusal = error(400, f"mockoss: {TEST_ID_HEADER}: 1-200 characters of letters, digits and ._~:@+=- please")
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
                        if value.startswith(b"text/event-stream"):
                            separator = b"\n\n"  # SSE: a blank line ends each event
                        elif value.startswith(b"application/x-ndjson"):
                            separator = b"\n"
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


def install(app: FastAPI, server: MockServer, options: ControlOptions | None = None, *, upstream: bool = False) -> ControlPlane:
    """Mount the control routes at ``/mockoss`` and wrap ``app`` in the guard, log and metrics
    middleware. Call before adding a catch-all route (routes match in order)."""
    plane = ControlPlane(server, options, upstream=upstream)
    app.mount("/mockoss", plane.app())
    app.add_middleware(_Guarded, plane=plane)
    return plane

