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
``MockServer.reset``). The server hands it over in the request's own context
(:attr:`RequestContext.kept <mockoss.profiles.base.RequestContext.kept>`) for a request the player
plays, one field filled where the context is built: no context variable, so nothing is left from
another request or another server sharing the thread, and the scenario layer reads no profile's
body field. An upstream's answer gets ``None`` (the upstream holds the store); a warm-up before
the lock (:mod:`mockoss.server.warmup`) gets a :class:`KeptReader`, which reads the entries and
keeps nothing (``surface`` there changes nothing but memos).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextvars import ContextVar
from typing import Any

__all__ = ["FORGOTTEN_IDS", "KEPT_BYTES", "PREVIOUS_STORED", "KeptReader", "KeptResponses", "previous_stored"]

#: Byte budget of one server's :class:`KeptResponses` (what a profile stores, plus
#: :data:`ENTRY_OVERHEAD` an entry).
KEPT_BYTES = 16 * 1024 * 1024
#: What an entry costs beyond its bytes (its id, the dictionary slot, the bytes object).
ENTRY_OVERHEAD = 200
#: How many ids of entries the byte budget made :class:`KeptResponses` forget it remembers
#: (:meth:`KeptResponses.forgot`), the oldest forgotten first: ~100 bytes each, so one per 4 KiB
#: of budget (4,096 for :data:`KEPT_BYTES`, 256 for a test-id session's 1 MiB).
FORGOTTEN_IDS = 4096

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
    oldest entry forgotten first; an entry above the whole budget is not kept. The ids the budget
    dropped (evicted, or too big to keep) are remembered, :data:`FORGOTTEN_IDS` at most, so that a
    profile can say why a continuation found nothing (:meth:`forgot`). Thread-safe (a warm-up
    reads beside the locked call)."""

    __slots__ = ("_entries", "_forgotten", "_lock", "_size", "budget")

    def __init__(self, budget: int = KEPT_BYTES) -> None:
        #: Bytes at most (settable: a test-id session's copy of the server keeps a smaller share,
        #: :data:`mockoss.server.control.SESSION_KEPT_BYTES`).
        self.budget = budget
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._forgotten: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self._size = 0

    def get(self, response_id: str) -> bytes | None:
        """The bytes kept for ``response_id``, else ``None``."""
        with self._lock:
            return self._entries.get(response_id)

    def put(self, response_id: str, data: bytes) -> None:
        """Keep ``data`` for ``response_id`` (replacing what it had), forgetting the oldest entries
        until the budget holds it (their ids then count as :meth:`forgot`, as does ``response_id``
        when ``data`` alone is above the budget)."""
        cost = len(data) + ENTRY_OVERHEAD
        with self._lock:
            self._forgotten.pop(response_id, None)
            old = self._entries.pop(response_id, None)
            if old is not None:
                self._size -= len(old) + ENTRY_OVERHEAD
            if cost > self.budget:
                self._note_forgotten(response_id)
                return
            while self._entries and self._size + cost > self.budget:
                dropped_id, dropped = self._entries.popitem(last=False)
                self._size -= len(dropped) + ENTRY_OVERHEAD
                self._note_forgotten(dropped_id)
            self._entries[response_id] = data
            self._size += cost

    def _note_forgotten(self, response_id: str) -> None:
        """Remember an id the budget dropped (the lock held)."""
        self._forgotten[response_id] = None
        if len(self._forgotten) > min(FORGOTTEN_IDS, max(16, self.budget * FORGOTTEN_IDS // KEPT_BYTES)):
            self._forgotten.popitem(last=False)

    def forget(self, response_id: str) -> None:
        """Drop ``response_id``'s entry as if it had never been kept (a reply whose delivery never
        reaches its end: :mod:`mockoss.server.stored_replies`); not counted as :meth:`forgot`."""
        with self._lock:
            old = self._entries.pop(response_id, None)
            if old is not None:
                self._size -= len(old) + ENTRY_OVERHEAD

    def forgot(self, response_id: str) -> bool:
        """Whether ``response_id`` was kept, or asked to be, and the byte budget dropped it (one of
        the last :data:`FORGOTTEN_IDS` such ids); ``False`` for an id never kept, or kept now."""
        with self._lock:
            return response_id in self._forgotten

    def clear(self) -> None:
        """Forget every entry, and every id :meth:`forgot` knows."""
        with self._lock:
            self._entries.clear()
            self._forgotten.clear()
            self._size = 0

    def usage(self) -> tuple[int, int]:
        """``(entries, bytes)`` kept now (bytes as counted against the budget)."""
        with self._lock:
            return len(self._entries), self._size

    def reader(self) -> KeptReader:
        """A view of these entries that keeps nothing (:class:`KeptReader`)."""
        return KeptReader(self)


class KeptReader:
    """A read-only view of a :class:`KeptResponses`, for a warm-up before the server lock
    (:mod:`mockoss.server.warmup`): :meth:`get` and :meth:`forgot` read the server's entries, so
    that the warm-up renders a continuation as the locked call will (its plans built: an agent
    loop's tool output alone is a 500 without the stored call); :meth:`put` keeps nothing (the
    request itself keeps its response, under the lock, with the id it then gets)."""

    __slots__ = ("_kept",)

    def __init__(self, kept: KeptResponses) -> None:
        self._kept = kept

    @property
    def budget(self) -> int:
        """The viewed store's byte budget (:attr:`KeptResponses.budget`)."""
        return self._kept.budget

    def get(self, response_id: str) -> bytes | None:
        """:meth:`KeptResponses.get`."""
        return self._kept.get(response_id)

    def forgot(self, response_id: str) -> bool:
        """:meth:`KeptResponses.forgot`."""
        return self._kept.forgot(response_id)

    def put(self, response_id: str, data: Any) -> None:
        """Nothing: a warm-up keeps nothing."""
