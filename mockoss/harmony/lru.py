"""Caches bounded in bytes, for work that depends only on content.

:class:`BytesLRU` (least recently used) holds whole-body prompt counts
(:mod:`mockoss.endpoints`), compiled completions (:mod:`mockoss.harmony.completion`) and loaded
scenarios; :class:`ClockCache` (second chance, a cheaper hit) the per-message, header and preamble counts
of :mod:`mockoss.harmony.prompt.count`. Sizes are what the caller states for an entry (its key's and
value's bytes, roughly), so the bound holds whatever the entries are. :func:`approx_bytes`
estimates them for a store whose caller cannot (``Completion._memo``,
:class:`mockoss.harmony.completion.Memo`).
"""

from __future__ import annotations

import sys
import threading
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable
from itertools import islice
from typing import Any, Generic, TypeVar

__all__ = ["BytesLRU", "ClockCache", "approx_bytes"]

V = TypeVar("V")

#: What an entry costs beyond the sizes the caller states: the ordered-dict slot, the tuple
#: holding value and size, the int (CPython 3.11, 64-bit, rounded up).
ENTRY_OVERHEAD = 160

#: How many key hashes :meth:`BytesLRU.offer` remembers (a set of ints: about 1 MB).
DOORKEEPER_SIZE = 16384


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
        self._offered: set[int] = set()  # hashes of keys offered once (offer)
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

    def offer(self, key: Hashable, value: V, nbytes: int | Callable[[], int]) -> V:
        """:meth:`put`, but only for a key offered before (else remember its hash); return ``value``.

        A doorkeeper, as in TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient
        Cache Admission Policy", ACM TOS 2017): a key seen once costs a set insert of its hash
        (~50 ns) instead of an entry (~500 ns, evicting another); a key seen twice is stored, so a
        value asked for again and again is computed twice, then found. For caches where most keys
        come once (whole request bodies). A hash collision only admits a key early. The set holds
        at most :data:`DOORKEEPER_SIZE` hashes (about 1 MB) and is emptied when full. ``nbytes`` may
        be a function, called only when the value is stored (a size that is costly to measure).
        """
        digest = hash(key)
        seen = self._offered
        if digest in seen:
            seen.discard(digest)
            return self.put(key, value, nbytes if type(nbytes) is int else nbytes())  # type: ignore[operator]
        if len(seen) >= DOORKEEPER_SIZE:
            seen.clear()
        seen.add(digest)
        return value

    def clear(self) -> None:
        """Drop every entry (and forget the offered keys)."""
        with self._lock:
            self._items.clear()
            self._offered.clear()
            self.size = 0


