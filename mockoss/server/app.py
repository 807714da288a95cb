"""The HTTP layer: a thin FastAPI app over :class:`~mockoss.server.core.MockServer`.

Routes move bytes only: read the body, call :meth:`MockServer.handle`, write the
:class:`~mockoss.profiles.base.Reply` as JSON or as a stream of frames.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from mockoss import __version__
from mockoss.endpoints import ENDPOINTS
from mockoss.profiles.base import Reply
from mockoss.server.core import MockServer

__all__ = ["create_app"]

#: Frames written per ``send`` when a stream is not paced; the bytes on the wire are the same.
FRAMES_PER_WRITE = 64


class StreamAborted(Exception):
    """Raised after a stream's last frame to drop the connection, as the emulated server does."""


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


def create_app(server: MockServer) -> FastAPI:
    """Build the ASGI app serving ``server``.

    Routes: every generation endpoint of :data:`mockoss.endpoints.ENDPOINTS` (``POST``); for
    non-Python clients, ``POST /mockoss/reset`` and ``GET /mockoss/requests``; every other request
    goes to the active profile, which answers its server's identity and health probes
    (``GET /v1/models``, ``GET /health``, …) and its server's 404 or 405 for anything else.
    """
    app = FastAPI(title="mockoss", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.mockoss = server

    def generation(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return to_response(server.handle(name, await request.body(), request.headers))

        endpoint.__name__ = f"generate_{name}"
        return endpoint

    async def reset(request: Request) -> Response:
        server.reset()
        return Response(status_code=204)

    async def request_log(request: Request) -> Response:
        entries = [
            {
                "index": r.index,
                "endpoint": r.endpoint,
                "scenario": r.scenario,
                "step": r.step,
                "status": r.status,
                "body": r.body,
                "completion": r.completion,
            }
            for r in server.requests
        ]
        return Response(json.dumps(entries), media_type="application/json")

    async def other(request: Request) -> Response:
        return to_response(server.probe(request.method, request.url.path))

    # Plain Starlette routes: the request path skips FastAPI's parameter resolution.
    for endpoint in ENDPOINTS.values():
        app.add_route(endpoint.path, generation(endpoint.name), methods=["POST"])
    app.add_route("/mockoss/reset", reset, methods=["POST"])
    app.add_route("/mockoss/requests", request_log, methods=["GET"])
    app.add_route("/{path:path}", other, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    return app
