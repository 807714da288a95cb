"""Reading a request body's text as :func:`json.loads` reads it, one element of its
``messages`` (chat) or ``input`` (Responses) array at a time: the part of
:mod:`mockoss.jsonsplice` that follows CPython's JSON decoder (why its values are exactly
``json.loads``' is that module's docstring). Nothing here keeps state.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from json.decoder import WHITESPACE, JSONDecoder, scanstring
from json.scanner import make_scanner
from typing import Any, NamedTuple

__all__ = [
    "DEPARTURES",
    "OBJECT_BYTES_PER_BYTE",
    "SPLICE_KEYS",
    "Body",
    "Miss",
    "object_bytes",
    "parse_after",
    "parse_whole",
]


#: Top-level keys whose array is read element by element: chat ``messages``, Responses ``input``.
SPLICE_KEYS = frozenset(("messages", "input"))
#: Bytes of parsed objects counted per character of a kept body's text, besides its objects,
#: lists and strings (:func:`object_bytes`; an agent turn takes ~2.5, a list of floats ~8.3).
OBJECT_BYTES_PER_BYTE = 10

_scan = make_scanner(JSONDecoder())  # CPython's C scanner when _json is there, as json.loads uses
_ws = WHITESPACE.match
_DIGITS = frozenset("0123456789")
#: What reading departs with: the scanner's errors, text this module does not read (:class:`Miss`, a ``ValueError``).
DEPARTURES = (ValueError, StopIteration, IndexError, RecursionError)


class Miss(ValueError):
    """The text departs from what this module reads (the caller parses the body whole)."""


class Body(NamedTuple):
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
    #: For a body not read yet: how many more lookups pass it over unread (:meth:`mockoss.jsonsplice.SpliceCache._find`).
    skip: int = 0


def parse_whole(text: str) -> tuple[dict[str, Any], Body | None]:
    """Parse ``text`` (a ``{``) field by field, the first array of :data:`SPLICE_KEYS` element
    by element. Raises :class:`Miss` (and the scanner's errors): the caller parses the body whole."""
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


def parse_after(text: str, body: Body, shared: int) -> tuple[dict[str, Any], Body | None]:
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
    kept: Body | None = None,
) -> tuple[dict[str, Any], Body | None]:
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
    size = sys.getsizeof(text) + sys.getsizeof(tail) + object_bytes(text)
    body = Body(text, tuple(before), key, tuple(ends[:keep]), tuple(items[:keep]), tail, after, size)
    return value, body


def object_bytes(text: str) -> int:
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
