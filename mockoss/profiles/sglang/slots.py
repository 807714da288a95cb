"""Memoised SGLang stream frames with per-request holes: the ids a reply draws, recorded once.

SGLang's Responses code draws an id for every item it builds, even for the in-progress item it
rebuilds at each decode step and then drops (``parse_remaining_state``): a reply shows a few of
the ids it draws, and which ones depends only on the completion. :class:`RecordingIds` stands in
for :class:`~mockoss.profiles.base.IdSource` while the request-independent part of a reply is
computed: its ids are slots (``prefix`` + NUL, the draw's number, NUL). :class:`Frames` keeps
the frames so made with their slots as holes (:mod:`mockoss.profiles.slot_frames`), and
:meth:`Frames.fill` writes a request's ids into them: the id of draw ``n`` is the id its :class:`IdSource` gives at that position (the draws
between are skipped, :meth:`IdSource.skip`), so the bytes are those of the direct computation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mockoss.profiles.slot_frames import SlotFrames

__all__ = ["Frames", "RecordingIds", "draw_ids", "fill_text", "slots_in"]

#: A slot as :func:`mockoss.profiles.wire.dumps` writes it (JSON escapes NUL as ``\\u0000``).
_SLOT = re.compile(rb"\\u0000(\d+)\\u0000")
_TEXT_SLOT = re.compile(r"\\u0000(\d+)\\u0000")


class RecordingIds:
    """An id source whose ids are slots: ``next(prefix)`` is ``prefix + "\\x00<n>\\x00"`` for
    the ``n``-th draw (from 1); ``count`` is the number of draws."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def next(self, prefix: str = "") -> str:
        self.count += 1
        return f"{prefix}\x00{self.count}\x00"


def draw_ids(ids: object, used: Sequence[int], count: int) -> dict[int, str]:
    """The ids ``ids`` gives at the draw positions ``used`` (sorted, from 1) of ``count`` draws,
    as 32 hex digits; ``ids`` ends ``count`` draws further on, as if each had been made."""
    out: dict[int, str] = {}
    position = 0
    for n in used:
        ids.skip(n - position - 1)  # type: ignore[attr-defined]
        out[n] = ids.next()  # type: ignore[attr-defined]
        position = n
    ids.skip(count - position)  # type: ignore[attr-defined]
    return out


def slots_in(text: str) -> tuple[int, ...]:
    """The slot numbers ``text`` (JSON written with slots) holds, sorted."""
    return tuple(sorted({int(n) for n in _TEXT_SLOT.findall(text)}))


def fill_text(text: str, values: dict[int, str]) -> str:
    """``text`` (JSON written with slots) with each slot replaced by its value."""
    return _TEXT_SLOT.sub(lambda m: values[int(m.group(1))], text)


class Frames(SlotFrames):
    """:class:`~mockoss.profiles.slot_frames.SlotFrames` of frames written with
    :class:`RecordingIds`'s slots; :meth:`fill` takes the ids as text."""

    __slots__ = ()

    def __init__(self, frames: Iterable[bytes]) -> None:
        super().__init__(frames, _SLOT)

    def fill(self, values: dict[int, str]) -> list[bytes]:  # type: ignore[override]
        """The frames with each slot replaced by ``values[slot]``."""
        return super().fill({n: v.encode() for n, v in values.items()})
