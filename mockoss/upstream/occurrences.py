"""Every occurrence of many strings in one text, in one pass over the text.

The recorder's secret scrubbing (:mod:`mockoss.upstream.scrub`) replaces every value it found
wherever it appears. Searching the whole text once per value cost ``len(text)`` times the number
of values: a 2 MB prompt holding 13,000 lockfile hashes took ~10 s of finds (issue 9 review,
eighth session, finding 1). The standard library has no multi-string search (Aho-Corasick); this
one samples the text at checkpoints and looks grams up in a dict (see :func:`occurrences`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["occurrences"]


#: Values at least this long are found by :func:`occurrences`' sampled gram index; shorter ones
#: (few: keyword and URL passwords) one :meth:`str.find` pass each.
_INDEXED_CHARS = 16
#: Length of the grams :func:`occurrences` indexes.
_GRAM = 8
#: An index entry costs about this many checkpoint look-ups (these are made in C, a batch of
#: ``_BATCH`` at a time): :func:`occurrences` weighs its step by it.
_INDEX_COST = 4
_BATCH = 16384


def occurrences(text: str, values: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every occurrence of every value (value → kind) in ``text``,
    overlapping ones included, in no particular order.

    Searching the whole text once per value (what this replaced) costs ``len(text)`` times the
    number of values: a 2 MB prompt holding 13,000 lockfile hashes took ~10 s (issue 9 review,
    eighth session, finding 1). Here the text is read once, at checkpoints every ``step``
    characters: every value of at least ``_INDEXED_CHARS`` characters has its ``_GRAM``-character
    grams at ``step`` consecutive offsets (from its middle: keys share prefixes like ``sha512-``)
    in a dict, and any occurrence of the value covers exactly one checkpoint at one of those
    offsets, where the gram found leads to the candidates to compare. ``step`` balances the
    index (values x step entries) against the checkpoints (``len(text) / step``), so the cost is
    about ``4 * sqrt(len(text) * values)`` look-ups, never more than ``len(text) + values *
    16``. Shorter values are searched one by one (their count is small: see
    :data:`_INDEXED_CHARS`).
    """
    out: list[tuple[int, int, str]] = []
    indexed: list[tuple[str, str]] = []
    for value, kind in values.items():
        if len(value) > len(text):
            continue
        if len(value) >= _INDEXED_CHARS:
            indexed.append((value, kind))
        elif value:
            start = text.find(value)
            while start >= 0:
                out.append((start, start + len(value), kind))
                start = text.find(value, start + 1)
    if not indexed or len(text) < _INDEXED_CHARS:
        return out
    shortest = min(len(value) for value, _ in indexed)
    step = max(1, min(shortest - _GRAM + 1, math.isqrt(len(text) // (_INDEX_COST * len(indexed)))))
    middle = step - 1 + _GRAM
    pairs = [
        (value[offset : offset + _GRAM], ((value, kind, offset),))
        for value, kind in indexed
        for offset in range((len(value) - middle) // 2, (len(value) - middle) // 2 + step)
    ]
    grams: dict[str, Any] = dict(pairs)
    if len(grams) < len(pairs):  # a gram several values (or offsets) share: keep every one
        grams = {}
        for gram, entry in pairs:
            grams.setdefault(gram, []).extend(entry)
    get, startswith = grams.get, text.startswith
    checkpoints = range(0, len(text) - _GRAM + 1, step)
    for first in range(0, len(checkpoints), _BATCH):  # look-ups in C, a batch at a time
        batch = checkpoints[first : first + _BATCH]
        found = list(map(get, [text[at : at + _GRAM] for at in batch]))
        for at, candidates in zip(itertools.compress(batch, found), filter(None, found), strict=True):
            for value, kind, offset in candidates:
                start = at - offset
                if start >= 0 and startswith(value, start):
                    out.append((start, start + len(value), kind))
    return out
