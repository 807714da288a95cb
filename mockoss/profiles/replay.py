"""Reply templates with per-request ids: build a reply once, fill its ids on every request (issue 9).

A profile whose output for a completion depends on the request only through a few fields (its
ids, the prompt's length) builds the request-independent part once, with an :class:`IdRecorder`
in place of the request's :class:`~mockoss.profiles.base.IdSource`: the recorder hands out
markers (``"\\x00mockoss-id:N\\x00"``) and notes which ids were asked for, in order. The built
text or frames are split at the markers (:class:`Template`, :class:`FramesTemplate`) and memoised
on the completion; a request then draws the same ids, in the same order, from its own source
(:meth:`IdRecorder.replay`) and joins them in. The bytes are those the direct build would give:
ids are ASCII (a prefix and hex or decimal digits), so an id written inside a JSON string is the
marker's place with the marker's text replaced, and the ids are drawn in the order the direct build
draws them (the profile's ids come from one deterministic sequence per request).

A marker is found in JSON text as :func:`~mockoss.profiles.wire.dumps` writes it (its NUL
characters escaped as ``\\u0000``) or raw (text written without a JSON encoder); a marker of a
request value (:meth:`IdRecorder.value`: a model name, ``created``, a usage object) written as a
JSON string is replaced with its quotes. Only memoised text, made from the completion, is split at
markers (request values are joined in after), so a completion whose text holds ``mockoss-`` is
never made a template (:func:`templatable`): its replies are built directly, as before.

Two variants, for real differences between the profiles' ids:

* :class:`AsciiIdRecorder`: markers of 32 ASCII characters (``~mockoss~slot~`` + 17 digits +
  ``~``), the width and alphabet of the 32 hex digits they stand for, after the id's prefix as
  written. The openai profile asks the vLLM profile's Responses stream with it, so that stream's
  fast path, which cuts frames at offsets known for 32-character ASCII ids, applies. Its
  templates are cut with ``marks=ASCII`` (:class:`Template`, :class:`FramesTemplate`).
* :meth:`IdRecorder.sparse`: a reply that draws many ids it never shows (SGLang draws an id for
  the in-progress item it rebuilds at each decode step, ``parse_remaining_state``) keeps only the
  draws its text holds and their count (:class:`Draws`); a request skips the others
  (:meth:`IdSource.skip <mockoss.profiles.base.IdSource.skip>`) instead of computing them.

:func:`new_id` draws an id cut to a width (TensorRT-LLM's 13-character ``call_`` ids) from an
id source or a recorder alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, groupby, islice, repeat
from typing import Any

from mockoss.profiles.base import IdSource

__all__ = ["ASCII", "AsciiIdRecorder", "Draws", "FramesTemplate", "IdRecorder", "Marks", "Template", "new_id", "templatable"]

_ID = b"mockoss-id:"
_VALUE = b"mockoss-val:"
#: A marker as JSON text holds it (``\\u0000`` escapes) or raw, in UTF-8 bytes: an id marker is
#: replaced where it stands (inside a JSON string), a value marker written as a JSON string is
#: replaced with its quotes (the value is JSON text of its own: a number, an object, a string).
_MARK = re.compile(
    rb'"\\u0000' + _VALUE + rb'(\d+)\\u0000"|\x00' + _VALUE + rb"(\d+)\x00|\\u0000" + _ID + rb"(\d+)\\u0000|\x00" + _ID + rb"(\d+)\x00"
)


class Marks:
    """How markers are found in built text: ``pattern`` (its groups: the marker's number; one set
    per match), ``probe`` (bytes every marker holds, searched for first) and ``back`` (how far
    before the probe a marker may start)."""

    __slots__ = ("back", "pattern", "probe")

    def __init__(self, pattern: re.Pattern[bytes], probe: bytes, back: int) -> None:
        self.pattern, self.probe, self.back = pattern, probe, back


#: :class:`IdRecorder`'s markers (NUL-delimited, escaped or raw, id or value).
NUL = Marks(_MARK, _ID[:8], 7)
_ASCII_TAG = "~mockoss~slot~"
#: :class:`AsciiIdRecorder`'s markers.
ASCII = Marks(re.compile(_ASCII_TAG.encode() + rb"(\d{17})~"), _ASCII_TAG.encode(), 0)


def templatable(text: str) -> bool:
    """Whether replies made from a completion of this text can be templates: its text holds no
    ``mockoss-`` (a marker's or, backslash-escaped, its JSON form's letters). A completion that
    does is answered by building each reply directly (the profiles' own paths, as before)."""
    return "mockoss-" not in text


#: One recorded call: ``(function, arguments)``, drawn as ``function(ids, *arguments)``; or
#: ``(None, name)``: a request value given to :meth:`IdRecorder.replay`.
Call = tuple[Callable[..., str] | None, Any]


class IdRecorder:
    """Stands in for an :class:`~mockoss.profiles.base.IdSource` while a reply is built once:
    every ``next``/``next16``/``digits`` call returns a marker (for id ``N``, the ``N``-th call)
    and is recorded, so that :meth:`replay` draws a request's real ids in the same order.
    :meth:`call` records an id made from the source by a function (llama.cpp's
    ``random_string``), :meth:`value` a place for JSON text the request supplies (its model,
    ``created``, usage)."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls: list[Call] = []

    def _mark(self, call: Call, kind: bytes = _ID) -> str:
        self.calls.append(call)
        return f"\x00{kind.decode()}{len(self.calls) - 1}\x00"

    def next(self, prefix: str = "") -> str:
        return self._mark((IdSource.next, (prefix,)))

    def next16(self, prefix: str = "") -> str:
        return self._mark((IdSource.next16, (prefix,)))

    def digits(self, count: int) -> str:
        return self._mark((IdSource.digits, (count,)))

    def call(self, function: Callable[..., str], *arguments: Any) -> str:
        """A marker for ``function(ids, *arguments)`` (an id text made from the source's draws)."""
        return self._mark((function, arguments))

    def value(self, name: str) -> str:
        """A marker for the request's ``values[name]`` (JSON text: written as a JSON string, the
        marker's quotes go too)."""
        return self._mark((None, name), _VALUE)

    def sparse(self, used: Iterable[int]) -> Draws:
        """The calls whose markers ``used`` (the numbers a memoised text holds, e.g.
        :attr:`Template.slots`) and how many calls there were: what :meth:`Draws.replay` needs
        for a reply that draws ids it does not show (the others are skipped, not computed). Every
        call must be one draw (``next``, ``next16``, ``digits``)."""
        if any(function not in _DRAWS for function, _ in self.calls):
            raise ValueError("only single draws can be skipped")
        calls = self.calls
        return Draws(len(calls), tuple((n, calls[n]) for n in sorted(set(used))))

    @staticmethod
    def index(marker: str) -> int:
        """The number of an id marker as :meth:`next` returns it (its place in :meth:`replay`'s
        list)."""
        return int(marker[marker.rindex(":") + 1 : -1])

    def frozen(self) -> tuple[Call, ...]:
        """The calls so far (what :meth:`replay` repeats)."""
        return tuple(self.calls)

    @staticmethod
    def replay(calls: Sequence[Call], ids: IdSource, values: Mapping[str, bytes] | None = None) -> list[bytes]:
        """Draw from ``ids`` what the recorded ``calls`` asked for, in order, as UTF-8 bytes, with
        ``values`` in the value places."""
        return [function(ids, *arguments).encode() if function is not None else values[arguments]  # type: ignore[index]
                for function, arguments in calls]


_DRAWS = (IdSource.next, IdSource.next16, IdSource.digits)


class Draws:
    """A reply's recorded calls that its text shows (``shown``: ``(marker number, call)``, in
    order) of ``count`` single draws (:meth:`IdRecorder.sparse`)."""

    __slots__ = ("count", "shown")

    def __init__(self, count: int, shown: tuple[tuple[int, Call], ...]) -> None:
        self.count, self.shown = count, shown

    def replay(self, ids: IdSource) -> dict[int, bytes]:
        """The ids ``ids`` gives at the shown draws, by marker number, as UTF-8 bytes; ``ids``
        ends ``count`` draws further on, as if each draw had been made."""
        out: dict[int, bytes] = {}
        position = 0
        for n, (function, arguments) in self.shown:
            ids.skip(n - position)
            out[n] = function(ids, *arguments).encode()  # type: ignore[misc]
            position = n + 1
        ids.skip(self.count - position)
        return out


class AsciiIdRecorder(IdRecorder):
    """An :class:`IdRecorder` whose ``next(prefix)`` is ``prefix`` + a marker of 32 ASCII
    characters, the width of the 32 hex digits it stands for (``~mockoss~slot~``, the marker's
    number in 17 digits, ``~``): text built with it has every byte offset a build with real ids
    has (the vLLM profile's Responses stream cuts frames at such offsets). Its markers stand for
    the hex digits only (the prefix is written as it is) and are cut with :data:`ASCII` marks; a
    request or script holding ``~mockoss~slot~`` must be answered directly (the marker is not
    escaped, so no check on the completion alone can exclude it). Only ``next`` is supported."""

    __slots__ = ()

    #: What every marker holds: a request or script holding it is answered directly.
    TAG = _ASCII_TAG

    def next(self, prefix: str = "") -> str:
        self.calls.append((IdSource.next, ("",)))
        return f"{prefix}{_ASCII_TAG}{len(self.calls) - 1:017d}~"

    def next16(self, prefix: str = "") -> str:
        raise NotImplementedError("ASCII markers stand for 32 hex digits")

    def digits(self, count: int) -> str:
        raise NotImplementedError("ASCII markers stand for 32 hex digits")

    def call(self, function: Callable[..., str], *arguments: Any) -> str:
        raise NotImplementedError("ASCII markers stand for 32 hex digits")

    def value(self, name: str) -> str:
        raise NotImplementedError("ASCII markers stand for 32 hex digits")


def _cut_id(ids: IdSource, prefix: str, width: int | None) -> str:
    return ids.next(prefix)[:width]


def new_id(ids: IdSource | IdRecorder, prefix: str = "", width: int | None = None) -> str:
    """``ids.next(prefix)`` cut to ``width`` characters (``None``: whole); from an
    :class:`IdRecorder`, a marker for that id."""
    if width is None:
        return ids.next(prefix)
    if isinstance(ids, IdRecorder):
        return ids.call(_cut_id, prefix, width)
    return _cut_id(ids, prefix, width)


def _split(text: str | bytes, marks: Marks = NUL) -> list[bytes | int]:
    """``text`` (UTF-8 when a ``str``) cut at its markers: bytes, marker number, bytes, …, bytes
    (odd places are ints)."""
    if isinstance(text, str):
        text = text.encode()
    out: list[bytes | int] = []
    start = 0
    for match in marks.pattern.finditer(text):
        out.append(text[start : match.start()])
        out.append(int(match.group(match.lastindex or 0)))
        start = match.end()
    out.append(text[start:])
    return out


class Template:
    """A text with id markers, kept as its UTF-8 pieces; :meth:`fill` joins the request's ids in."""

    __slots__ = ("pieces", "slots")

    def __init__(self, text: str | bytes, *, split: bool = True, marks: Marks = NUL) -> None:
        """``split=False``: ``text`` as it is (its ids are real ones), :meth:`fill` gives it back;
        ``marks``: :data:`ASCII` for :class:`AsciiIdRecorder`'s markers."""
        parts = _split(text, marks) if split else [text.encode() if isinstance(text, str) else text]
        self.pieces: tuple[bytes, ...] = tuple(parts[0::2])  # type: ignore[arg-type]
        self.slots: tuple[int, ...] = tuple(parts[1::2])  # type: ignore[arg-type]

    def fill(self, ids: Sequence[bytes] | Mapping[int, bytes]) -> bytes:
        """The text with marker ``N`` replaced by ``ids[N]``."""
        pieces, slots = self.pieces, self.slots
        if not slots:
            return pieces[0]
        out = [pieces[0]]
        for slot, piece in zip(slots, pieces[1:]):
            out.append(ids[slot])
            out.append(piece)
        return b"".join(out)


class FramesTemplate:
    """Stream frames with markers. Frames are grouped by how many markers they hold (nearly all
    frames of a stream hold the same number: the chunk's id, or its item's); each group is kept as
    columns (the pieces between markers, and the marker numbers) with its frames' positions as
    runs, and :meth:`fill` joins a group's frames in one C-level ``map`` over its columns (an id
    repeated over a run of frames that carry it), taking each run of a group's frames in turn."""

    __slots__ = ("count", "groups", "order")

    def __init__(self, frames: Sequence[str | bytes], *, split: bool = True, marks: Marks = NUL) -> None:
        """``split=False``: the frames as they are (their ids are real ones); ``marks``:
        :data:`ASCII` for :class:`AsciiIdRecorder`'s markers."""
        groups: dict[int, tuple[list[int], list[list[bytes]], list[list[int]]]] = {}
        pattern, probe, back = marks.pattern, marks.probe, marks.back
        cut, search, step = pattern.split, pattern.search, pattern.groups + 1  # split: text, its groups (one set), text, …
        plain: tuple[list[int], list[list[bytes]], list[list[int]]] = ([], [[]], [])  # no marker
        single: tuple[list[int], list[list[bytes]], list[list[int]]] = ([], [[], []], [[]])  # one marker (most frames)
        plain_at, plain_pieces = plain[0].append, plain[1][0].append
        single_at, single_head, single_tail, single_slot = single[0].append, single[1][0].append, single[1][1].append, single[2][0].append
        for position, frame in enumerate(frames):
            if frame.__class__ is str:
                frame = frame.encode()  # type: ignore[union-attr]
            if not split or probe not in frame:  # type: ignore[operator]
                plain_at(position)
                plain_pieces(frame)  # type: ignore[arg-type]
                continue
            if frame.count(probe) == 1:  # type: ignore[union-attr]  # one marker: looked for where it is
                at = frame.find(probe)  # type: ignore[union-attr]
                found = search(frame, max(at - back, 0))  # type: ignore[arg-type]  # e.g. "\u0000 / \u0000 / NUL before it
                if found is not None and found.start() <= at:
                    single_at(position)
                    single_head(frame[: found.start()])  # type: ignore[index]
                    single_slot(int(found.group(found.lastindex or 0)))
                    single_tail(frame[found.end() :])  # type: ignore[index]
                    continue
            parts = cut(frame)  # type: ignore[arg-type]
            pieces: list[bytes] = parts[0::step]
            slots = [int(next(filter(None, parts[at : at + step - 1]))) for at in range(1, len(parts), step)]
            if len(slots) < 2:  # the probe's text, not a marker (or one marker beside it): kept with its like
                if slots:
                    single_at(position)
                    single_head(pieces[0])
                    single_slot(slots[0])
                    single_tail(pieces[1])
                else:
                    plain_at(position)
                    plain_pieces(frame)  # type: ignore[arg-type]
                continue
            group = groups.get(len(slots))
            if group is None:
                group = groups[len(slots)] = ([], [[] for _ in pieces], [[] for _ in slots])
            group[0].append(position)
            for column, piece in zip(group[1], pieces):
                column.append(piece)
            for column, slot in zip(group[2], slots):  # type: ignore[assignment]
                column.append(slot)  # type: ignore[arg-type]
        for count, group in ((0, plain), (1, single)):
            if group[0]:  # (the loop above keeps frames of 2 or more slots only: no overlap)
                groups[count] = group
        self.count = len(frames)
        self.groups = tuple(
            (_spans(positions), tuple(map(tuple, pieces)), tuple(map(_runs, slots))) for positions, pieces, slots in groups.values()
        )
        #: The runs of consecutive frames of one group, in frame order: ``(group, frames)``.
        self.order = tuple((group, stop - start) for start, stop, group in sorted(
            (start, stop, group) for group, (spans, _pieces, _slots) in enumerate(self.groups) for start, stop in spans
        ))

    @property
    def used(self) -> tuple[int, ...]:
        """The marker numbers the frames hold, sorted (for :meth:`IdRecorder.sparse`)."""
        return tuple(sorted({n for _spans, _pieces, slots in self.groups for numbers, _counts in slots for n in numbers}))

    def fill(self, ids: Sequence[bytes] | Mapping[int, bytes], prefix: bytes = b"", suffix: bytes = b"") -> list[bytes]:
        """The frames with marker ``N`` replaced by ``ids[N]``, each between ``prefix`` and
        ``suffix`` (a request's own head or tail of every frame, kept out of the template: a
        frame with no marker is kept without being cut, which is most of a stream's)."""
        if len(self.groups) == 1:
            _positions, pieces, slots = self.groups[0]
            return list(_join(pieces, slots, ids, prefix, suffix))
        joined = [iter(_join(pieces, slots, ids, prefix, suffix)) for _spans, pieces, slots in self.groups]
        frames: list[bytes] = []
        for group, count in self.order:  # each run of a group's frames, taken as they are made
            frames += islice(joined[group], count)
        return frames


def _spans(positions: list[int]) -> tuple[tuple[int, int], ...]:
    """Increasing ``positions`` as ``(start, stop)`` runs of consecutive ones."""
    spans: list[tuple[int, int]] = []
    start = previous = -2
    for position in positions:
        if position != previous + 1:
            if previous >= 0:
                spans.append((start, previous + 1))
            start = position
        previous = position
    if previous >= 0:
        spans.append((start, previous + 1))
    return tuple(spans)


def _runs(column: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A column of marker numbers as runs of one number: ``(numbers, counts)`` (the frames of an
    item carry its id: a column is a few runs)."""
    runs = [(number, sum(1 for _ in run)) for number, run in groupby(column)]
    return tuple(number for number, _ in runs), tuple(count for _, count in runs)


def _join(
    pieces: tuple[tuple[bytes, ...], ...], slots: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...],
    ids: Sequence[bytes] | Mapping[int, bytes], prefix: bytes, suffix: bytes,
) -> Iterable[bytes]:
    """One group's frames: its columns of pieces with the ids its slot columns name between them
    (each run of one number as one id repeated)."""
    if not slots and not prefix and not suffix:
        return pieces[0]
    parts: list[Iterable[bytes]] = [pieces[0]]
    for (numbers, counts), piece in zip(slots, pieces[1:]):
        if len(numbers) == 1:
            parts.append(repeat(ids[numbers[0]], counts[0]))
        else:
            parts.append(chain.from_iterable(map(repeat, map(ids.__getitem__, numbers), counts)))
        parts.append(piece)
    if prefix:
        parts.insert(0, repeat(prefix))
    if suffix:
        parts.append(repeat(suffix))
    return map(b"".join, zip(*parts))
