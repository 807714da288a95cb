"""A least-recently-used cache bounded in bytes, for work that depends only on content.

Used for prompt token counts (per request body and per message, :mod:`mockoss.harmony.prompt.count`)
and for compiled completions (:mod:`mockoss.harmony.completion`). Sizes are what the caller states
for an entry (its key's and value's bytes, roughly), so the bound holds whatever the entries are.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["BytesLRU"]

V = TypeVar("V")

#: What an entry costs beyond the sizes the caller states: the ordered-dict slot, the tuple
#: holding value and size, the int (CPython 3.11, 64-bit, rounded up).
ENTRY_OVERHEAD = 160


class BytesLRU(Generic[V]):
    """A thread-safe LRU cache whose entries add up to at most ``limit`` bytes.

    Args:
        limit: the byte budget (``0`` keeps nothing). An entry larger than the whole budget is
            not stored.

    ``get`` refreshes an entry; ``put`` evicts the least recently used entries until the new one
    fits. ``size`` is the bytes held, ``len()`` the number of entries.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> V | None:
        """The value stored under ``key``, else ``None``.

        Lock-free (reads are the hot path): each ``OrderedDict`` operation is atomic under the
        GIL, and an entry evicted between the two steps is simply not refreshed.
        """
        found = self._items.get(key)
        if found is None:
            return None
        try:
            self._items.move_to_end(key)
        except KeyError:
            pass
        return found[0]

    def put(self, key: Hashable, value: V, nbytes: int) -> V:
        """Store ``value`` under ``key`` as ``nbytes`` (plus a fixed per-entry overhead); return it."""
        cost = nbytes + ENTRY_OVERHEAD
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.size -= old[1]
            if cost > self.limit:
                return value
            while self._items and self.size + cost > self.limit:
                _, (_, freed) = self._items.popitem(last=False)
                self.size -= freed
            self._items[key] = (value, cost)
            self.size += cost
        return value

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._items.clear()
            self.size = 0
