"""The hand-off between the recorder and the HTTP layer: which recorded exchanges a reply waits for.

The HTTP layer calls :func:`expect_ticket` before each scripted reply;
:meth:`mockoss.upstream.record.Recorder.observe` appends the ticket (a future done once the step
is flushed and fsynced) of the exchange it records to the list found here; the reply's body waits
for it (:func:`mockoss.server.durable.durable`). Its own module, so that a server without
``--record`` does not import the recorder (issue 9: ``mockoss serve``'s cold start).
"""

from __future__ import annotations

from concurrent.futures import Future
from contextvars import ContextVar

__all__ = ["expect_ticket", "ticket_holder"]

#: The tickets of the request being answered (a list, so a worker thread's copied context shares it).
_TICKET: ContextVar[list[Future[None]] | None] = ContextVar("mockoss_record_ticket", default=None)


def expect_ticket() -> list[Future[None]]:
    """A fresh list, in this context, that :meth:`Recorder.observe` appends the tickets of the
    exchanges it records to: call before :meth:`MockServer.respond` (directly or on a worker
    thread), then hold the response until they are done (:func:`mockoss.server.durable.durable`)."""
    holder: list[Future[None]] = []
    _TICKET.set(holder)
    return holder


def ticket_holder() -> list[Future[None]] | None:
    """The list :func:`expect_ticket` left in this context, ``None`` outside a request."""
    return _TICKET.get()
