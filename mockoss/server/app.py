"""The HTTP layer: a thin FastAPI app over :class:`~mockoss.server.core.MockServer`.

Routes move bytes only: read the body, call :meth:`MockServer.respond`, write the
:class:`~mockoss.profiles.base.Reply` as JSON or as a stream of frames, at once or on the
schedule its transport spec gives (:mod:`mockoss.server.transport`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from mockoss import __version__
from mockoss.endpoints import ENDPOINTS
from mockoss.profiles.base import Reply
from mockoss.server.control import ControlOptions, install
from mockoss.server.core import MockServer
from mockoss.server.durable import durable, expect_ticket, lifespan_for
from mockoss.server.transport import (
    FRAMES_PER_WRITE,
    Delivery,
    Schedule,
    StreamAborted,
    build_schedule,
    play,
    wait_until,
)

__all__ = ["create_app"]


async def _frames(frames: Sequence[bytes], abort: str | None) -> AsyncIterator[bytes]:
    for start in range(0, len(frames), FRAMES_PER_WRITE):
        yield b"".join(frames[start : start + FRAMES_PER_WRITE])
    if abort is not None:
        # Escaping the ASGI app after the response started makes uvicorn close the connection
        # without the terminating chunk: the client sees a truncated stream.
        raise StreamAborted(f"mockoss: stream dropped as the emulated server drops it: {abort}")


def to_response(reply: Reply) -> Response:
    """Turn a profile's reply into a Starlette response (streamed when it has frames)."""
    headers = dict(reply.headers)
    if reply.streamed:
        return StreamingResponse(
            _frames(reply.frames, reply.abort), status_code=reply.status, media_type=reply.media_type, headers=headers
        )
    return Response(reply.body, status_code=reply.status, media_type=reply.media_type, headers=headers)


class _Scheduled(StreamingResponse):
    """A response written on a :class:`~mockoss.server.transport.Schedule`: headers at ``head_ms``,
    then its writes; Starlette cancels the waits when the client disconnects."""

    def __init__(self, reply: Reply, schedule: Schedule) -> None:
        self._clock = asyncio.get_running_loop().time
        self._start, self._head_ms = self._clock(), schedule.head_ms
        headers = dict(reply.headers)
        if schedule.content_length is not None:
            headers["content-length"] = str(schedule.content_length)
        body = play(schedule, self._start, clock=self._clock)
        super().__init__(body, status_code=reply.status, media_type=reply.media_type, headers=headers)

    async def stream_response(self, send: Callable[..., Awaitable[None]]) -> None:
        await wait_until(self._start, self._head_ms, clock=self._clock)
        await super().stream_response(send)


def to_scheduled_response(reply: Reply, delivery: Delivery) -> Response:
    """Deliver ``reply`` with the timing and faults of ``delivery`` (see :mod:`mockoss.server.transport`)."""
    schedule = build_schedule(reply, delivery.spec, delivery.seed, delivery.index, tokens=delivery.tokens)
    return _Scheduled(reply, schedule)


def _headers(request: Request) -> dict[str, str]:
    """Request headers as a plain dict (names are lower-case in ASGI; for a repeated header the
    first value wins, as ``Headers.get`` does). Built once: every lookup on Starlette's ``Headers``
    scans the raw list."""
    headers: dict[str, str] = {}
    for name, value in request.scope["headers"]:
        headers.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return headers


def create_app(server: MockServer, control: ControlOptions | None = None) -> FastAPI:
    """Build the ASGI app serving ``server``.

    Routes: every generation endpoint of :data:`mockoss.endpoints.ENDPOINTS` (``POST``); the
    control routes ``/mockoss/*`` (:mod:`mockoss.server.control`, guarded by ``control``); every other request
    goes to the active profile, which answers its server's identity and health probes
    (``GET /v1/models``, ``GET /health``, …) and its server's 404 or 405 for anything else.
    With ``server.upstream`` set, generation requests (and, passing through, ``GET /v1/models``)
    go to :class:`mockoss.upstream.proxy.Proxy`, whose client the app's lifespan closes.
    """
    proxy = None
    if server.upstream is not None:
        from mockoss.upstream.proxy import Proxy

        proxy = Proxy(server)
    lifespan = lifespan_for(server, proxy.lifespan if proxy is not None else None)
    app = FastAPI(title="mockoss", version=__version__, docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.mockoss = server
    # /mockoss/*: sessions per test id, run-time scenarios, request log, readiness, metrics, guard.
    plane = app.state.mockoss_control = install(app, server, control, upstream=proxy is not None)

    def generation(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if proxy is not None:
                return await proxy.generate(name, request)
            target = plane.server_for(request.scope)
            tickets = expect_ticket()
            reply, delivery = target.respond(name, await request.body(), _headers(request))
            return durable(to_response(reply) if delivery is None else to_scheduled_response(reply, delivery), tickets)

        endpoint.__name__ = f"generate_{name}"
        return endpoint

    async def other(request: Request) -> Response:
        if proxy is not None and proxy.forwards(request.method, request.url.path):
            return await proxy.models(request)
        return to_response(plane.server_for(request.scope).probe(request.method, request.url.path, await request.body()))

    # Plain Starlette routes: the request path skips FastAPI's parameter resolution.
    for endpoint in ENDPOINTS.values():
        app.add_route(endpoint.path, generation(endpoint.name), methods=["POST"])
    app.add_route("/{path:path}", other, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    return app
