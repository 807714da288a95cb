"""A conversation's leading messages, summed once for the chat template's count and found again.

:mod:`.template_pieces` sums a prompt's count message by message, each part a cache lookup keyed
by the message's :mod:`marshal` bytes: 400 resent messages cost 400 keys and lookups (~3 ms).
Agents resend their conversation every turn, so here the sum over a run of leading messages is
stored whole (:class:`Fold`, what the rest of the conversation needs of them) under the marshal
bytes of ``messages[:length]``, and a later request whose first messages marshal to the same bytes
takes it in one comparison. Equal marshal bytes (version 2: no back-references) are equal JSON
data, types and key order included, and a leading message's part depends only on the messages
(its own, the ones before it for ``last_tool_call``) and on whether a plain assistant message
comes later (``future_final_message``), which a :class:`Fold` keeps open (``tail`` and
``tail_final``), so a hit is exact.

As :class:`mockoss.harmony.prompt.prefix.PrefixCache` does for the Harmony count: the newest
:data:`RECENT` prefixes are kept, each first filtered by its last message (``==``), those left
tried longest first (not newest first: a short history that also begins a long conversation
would make the long one's turn sum the rest again), then compared segment by segment (a stored prefix that extends a found one keys the
new messages only: the turn marshals its conversation once); at most :data:`MAX_TRIES`
comparisons fail before giving up. A body parsed from a kept one (:mod:`mockoss.jsonsplice`)
holds the very message objects of the earlier request: an entry keeps them (counted at
:func:`mockoss.harmony.prompt.prefix.objects_bytes`' bound), and a request whose first messages
are those objects (``is``) takes it without marshalling (no reader modifies a parsed body).
Bounded in bytes, emptied with the other parts' caches.
"""

from __future__ import annotations

import marshal
import threading
from collections.abc import Sequence
from operator import is_
from typing import Any, NamedTuple

from mockoss.harmony.prompt.prefix import objects_bytes

__all__ = ["MAX_TRIES", "PREFIX_MIN", "RECENT", "Fold", "Found", "PrefixStore"]

#: Prefixes kept (the newest).
RECENT = 16
#: Comparisons that may fail in one lookup.
MAX_TRIES = 2
#: Conversations shorter than this are summed message by message (a lookup costs more).
PREFIX_MIN = 8
#: At most this many segments to a key.
MAX_SEGMENTS = 8


class Fold(NamedTuple):
    """The summed parts of a run of messages, as the rest of the conversation needs them."""

    #: Parts whose rendering is settled.
    base: int
    #: The tool calls after the last plain assistant message: their parts with no later plain
    #: assistant message, and with one (``future_final_message`` drops their analysis text).
    tail: int
    tail_final: int
    #: The last assistant tool call's name (``last_tool_call``), ``None`` after a plain answer.
    last_call: Any


class Found(NamedTuple):
    """A stored prefix found for a request: its length, its fold and its key (to extend)."""

    length: int
    fold: Fold
    ends: tuple[int, ...]
    segments: tuple[bytes, ...]


def _dumps(messages: Sequence[Any]) -> bytes:
    return marshal.dumps(list(messages), 2)


class PrefixStore:
    """The newest stored prefixes, at most :data:`RECENT` and ``limit`` bytes (module docstring)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        #: ``(ends, segments, last message, fold, bytes, message objects)`` newest first, replaced whole.
        self._entries: tuple[tuple[tuple[int, ...], tuple[bytes, ...], Any, Fold, int, tuple[Any, ...]], ...] = ()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._entries = ()

    @property
    def size(self) -> int:
        """Bytes held."""
        return sum(entry[4] for entry in self._entries)

    def find(self, messages: Sequence[Any]) -> Found | None:
        """The longest stored prefix of ``messages`` (plain JSON data), else ``None``: the
        entries whose last message is ``messages``' at their length, longest first (a client's
        short history may also begin a long one: the newest would cost the rest again)."""
        n, tries = len(messages), MAX_TRIES
        candidates = [e for e in self._entries if e[0][-1] <= n and messages[e[0][-1] - 1] == e[2]]
        candidates.sort(key=lambda entry: -entry[0][-1])  # stable: the newest first among equals
        for ends, segments, last, fold, _, objects in candidates:
            length = ends[-1]
            if objects and messages[length - 1] is last and all(map(is_, messages, objects)):
                return Found(length, fold, ends, segments)  # the very objects (mockoss.jsonsplice)
            try:
                same = all(_dumps(messages[a:b]) == seg for a, b, seg in zip((0, *ends), ends, segments))
            except ValueError:  # not plain data
                return None
            if same:
                return Found(length, fold, ends, segments)
            tries -= 1
            if tries == 0:
                return None
        return None

    def store(self, messages: Sequence[Any], length: int, fold: Fold, after: Found | None) -> Found | None:
        """Keep ``fold`` as the sum of ``messages[:length]`` and return it as found (``None``:
        not kept, too big or not plain data); ``after``: the shorter prefix this request found
        (its key is extended by the messages in between)."""
        try:
            if after is not None and len(after.ends) < MAX_SEGMENTS and after.length < length:
                ends = (*after.ends, length)
                segments = (*after.segments, _dumps(messages[after.length : length]))
            else:
                ends, segments = (length,), (_dumps(messages[:length]),)
            nbytes = sum(map(len, segments)) + len(_dumps(messages[length - 1 : length])) + 256
        except ValueError:
            return None
        objects: tuple[Any, ...] = tuple(messages[:length])
        with_objects = nbytes + objects_bytes(nbytes, length)
        if with_objects <= self.limit // 2:
            nbytes = with_objects
        else:
            objects = ()
        if nbytes > self.limit:
            return None
        with self._lock:
            kept, total = [(ends, segments, messages[length - 1], fold, nbytes, objects)], nbytes
            for other in self._entries:
                if len(kept) == RECENT or total + other[4] > self.limit:
                    break
                if other[:2] != kept[0][:2]:
                    kept.append(other)
                    total += other[4]
            self._entries = tuple(kept)
        return Found(length, fold, ends, segments)
