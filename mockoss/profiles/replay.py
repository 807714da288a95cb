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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any

from mockoss.profiles.base import IdSource

__all__ = ["FramesTemplate", "IdRecorder", "Template", "templatable"]

_ID = b"mockoss-id:"
_VALUE = b"mockoss-val:"
#: A marker as JSON text holds it (``\\u0000`` escapes) or raw, in UTF-8 bytes: an id marker is
#: replaced where it stands (inside a JSON string), a value marker written as a JSON string is
#: replaced with its quotes (the value is JSON text of its own: a number, an object, a string).
_MARK = re.compile(
    rb'"\\u0000' + _VALUE + rb'(\d+)\\u0000"|\x00' + _VALUE + rb"(\d+)\x00|\\u0000" + _ID + rb"(\d+)\\u0000|\x00" + _ID + rb"(\d+)\x00"
)


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

    def frozen(self) -> tuple[Call, ...]:
        """The calls so far (what :meth:`replay` repeats)."""
        return tuple(self.calls)

    @staticmethod
    def replay(calls: Sequence[Call], ids: IdSource, values: Mapping[str, bytes] | None = None) -> list[bytes]:
        """Draw from ``ids`` what the recorded ``calls`` asked for, in order, as UTF-8 bytes, with
        ``values`` in the value places."""
        return [function(ids, *arguments).encode() if function is not None else values[arguments]  # type: ignore[index]
                for function, arguments in calls]


def _split(text: str | bytes) -> list[bytes | int]:
    """``text`` (UTF-8 when a ``str``) cut at its markers: bytes, marker number, bytes, …, bytes
    (odd places are ints)."""
    if isinstance(text, str):
        text = text.encode()
    out: list[bytes | int] = []
    start = 0
    for match in _MARK.finditer(text):
        out.append(text[start : match.start()])
        out.append(int(match.group(match.lastindex or 0)))
        start = match.end()
    out.append(text[start:])
    return out


class Template:
    """A text with id markers, kept as its UTF-8 pieces; :meth:`fill` joins the request's ids in."""

    __slots__ = ("pieces", "slots")

    def __init__(self, text: str | bytes, *, split: bool = True) -> None:
        """``split=False``: ``text`` as it is (its ids are real ones), :meth:`fill` gives it back."""
        parts = _split(text) if split else [text.encode() if isinstance(text, str) else text]
        self.pieces: tuple[bytes, ...] = tuple(parts[0::2])  # type: ignore[arg-type]
        self.slots: tuple[int, ...] = tuple(parts[1::2])  # type: ignore[arg-type]

    def fill(self, ids: Sequence[bytes]) -> bytes:
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
    columns (the pieces between markers, and the marker numbers), and :meth:`fill` joins a group's
    frames in one C-level ``map`` over its columns."""

    __slots__ = ("count", "groups")

    def __init__(self, frames: Sequence[str | bytes], *, split: bool = True) -> None:
        """``split=False``: the frames as they are (their ids are real ones)."""
        groups: dict[int, tuple[list[int], list[list[bytes]], list[list[int]]]] = {}
        cut, match = _MARK.split, _MARK.match  # split: text, 4 groups (one set), text, …; the number is the group set
        plain: tuple[list[int], list[list[bytes]], list[list[int]]] = ([], [[]], [])  # no marker
        single: tuple[list[int], list[list[bytes]], list[list[int]]] = ([], [[], []], [[]])  # one marker (most frames)
        plain_at, plain_pieces = plain[0].append, plain[1][0].append
        single_at, single_head, single_tail, single_slot = single[0].append, single[1][0].append, single[1][1].append, single[2][0].append
        for position, frame in enumerate(frames):
            if frame.__class__ is str:
                frame = frame.encode()  # type: ignore[union-attr]
            if not split or _ID[:8] not in frame:  # type: ignore[operator]
                plain_at(position)
                plain_pieces(frame)  # type: ignore[arg-type]
                continue
            if frame.count(_ID[:8]) == 1:  # type: ignore[union-attr]  # one marker: matched where it is, not searched for
                at = frame.find(_ID[:8])  # type: ignore[union-attr]
                found = match(frame, at - 7) or match(frame, at - 6) or match(frame, at - 1)  # "\u0000 / \u0000 / NUL before it
                if found is not None:
                    single_at(position)
                    single_head(frame[: found.start()])  # type: ignore[index]
                    single_slot(int(found.group(found.lastindex or 0)))
                    single_tail(frame[found.end() :])  # type: ignore[index]
                    continue
            parts = cut(frame)  # type: ignore[arg-type]
            pieces: list[bytes] = parts[0::5]
            slots = [int(a or b or c or d) for a, b, c, d in zip(parts[1::5], parts[2::5], parts[3::5], parts[4::5])]
            group = groups.get(len(slots))
            if group is None:
                group = groups[len(slots)] = ([], [[] for _ in pieces], [[] for _ in slots])
            group[0].append(position)
            for column, piece in zip(group[1], pieces):
                column.append(piece)
            for column, slot in zip(group[2], slots):  # type: ignore[assignment]
                column.append(slot)  # type: ignore[arg-type]
        for count, group in ((0, plain), (1, single)):
            if group[0]:
                if count in groups:  # a frame of this count the loop above took (never: it takes 2 or more)
                    raise AssertionError("frame groups overlap")
                groups[count] = group
        self.count = len(frames)
        self.groups = tuple(
            (tuple(positions), tuple(map(tuple, pieces)), tuple(map(tuple, slots))) for positions, pieces, slots in groups.values()
        )

    def fill(self, ids: Sequence[bytes], prefix: bytes = b"", suffix: bytes = b"") -> list[bytes]:
        """The frames with marker ``N`` replaced by ``ids[N]``, each between ``prefix`` and
        ``suffix`` (a request's own head or tail of every frame, kept out of the template: a
        frame with no marker is kept without being cut, which is most of a stream's)."""
        if len(self.groups) == 1:
            _positions, pieces, slots = self.groups[0]
            return list(_join(pieces, slots, ids, prefix, suffix))
        frames = [b""] * self.count
        for positions, pieces, slots in self.groups:
            for position, frame in zip(positions, _join(pieces, slots, ids, prefix, suffix)):
                frames[position] = frame
        return frames


def _join(
    pieces: tuple[tuple[bytes, ...], ...], slots: tuple[tuple[int, ...], ...], ids: Sequence[bytes], prefix: bytes, suffix: bytes
) -> Iterable[bytes]:
    """One group's frames: its columns of pieces with the ids its slot columns name between them."""
    if not slots and not prefix and not suffix:
        return pieces[0]
    parts: list[Iterable[bytes]] = [pieces[0]]
    for column, piece in zip(slots, pieces[1:]):
        parts.append(map(ids.__getitem__, column))
        parts.append(piece)
    if prefix:
        parts.insert(0, repeat(prefix))
    if suffix:
        parts.append(repeat(suffix))
    return map(b"".join, zip(*parts))
