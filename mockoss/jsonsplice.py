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
* Any departure (a character the loop does not expect, an error from the scanner, a value
  nested deep enough to reach the recursion limit) is not decided here: the caller parses the
  body whole (:func:`mockoss.jsonbody.parse_json`), and its value or error is the answer.

``tests/test_jsonsplice.py`` compares the value with ``json.loads`` (types and key order
included) on edited bodies: every cut point, whitespace, duplicate keys, numbers at the cut,
non-ASCII and surrogate escapes, trailing commas and truncations.

Kept values are shared: the elements and the fields after the array are the same objects in
every body that repeats them, so no reader may change a parsed body (none does: the request path
reads it, and copies what it changes). Readers may use that sharing: an element that is the
same object as one of an earlier body is equal to it (:meth:`mockoss.harmony.prompt.prefix.PrefixCache.find`).

Bounded in bytes (each body counted at its text, the text after its array and an upper bound
of its parsed objects' bytes, :func:`_object_bytes`), at most :data:`RECENT` bodies, none over
``max_body`` bytes; emptied by :meth:`SpliceCache.clear` (``MockServer.reset``, through
:func:`mockoss.harmony.prompt.caches.clear_caches`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from json.decoder import WHITESPACE, JSONDecoder, scanstring
from json.scanner import make_scanner
from typing import Any, NamedTuple

__all__ = ["RECENT", "SPLICE_KEYS", "Miss", "SpliceCache"]

#: Bodies kept (the newest; a lookup tries them newest first).
RECENT = 8
#: How many kept bodies whose first element matches a lookup compares further.
MAX_TRIES = 3
#: After reading a kept body that did not pay, this many later bodies like it are passed over unread.
SKIP_AFTER_WASTED_READ = 4
#: Top-level keys whose array is read element by element: chat ``messages``, Responses ``input``.
SPLICE_KEYS = frozenset(("messages", "input"))
#: Bytes of parsed objects counted per character of a kept body's text, besides its objects,
#: lists and strings (:func:`_object_bytes`; an agent turn takes ~2.5, a list of floats ~8.3).
OBJECT_BYTES_PER_BYTE = 10

_scan = make_scanner(JSONDecoder())  # CPython's C scanner when _json is there, as json.loads uses
_ws = WHITESPACE.match
_DIGITS = frozenset("0123456789")
#: What reading departs with: the scanner's errors, text this module does not read (:class:`Miss`, a ``ValueError``).
_DEPARTURES = (ValueError, StopIteration, IndexError, RecursionError)


class Miss(ValueError):
    """The text departs from what this module reads (the caller parses the body whole)."""


class _Body(NamedTuple):
    """A kept body: its text and what its parse left at each element's end."""

    text: str
    #: The fields before the array, as parsed.
    before: tuple[tuple[str, Any], ...]
    #: The array's key (one of :data:`SPLICE_KEYS`).
    key: str
    #: Index just past each element (only up to the first element ending in a digit).
    ends: tuple[int, ...]
    #: The parsed elements (as many as ``ends``).
    items: tuple[Any, ...]
    #: The text after the array's ``]``, and the fields parsed from it.
    tail: str
    after: tuple[tuple[str, Any], ...]
    #: Bytes counted against the cache's limit.
    size: int
    #: For a body not read yet: how many more lookups pass it over unread (:meth:`SpliceCache._find`).
    skip: int = 0


class SpliceCache:
    """The newest bodies with an array of :data:`SPLICE_KEYS` (at most :data:`RECENT`, at most
    ``limit`` bytes; bodies over ``max_body`` bytes are parsed, not kept). Thread-safe: the tuple
    of bodies is replaced whole, under a lock."""

    def __init__(self, limit: int, max_body: int) -> None:
        self.limit = limit
        self.max_body = max_body
        self._bodies: tuple[_Body, ...] = ()
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes counted for the kept bodies."""
        return sum(body.size for body in self._bodies)

    def __len__(self) -> int:
        return len(self._bodies)

    def clear(self) -> None:
        with self._lock:
            self._bodies = ()

    def parse(self, text: str, whole: Callable[[], Any]) -> Any:
        """``json.loads(text)``: from a kept body that shares its leading elements and at least
        half of ``text`` (:meth:`_find`), else ``whole()``, the caller's parse of the body,
        whose value or error is the answer. ``text`` is kept for later lookups when its value
        is an object with an array of :data:`SPLICE_KEYS` starting with an object; it is read
        element by element only when a later body shares half of its own text with it (~2.5x a
        whole parse: bodies that never come back never pay it).

        Raises:
            What ``whole()`` raises (the body is malformed: it is also called when the text
            after the shared elements departs from what this module reads).
        """
        found, skip = self._find(text)
        if found is not None:
            try:
                value, body = _parse_after(text, *found)
            except _DEPARTURES:
                body = None  # parsed whole below, kept unread
            else:
                if body is not None:
                    self._keep(body)
                return value
        value = whole()
        if type(value) is dict and any(
            type(items := value.get(key)) is list and items and type(items[0]) is dict for key in SPLICE_KEYS
        ):
            self._keep(_Body(text, (), "", (), (), "", (), sys.getsizeof(text), skip))
        return value

    def _find(self, text: str) -> tuple[tuple[_Body, int] | None, int]:
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
            if not body.ends:  # not read yet; a filter first: the 32 characters up to the half
                kept, since = body.text, max(cover - 32, 0)
                if (
                    not unread
                    or len(kept) < cover
                    or text[since:cover] != kept[since:cover]
                    or not text.startswith(kept[:cover])
                ):
                    continue
                unread = False  # the newest such body only (the conversation's previous turn)
                if body.skip:
                    skip = max(skip, body.skip - 1)
                    continue
                read = self._read(body)
                if read is None:
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
            if body.ends[shared - 1] >= cover:
                return (body, shared), skip
            skip = SKIP_AFTER_WASTED_READ if just_read else skip
            tries -= 1
            if tries == 0:
                break
        return None, skip

    def _read(self, lazy: _Body) -> _Body | None:
        """``lazy``'s text read element by element, in its place (``None``, and dropped, if it
        cannot be: an array of numbers, or text this module does not read)."""
        try:
            _, body = _parse_whole(lazy.text)
        except _DEPARTURES:
            body = None
        with self._lock:
            self._bodies = self._bounded([body if kept is lazy else kept for kept in self._bodies])
        return body

    def _keep(self, body: _Body) -> None:
        """Put ``body`` first (it may be a kept one, found again whole)."""
        if body.size > self.limit or len(body.text) > self.max_body:
            return
        with self._lock:
            self._bodies = self._bounded([body, *(other for other in self._bodies if other is not body)])

    def _bounded(self, bodies: list[_Body | None]) -> tuple[_Body, ...]:
        """``bodies`` without the ``None`` entries, cut before the first beyond :data:`RECENT` bodies or ``limit`` bytes."""
        kept: list[_Body] = []
        total = 0
        for body in bodies:
            if body is None:
                continue
            if len(kept) == RECENT or total + body.size > self.limit:
                break
            kept.append(body)
            total += body.size
        return tuple(kept)


def _shared(text: str, body: _Body) -> int:
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


def _parse_whole(text: str) -> tuple[dict[str, Any], _Body | None]:
    """Parse ``text`` (a ``{``) field by field, the first array of :data:`SPLICE_KEYS` element
    by element. Raises :class:`Miss` (and the scanner's errors) as :meth:`SpliceCache.parse` says."""
    pairs: list[tuple[str, Any]] = []
    i = _ws(text, 1).end()
    if text[i] == "}":
        raise Miss  # {}: nothing to keep
    while True:
        if text[i] != '"':
            raise Miss
        key, i = scanstring(text, i + 1, True)
        i = _ws(text, i).end()
        if text[i] != ":":
            raise Miss
        i = _ws(text, i + 1).end()
        if key in SPLICE_KEYS and text[i] == "[":
            return _read_array(text, i + 1, pairs, key, [], [])
        value, i = _scan(text, i)
        pairs.append((key, value))
        i = _ws(text, i).end()
        if text[i] == "}":
            raise Miss  # no array to read element by element
        if text[i] != ",":
            raise Miss
        i = _ws(text, i + 1).end()


def _parse_after(text: str, body: _Body, shared: int) -> tuple[dict[str, Any], _Body | None]:
    """Parse ``text``, which repeats ``body``'s text up to the end of its first ``shared``
    elements: from there on only."""
    items = list(body.items[:shared])
    ends = list(body.ends[:shared])
    return _read_array(text, ends[-1], list(body.before), body.key, items, ends, body)


def _read_array(
    text: str,
    i: int,
    before: list[tuple[str, Any]],
    key: str,
    items: list[Any],
    ends: list[int],
    kept: _Body | None = None,
) -> tuple[dict[str, Any], _Body | None]:
    """Read the array of ``key`` on from ``i`` (just past its ``[`` when ``items`` is empty, else
    just past its last element read), then the rest of the object; the value and the body to keep."""
    start, cut = len(items), i
    if not items:
        i = _ws(text, i).end()
        if text[i] == "]":
            raise Miss  # an empty array: nothing to share
        value, i = _scan(text, i)
        items.append(value)
        ends.append(i)
    while True:
        i = _ws(text, i).end()
        c = text[i]
        if c == "]":
            break
        if c != ",":
            raise Miss
        i = _ws(text, i + 1).end()
        value, i = _scan(text, i)
        items.append(value)
        ends.append(i)
    close = i + 1
    if kept is not None and _deep(text, cut, close):
        raise Miss
    if kept is not None and len(text) - close == len(kept.tail) and text.endswith(kept.tail):
        if len(items) == len(kept.items) and len(text) == len(kept.text):
            return _value(before, key, items, kept.after), kept  # the kept body again, whole
        after = kept.after
        tail = kept.tail
    else:
        if kept is not None and _deep(text, close, len(text)):
            raise Miss
        after = _read_fields(text, close)
        tail = text[close:]
    value = _value(before, key, items, after)
    # An end is kept while the elements end in a character no longer number could follow (the
    # kept body's ends do: only the new ones are read).
    keep = next((k for k in range(start, len(ends)) if text[ends[k] - 1] in _DIGITS), len(ends))
    if keep == 0:
        return value, None
    size = sys.getsizeof(text) + sys.getsizeof(tail) + _object_bytes(text)
    body = _Body(text, tuple(before), key, tuple(ends[:keep]), tuple(items[:keep]), tail, after, size)
    return value, body


def _object_bytes(text: str) -> int:
    """An upper bound of the bytes of the objects ``json.loads(text)`` makes (their values, the
    kept elements included): :data:`OBJECT_BYTES_PER_BYTE` per character, plus 64 per ``{``,
    56 per ``[`` (an empty ``dict`` or ``list``: a body of ``[{},{},…]`` was counted at a third
    of its memory, the breaker's finding 3) and 26 per ``"`` (a string object's head, two quotes
    each). An agent turn's objects take about a quarter of it. Checked with ``tracemalloc`` on agent turns,
    empty objects and lists, floats, integers and non-ASCII text in ``tests/test_jsonsplice.py``."""
    return OBJECT_BYTES_PER_BYTE * len(text) + 64 * text.count("{") + 56 * text.count("[") + 26 * text.count('"')


def _deep(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` may nest as deep as ``json.loads`` can recurse, from the
    caller's stack: half the recursion limit of ``{`` and ``[`` (a depth needs as many).

    Why: read here, a value is scanned a few calls shallower than ``json.loads`` scans it, so a
    value nested within those few levels of the limit was accepted where a fresh server refused
    it with ``RecursionError`` (the breaker's finding 2, issue 9: 987-992 levels). Such text
    departs (the caller parses it whole, as before); a brace inside a string only costs that."""
    limit = sys.getrecursionlimit() // 2
    return text.count("{", start, end) + text.count("[", start, end) >= limit


def _value(
    before: Sequence[tuple[str, Any]], key: str, items: list[Any], after: tuple[tuple[str, Any], ...]
) -> dict[str, Any]:
    """The object as ``json`` builds it from its fields in order (a later duplicate key replaces
    the value in the first one's place)."""
    value = dict(before)
    value[key] = items
    if after:
        value.update(after)
    return value


def _read_fields(text: str, i: int) -> tuple[tuple[str, Any], ...]:
    """The fields from ``i`` (just past a value of the top-level object) to its ``}``, which only
    whitespace may follow."""
    pairs: list[tuple[str, Any]] = []
    while True:
        i = _ws(text, i).end()
        c = text[i]
        if c == "}":
            break
        if c != ",":
            raise Miss
        i = _ws(text, i + 1).end()
        if text[i] != '"':
            raise Miss
        key, i = scanstring(text, i + 1, True)
        i = _ws(text, i).end()
        if text[i] != ":":
            raise Miss
        i = _ws(text, i + 1).end()
        value, i = _scan(text, i)
        pairs.append((key, value))
    if _ws(text, i + 1).end() != len(text):
        raise Miss  # extra data
    return tuple(pairs)
