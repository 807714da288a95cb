"""The ``/mockoss`` routes of the control plane, as a FastAPI sub-application with its own OpenAPI
description (``/mockoss/openapi.json``, ``/mockoss/docs``); what each route does is in
:mod:`mockoss.server.control`. Built by :func:`control_app` on the first ``/mockoss`` request, so
that serving the emulated API alone never imports FastAPI."""

from __future__ import annotations

import json
import math
import sys
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from mockoss import __version__
from mockoss.profiles.wire import rebuild
from mockoss.scenario.player import session_key
from mockoss.server.control import _SCENARIO_NAME, TEST_ID_HEADER, ControlPlane, _Session, log_entry
from mockoss.server.control_guard import error

if TYPE_CHECKING:
    from mockoss.server.records import RecordedRequest

__all__ = ["ENCODE_ELSEWHERE_CHARS", "MIN_UPLOAD_BYTES", "UPLOADS_KEPT", "UPLOAD_COMPILES", "control_app"]

#: Uploaded scenarios the sessions keep together, in multiples of ``--max-scenario-bytes`` of
#: their source (32 MiB by default; a compiled scenario holds ~20x its source, so ~650 MB).
UPLOADS_KEPT = 8
#: Bytes an upload is counted for at least (a compiled 100-byte scenario holds ~2.3 KB).
MIN_UPLOAD_BYTES = 4096
#: Uploads compiled at once, each on a worker thread (their peak memory is ~30x their source).
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
    compiles = anyio.CapacityLimiter(UPLOAD_COMPILES)
    # Readers of the log take turns a part at a time (_LogWriter), metrics scrapes one at a time.
    log_writes = anyio.CapacityLimiter(LOG_WRITES)
    renders = anyio.CapacityLimiter(1)

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
            scenario = await anyio.to_thread.run_sync(_load_text, raw, name, limiter=compiles)
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
        writer = _LogWriter(entries, records)
        parts = await anyio.to_thread.run_sync(writer.take, LOG_BUFFER_BYTES, limiter=log_writes)
        if writer.done:  # the whole log: sent with its length, as JSONResponse did
            length = 2 + sum(map(len, parts)) + max(len(parts) - 1, 0)  # "[", the parts, their commas, "]"
            return StreamingResponse(_joined(parts), media_type="application/json", headers={"content-length": str(length)})
        return StreamingResponse(_streamed(writer, parts, log_writes), media_type="application/json")

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
        body, content_type = await anyio.to_thread.run_sync(plane.metrics.render, limiter=renders)
        return Response(body, media_type=content_type)

    return control


def _load_text(raw: bytes, name: str) -> Any:
    """A scenario from YAML or JSON bytes, validated and compiled by the same loader as files
    (and kept by content as they are: the same upload by many sessions is one compiled scenario);
    errors, the scenario's ``switches:`` ones included, name the upload as ``upload:NAME.yaml``,
    the line and the field."""
    from mockoss.harmony.encoding import ENCODE_ELSEWHERE
    from mockoss.scenario.loader import scenario_from_bytes

    # A long message text is tokenized in the worker process: openai-harmony's encode holds the
    # GIL for the whole call (a 169 KB content: 57 ms in one go, every other client waiting).
    token = ENCODE_ELSEWHERE.set(_encode_long_elsewhere)
    try:
        return scenario_from_bytes(raw, name=name, origin=f"upload:{name}.yaml")
    finally:
        ENCODE_ELSEWHERE.reset(token)


#: Characters of a scenario text from which an upload tokenizes it in the worker process
#: (openai-harmony encodes ~3 KB of words per ms holding the GIL: 16 KiB is ~5 ms).
ENCODE_ELSEWHERE_CHARS = 16 * 1024


def _encode_long_elsewhere(text: str, special: bool) -> list[int] | None:
    """:func:`mockoss.server.offload.encode_in_worker` of a text of at least
    :data:`ENCODE_ELSEWHERE_CHARS` characters; ``None`` (encode here) for a shorter one."""
    if len(text) < ENCODE_ELSEWHERE_CHARS:
        return None
    from mockoss.server.offload import encode_in_worker

    return encode_in_worker(text, special)


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
        "(--max-scenario-bytes, ControlOptions(max_scenario_bytes=...)); serve a bigger scenario "
        "from a file (--scenario, --scenario-dir)",
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


