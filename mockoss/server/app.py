"""The HTTP layer: a thin Starlette app over :class:`~mockoss.server.core.MockServer`.

Routes move bytes only: read the body, call :meth:`MockServer.respond`, write the
:class:`~mockoss.profiles.base.Reply` as JSON or as a stream of frames, at once or on the
schedule its transport spec gives (:mod:`mockoss.server.transport`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mockoss.endpoints import ENDPOINTS, endpoint_for_path
from mockoss.server.control import ControlOptions, ControlPlane, header_map, install, route_path
from mockoss.server.core import MockServer
from mockoss.server.durable import durable, expect_ticket, lifespan_for
from mockoss.server.fastpath import GenerationPath
from mockoss.server.limits import DEFAULT_REQUEST_TIMEOUT_S, BodyBudget, RequestLimits
from mockoss.server.offload import Gate, probe_elsewhere, side_route_heavy
from mockoss.server.responses import to_response, to_scheduled_response
from mockoss.workers import run_off_loop

__all__ = ["STOPPING_MESSAGE", "STOPPING_STATUS", "create_app", "to_response", "to_scheduled_response"]


async def _read_body(receive: Receive) -> bytes:
    """The request body, as :meth:`starlette.requests.Request.body` reads it (``ClientDisconnect``
    when the client leaves first), without building a ``Request``."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientDisconnect()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class _App(Starlette):
    """Starlette, with a short path for scripted generation requests.

    A ``POST`` to a generation endpoint (with or without the ``/s/ID`` test-id prefix) goes
    straight to ``mockoss_generation``: :class:`mockoss.server.fastpath.GenerationPath`, which
    answers the common case itself and hands the rest to the layered path (the control plane's
    guard and log, :class:`~mockoss.server.limits.RequestLimits` and the generation handler inside
    Starlette's :class:`ServerErrorMiddleware`). Every other request takes the app's middleware
    stack and routes: the ``/mockoss`` control routes (a FastAPI sub-application, built on first
    use) and the profile's catch-all route.
    """

    mockoss_generation: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            fast = self.mockoss_generation
            if fast is not None and scope["type"] == "http" and scope["method"] == "POST" and route_path(scope["path"]) in _GENERATION_PATHS:
                scope["app"] = self
                await fast(scope, receive, send)
                return
            await super().__call__(scope, receive, send)
        except asyncio.CancelledError:
            await self._stopping(scope, receive, send)
            raise

    async def _stopping(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a request cancelled before its response started: :data:`STOPPING_STATUS` in the
        profile's error shape, ``Connection: close`` (:mod:`mockoss.server.run` says why).

        uvicorn cancels a request's task only when a stop's grace ran out
        (``timeout_graceful_shutdown``; 0.54 ``uvicorn/server.py`` ``Server.shutdown``), and then
        answers one whose response has not started with its own ``text/plain`` 500 (its request
        cycle's ``run_asgi``). Whether the response started is the cycle's own flag (``send`` is
        its bound method, as :mod:`mockoss.server.fastpath` reads ``receive``'s); without it (an
        ASGI server other than uvicorn), or once started or disconnected, nothing is sent here
        and the cancellation goes on as before (a started stream is cut: its connection closed).
        """
        cycle = getattr(send, "__self__", None)
        if scope["type"] != "http" or getattr(cycle, "response_started", True) or getattr(cycle, "disconnected", True):
            return
        found = endpoint_for_path(route_path(scope["path"]))
        server: MockServer = self.state.mockoss
        response = to_response(server.error_reply(found.name if found is not None else "chat", STOPPING_STATUS, STOPPING_MESSAGE))
        response.headers["connection"] = "close"
        await response(scope, receive, send)


#: What a request still unanswered when ``mockoss serve``'s stop grace ran out gets (:mod:`mockoss.server.run`).
STOPPING_STATUS = 503
STOPPING_MESSAGE = (
    "mockoss: the server is stopping (SIGTERM or Ctrl-C) and this request was still unanswered when the "
    "grace for requests in flight ran out (mockoss.server.run.SHUTDOWN_GRACE_S; --record waits for them)"
)


_GENERATION_PATHS = {endpoint.path: endpoint.name for endpoint in ENDPOINTS.values()}


class _ControlRoutes:
    """The ``/mockoss`` routes (:func:`mockoss.server.control_routes.control_app`), built on their
    first request: serving the emulated API alone never imports FastAPI, which costs about 100 ms
    of start-up and 7.6 MB (``benchmarks/bench_start.py``)."""

    def __init__(self, plane: ControlPlane) -> None:
        self.plane, self.app = plane, None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.app is None:
            from mockoss.server.control_routes import control_app

            self.app = control_app(self.plane)
        await self.app(scope, receive, send)


def create_app(
    server: MockServer, request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S, control: ControlOptions | None = None
) -> Starlette:
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
    app = _App(lifespan=lifespan)
    app.state.mockoss = server
    budget = app.state.mockoss_body_budget = BodyBudget()  # every route's bodies still arriving (mockoss.server.limits)
    app.add_middleware(RequestLimits, server=server, request_timeout_s=request_timeout_s, budget=budget)
    gate = app.state.mockoss_gate = Gate()
    if proxy is not None:
        proxy.gate = gate  # raw mode's heavy bodies go off the loop as scripted ones do (Proxy._raw)
    # /mockoss/*: sessions per test id, run-time scenarios, request log, readiness, metrics, guard.
    plane = app.state.mockoss_control = install(app, server, control, upstream=proxy is not None)
    app.mount("/mockoss", _ControlRoutes(plane))  # before the catch-all route: routes match in order

    async def scripted_response(name: str, scope: Scope, raw: bytes) -> Response:
        target = plane.server_for(scope)
        tickets = expect_ticket()
        reply, delivery = await gate.respond(target, name, raw, header_map(scope))
        return durable(to_response(reply) if delivery is None else to_scheduled_response(reply, delivery), tickets)

    def generation(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if proxy is not None:
                return await proxy.generate(name, request)
            return await scripted_response(name, request.scope, await request.body())

        endpoint.__name__ = f"generate_{name}"
        return endpoint

    async def other(request: Request) -> Response:
        if proxy is not None and proxy.forwards(request.method, request.url.path):
            return await proxy.models(request)
        target, body = plane.server_for(request.scope), await request.body()
        if body and side_route_heavy(body, gate.offload_bytes):  # a big body, a long word, many messages: see probe_elsewhere
            return to_response(await run_off_loop(gate.threads, probe_elsewhere, target, request.method, request.url.path, body))
        return to_response(target.probe(request.method, request.url.path, body, request.url.query))

    for endpoint in ENDPOINTS.values():
        app.add_route(endpoint.path, generation(endpoint.name), methods=["POST"])
    if proxy is None:

        async def scripted(scope: Scope, receive: Receive, send: Send) -> None:
            response = await scripted_response(_GENERATION_PATHS[scope["path"]], scope, await _read_body(receive))
            await response(scope, receive, send)

        limits = RequestLimits(scripted, server=server, request_timeout_s=request_timeout_s, budget=budget)
        layered = ServerErrorMiddleware(plane.guarded(limits))
        app.mockoss_generation = GenerationPath(layered, plane, gate, _GENERATION_PATHS, request_timeout_s)
    app.add_route("/{path:path}", other, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    return app
