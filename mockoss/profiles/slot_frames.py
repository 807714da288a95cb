"""Memoised stream frames with holes a request fills (its ids), filled in C-level loops.

A profile that memoises a long stream's frames with per-request values left as slots (markers it
chooses, numbered) keeps them as :class:`SlotFrames`: consecutive frames holding the same slots in
the same order form a run, and a run is filled by one ``map(b"".join, zip(...))`` over its frames'
pieces (0.2 ms for 5,000 frames, where a regex substitution per frame took ~2 us each).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import repeat

__all__ = ["SlotFrames"]


class SlotFrames:
    """``frames`` split at the matches of ``pattern`` (whose one group is the slot's number).

    ``used`` are the slot numbers that appear, sorted."""

    __slots__ = ("runs", "used")

    def __init__(self, frames: Iterable[bytes], pattern: re.Pattern[bytes]) -> None:
        runs: list[tuple[tuple[int, ...], list[list[bytes]]]] = []
        used: set[int] = set()
        for frame in frames:
            parts = pattern.split(frame)
            slots = tuple(int(n) for n in parts[1::2])
            used.update(slots)
            statics = parts[0::2]
            if not runs or runs[-1][0] != slots:
                runs.append((slots, [[] for _ in statics]))
            for column, piece in zip(runs[-1][1], statics, strict=True):
                column.append(piece)
        self.runs = tuple((slots, tuple(tuple(column) for column in columns)) for slots, columns in runs)
        self.used = tuple(sorted(used))

    def fill(self, values: dict[int, bytes]) -> list[bytes]:
        """The frames with each slot replaced by ``values[slot]``."""
        out: list[bytes] = []
        join = b"".join
        for slots, columns in self.runs:
            if not slots:
                out += columns[0]
                continue
            args: list[Iterable[bytes]] = [columns[0]]
            for slot, column in zip(slots, columns[1:], strict=True):
                args += [repeat(values[slot]), column]
            out += map(join, zip(*args))
        return out
