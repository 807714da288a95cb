"""Request limits of the HTTP layer: body size (413), bodies in flight (503) and time to send the request (408), then close.

Two pieces, both framework-level and both for every route (scripted, upstream and probes alike):

* :class:`RequestLimits`, an ASGI middleware: a body above ``MockServer.max_body_bytes`` (by its
  ``Content-Length``, or counted as it arrives when chunked) is answered 413 in the active
  profile's error shape without reading the rest; a body still incomplete ``request_timeout_s``
  after its headers is answered 408. Both close the connection (``Connection: close``).
  The real servers set no body limit of their own (vLLM and SGLang run uvicorn, which has none);
  the limit is mockoss's, so that one request cannot take gigabytes, and the message says so.
  The bodies still arriving share one budget too (:class:`BodyBudget`: ``MockServer.body_budget_bytes``,
  ``mockoss serve --body-budget-bytes``, the fixture's ``body_budget_bytes`` option; by default
  :data:`BODY_BUDGET_FACTOR` times the per-body limit, 128 MiB for the default 32 MiB): a body
  whose next part would take the bytes held by all incomplete bodies past it is answered 503 in
  the profile's error shape, its bytes let go and its connection closed. Without it, clients that
  each withhold the last byte of a body just under the limit held limit x clients until the 408
  (issue 9, eleventh-session breaker, finding 9: 8 stalled 30 MB uploads, +230 MB of RSS; now
  4 are held and 4 get 503, +129 MB, and with 12 clients the same; raw sockets, old and new in one run). No server we
  emulate has such a budget (uvicorn has none, nor a per-body limit); it is mockoss's own bound,
  so that memory stays bounded in bytes whatever the number of clients.
* :func:`mockoss.server.connection.timed_protocol` (re-exported here): uvicorn's HTTP protocol
  class with a deadline for the request head (a connection that sends nothing, or half a
  request, for ``request_timeout_s`` is closed).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mockoss.endpoints import endpoint_for_path
from mockoss.server.connection import timed_protocol
from mockoss.server.responses import to_response
from mockoss.server.settings import DEFAULT_REQUEST_TIMEOUT_S

if TYPE_CHECKING:
    from mockoss.server.core import MockServer

__all__ = [
    "BODY_BUDGET_FACTOR", "BODY_DEADLINE", "DEFAULT_REQUEST_TIMEOUT_S", "BodyBudget", "RequestLimits", "body_budget",
    "timed_protocol",
]  # fmt: skip

#: The bytes that bodies still arriving may hold together when ``MockServer.body_budget_bytes`` is
#: ``None`` (the default), as a multiple of ``max_body_bytes`` (no per-body limit: no budget).
BODY_BUDGET_FACTOR = 4


def body_budget(server: MockServer) -> int | None:
    """The bytes the request bodies still arriving may hold together, all routes of the app:
    ``server.body_budget_bytes`` when set, else :data:`BODY_BUDGET_FACTOR` x
    ``server.max_body_bytes``; ``None`` (no budget) when neither is set. Read when a body starts,
    as ``max_body_bytes`` is, so both can be changed on a running server (the pytest fixture does,
    per test). A budget below ``max_body_bytes`` refuses, with 503, a body arriving in parts that
    alone would pass it."""
    if server.body_budget_bytes is not None:
        return server.body_budget_bytes
    limit = server.max_body_bytes
    return None if limit is None else limit * BODY_BUDGET_FACTOR

#: ``scope["state"]`` key: the event-loop time by which the body must have arrived, when a layer
#: before :class:`RequestLimits` started the clock.
BODY_DEADLINE = "mockoss.body_deadline"



class _TooLarge(Exception):
    def __init__(self, size: int, exact: bool) -> None:
        super().__init__(size)
        self.size, self.exact = size, exact


class _TooSlow(Exception):
    pass


class _OverBudget(Exception):
    pass


class BodyBudget:
    """The bytes held by the request bodies still arriving, of every route of one app (event-loop
    only: no lock). ``held`` is the sum; a body's bytes are let go when it is complete or its
    request ends."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held = 0


