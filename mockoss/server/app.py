"""The HTTP layer: a thin FastAPI app over :class:`~mockoss.server.core.MockServer`.

Routes move bytes only: read the body, call :meth:`MockServer.respond`, write the
:class:`~mockoss.profiles.base.Reply` as JSON or as a stream of frames, at once or on the
schedule its transport spec gives (:mod:`mockoss.server.transport`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.responses import Response

from mockoss import __version__
from mockoss.endpoints import ENDPOINTS
from mockoss.server.core import MockServer
from mockoss.server.control import ControlOptions, install
from mockoss.server.durable import durable, expect_ticket, lifespan_for
from mockoss.server.limits import DEFAULT_REQUEST_TIMEOUT_S, RequestLimits
from mockoss.server.offload import Gate
from mockoss.server.responses import to_response, to_scheduled_response

__all__ = ["create_app", "to_response", "to_scheduled_response"]


def _headers(request: Request) -> dict[str, str]:
    """Request headers as a plain dict (names are lower-case in ASGI; for a repeated header the
    first value wins, as ``Headers.get`` does). Built once: every lookup on Starlette's ``Headers``
    scans the raw list."""
    headers: dict[str, str] = {}
    for name, value in request.scope["headers"]:
        headers.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return headers


def create_app(
    server: MockServer, request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S, control: ControlOptions | None = None
) -> FastAPI:
    """Build the ASGI app serving ``server``.

    Limits (:mod:`mockoss.server.limits`): a body above ``server.max_body_bytes`` gets 413, a body
    not received within ``request_timeout_s`` of its headers 408, both in the profile's error
    shape. Big bodies are answered off the event loop (:mod:`mockoss.server.offload`), so that
    they do not delay other clients' requests.

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
    app.add_middleware(RequestLimits, server=server, request_timeout_s=request_timeout_s)
    gate = app.state.mockoss_gate = Gate()
    # /mockoss/*: sessions per test id, run-time scenarios, request log, readiness, metrics, guard.
    plane = app.state.mockoss_control = install(app, server, control, upstream=proxy is not None)

    def generation(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if proxy is not None:
                return await proxy.generate(name, request)
            target = plane.server_for(request.scope)
            tickets = expect_ticket()
            reply, delivery = await gate.respond(target, name, await request.body(), _headers(request))
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
