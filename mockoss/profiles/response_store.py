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

A profile that emulates what a server's store holds (``gptoss-reference``: the earlier turns of
a continued response, :mod:`mockoss.profiles.gptoss_ref.store`) keeps it in the server's own
:class:`KeptResponses`, which the player owns (per server, emptied with the player on
``MockServer.reset``) and hands over in :data:`KEPT` for a request that says ``store`` or names a
``previous_response_id`` (only then: a ``ContextVar.set`` costs every request that does it).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextvars import ContextVar

__all__ = ["KEPT", "KEPT_BYTES", "PREVIOUS_STORED", "KeptResponses", "previous_stored"]

#: Byte budget of one server's :class:`KeptResponses` (what a profile stores, plus
#: :data:`ENTRY_OVERHEAD` an entry).
KEPT_BYTES = 16 * 1024 * 1024
#: What an entry costs beyond its bytes (its id, the dictionary slot, the bytes object).
ENTRY_OVERHEAD = 200

#: The ``previous_response_id`` of the request being played when the player holds it (the id as
#: sent), else ``None``; set by the player for every request that names one.
PREVIOUS_STORED: ContextVar[str | None] = ContextVar("mockoss_previous_stored", default=None)


def previous_stored(previous: object) -> bool:
    """Whether ``previous`` (a request's ``previous_response_id``) names a response the server
    stored, as the player found when it played the request (``True`` for a request answered
    from an upstream's step: see the module docstring)."""
    return previous is not None and PREVIOUS_STORED.get() == previous


class KeptResponses:
    """One server's kept responses: response id → the bytes a profile stored for it, at most
    ``budget`` bytes in all (each entry counted as its length + :data:`ENTRY_OVERHEAD`), the
    oldest entry forgotten first; an entry above the whole budget is not kept. Thread-safe (a
    warm-up may surface beside the locked call)."""

    __slots__ = ("_entries", "_lock", "_size", "budget")

    def __init__(self, budget: int = KEPT_BYTES) -> None:
        self.budget = budget
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self._size = 0

    def get(self, response_id: str) -> bytes | None:
        """The bytes kept for ``response_id``, else ``None``."""
        with self._lock:
            return self._entries.get(response_id)

    def put(self, response_id: str, data: bytes) -> None:
        """Keep ``data`` for ``response_id`` (replacing what it had), forgetting the oldest entries
        until the budget holds it."""
        cost = len(data) + ENTRY_OVERHEAD
        with self._lock:
            old = self._entries.pop(response_id, None)
            if old is not None:
                self._size -= len(old) + ENTRY_OVERHEAD
            if cost > self.budget:
                return
            while self._entries and self._size + cost > self.budget:
                _, dropped = self._entries.popitem(last=False)
                self._size -= len(dropped) + ENTRY_OVERHEAD
            self._entries[response_id] = data
            self._size += cost

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self._size = 0

    def usage(self) -> tuple[int, int]:
        """``(entries, bytes)`` kept now (bytes as counted against the budget)."""
        with self._lock:
            return len(self._entries), self._size


#: The kept responses of the server answering the request; set by the player for a request whose
#: body has a ``store`` other than ``null``/``false`` or a ``previous_response_id`` (what such a
#: profile reads it for), set to ``None`` by the server for an upstream's answer; else possibly
#: left from an earlier request of the same context (so read it only for such a request).
KEPT: ContextVar[KeptResponses | None] = ContextVar("mockoss_kept_responses", default=None)