def _finite(data: Any) -> Any:
    """``data`` with each float that JSON cannot hold (``NaN``, ``±Infinity``, which a client may
    send and Python's ``json.loads`` accepts) replaced by its JavaScript spelling as a string.
    A copy by :func:`mockoss.profiles.wire.rebuild` (a loop over a stack, not recursion: a body
    nested as deep as ``json.loads`` takes (600 levels) made a recursive version a 500)."""
    return rebuild(data, _js_spelling)


def _js_spelling(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    return value


#: Bytes of the log's JSON :func:`_joined` sends at most in one piece (a 10 MB entry in one copy
#: and one write held the loop ~10 ms), and that :func:`_streamed` builds at a time.
LOG_SLICE_BYTES = 1024 * 1024
#: Bytes of a log's JSON built before its first byte is sent: a log within it is sent whole, with
#: its ``content-length``; a longer one is built and sent :data:`LOG_SLICE_BYTES` at a time
#: (chunked), so a reader holds about this much of it, not the whole log (issue 9 review, eighth
#: session, finding 6: 16 readers of a 67 MB log each built it whole, 1.36 GB).
LOG_BUFFER_BYTES = 4 * 1024 * 1024
#: Log parts built at once, all readers together (each a worker thread): readers beyond it wait
#: their turn a part at a time, so many readers neither hold a copy of the log each nor keep
#: threads contending for the interpreter with the event loop (16 at once: another client's
#: median wait 50 ms). One: a part is ~1 MiB, ~10 ms; turns interleave readers fairly (anyio's
#: limiter serves waiters first come, first served), and a stalled reader, which holds no turn
#: while its bytes wait to be sent, delays no one.
LOG_WRITES = 1


async def _log_json(entries: list[Any], records: dict[int, RecordedRequest]) -> list[bytes]:
    """:func:`log_parts` on a worker thread (see there why)."""
    return await anyio.to_thread.run_sync(log_parts, entries, records)


def log_parts(entries: list[Any], records: dict[int, RecordedRequest]) -> list[bytes]:
    """The items of the ``/mockoss/requests`` body, each entry of ``entries`` (:func:`log_entry`
    fields with :func:`_entry_json`'s) as JSON in UTF-8; ``[`` the items joined by ``,`` ``]``
    (:func:`_joined`) are the bytes Starlette's ``JSONResponse`` wrote for the whole list
    (``ensure_ascii=False``, ``allow_nan=False``, separators ``,`` and ``:``): that is what the
    encoder writes for a list under these separators (``tests/server/test_isolation_leftovers.py``
    compares).

    Built on a worker thread (:func:`_log_json`), an entry at a time, and sent a part at a time,
    never joined (a 64 MiB ``bytes`` join and one 64 MiB write held the loop ~0.1 s more), so that
    reading a full log does not hold up other clients: the event loop takes the interpreter back
    between any two steps (``mockoss serve`` switches threads every 1 ms), where built on the
    loop with a yield every 1 MiB of JSON, another client's request waited
    for one slice or step at each of its own turns (a log holding a 10 MB body: 113 ms in one go,
    75-81 ms with a yield between the body's parse, its JSON and its bytes;
    ``benchmarks/bench_isolation.py``, cases ``10MB,log``). One step is still one call holding
    the interpreter: a 10 MB body's parse or JSON, ~20-40 ms.

    If any body holds NaN or Infinity (Python's json reads them, JSON has no such numbers) or a
    lone UTF-16 surrogate (``"\\ud800"``, which UTF-8 cannot encode), the whole list is written
    again with NaN and Infinity spelt as strings and every non-ASCII character as a JSON escape,
    so nothing is lost.
    """
    return _LogWriter(entries, dict(records)).take(sys.maxsize)


class _LogWriter:
    """The ``/mockoss/requests`` items of a log snapshot (``entries``, ``records`` as
    :func:`log_parts` takes them), built a part at a time by :meth:`take` on a worker thread.

    The first :meth:`take` writes as :func:`log_parts` does, the whole list again in ASCII when
    an item needs it; so a log the first take holds whole is the bytes ``JSONResponse`` wrote. A
    later take (the log is being streamed, its start already sent) writes such an item alone in
    ASCII: the same JSON values, other bytes. Each record is let go (popped from ``records``,
    which the writer owns) once written.
    """

    def __init__(self, entries: list[Any], records: dict[int, RecordedRequest]) -> None:
        self.entries, self.records = entries, records
        self.next = 0
        self.ascii = False

    @property
    def done(self) -> bool:
        """Every entry written."""
        return self.next >= len(self.entries)

    def take(self, budget: int) -> list[bytes]:
        """The next items, as UTF-8 JSON, until they hold ``budget`` bytes (at least one item;
        none when :attr:`done`)."""
        first = self.next == 0
        start, parts, size = self.next, [], 0
        while self.next < len(self.entries) and size < budget:
            entry = self.entries[self.next]
            item = _entry_json(log_entry(entry), self.records)
            try:
                part = _item_json(item, self.ascii)
            except ValueError:
                if first and not self.ascii:  # not sent yet: the whole list in ASCII, as log_parts
                    self.ascii, self.next, parts, size = True, start, [], 0
                    continue
                part = _item_json(item, True)
            parts.append(part)
            size += len(part)
            self.next += 1
        for entry in self.entries[start : self.next]:
            self.records.pop(entry[8], None)  # 8: the record's index (None: no record)
        return parts


def _item_json(item: dict[str, Any], ascii_only: bool) -> bytes:
    """One ``/mockoss/requests`` item as :func:`log_parts` writes it, in UTF-8 (``ValueError``:
    NaN, Infinity, or a lone surrogate that UTF-8 cannot encode, when not ``ascii_only``)."""
    if ascii_only:
        return json.dumps(_finite(item), ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
    return json.dumps(item, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


async def _streamed(writer: _LogWriter, first: list[bytes], limiter: anyio.CapacityLimiter) -> AsyncIterator[bytes]:
    """``[``, the items of ``first`` and of the writer's further :meth:`_LogWriter.take` of
    :data:`LOG_SLICE_BYTES` each (on a worker thread, under ``limiter``), ``,`` between, ``]``."""
    parts, lead = first, b"["
    while parts:
        async for chunk in _pieces(parts, lead):
            yield chunk
        lead = b","
        if writer.done:
            break
        parts = await anyio.to_thread.run_sync(writer.take, LOG_SLICE_BYTES, limiter=limiter)
    yield b"]"


async def _pieces(parts: list[bytes], lead: bytes) -> AsyncIterator[bytes]:
    """``lead`` and ``parts`` joined by ``,``, a part at a time, one over :data:`LOG_SLICE_BYTES`
    in slices of that size."""
    for i, part in enumerate(parts):
        head = lead if i == 0 else b","
        if len(part) <= LOG_SLICE_BYTES:
            yield head + part
            continue
        yield head
        view = memoryview(part)
        for start in range(0, len(part), LOG_SLICE_BYTES):
            yield bytes(view[start : start + LOG_SLICE_BYTES])


async def _joined(parts: list[bytes]) -> AsyncIterator[bytes]:
    """``b"[" + b",".join(parts) + b"]"``, a part at a time, a part over :data:`LOG_SLICE_BYTES`
    in slices of that size."""
    if not parts:
        yield b"[]"
        return
    async for chunk in _pieces(parts, b"["):
        yield chunk
    yield b"]"


def _entry_json(entry: dict[str, Any], records: dict[int, RecordedRequest]) -> dict[str, Any]:
    """A log entry with its request body, completion and server log lines from the server's log
    (``None`` and ``[]`` once that log has dropped them)."""
    record = records.get(entry["index"]) if entry["index"] is not None else None
    return {
        **entry,
        "body": record.body if record is not None else None,
        "completion": record.completion if record is not None else None,
        "server_log": list(record.server_log) if record is not None else [],
        # Tool-check warnings (README: Tool checks): the only view of them a `mockoss serve` user has.
        "warnings": list(record.warnings) if record is not None else [],
    }
