"""The ``/mockoss`` routes of the control plane, as a FastAPI sub-application with its own OpenAPI
description (``/mockoss/openapi.json``, ``/mockoss/docs``); what each route does is in
:mod:`mockoss.server.control`. Built by :func:`control_app` on the first ``/mockoss`` request, so
that serving the emulated API alone never imports FastAPI.

An upload is compiled by :func:`mockoss.server.scenario_compile.compile_upload` (``_load_text``
here), the path a request naming a ``--scenario-dir`` file takes too.

Work too long for the event loop (an upload's compile, the request log's JSON, a metrics render)
runs on the control app's own bounded pools of daemon threads (:class:`mockoss.workers.DaemonPool`:
:data:`UPLOAD_COMPILES`, :data:`mockoss.server.control_log.LOG_WRITES` and one thread), one set per
app, as anyio's limiters were. Not on ``anyio.to_thread``: its worker threads are not daemon
threads and a cancelled await waits for its call, so such a job held a stopping ``mockoss serve``
until it ended, however long, as scripted replies and side routes did before (issue 9, task O; the
eleventh session's review, finding 3). Measured (``/tmp/t12/measure.py``, twelfth session, task T):
``SIGINT`` 0.3 s into a job held 20 s, exit after 19.9-20.0 s before, 0.8-1.0 s now, for each of
the three (``SIGTERM`` was not held: uvicorn re-raises it and its default action ends the process
without joining threads). A stop now cuts the request (a 503, :mod:`mockoss.server.run`) and
leaves the job to its thread, which the interpreter's exit does not wait for
(``tests/server/test_stop_control_routes.py``)."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from mockoss import __version__
from mockoss.scenario.player import session_key
from mockoss.server import control_log
from mockoss.server.control import _SCENARIO_NAME, TEST_ID_HEADER, ControlPlane, _Session
from mockoss.server.control_guard import error
from mockoss.server.scenario_compile import ENCODE_ELSEWHERE_CHARS
from mockoss.server.scenario_compile import compile_upload as _load_text
from mockoss.workers import DaemonPool, run_off_loop

__all__ = ["ENCODE_ELSEWHERE_CHARS", "MIN_UPLOAD_BYTES", "UPLOADS_KEPT", "UPLOAD_COMPILES", "control_app"]

#: Uploaded scenarios the sessions keep together, in multiples of ``--max-scenario-bytes`` of
#: their source (32 MiB by default; a compiled scenario holds ~20x its source, so ~650 MB).
UPLOADS_KEPT = 8
#: Bytes an upload is counted for at least (a compiled 100-byte scenario holds ~2.3 KB).
MIN_UPLOAD_BYTES = 4096
#: Uploads compiled at once, each on a daemon worker thread (their peak memory is ~30x their
#: source); more wait their turn, oldest first.
UPLOAD_COMPILES = 2


def control_app(plane: ControlPlane) -> FastAPI:
    """The ``/mockoss`` sub-application of ``plane`` (mount it at ``/mockoss``)."""
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

    def chosen(request: Request, test_id: str | None) -> str | None:
        return test_id or request.headers.get(TEST_ID_HEADER) or None

    limit = plane.options.max_scenario_bytes
    uploads = _Uploads(plane, UPLOADS_KEPT * limit)
    compiles = DaemonPool(UPLOAD_COMPILES, "mockoss-upload")
    # Readers of the log take turns a part at a time (control_log.LogWriter), metrics scrapes one at a time.
    log_writes = DaemonPool(control_log.LOG_WRITES, "mockoss-log")
    renders = DaemonPool(1, "mockoss-metrics")

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
        raw = await _upload_body(request, limit)
        if isinstance(raw, Response):
            return raw
        try:
            # Parsed and compiled on a worker thread: on the event loop a 249 KB scenario held
            # every other client 222 ms, 2.9 MB 1.1 s (issue 9 review, finding 7).
            scenario = await run_off_loop(compiles, _load_text, raw, name)
            key = chosen(request, test_id)
            target = plane.session(key)
            target.server.use_scenario(scenario)  # type: ignore[union-attr]
        except ValueError as exc:  # ScenarioError is a ValueError
            return error(400, str(exc))
        uploads.keep(key, target, name, len(raw))  # type: ignore[arg-type]
        rules = getattr(scenario, "rules", ())
        return JSONResponse(
            {"name": scenario.name, "test_id": chosen(request, test_id), "rules": len(rules), "steps": sum(len(r.steps) for r in rules)}
        )

    @control.get("/scenario", summary="The scenario a session answers with")
    async def selected(request: Request, test_id: str | None = Query(None)) -> dict[str, Any]:
        # Reading creates no session: an unknown test id answers with the server it would copy.
        target = plane.session(chosen(request, test_id), create=False)
        scenario = (target.server if target is not None else plane.base).scenario  # type: ignore[union-attr]
        return {"name": getattr(scenario, "name", None), "test_id": chosen(request, test_id)}

    @control.post("/reset", status_code=204, summary="Rewind a session's scenarios and clear its log")
    async def reset(request: Request, test_id: str | None = Query(None), all: bool = Query(False)) -> Response:
        sessions = [plane._default, *plane._sessions.values()] if all else [plane.session(chosen(request, test_id))]
        for target in sessions:
            if target.server is not plane.base or target is plane._default:
                target.server.reset()  # type: ignore[union-attr]
            target.clear()  # type: ignore[union-attr]
        if all:  # the whole server as started: its metrics' label sets too (control_metrics.Metrics.clear)
            plane.metrics.clear()
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
        wanted = None if session is None else session_key(session)  # as the log keeps it (a long key by its digest)
        entries = [e for e in list(target.log) if wanted is None or e[6] == wanted]  # 6: the session key
        writer = control_log.LogWriter(entries, records)
        parts = await run_off_loop(log_writes, writer.take, control_log.LOG_BUFFER_BYTES)
        if writer.done:  # the whole log: sent with its length, as JSONResponse did
            length = 2 + sum(map(len, parts)) + max(len(parts) - 1, 0)  # "[", the parts, their commas, "]"
            return StreamingResponse(control_log.joined(parts), media_type="application/json", headers={"content-length": str(length)})
        return StreamingResponse(control_log.streamed(writer, parts, log_writes), media_type="application/json")

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
        # On a worker thread, one scrape at a time: 10,000 series took ~0.4 s to render, all of it
        # on the event loop (issue 9 review, eighth session, finding 7); bounded since, but the
        # loop still takes the interpreter back between any two steps of a long render.
        body, content_type = await run_off_loop(renders, plane.metrics.render)
        return Response(body, media_type=content_type)

    return control


async def _upload_body(request: Request, limit: int) -> bytes | Response:
    """The body of a scenario upload, or the 413 answer (control routes' error shape) for one
    over ``limit`` bytes. The rest of a refused body is read and dropped (at most
    ``--max-body-bytes``, which :mod:`mockoss.server.limits` enforces), so that the client, still
    sending, gets the 413 rather than a reset connection."""
    size = 0
    chunks: list[bytes] = []
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
        elif chunks:
            chunks.clear()
    if size <= limit:
        return b"".join(chunks)
    return error(
        413,
        f"mockoss: the scenario upload ({size:,} bytes) is above the limit of {limit:,} bytes "
        "(--max-scenario-bytes, ControlOptions(max_scenario_bytes=...), which caps --scenario-dir files too); "
        "serve a bigger scenario with --scenario, or raise the limit",
    )


class _Uploads:
    """The uploaded scenarios the sessions keep, counted in bytes of their source (at least
    :data:`MIN_UPLOAD_BYTES` each), at most ``limit`` together: a session keeps each scenario it
    was sent by name (``X-Mockoss-Scenario: NAME`` selects it again), and a compiled scenario
    holds ~20x its source; unbounded, 256 sessions with a 1.9 MB upload each would have held
    ~10 GB (issue 9 review, finding 7).

    Beyond ``limit`` the oldest uploads go first: another test id's session is dropped whole (as
    the least recently used one is beyond :data:`mockoss.server.control.MAX_SESSIONS`); the
    uploading session and the default one forget the name instead (a request naming it gets the
    unknown-scenario error), keeping the scenario they have selected. ``POST /mockoss/reset``
    (documented as a rewind) keeps them; ``DELETE /mockoss/sessions/ID`` frees a session's.
    Runs on the event loop only.
    """

    def __init__(self, plane: ControlPlane, limit: int) -> None:
        self.plane, self.limit = plane, limit
        #: ``(test id, name)`` → (the session, bytes counted), oldest upload first.
        self.held: OrderedDict[tuple[str | None, str], tuple[weakref.ref[_Session], int]] = OrderedDict()
        self.total = 0

    def keep(self, test_id: str | None, session: _Session, name: str, size: int) -> None:
        """Count ``session``'s upload ``name`` of ``size`` bytes; forget older ones beyond the limit."""
        key = (test_id, name)
        self._forget(key)
        cost = max(size, MIN_UPLOAD_BYTES)
        self.held[key] = (weakref.ref(session), cost)
        self.total += cost
        if self.total <= self.limit:
            return
        for other in [k for k, (ref, _) in self.held.items() if not self._alive(k[0], ref)]:
            self._forget(other)  # sessions dropped since (DELETE, beyond MAX_SESSIONS)
        for other in list(self.held):
            if self.total <= self.limit:
                break
            if other not in self.held or other == key:
                continue
            ref, _ = self.held[other]
            owner = ref()
            if owner is None:
                self._forget(other)
            elif other[0] is None or owner is session:
                self._forget(other)
                scenarios = owner.server._scenarios
                with owner.server._lock:
                    scenarios.pop(other[1], None)
            else:
                with self.plane._lock:
                    if self.plane._sessions.get(other[0]) is owner:
                        del self.plane._sessions[other[0]]
                for dropped in [k for k in self.held if k[0] == other[0]]:
                    self._forget(dropped)

    def _alive(self, test_id: str | None, ref: weakref.ref[_Session]) -> bool:
        owner = ref()
        return owner is not None and (test_id is None or self.plane._sessions.get(test_id) is owner)

    def _forget(self, key: tuple[str | None, str]) -> None:
        found = self.held.pop(key, None)
        if found is not None:
            self.total -= found[1]
