"""Whether the Responses request being answered continues a response this server stored.

The scenario player (:meth:`mockoss.scenario.player.Player.play`) knows which response ids the
server gave and stored (a reply to a request that did not say ``store: false``); a profile that
emulates a server's store (the ``vllm`` profile's ``responses_store`` switch) needs to know
whether the request's ``previous_response_id`` is one of them, to answer an unknown id with the
server's 404. The player sets :data:`PREVIOUS_STORED` for every request it plays, and the profile
reads it while it surfaces the same request, in the same call (``MockServer._answer``), hence a
context variable rather than a new field on every request's context. A request answered from an
upstream's step (``MockServer.respond(..., step=...)``, :mod:`mockoss.upstream`) is not played:
its id is set as stored (the upstream holds the store), never left from an earlier request.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["PREVIOUS_STORED", "previous_stored"]

#: The ``previous_response_id`` of the request being played when the player holds it (the id as
#: sent), else ``None``; set by the player for every request that names one.
PREVIOUS_STORED: ContextVar[str | None] = ContextVar("mockoss_previous_stored", default=None)


def previous_stored(previous: object) -> bool:
    """Whether ``previous`` (a request's ``previous_response_id``) names a response the server
    stored, as the player found when it played the request (``True`` for a request answered
    from an upstream's step: see the module docstring)."""
    return previous is not None and PREVIOUS_STORED.get() == previous
