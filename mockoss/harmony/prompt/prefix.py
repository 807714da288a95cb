"""Counts of a conversation's leading messages, found again with one lookup when they come back.

An agent resends its whole conversation every turn: the first messages of a request are the
messages of an earlier one. :mod:`mockoss.harmony.prompt.count` caches every message's count, but
finding 48 seen messages still costs 48 content keys and lookups (about 60 us of the agent turn in
``benchmarks/bench_prompt.py``). Here a run of leading messages whose counts were all found in the
per-message cache is stored whole: its per-turn entries and what the rest of the conversation
needs from it, under the :mod:`marshal` bytes of ``messages[:length]``; a later request whose first
``length`` messages marshal to the same bytes takes them in one lookup (about 10 us for 47 agent
messages, most of it marshal).

Why a hit is exact: marshal bytes decode back to the value, so equal bytes mean equal JSON data
(types and key order included: ``1``, ``1.0`` and ``True`` differ), and a message's turns depend
on its data, on the tool names the whole conversation gives its call ids, and on which message
leads (the instructions: the first mapping item, so equal prefixes have the same one or none of
them holds it; turns never include it). The names are checked: a :class:`Prefix` records the call ids its tool messages looked up (``deps``),
and is used (and stored) only when no later message declares one of them (a later declaration
overrides an earlier one in vLLM's lookup). What depends on the whole list (the analysis drops,
the preamble's tools) is computed by the caller over the prefix's entries plus the rest.

Which prefixes to try: the newest few stored (:data:`RECENT`), each first compared by its last
message with ``==`` (cheap, and only a filter: the marshal bytes decide, compared with ``==``, a
``memcmp``, rather than hashed into a dict: 16 KB of bytes take 3 us to hash). A stored prefix is
the run of leading messages a request found already counted, so an agent's turn finds its
conversation as the turn before last sent it (the previous turn's new messages are then
per-message lookups), and clients that resend a fixed history with a new tail find that history.

marshal writes a back-reference for an object held more than once, so the bytes depend on what
else references the request's objects when it runs: the caller stores and looks up while nothing
but the body (and the request path's own objects, the same every request) does; in particular no
cache key may hold a string of one message for another (``count._count_chat`` keys a tool
result by a new ``functions.NAME`` string, not the name from the call). A different state only
costs misses, never a wrong count; ``tests/harmony/test_prompt_prefix.py`` checks that agent turns
do find their prefix, in process and through ``MockServer.respond``.
"""

from __future__ import annotations

import marshal
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

__all__ = ["MAX_TRIES", "RECENT", "Prefix", "PrefixCache"]

#: How many prefixes are kept (the newest; a lookup tries them newest first).
RECENT = 16

#: A lookup gives up after this many prefixes whose last message matched but whose bytes did not
#: (each costs a marshal of the request's first messages: ~10 us for 50 agent messages).
MAX_TRIES = 2


class Prefix(NamedTuple):
    """The counted turns of ``messages[:length]``."""

    #: How many request messages it covers.
    length: int
    #: The turns' tokens (before any analysis drop).
    tokens: int
    #: Whether some turn is on the analysis channel.
    analysis: bool
    #: Its Harmony turns, ``(tokens, by the assistant, channel)`` each (see ``count.Entry``).
    turns: tuple[tuple[int, bool, str | None], ...]
    #: Tool names by call id, from its messages' tool calls.
    names: Mapping[Any, str]
    #: The call ids its tool messages looked up.
    deps: frozenset[Any]


class PrefixCache:
    """The newest stored prefixes (at most :data:`RECENT`, at most ``limit`` bytes), each with the
    marshal bytes of its messages as its key and its last message (the lookup's filter, counted
    at its marshal size).

    A lookup compares bytes (a ``memcmp``) instead of hashing them into a dict: the bytes of 47
    agent messages (16 KB) take 3 us to hash. Newest first, a hit moves to the front: agents resend
    their latest conversation, so the prefix wanted is the newest one of its agent.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        #: ``(key, last message, prefix, bytes)`` newest first; replaced whole, so reads need no lock.
        self._entries: tuple[tuple[bytes, Any, Prefix, int], ...] = ()
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes held (as counted against ``limit``)."""
        return sum(entry[3] for entry in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries = ()

    def find(self, messages: Sequence[Any]) -> Prefix | None:
        """The newest stored prefix of ``messages``, else ``None``."""
        n, tries = len(messages), MAX_TRIES
        entries = self._entries  # one snapshot: another thread may replace it meanwhile
        for entry in entries:
            key, last, prefix, _ = entry
            length = prefix.length
            if length <= n and messages[length - 1] == last:  # a cheap filter; the bytes decide
                try:
                    if marshal.dumps(messages[:length]) != key:
                        tries -= 1
                        if tries == 0:
                            return None
                        continue
                except ValueError:  # not plain data (a Mapping that is not a dict)
                    return None
                if entry is not entries[0]:
                    self._push(entry)
                return prefix
        return None

    def store(self, messages: Sequence[Any], length: int, build: Callable[[], Prefix | None]) -> None:
        """Store ``build()`` (the prefix of ``messages`` of ``length`` messages) unless it is
        ``None``. The key is taken before ``build`` runs (see the module docstring)."""
        try:
            key = marshal.dumps(messages[:length])
            last = messages[length - 1]
            nbytes = len(key) + len(marshal.dumps(last))
        except ValueError:
            return
        if nbytes > self.limit:
            return
        prefix = build()
        if prefix is not None:
            self._push((key, last, prefix, nbytes + 64 * (len(prefix.turns) + len(prefix.names))))

    def _push(self, entry: tuple[bytes, Any, Prefix, int]) -> None:
        """Put ``entry`` first, dropping any other entry with the same key and the oldest ones
        beyond :data:`RECENT` entries or ``limit`` bytes."""
        with self._lock:
            kept, total = [entry], entry[3]
            for other in self._entries:
                if len(kept) == RECENT or total + other[3] > self.limit:
                    break
                if other[0] != entry[0]:
                    kept.append(other)
                    total += other[3]
            self._entries = tuple(kept)
