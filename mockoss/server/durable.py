"""Hold a response's body until its exchange is in the recording (``mockoss serve --record``).

:meth:`mockoss.upstream.Recorder.observe` queues the step of a scripted or raw-mode exchange
before its reply is sent and leaves a ticket (:func:`mockoss.upstream.tickets.expect_ticket`); the
reply's headers go out at once, its first body bytes only once the ticket is done (the step is
flushed and fsynced). The step is complete when the reply is built, so the wait is the write's
latency, usually over before a paced stream's first frame is due. Relayed pass-through streams
hold their last chunk instead (:mod:`mockoss.upstream.proxy`).

The recorder's close at shutdown (:func:`lifespan_for`) is the one job of a stopping server that
stays on a non-daemon thread (``asyncio.to_thread``, which the event loop's close and the
interpreter's exit wait for), on purpose: it writes what is queued, fsyncs and closes the file, and
a recording cut there would lose exchanges its clients already received whole, the promise above.
It is one thread per server, only with ``--record``, where :mod:`mockoss.server.run` already waits
for the exchanges in flight without limit, and its wait is the queued writes' (the journal's
writer thread, :mod:`mockoss.upstream.journal`); the other off-loop work runs on daemon threads
(:mod:`mockoss.workers`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from mockoss.upstream.tickets import expect_ticket  # not the recorder: serving without --record does not load it

if TYPE_CHECKING:
    from mockoss.server.core import MockServer

__all__ = ["durable", "expect_ticket", "lifespan_for"]

Lifespan = Callable[[Any], AbstractAsyncContextManager[None]]


class _Held(Response):
    """``response`` whose body waits for ``ticket`` (headers and status untouched)."""

    def __init__(self, response: Response, ticket: Future[None]) -> None:  # no Response.__init__: nothing to render
        self._response, self._ticket = response, ticket
        self.status_code = response.status_code
        self.background = None

    @property  # type: ignore[override]
    def headers(self):  # type: ignore[no-untyped-def]
        return self._response.headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ticket, waited = self._ticket, False

        async def held(message: Message) -> None:
            nonlocal waited
            if not waited and message["type"] == "http.response.body":
                waited = True
                if not ticket.done():
                    # shield: a client leaving cancels this wait, never the write.
                    await asyncio.shield(asyncio.wrap_future(ticket))
            await send(message)

        await self._response(scope, receive, held)


def durable(response: Response, tickets: list[Future[None]]) -> Response:
    """``response``, holding its body until the exchanges recorded into ``tickets`` (from
    :func:`expect_ticket`, taken before :meth:`MockServer.respond`) are on disk; ``response``
    itself when nothing was recorded."""
    return _Held(response, tickets[-1]) if tickets else response


def lifespan_for(server: MockServer, inner: Lifespan | None) -> Lifespan | None:
    """The app's lifespan: ``inner``'s (an upstream's client), then, at shutdown, the recorder's
    close. uvicorn runs the lifespan shutdown after its graceful shutdown (SIGTERM, SIGINT) has
    let in-flight exchanges finish and before it re-raises the signal, so the recording is
    complete and closed however the server is stopped short of ``kill -9``."""
    if server.recorder is None:
        return inner
    recorder = server.recorder

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        try:
            if inner is None:
                yield
            else:
                async with inner(app):
                    yield
        finally:
            await asyncio.to_thread(recorder.close)

    return lifespan
