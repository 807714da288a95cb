"""Parse a request body that repeats an earlier one's leading messages without parsing them again.

An agent resends its conversation every turn: the body of turn ``n + 1`` is the body of turn ``n``
up to the end of some message, then new messages, then (mostly) the same closing fields
(``tools``, ``tool_choice``, ...). Parsing the whole 23 KB agent turn of
``benchmarks/bench_prompt.py`` was the largest single cost of answering it (~55 us of ~245 us in
process). :class:`SpliceCache` keeps the newest bodies' text, the index where each element of their
``messages`` (chat) or ``input`` (Responses) array ends, the parsed elements and the fields around
the array; a new body whose text equals a kept one's up to the end of its ``j``-th element takes
those ``j`` parsed elements as they are, parses only what follows, and takes the closing fields
too when the text after the array is the same.

Why the value is exactly :func:`json.loads`'s (which vLLM and the other servers apply, through
FastAPI's ``Request.json()``):

* The text is what ``json.loads`` decodes: UTF-8 with ``surrogatepass``, for a body starting with
  ``{`` and not with a NUL after it (``json.detect_encoding`` then says UTF-8). Anything else
  goes to the caller's parser.
* ``json``'s decoder reads left to right and never looks past the character that closes an
  object, a string, an array or a literal. So after the same text up to the end of an element
  (an end is kept only when its last character is not a digit: a number is read as long as
  digits follow), its state is the same: the fields before the array, the array's first
  ``j`` elements. What follows is read here with ``json``'s own scanner (CPython's ``_json``:
  ``make_scanner`` for values, ``scanstring`` for keys) and its rules for what may come between
  values (``[ \\t\\n\\r]`` whitespace, one ``,`` between items, ``:`` after a key, no trailing
  comma), and the object is built as it builds one (a later duplicate key replaces the value in
  the first one's place: ``dict(pairs)``).
* The same text after the array's ``]`` is parsed by the same decoder from the same state, so
  its fields are the kept ones.
* Any departure (a character the loop does not expect, an error from the scanner, new text
  with enough ``{`` and ``[`` to nest near the recursion limit) is not decided here: the caller
  parses the body whole (:func:`mockoss.jsonbody.parse_json`), and its value or error is the
  answer.

The reading is :mod:`mockoss.jsonsplice_read`; here, which kept body to read from. A body is
kept unread (its text only) and read element by element when a later body shares the first or
the last half of its text (~2.5x a whole parse, paid once; after a read that did not pay, the
next few bodies like it are passed over). A kept body is used when the elements ``text`` shares
with it, and the text after its array if the same, cover half of ``text``. A body made mostly of
long strings (:data:`SPARSE_ELEMENT_CHARS`) is not kept: jiter's whole parse reads it faster than
a splice can compare it.

``tests/test_jsonsplice.py`` compares the value with ``json.loads`` (types and key order
included) on edited bodies, kept read and unread: every cut point, whitespace, duplicate keys,
numbers at the cut, non-ASCII and surrogate escapes, trailing commas and truncations, depths at
the recursion limit, and the breaker's and reviewer's reproducers (issue 9, 13th session).

Kept values are shared: the elements and the fields after the array are the same objects in
every body that repeats them, so no reader may change a parsed body (none does: the request path
reads it, and copies what it changes). Readers may use that sharing: an element that is the
same object as one of an earlier body is equal to it (:meth:`mockoss.harmony.prompt.prefix.PrefixCache.find`).

Bounded in bytes (each body counted at its text, the text after its array and an upper bound of
its parsed objects' bytes, :func:`mockoss.jsonsplice_read.object_bytes`), at most :data:`RECENT`
bodies, none over ``max_body`` bytes; emptied by :meth:`SpliceCache.clear` (``MockServer.reset``, through
:func:`mockoss.harmony.prompt.caches.clear_caches`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from mockoss.jsonsplice_read import DEPARTURES, SPLICE_KEYS, Body, Miss, parse_after, parse_whole

__all__ = [
    "MAX_TRIES",
    "RECENT",
    "SKIP_AFTER_WASTED_READ",
    "SPARSE_ELEMENT_CHARS",
    "SPLICE_KEYS",
    "Miss",
    "SpliceCache",
]

#: Bodies kept (the newest; a lookup tries them newest first).
RECENT = 8
#: How many kept bodies whose first element matches a lookup compares further.
MAX_TRIES = 3
#: After reading a kept body that did not pay, this many later bodies like it are passed over unread.
SKIP_AFTER_WASTED_READ = 4
#: Bodies with more characters than this per element of their array and ``tools`` list, on
#: average, are not kept: their text is mostly long strings, which jiter's whole parse reads at
#: ~0.1 ns a character, while a splice pays ~0.12 ns a shared character only to decode and compare
#: it, and reads new strings with ``json``'s scanner at ~1.7 ns (a coding agent's 20 KB tool
#: outputs, 548 KiB bodies: 557 us a turn against 61 us whole; the breaker's finding 1, 14th
#: session). An agent turn of short messages and tool schemas averages ~330 (23 KB, 70 elements).
SPARSE_ELEMENT_CHARS = 2048


class SpliceCache:
    """The newest bodies with an array of :data:`SPLICE_KEYS` (at most :data:`RECENT`, at most
    ``limit`` bytes; bodies over ``max_body`` bytes are parsed, not kept). Thread-safe: the tuple
    of bodies is replaced whole, under a lock."""

    def __init__(self, limit: int, max_body: int) -> None:
        self.limit = limit
        self.max_body = max_body
        self._bodies: tuple[Body, ...] = ()
        self._lock = threading.Lock()
        #: How many times the cache was cleared: a parse under way keeps nothing after a clear
        #: (a reset while another thread parses: the review of issue 9, 13th session, finding 9).
        self._clears = 0

    @property
    def size(self) -> int:
        """Bytes counted for the kept bodies."""
        return sum(body.size for body in self._bodies)

    def __len__(self) -> int:
        return len(self._bodies)

    def clear(self) -> None:
        with self._lock:
            self._bodies = ()
            self._clears += 1

    def parse(self, body: str | bytes, whole: Callable[[], Any]) -> Any:
        """``json.loads(body)``: from a kept body that shares its leading elements and at least
        half of its text (:meth:`_find`), else ``whole()``, the caller's parse of the body,
        whose value or error is the answer. ``body`` is text, or bytes that ``json.loads`` reads
        as UTF-8 (decoded with ``surrogatepass`` only when there is a kept body to compare it
        with, or it is to be kept). It is kept for later lookups when its value is an object with
        an array of :data:`SPLICE_KEYS` starting with an object and it is not sparse
        (:data:`SPARSE_ELEMENT_CHARS`); it is read element by element only when a later body
        shares half of its own text with it (~2.5x a whole parse: bodies that never come back
        never pay it).

        Raises:
            What ``whole()`` raises (the body is malformed: it is also called when the text
            after the shared elements departs from what this module reads).
        """
        clears = self._clears
        length = len(body)  # what the sparse rule weighs: bytes as given, else characters
        if type(body) is bytes:
            if not self._bodies:  # nothing to compare with: decode only a body to keep
                value = whole()
                if _keepable(length, value):
                    try:
                        text = body.decode("utf-8", "surrogatepass")
                    except UnicodeDecodeError:
                        return value
                    self._keep(Body(text, (), "", (), (), "", (), sys.getsizeof(text)), clears)
                return value
            try:
                text = body.decode("utf-8", "surrogatepass")
            except UnicodeDecodeError:
                return whole()
        else:
            text = body
        found, skip = self._find(text, clears)
        if found is not None:
            try:
                value, kept = parse_after(text, *found)
            except DEPARTURES:
                pass  # parsed whole below, kept unread
            else:
                if kept is not None and _keepable(length, value):
                    self._keep(kept, clears)
                return value
        value = whole()
        if _keepable(length, value):
            self._keep(Body(text, (), "", (), (), "", (), sys.getsizeof(text), skip), clears)
        return value

    def _find(self, text: str, clears: int) -> tuple[tuple[Body, int] | None, int]:
        """The newest kept body (of the first :data:`MAX_TRIES` that share the start of
        ``text``) whose leading elements ``text`` repeats up to half of its length or more, and
        how many (else ``None``); and how many lookups should pass ``text`` over, kept unread.

        An agent's previous turn is the newest body of its conversation; another conversation
        may share its first message (the system prompt), and is passed over. A body not read yet
        is read now (and kept read) if ``text`` starts with half of it; when its elements then
        do not cover half of ``text`` (one long last element edited near its end, every turn:
        the issue 9 breaker's finding 4, 13-23x a whole parse each time), the next
        :data:`SKIP_AFTER_WASTED_READ` bodies like it (each passing over the one before) are
        kept unread and passed over: one read in five for such a conversation, and one that
        goes on is read again within five turns."""
        cover = (len(text) + 1) // 2
        tries, skip, unread = MAX_TRIES, 0, True
        for body in self._bodies:
            if not body.ends:  # not read yet: it must share the first half of text, or the last
                if not unread or not _shares_half(text, body.text, cover):
                    continue
                unread = False  # the newest such body only (the conversation's previous turn)
                if body.skip:
                    skip = max(skip, body.skip - 1)
                    continue
                read = self._read(body, clears)
                if read is None:  # read in vain (tiny elements, or text not read here)
                    skip = SKIP_AFTER_WASTED_READ
                    continue
                body = read
                just_read = True
            else:
                just_read = False
            # The start (the fields before the array and the first element) is checked here for
            # a body just read too: half of text may end inside its first element (the breaker's
            # finding 1: long instructions ending in a timestamp took the kept body's).
            if not text.startswith(body.text[: body.ends[0]]):
                skip = SKIP_AFTER_WASTED_READ if just_read else skip
                continue
            shared = _shared(text, body)
            # What is taken as kept: the shared elements, and the text after the array when it is
            # the same (an agent's tools: the review of issue 9, 13th session, finding 3).
            if body.ends[shared - 1] + (len(body.tail) if text.endswith(body.tail) else 0) >= cover:
                return (body, shared), skip
            skip = SKIP_AFTER_WASTED_READ if just_read else skip
            tries -= 1
            if tries == 0:
                break
        return None, skip

    def _read(self, lazy: Body, clears: int) -> Body | None:
        """``lazy``'s text read element by element, in its place (``None``, and dropped, if it
        cannot be: an array of numbers, or text this module does not read)."""
        try:
            _, body = parse_whole(lazy.text)
        except DEPARTURES:
            body = None
        with self._lock:
            if self._clears == clears:
                self._bodies = self._bounded([body if kept is lazy else kept for kept in self._bodies])
        return body

    def _keep(self, body: Body, clears: int) -> None:
        """Put ``body`` first (it may be a kept one, found again whole), unless the cache was
        cleared since the parse that made it began (``clears``: :attr:`_clears` then)."""
        if body.size > self.limit or len(body.text) > self.max_body:
            return
        with self._lock:
            if self._clears != clears:
                return
            self._bodies = self._bounded([body, *(other for other in self._bodies if other is not body)])

    def _bounded(self, bodies: list[Body | None]) -> tuple[Body, ...]:
        """``bodies`` without the ``None`` entries, cut before the first beyond :data:`RECENT` bodies or ``limit`` bytes."""
        kept: list[Body] = []
        total = 0
        for body in bodies:
            if body is None:
                continue
            if len(kept) == RECENT or total + body.size > self.limit:
                break
            kept.append(body)
            total += body.size
        return tuple(kept)


#: :data:`SPLICE_KEYS` in a fixed order (a frozenset's order follows the hash seed: a body with both
#: arrays would be judged by either, per process).
_KEY_ORDER = ("messages", "input")
assert frozenset(_KEY_ORDER) == SPLICE_KEYS


def _keepable(length: int, value: Any) -> bool:
    """Whether a body of ``length`` characters (or bytes) parsed to ``value`` is worth keeping: an
    object whose first array of :data:`SPLICE_KEYS` starts with an object, not sparse."""
    if type(value) is not dict:
        return False
    for key in _KEY_ORDER:
        items = value.get(key)
        if type(items) is list and items and type(items[0]) is dict:
            tools = value.get("tools")
            return length <= SPARSE_ELEMENT_CHARS * (len(items) + (len(tools) if type(tools) is list else 0))
    return False


def _shares_half(text: str, kept: str, cover: int) -> bool:
    """Whether ``text`` starts with ``cover`` characters of ``kept``, or ends with them (one
    short message and the same 100 tools after it: the review of issue 9, 13th session, finding
    3); 32 characters compared first, where the halves meet."""
    if len(kept) < cover:
        return False
    since = max(cover - 32, 0)
    if text[since:cover] == kept[since:cover] and text.startswith(kept[:cover]):
        return True
    a, b = len(text) - cover, len(kept) - cover
    return text[a : a + 32] == kept[b : b + 32] and text.endswith(kept[b:])


def _shared(text: str, body: Body) -> int:
    """How many of ``body``'s leading elements ``text`` repeats (at least the first, checked by
    the caller): the largest ``j`` with ``text[:ends[j - 1]] == body.text[:ends[j - 1]]``, by
    halving, comparing only the text between the ends known to match and the end tried (the
    whole array first: an agent's turn repeats its previous turn's)."""
    ends, kept = body.ends, body.text
    low, high = 1, len(ends)  # text matches up to ends[low - 1]; not up to ends[high] (if any)
    a = ends[0]
    if text.startswith(kept[a : ends[-1]], a):
        return high
    high -= 1
    while low < high:
        mid = (low + high + 1) // 2
        b = ends[mid - 1]
        if text.startswith(kept[a:b], a):
            low, a = mid, b
        else:
            high = mid - 1
    return low
