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
    "ELEMENT_BYTES",
    "MIN_ELEMENT_CHARS",
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
#: Bytes counted per kept element besides its objects: its slots in :attr:`Body.ends`,
#: :attr:`Body.items` and :attr:`Body.counted` and the two integers (the breaker's finding 7,
#: 14th session: a body of ``[{},{},…]`` took 1.11-1.15x what was counted without them).
ELEMENT_BYTES = 3 * 8 + 2 * 32
#: Fewest characters per element, on average over each :data:`CHECK_EVERY` new elements read
#: (each element counted at most :data:`ELEMENT_CHARS_CAP`), that reading goes on with: the loop
#: here costs ~0.7 us an element, jiter's whole parse ~15 ns for a ``0`` or ``{}``, so 60,000 tiny
#: elements after a shared head took 40-200 ms against 1-11 ms whole (the breaker's finding 4,
#: 14th session). The cap: one 5,400-character message in each stretch of 255 ``{}`` lifted the
#: plain average over the line (a 19 ms read against 0.9 ms whole; the second breaker's M3). A
#: message object is at least ``{"role":"user","content":""}``, 28 characters.
MIN_ELEMENT_CHARS = 24
ELEMENT_CHARS_CAP = 256
CHECK_EVERY = 256

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
    #: For each element: an upper bound of the bytes of the objects the text up to its end makes
    #: (:func:`object_bytes`), counted once per stretch of elements read together (the bound at
    #: the stretch's end), so that a later body counts only its new text.
    counted: tuple[int, ...] = ()
    #: :func:`object_bytes` of :attr:`tail`.
    tail_bytes: int = 0


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
    just past its last element read), then the rest of the object; the value and the body to keep.

    Only the new text is counted (:func:`object_bytes` and :func:`_deep_limit`'s count of what was read here,
    the kept body's counts for the rest): counting a 548 KiB body whole, three times, on every
    turn made the splice 9-14x slower than a whole parse (the breaker's finding 1, 14th session)."""
    start, cut = len(items), i
    if not items:
        i = _ws(text, i).end()
        if text[i] == "]":
            raise Miss  # an empty array: nothing to share
        value, i = _scan(text, i)
        items.append(value)
        ends.append(i)
    check = start + CHECK_EVERY
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
        if len(items) == check:  # each stretch of CHECK_EVERY elements read, on its own
            first = check - CHECK_EVERY
            prior = ends[first - 1] if first else cut
            weight = 0
            for end in ends[first:check]:
                weight += min(end - prior, ELEMENT_CHARS_CAP)
                prior = end
            if weight < MIN_ELEMENT_CHARS * CHECK_EVERY:
                raise Miss  # tiny elements: a whole parse is the faster read
            check += CHECK_EVERY
    close = i + 1
    base = kept.counted[start - 1] if kept is not None else 0
    read, opens = _counts(text, cut if kept is not None else 0, ends[-1])
    if kept is not None and opens >= _deep_limit():
        raise Miss
    counted = (*(kept.counted[:start] if kept is not None else ()), *((base + read,) * (len(ends) - start)))
    if kept is not None and len(text) - close == len(kept.tail) and text.endswith(kept.tail):
        if len(items) == len(kept.items) and len(text) == len(kept.text):
            return _value(before, key, items, kept.after), kept  # the kept body again, whole
        after, tail, tail_bytes = kept.after, kept.tail, kept.tail_bytes
    else:
        tail_bytes, opens = _counts(text, close, len(text))
        if kept is not None and opens >= _deep_limit():
            raise Miss
        after = _read_fields(text, close)
        tail = text[close:]
    value = _value(before, key, items, after)
    # An end is kept while the elements end in a character no longer number could follow (the
    # kept body's ends do: only the new ones are read).
    keep = next((k for k in range(start, len(ends)) if text[ends[k] - 1] in _DIGITS), len(ends))
    if keep == 0:
        return value, None
    size = (
        sys.getsizeof(text)
        + sys.getsizeof(tail)
        + counted[-1]
        + OBJECT_BYTES_PER_BYTE * (close - ends[-1])
        + tail_bytes
        + ELEMENT_BYTES * keep
    )
    body = Body(
        text,
        tuple(before),
        key,
        tuple(ends[:keep]),
        tuple(items[:keep]),
        tail,
        after,
        size,
        0,
        counted[:keep],
        tail_bytes,
    )
    return value, body


def _counts(text: str, start: int, end: int) -> tuple[int, int]:
    """:func:`object_bytes` of ``text[start:end]`` and how many ``{`` and ``[`` it holds."""
    braces, brackets = text.count("{", start, end), text.count("[", start, end)
    objects = OBJECT_BYTES_PER_BYTE * (end - start) + 64 * braces + 56 * brackets + 26 * text.count('"', start, end)
    return objects, braces + brackets


def object_bytes(text: str) -> int:
    """An upper bound of the bytes of the objects ``json.loads(text)`` makes (their values, the
    kept elements included): :data:`OBJECT_BYTES_PER_BYTE` per character, plus 64 per ``{``,
    56 per ``[`` (an empty ``dict`` or ``list``: a body of ``[{},{},…]`` was counted at a third
    of its memory, the breaker's finding 3) and 26 per ``"`` (a string object's head, two quotes
    each). An agent turn's objects take about a quarter of it. Checked with ``tracemalloc`` on agent turns,
    empty objects and lists, floats, integers and non-ASCII text in ``tests/test_jsonsplice.py``."""
    return _counts(text, 0, len(text))[0]


def _deep_limit() -> int:
    """How many ``{`` and ``[`` in new text make it depart: half the recursion limit (a depth needs
    as many).

    Why: read here, a value is scanned a few calls shallower than ``json.loads`` scans it, so a
    value nested within those few levels of the limit was accepted where a fresh server refused
    it with ``RecursionError`` (the breaker's finding 2, issue 9: 987-992 levels). Such text
    departs (the caller parses it whole, as before); a brace inside a string only costs that."""
    return sys.getrecursionlimit() // 2


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