class RequestLimits:
    """ASGI middleware enforcing ``server.max_body_bytes`` and the body's ``request_timeout_s``."""

    def __init__(
        self, app: ASGIApp, server: MockServer, request_timeout_s: float | None = DEFAULT_REQUEST_TIMEOUT_S, budget: BodyBudget | None = None
    ) -> None:
        self.app, self.server, self.timeout = app, server, request_timeout_s
        self.budget = budget if budget is not None else BodyBudget()  # the app's layers share one (create_app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.server.max_body_bytes
        if limit is not None:
            for name, value in scope["headers"]:
                if name == b"content-length" and value.isdigit() and int(value) > limit:
                    await self._refuse(scope, receive, send, 413, self._too_large(int(value), True, limit))
                    return
        loop = asyncio.get_running_loop()
        deadline = None if self.timeout is None else loop.time() + self.timeout
        scope_state = scope.get("state")
        if deadline is not None and scope_state is not None and BODY_DEADLINE in scope_state:
            deadline = scope_state[BODY_DEADLINE]  # the short path already waited (mockoss.server.fastpath)
        state = {"received": 0, "complete": False, "held": 0}
        budget, cap = self.budget, body_budget(self.server)

        async def limited_receive() -> Message:
            if state["complete"]:
                return await receive()
            try:
                if deadline is None:
                    message = await receive()
                else:
                    async with asyncio.timeout(max(0.0, deadline - loop.time())):
                        message = await receive()
            except TimeoutError:
                raise _TooSlow from None
            if message["type"] == "http.request":
                size = len(message.get("body", b""))
                state["received"] += size
                if limit is not None and state["received"] > limit:
                    raise _TooLarge(state["received"], False)
                state["complete"] = not message.get("more_body", False)
                if state["complete"]:
                    budget.held -= state["held"]
                    state["held"] = 0
                elif size and cap is not None:
                    if budget.held + size > cap:
                        raise _OverBudget
                    budget.held += size
                    state["held"] += size
            else:
                state["complete"] = True
                budget.held -= state["held"]
                state["held"] = 0
            return message

        # No wrapper around send (it would run once per stream frame): both errors come from
        # reading the body, before any of mockoss's handlers starts its response. Should an app
        # ever start one first, the server refuses the second response start (uvicorn raises
        # RuntimeError) and the original error goes up instead.
        try:
            await self.app(scope, limited_receive, send)
        except _TooLarge as exc:
            await self._refuse_or_raise(exc, scope, receive, send, 413, self._too_large(exc.size, exc.exact, limit or 0))
        except _TooSlow as exc:
            message = f"mockoss: the request body was not received within {self.timeout:g} s of its headers (--request-timeout)"
            await self._refuse_or_raise(exc, scope, receive, send, 408, message)
        except _OverBudget as exc:
            budget.held -= state["held"]
            state["held"] = 0
            message = (
                f"mockoss: the request bodies still arriving hold {cap:,} bytes in all, this one's next part would pass that "
                "(mockoss's own bound: --body-budget-bytes, MockServer(body_budget_bytes=…), "
                f"the fixture's body_budget_bytes option; default {BODY_BUDGET_FACTOR} x --max-body-bytes); "
                "send it again when the others are in"
            )
            await self._refuse_or_raise(exc, scope, receive, send, 503, message)
        finally:
            budget.held -= state["held"]  # a request that ended with its body incomplete
            state["held"] = 0

    async def _refuse_or_raise(self, exc: Exception, scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
        try:
            await self._refuse(scope, receive, send, status, message)
        except RuntimeError:  # the response had already started
            raise exc from None

    @staticmethod
    def _too_large(size: int, exact: bool, limit: int) -> str:
        amount = f"{size:,} bytes" if exact else f"more than {limit:,} bytes"
        return (
            f"mockoss: the request body ({amount}) is above the limit of {limit:,} bytes "
            "(mockoss's own limit: --max-body-bytes, MockServer(max_body_bytes=…), the fixture's max_body_bytes option)"
        )

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
        found = endpoint_for_path(scope.get("path", ""))
        reply = self.server.error_reply(found.name if found is not None else "chat", status, message)
        response = to_response(reply)
        response.headers["connection"] = "close"
        await response(scope, receive, send)
