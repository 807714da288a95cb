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

The very objects first: a body parsed from a kept body (:mod:`mockoss.jsonsplice`, bodies of
8 KiB or more) holds the same message objects as the earlier request whose elements it repeats,
so an entry also keeps its messages' objects, and a lookup whose first messages are those
objects, one by one (``is``), takes it without writing any bytes: the same objects hold the same
data, since no reader changes a parsed body. On the agent turn of ``benchmarks/bench_prompt.py``
(with the tools, found the same way: :meth:`RecentKeys.find_object`) the whole app's instructions
in process went from 1.40 M to 0.75 M a request with the splice (the short request's: 0.36 M).
An entry's bytes count those objects at an upper bound (:func:`objects_bytes`).

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
from operator import is_, itemgetter
from typing import Any, NamedTuple

from mockoss.harmony.prompt._common import _key, _text
from mockoss.harmony.prompt.chat import _call_names, _lead
from mockoss.harmony.prompt.pieces import Entry

__all__ = [
    "MAX_SEGMENTS", "MAX_TRIES", "RECENT", "Prefix", "PrefixCache", "RecentKeys", "Seen", "chat_prefix", "item_prefix", "objects_bytes",
]

#: How many prefixes are kept (the newest; a lookup tries them newest first).
RECENT = 16

#: A lookup gives up after this many prefixes whose last message matched but whose bytes did not
#: (each costs a marshal of the request's first messages: ~10 us for 50 agent messages).
MAX_TRIES = 2

#: At most this many segments to a key; a prefix that would need more is keyed by one again.
MAX_SEGMENTS = 8



def objects_bytes(marshal_bytes: int, items: int) -> int:
    """An upper bound of the bytes of the objects of ``items`` JSON values (messages, tools)
    whose marshal bytes number ``marshal_bytes``, which an entry keeps for the identity checks
    (:meth:`PrefixCache.find`, :meth:`RecentKeys.find_object`): 16 a marshal byte and 1,024 an
    item. marshal writes a repeated key once and a small ``dict`` in ~20 bytes against its ~200,
    so bytes alone do not bound them (1,000 short messages: 26 KB of marshal, 300 KB of objects;
    2,000 one-letter content parts: 46 KB, 497 KB). An agent turn's take about a fifth. Checked with
    ``tracemalloc`` on short messages, tool calls, content parts, agent turns and tool lists in
    ``tests/harmony/test_prompt_prefix.py``."""
    return 16 * marshal_bytes + 1024 * items


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
    #: Whether a request holding these messages was accepted by the chat request schema (set by
    #: its validation: :func:`mockoss.schemas.chat.quick_validate` validates a later request's
    #: messages after a validated prefix only).
    validated: bool = False
    #: How many of its messages are ``dict``\ s with the role ``assistant`` (a chat request's turn
    #: is one more than those of all its messages: ``mockoss.scenario.conversation.body_turn``);
    #: ``-1``: not counted (Responses items).
    assistants: int = -1


class Seen(NamedTuple):
    """What :func:`mockoss.harmony.prompt.seen.find_seen` found of one chat body, before validating it."""

    #: The stored prefix of its messages (looked up for ``count.PREFIX_MIN`` messages or more).
    prefix: Prefix | None
    #: The marshal bytes of its tools list (a non-empty ``list``), else ``None``.
    tools_key: bytes | None
    #: Whether an accepted request held tools with these bytes.
    tools_validated: bool
    #: Whether this body was accepted (``seen.accept_seen``): prefixes the count stores from it
    #: are then marked validated.
    validated: bool = False
    #: What is derived from the tools (their view's declarations), kept with their validated
    #: bytes (:class:`RecentKeys`), else ``None``.
    tools_memo: dict[str, Any] | None = None
    #: The tools list itself, while not validated (:func:`mockoss.harmony.prompt.seen.accept_seen`
    #: records it with its bytes), else ``None``.
    tools: Any = None


class PrefixCache:
    """The newest stored prefixes (at most :data:`RECENT`, at most ``limit`` bytes), each keyed by
    the marshal bytes of its messages, and filtered by its last message (counted at its marshal
    size).

    A key is a tuple of segments, the marshal bytes of ``messages[0:e0]``, ``messages[e0:e1]``…
    (at most :data:`MAX_SEGMENTS`): a prefix stored by a request that found a shorter one extends
    that one's key by the bytes of the messages in between, so an agent's turn marshals its
    conversation once (to find it), not twice (to store it as well): 6 us of a 50-message turn.
    marshal's encoding is self-delimiting, so equal segments at the same ends mean equal messages.
    Segments are compared (a ``memcmp`` each) rather than hashed into a dict: the bytes of 47
    agent messages (16 KB) take 3 us to hash. Newest first, a hit moves to the front: agents resend
    their latest conversation, so the prefix wanted is the newest one of its agent.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        #: ``(ends, segments, last message, prefix, bytes, messages)`` newest first; replaced
        #: whole, so reads need no lock.
        self._entries: tuple[tuple[tuple[int, ...], tuple[bytes, ...], Any, Prefix, int, tuple[Any, ...]], ...] = ()
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes held (as counted against ``limit``)."""
        return sum(entry[4] for entry in self._entries)

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
            ends, segments, last, prefix, _, objects = entry
            length = prefix.length
            if length > n:
                continue
            if not (objects and messages[length - 1] is last and all(map(is_, messages, objects))):
                # Not the very objects stored (those of a body parsed from a kept one:
                # mockoss.jsonsplice); the last message with ==, a cheap filter; the bytes decide.
                if messages[length - 1] != last:
                    continue
                try:
                    same = all(marshal.dumps(messages[a:b]) == seg for a, b, seg in zip((0, *ends), ends, segments))
                except ValueError:  # not plain data (a Mapping that is not a dict)
                    return None
                if not same:
                    tries -= 1
                    if tries == 0:
                        return None
                    continue
            if entry is not entries[0]:
                self._push(entry)
            return prefix
        return None

    def store(
        self, messages: Sequence[Any], length: int, build: Callable[[], Prefix | None], after: Prefix | None = None
    ) -> None:
        """Store ``build()`` (the prefix of ``messages`` of ``length`` messages) unless it is
        ``None`` or raises ``ValueError``; ``after``: the shorter prefix this request found, whose key
        it extends. The key is taken before ``build`` runs (see the module docstring)."""
        base = next((e for e in self._entries if e[3] is after), None) if after is not None else None
        try:
            if base is not None and len(base[0]) < MAX_SEGMENTS and base[0][-1] < length:
                ends, segments = (*base[0], length), (*base[1], marshal.dumps(messages[base[0][-1] : length]))
            else:
                ends, segments = (length,), (marshal.dumps(messages[:length]),)
            last = messages[length - 1]
            nbytes = sum(map(len, segments)) + len(marshal.dumps(last))
            # The messages' objects are kept (and counted) when they fit half the budget; a
            # longer prefix is stored by its bytes only, as before the identity check.
            objects: tuple[Any, ...] = tuple(messages[:length])
            with_objects = nbytes + objects_bytes(nbytes, length)
            if with_objects <= self.limit // 2:
                nbytes = with_objects
            else:
                objects = ()
        except ValueError:
            return
        if nbytes > self.limit:
            return
        try:
            prefix = build()
        except ValueError:  # data the names cannot be read from: the caller's count stands, unstored
            return
        if prefix is not None:
            self._push((ends, segments, last, prefix, nbytes + 64 * (len(prefix.turns) + len(prefix.names)), objects))

    def validate(self, prefix: Prefix) -> None:
        """Mark the stored ``prefix`` as validated (``Prefix.validated``): a request holding its
        messages was accepted."""
        with self._lock:
            self._entries = tuple(e if e[3] is not prefix else (*e[:3], prefix._replace(validated=True), *e[4:]) for e in self._entries)

    def _push(self, entry: tuple[tuple[int, ...], tuple[bytes, ...], Any, Prefix, int, tuple[Any, ...]]) -> None:
        """Put ``entry`` first, dropping any other entry with the same key and the oldest ones
        beyond :data:`RECENT` entries or ``limit`` bytes. An entry with the same key holds the
        same messages: if it was validated, so is ``entry``."""
        with self._lock:
            kept, total = [entry], entry[4]
            for other in self._entries:
                if len(kept) == RECENT or total + other[4] > self.limit:
                    break
                if other[:2] != entry[:2]:
                    kept.append(other)
                    total += other[4]
                elif other[3].validated and not entry[3].validated:
                    kept[0] = entry = (*entry[:3], entry[3]._replace(validated=True), *entry[4:])
            self._entries = tuple(kept)


class RecentKeys:
    """The newest byte strings added (at most :data:`RECENT`, at most ``limit`` bytes in all),
    each with a memo ``dict`` for what is derived from the data they are the marshal bytes of,
    and the object they were taken from. Looked up by ``==`` (a length check and a ``memcmp``
    each) rather than a hash: hashing the 4 KB of an agent's tools costs more than comparing them
    with the one or two keys a server sees; or by that object itself (:meth:`find_object`: a body
    parsed from a kept one shares it, :mod:`mockoss.jsonsplice`, and no reader changes a parsed
    body). A key found is returned as stored, so its hash, once taken, is kept for every later
    request (a dict key holding it costs no new hash of its bytes). Thread-safe: the tuple is
    replaced whole; a memo is filled by whoever finds it empty (same data, same values); an
    entry's object is one reference, replaced by an equal one (:meth:`carry`)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        #: ``[key, memo, object or None]`` each, newest first; the tuple is replaced whole.
        self._entries: tuple[list[Any], ...] = ()
        self._lock = threading.Lock()

    @staticmethod
    def _bytes(key: bytes, data: Any) -> int:
        """Bytes counted for an entry: its key, its memo (256), the objects it was taken from."""
        items = len(data) if type(data) is list else 0
        return len(key) + 256 + (0 if data is None else objects_bytes(len(key), items))

    def _carries(self, key: bytes, data: Any) -> bool:
        """Whether an entry keeps ``data`` (its objects counted at most half the budget: a list
        of 100 tools is not kept, only its bytes, as before the identity checks; the review of
        issue 9, 13th session, found it no longer stored at all)."""
        return data is not None and self._bytes(key, data) <= self.limit // 2

    @property
    def size(self) -> int:
        """Bytes held (the keys; a memo is counted at 256 bytes; the objects at :func:`objects_bytes`)."""
        return sum(self._bytes(entry[0], entry[2]) for entry in self._entries)

    def __contains__(self, key: bytes) -> bool:
        return self.find(key) is not None

    def find(self, key: bytes) -> list[Any] | None:
        """The entry of the stored key equal to ``key``: ``[key, memo, object or None]``, else ``None``."""
        for entry in self._entries:
            if entry[0] == key:
                return entry
        return None

    def find_object(self, data: Any) -> list[Any] | None:
        """The entry whose key was taken from ``data`` itself (the same object), else ``None``."""
        for entry in self._entries:
            if entry[2] is data:
                return entry
        return None

    def carry(self, entry: list[Any], data: Any) -> None:
        """Keep ``data``, equal to the data ``entry`` (a stored entry) was taken from, as its
        object: so that a body parsed from ``data``'s body finds it by identity. An entry that
        keeps one has it replaced in place (same data, same bytes counted); one that keeps none
        takes it if small enough (:meth:`_carries`)."""
        if entry[2] is not None:
            entry[2] = data
        elif self._carries(entry[0], data):
            self.add(entry[0], data)

    def add(self, key: bytes, data: Any = None) -> dict[str, Any]:
        """Put ``key`` (the marshal bytes of ``data``) first, dropping the oldest keys beyond
        the bounds; its memo (a new one if it was not stored, or it is larger than the whole
        budget and not kept). ``data`` is kept with it when small enough (:meth:`_carries`)."""
        kept_data = data if self._carries(key, data) else None
        found = self.find(key)
        if found is None:
            entry = [key, {}, kept_data]
        else:  # the stored key and memo, with the newest object they come from
            entry = found
            if kept_data is not None:
                entry[2] = kept_data
        size = self._bytes(key, entry[2])
        if size > self.limit:
            return entry[1]
        with self._lock:
            kept, total = [entry], size
            for other in self._entries:
                if len(kept) == RECENT or total + self._bytes(other[0], other[2]) > self.limit:
                    break
                if other is not entry and other[0] != key:
                    kept.append(other)
                    total += self._bytes(other[0], other[2])
            self._entries = tuple(kept)
        return entry[1]

    def clear(self) -> None:
        with self._lock:
            self._entries = ()


def chat_prefix(
    messages: list[Any], length: int, turns: tuple[Entry, ...], after: Prefix | None, validated: bool = False
) -> Prefix | None:
    """The :class:`Prefix` of ``messages[:length]`` whose turns are ``turns``, or ``None`` when a
    later message declares a call id one of its tool messages looked up (then its turns were
    counted with a name the prefix alone would not give). ``after``: a shorter prefix of the same
    messages (the one this request found), whose names and looked-up ids are reused: storing a
    turn then reads only the messages after it, not the whole conversation again. ``validated``:
    the request holding ``messages`` was accepted by the chat request schema."""
    lead, _ = _lead(messages)  # equal prefixes have the same leading message, or none inside
    start = after.length if after is not None and after.length <= length else 0
    names = {**after.names} if start and after is not None else {}
    names.update(_call_names(messages, start, lead, length))
    deps = set(after.deps) if start and after is not None else set()
    known = bool(start) and after is not None and after.assistants >= 0  # the shorter prefix's count reused
    assistants = after.assistants if known and after is not None else 0
    for i in range(start if known else 0, length):
        m = messages[i]
        if isinstance(m, dict) and m.get("role") == "assistant":  # as conversation._chat_turn counts
            assistants += 1
    for i in range(start, length):
        m = messages[i]
        if i != lead and (type(m) is dict or isinstance(m, Mapping)) and m.get("role") == "tool":
            deps.add(_key(m.get("tool_call_id")))
    if deps and not deps.isdisjoint(_call_names(messages, length, lead)):
        return None
    analysis = any(t[2] == "analysis" for t in turns)
    return Prefix(length, sum(map(itemgetter(0), turns)), analysis, turns, names, frozenset(deps), validated, assistants)


def item_prefix(items: list[Any], length: int, turns: tuple[Entry, ...], after: Prefix | None) -> Prefix:
    """The :class:`Prefix` of ``items[:length]`` whose turns are ``turns``, with the call names
    its function calls leave for the items after it (``after``'s reused, as in :func:`chat_prefix`)."""
    start = after.length if after is not None and after.length <= length else 0
    names = {**after.names} if start and after is not None else {}
    for item in items[start:length]:
        if (type(item) is dict or isinstance(item, Mapping)) and item.get("type", "message") == "function_call":
            names[_key(item.get("call_id"))] = _text(item.get("name"))
    analysis = any(t[2] == "analysis" for t in turns)
    return Prefix(length, sum(map(itemgetter(0), turns)), analysis, turns, names, frozenset())
