"""SGLang's marker scan (``iter_tokens`` in sgl-project/sglang@v0.5.23:python/sglang/srt/parser/
harmony_parser.py), reproduced so that a growing text is scanned once, not once per chunk; with
the string parser's other primitives (:class:`Event`, :func:`hold_partial`: ``Event`` and
``prefix_hold`` there), which :mod:`.harmony_text` and :mod:`.harmony_fallback` share.

SGLang's streaming parser keeps the text it could not settle and scans all of it again with every
chunk (``HarmonyParser.parse`` appends the chunk to its buffer and ``CanonicalStrategy.parse``
re-tokenizes the whole buffer: read in the 0.5.23 wheel's ``parser/harmony_parser.py``). An open
tool call or an unknown channel is held whole, so a long call's arguments cost time quadratic in
their length. :class:`MarkScan` gives the very same spans for each longer text while examining each
character a bounded number of times.

Why resuming is exact. The scan walks left to right; its state at the top of the loop is the
position and whether an unknown ``<|x|>`` was seen. Two kinds of step are decided by text strictly
before the position they move to, so a longer text takes them the same way: a known marker
(``<|end|>`` …: the first ``<|`` at or after the position, then the marker's own characters) and an
unknown marker whose ``|>`` and following ``<|`` are both already there. After either step the state
is a *checkpoint*: spans before it never change, and the next scan starts there. What follows the
last checkpoint is re-scanned each time; it holds only text spans (a text run, a trailing partial
marker, unknown ``<|`` with no ``|>`` after them), because every known marker makes a checkpoint.
An unknown ``<|`` with no ``|>`` anywhere after it cannot precede a known marker (each holds
``|>``), so no checkpoint is ever taken past an unsettled decision. The ``<|`` and ``|>`` positions
are found once per character (:class:`_Hits`) and looked up by bisection, so re-scanning the part
after the checkpoint costs its number of spans, not its length: one or two, unless the text ends
in many unknown ``<|`` with no ``|>`` after them (F#/Elm ``<|`` in a tool call's arguments).

Those are not re-walked either: a second resume point is kept. Let ``s`` be the first ``<|`` after
the checkpoint whose ``|>`` search failed. While ``|>`` occurs nowhere after ``s + 2`` in the longer
text, the walk from the checkpoint through every ``<|`` already walked is unchanged: (a) no ``<|``
was added before the old end less one character, so the same ``<|`` are found; (b) none of them is
a known marker (each holds ``|>``) and whether one is a partial marker was decided by its own
characters, which a longer text extends without making it one (it was neither a marker's prefix nor
prefixed by one); (c) each one's ``|>`` search still fails, since it starts after ``s + 2``. And no
checkpoint can follow ``s``: it would need a ``|>`` after ``s + 2``. So the spans walked through the
last such ``<|``, with position just after it and ``unknown`` set, are kept and the next scan starts
there; the walk then costs the new ``<|`` only (and one list copy of the kept spans). When a ``|>``
appears after ``s + 2`` the scan starts again at the checkpoint. :class:`MarkScan` alone, 1,001
chunks adding one such ``<|`` each (old and new in the same run): 1.4-1.8 s before, 0.011-0.013 s
now (the reviewer, through the parser: 2,003 chunks / 500 ``<|``, 1.15 s; 4,003 / 1,000, 4.83 s).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

__all__ = ["GUARDS", "MARKERS", "Event", "MarkScan", "Marker", "channel_word", "hold_partial", "scan_markers"]

#: The markers SGLang's parser recognises, by kind.
MARKERS: dict[str, str] = {
    "<|start|>": "START",
    "<|channel|>": "CHANNEL",
    "<|message|>": "MESSAGE",
    "<|constrain|>": "CONSTRAIN",
    "<|end|>": "END",
    "<|call|>": "CALL",
    "<|return|>": "RETURN",
}
GUARDS = tuple(MARKERS)
_LONGEST = max(map(len, MARKERS))


@dataclass(frozen=True, slots=True)
class Marker:
    """A span of the text: ``kind`` is a :data:`MARKERS` value or ``"TEXT"``; ``start``/``end``
    are character offsets."""

    kind: str
    start: int
    end: int


class _Hits:
    """Where a two-character needle starts in a text that only grows: each character is searched
    once (:meth:`grow`), lookups bisect the recorded starts."""

    __slots__ = ("_at", "_done", "_needle")

    def __init__(self, needle: str) -> None:
        self._needle, self._at, self._done = needle, [], 0

    def grow(self, text: str) -> None:
        """Record the needle's starts in what ``text`` added (a start at the last character is
        not possible yet: it needs the next one)."""
        at, find, needle = self._at, text.find, self._needle
        hit = find(needle, self._done)
        while hit >= 0:
            at.append(hit)
            hit = find(needle, hit + 1)
        self._done = max(self._done, len(text) - 1)

    def find(self, pos: int) -> int:
        """``text.find(needle, pos)`` for the text last given to :meth:`grow`."""
        i = bisect_left(self._at, pos)
        return self._at[i] if i < len(self._at) else -1


class MarkScan:
    """:func:`scan_markers` of a text that only grows between calls (see the module docstring).

    ``marks`` are the settled spans (before the checkpoint); :meth:`extend` returns the rest,
    text spans only, which the next call may change. ``marks + extend(text)`` is
    ``scan_markers(text)``. The scan keeps no reference to the text (so a caller that appends to
    it in place keeps the append cheap).
    """

    __slots__ = ("_close", "_open", "_resume", "_stuck", "_walked", "marks", "pos", "unknown")

    def __init__(self) -> None:
        self.marks: list[Marker] = []
        self.pos, self.unknown = 0, False
        self._open, self._close = _Hits("<|"), _Hits("|>")
        # The second resume point (module docstring): the first ``<|`` after the checkpoint whose
        # ``|>`` search failed (-1: none), the spans walked from the checkpoint through the last
        # such ``<|``, and the position after it.
        self._stuck, self._walked, self._resume = -1, [], 0

    def extend(self, text: str) -> list[Marker]:
        """Scan ``text`` (the text of the previous call plus what was appended) from the
        checkpoint; returns the unsettled spans after ``marks``."""
        opens, closes = self._open, self._close
        opens.grow(text)
        closes.grow(text)
        settled, pending = self.marks, []
        pos, unknown, length = self.pos, self.unknown, len(text)
        stuck, walked, resume = -1, 0, 0
        if self._stuck >= 0 and closes.find(self._stuck + 2) < 0:
            stuck, pending = self._stuck, self._walked.copy()
            pos, unknown, walked, resume = self._resume, True, len(pending), self._resume
        while pos < length:
            at = opens.find(pos)
            if at < 0:
                break
            if at > pos:
                pending.append(Marker("TEXT", pos, at))
            literal = next((m for m in MARKERS if text.startswith(m, at)), None)
            if literal is not None:
                pending.append(Marker(MARKERS[literal], at, at + len(literal)))
                pos = at + len(literal)
                settled += pending
                pending = []
                self.pos, self.unknown = pos, unknown
                continue
            if length - at < _LONGEST and any(m.startswith(text[at:]) for m in MARKERS):
                pending.append(Marker("TEXT", at, length))
                pos = length
                break
            unknown = True
            pending.append(Marker("TEXT", at, at + 2))
            close = closes.find(at + 2)
            if close < 0:
                pos = at + 2
                if stuck < 0:
                    stuck = at
                walked, resume = len(pending), pos
                continue
            following = opens.find(close + 2)
            stop = following if following >= 0 else length
            pending.append(Marker("TEXT", at + 2, stop))
            pos = stop
            if following < 0:
                break
            settled += pending
            pending = []
            self.pos, self.unknown = pos, unknown
        self._stuck, self._resume = stuck, resume
        self._walked = pending[:walked] if stuck >= 0 else []
        if pos < length:
            pending.append(Marker("TEXT", pos, length))
        elif unknown and text.endswith(GUARDS):
            pending.append(Marker("TEXT", length, length))
        return pending


def scan_markers(text: str) -> list[Marker]:
    """The text split into markers and text spans, left to right.

    A trailing ``<|`` that may still become a marker is one text span. An unknown ``<|x|>`` is a
    text span ``<|`` plus a text span reaching to the next ``<|``; when that happens and the text
    ends with a marker, an empty text span closes the list (SGLang's quirk, kept).
    """
    if "<|" not in text:  # the common step: plain text
        return [Marker("TEXT", 0, len(text))] if text else []
    scan = MarkScan()
    tail = scan.extend(text)
    return scan.marks + tail


def channel_word(header: str) -> str | None:
    """The channel a header names: ``analysis``, ``commentary`` or ``final`` when the stripped,
    lower-cased header starts with it (``to=…`` and the rest ignored), else ``None``."""
    lowered = header.strip().lower()
    return next((word for word in ("analysis", "commentary", "final") if lowered.startswith(word)), None)


@dataclass(frozen=True, slots=True)
class Event:
    """One parsed piece: ``kind`` is ``"normal"``, ``"reasoning"`` or ``"tool_call"``; ``content``
    its text; ``raw`` the block's markup for a ``tool_call`` (else ``None``)."""

    kind: str
    content: str
    raw: str | None = None


def hold_partial(text: str, guards: tuple[str, ...] | list[str]) -> tuple[str, str]:
    """Split ``text`` into ``(emit, hold)`` where ``hold`` is the longest suffix that is a proper
    prefix of one of ``guards`` (it may still grow into a marker)."""
    held = 0
    length = len(text)
    for guard in guards:
        limit = min(len(guard) - 1, length)
        if limit <= held:
            continue
        # Only a suffix starting with the guard's first character can be its prefix: those
        # positions are found in C, longest suffix first (a step's text rarely holds one).
        first = guard[0]
        at = text.find(first, length - limit)
        while at != -1 and length - at > held:
            if guard.startswith(text[at:]):
                held = length - at
                break
            at = text.find(first, at + 1)
    return (text[:-held], text[-held:]) if held else (text, "")