class ClockCache(Generic[V]):
    """A thread-safe second-chance (CLOCK) cache whose entries add up to at most ``limit`` bytes.

    Args:
        limit: the byte budget (``0`` keeps nothing). An entry larger than the whole budget is
            not stored.

    The policy: entries queue in insertion order; ``get`` only marks its entry as used (one dict
    lookup and one list store: no reordering, so a hit costs about a plain ``dict.get``, ~40 ns
    less than :meth:`BytesLRU.get` with its ``move_to_end``); ``put`` evicts from the oldest end
    until the new entry fits, but an entry marked as used since it was last looked at is unmarked
    and sent to the back of the queue instead (its second chance). So an entry read at least once
    per pass of the queue stays, and one not read since it last came up is evicted: LRU's
    behaviour for the hot/cold split that matters here (messages resent every turn, a system
    prompt, tool headers), for a cheaper hit. A sweep unmarks what it passes, so ``put`` ends within about two passes (a reader
    may mark an entry again meanwhile).
    ``size`` is the bytes held, ``len()`` the number of entries.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._items: OrderedDict[Hashable, list[Any]] = OrderedDict()  # key -> [value, cost, used]
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> V | None:
        """The value stored under ``key``, else ``None`` (lock-free: a dict lookup and a store of
        the used mark, each atomic under the GIL)."""
        entry = self._items.get(key)
        if entry is None:
            return None
        entry[2] = True
        return entry[0]  # type: ignore[no-any-return]

    def put(self, key: Hashable, value: V, nbytes: int) -> V:
        """Store ``value`` under ``key`` as ``nbytes`` (plus a fixed per-entry overhead); return it."""
        cost = nbytes + ENTRY_OVERHEAD
        with self._lock:
            items = self._items
            if key in items:  # rare (a put follows a missed get): a plain lookup, not OrderedDict.pop
                self.size -= items.pop(key)[1]
            if cost > self.limit:
                return value
            size, limit = self.size + cost, self.limit
            while size > limit and items:
                oldest, entry = items.popitem(last=False)
                if entry[2]:  # used since it last came up: its second chance
                    entry[2] = False
                    items[oldest] = entry
                else:
                    size -= entry[1]
            items[key] = [value, cost, False]
            self.size = size
        return value

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._items.clear()
            self.size = 0


#: Objects :func:`approx_bytes` counts but does not look into: code and types (shared, long-lived).
_SHARED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
_getsizeof = sys.getsizeof


def _fields(obj: Any) -> list[Any]:
    """What an object of a class of ours holds: its ``__dict__`` and its ``__slots__`` values."""
    held: list[Any] = []
    found = getattr(obj, "__dict__", None)
    if found is not None:
        held.append(found)
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__"):
                try:
                    held.append(getattr(obj, name))
                except AttributeError:  # a slot never set
                    pass
    return held


#: A sequence of containers longer than this is estimated from this many of its items.
SAMPLED_ITEMS = 64
_LEAVES = frozenset({str, int, bytes, float, bool, type(None)})


#: Leaves summed per C call (:func:`_add_leaves`): ~0.7 ms of ``sys.getsizeof`` calls.
LEAF_CHUNK = 8192


def _add_leaves(items: Any, weight: float, total: float, limit: int) -> float:
    """``total`` plus ``weight`` times the exact ``sys.getsizeof`` sum of ``items`` (all leaves),
    :data:`LEAF_CHUNK` items per C call, stopping once past ``limit``.

    One ``sum(map(sys.getsizeof, items))`` runs no bytecode, so the interpreter cannot hand the GIL
    to another thread until it returns (unlike ``any``/``all`` over a generator, whose frame checks
    for a switch request every item): a list of 3 million token ids held every other thread, the
    event loop included, for 260-350 ms, and the whole list was summed even when the first
    thousandth passed ``limit`` (a request body measured against the valid-body cache's budget).
    Chunked, the longest hold is one chunk's (~3 ms measured at a 1 ms switch interval), and the
    walk stops within a chunk of the budget, as the docstring of :func:`approx_bytes` promises.
    The sum is the same (an integer, chunk by chunk): ``tests/harmony/test_lru_leaves.py``."""
    if len(items) <= LEAF_CHUNK:
        return total + weight * sum(map(_getsizeof, items))
    rest = iter(items)
    summed = 0  # an int, multiplied once: the same float as one sum when the walk is not cut
    for _ in range(0, len(items), LEAF_CHUNK):
        summed += sum(map(_getsizeof, islice(rest, LEAF_CHUNK)))
        if total + weight * summed > limit:
            break
    return total + weight * summed


def approx_bytes(value: Any, limit: int = sys.maxsize, opaque: tuple[type, ...] = ()) -> int:
    """Roughly the bytes ``value`` holds: ``sys.getsizeof`` of it and of everything it reaches
    (container items, dict keys and values, instance ``__dict__`` and ``__slots__``), each object
    counted once, without recursion (any depth). Strings, numbers and other leaves are counted as
    they are; types, modules and functions, and instances of ``opaque``, add their own size only
    (they are held elsewhere). An object shared with other values is counted in each: an
    over-estimate, which is the safe side of a bound. Stops as soon as the count passes ``limit``
    (a value too big for a budget costs a walk of about the budget, not of the value), returning
    that partial count. For stores whose callers cannot state a size.

    Long sequences: walking what a completion's memo stores (traces, token tuples, chunk lists:
    tens of thousands of objects for 10,000 tokens) at ~0.5 us an object doubled the first request
    on a long completion (``benchmarks/bench_first_request.py``: 64 -> 125 ms at 10,000 tokens).
    So a tuple, list or set of more than :data:`SAMPLED_ITEMS` items that are all leaves (strings,
    bytes, numbers: token ids, text pieces, tool names, where a request's data sits) is summed
    exactly in C, and one whose items are containers is estimated from :data:`SAMPLED_ITEMS` of
    them, one per stratum, scaled to its length. The estimate is close for like items (a trace's
    events, a plan's chunks; within ~3% in ``tests/harmony/test_memo_bytes.py``); a sequence of
    containers whose few huge members fall between the samples is under-counted.
    """
    seen: set[int] = set()
    total = 0.0
    todo: list[tuple[Any, float]] = [(value, 1.0)]
    while todo:
        obj, weight = todo.pop()
        kind = type(obj)
        if kind is str or kind is int or kind is bytes or kind is float or kind is bool or obj is None:
            total += weight * _getsizeof(obj)
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += weight * _getsizeof(obj)
        if total > limit:
            return int(total)
        if kind is tuple or kind is list or kind is set or kind is frozenset:
            items: Any = obj
            scale = weight
            if len(obj) > SAMPLED_ITEMS:
                if all(type(item) in _LEAVES for item in obj):  # token ids, text pieces, names: exactly, in C
                    total = _add_leaves(obj, weight, total, limit)
                    if total > limit:
                        return int(total)
                    continue
                # Containers: one item of each of SAMPLED_ITEMS equal strata, at a hashed place (a
                # fixed stride would see one phase of periodic data).
                step = len(obj) // SAMPLED_ITEMS
                seq = tuple(obj) if kind is set or kind is frozenset else obj
                items = [seq[j * step + (j * 2654435761) % step] for j in range(SAMPLED_ITEMS)]
                scale = weight * len(obj) / SAMPLED_ITEMS
            for item in items:  # leaves counted here: most items are (token tuples, text pieces)
                held = type(item)
                if held is str or held is int or held is bytes or held is float or held is bool or item is None:
                    total += scale * _getsizeof(item)
                else:
                    todo.append((item, scale))
        elif kind is dict:
            todo.extend((key, weight) for key in obj)
            todo.extend((item, weight) for item in obj.values())
        elif isinstance(obj, _SHARED) or (opaque and isinstance(obj, opaque)):
            continue
        elif isinstance(obj, dict):
            todo.extend((key, weight) for key in obj)
            todo.extend((item, weight) for item in obj.values())
            todo.extend((item, weight) for item in _fields(obj))
        elif isinstance(obj, (tuple, list, set, frozenset)):
            todo.extend((item, weight) for item in obj)
            todo.extend((item, weight) for item in _fields(obj))
        else:
            todo.extend((item, weight) for item in _fields(obj))
    return int(total)
