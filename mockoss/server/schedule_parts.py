"""The parts of a :class:`~mockoss.server.transport.Schedule` that are computed as they are read.

A long stream's schedule kept a list per frame (its write times, a copy of its frames, the frames
joined per write) for as long as the stream lasted: up to 600 s for a paced one (issue 9 review,
eighth session, finding 4). These sequences keep only what they are computed from: the reply's
own frames and the spec's numbers. Each compares equal to the list it replaces (``==`` with any
sequence of the same items), so schedules compare as before.
"""

from __future__ import annotations

import hashlib
import random
from collections import deque
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain, islice, repeat
from operator import add, eq
from typing import TypeVar, overload

__all__ = ["FrameView", "GroupedFrames", "PacedTimes", "seeded_rng"]

_T = TypeVar("_T")


def seeded_rng(seed: int | str, index: int, purpose: str) -> random.Random:
    """The generator of one request's ``purpose`` draws (``"jitter"``, ``"split"``), seeded by the
    server's seed and the request's index: the same request always gets the same draws."""
    data = f"{type(seed).__name__}:{seed}|{index}|transport.{purpose}".encode()
    return random.Random(int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big"))


class _Computed(Sequence[_T]):
    """A sequence computed as it is read: equal to any sequence of the same items, hashed and shown
    as the tuple of its items."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(map(eq, self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class PacedTimes(_Computed[float]):
    """The write times (ms) of a stream written one frame per send, computed as they are read.

    ``at[0] = ttft``, ``at[k] = at[k-1] + interval`` (each term scaled by its own seeded jitter
    draw, in order), plus ``stall_ms`` from frame ``stall`` on: the same float operations, in the
    same order, as the list this replaces, so the times are the same to the last bit. Nothing per
    frame is stored: a paced 11,003-frame stream kept 11,003 floats and two 11,003-slot lists
    (~0.5 MB) for as long as it lasted (up to the 600 s maximum; issue 9 review, eighth session,
    finding 4). Iterating costs a C-level ``accumulate`` without jitter; indexing is ``O(k)``
    (only the first and the last are kept), so callers iterate.
    """

    __slots__ = ("_count", "_index", "_interval", "_jitter", "_seed", "_stall", "_stall_ms", "_ttft", "first", "last")

    def __init__(
        self,
        ttft_ms: float,
        interval: float,
        jitter: float | None,
        seed: int | str,
        index: int,
        count: int,
        stall: int | None = None,
        stall_ms: float = 0.0,
    ) -> None:
        self._ttft, self._interval, self._jitter, self._seed, self._index = ttft_ms, interval, jitter, seed, index
        self._count, self._stall, self._stall_ms = count, stall, stall_ms
        self.first = self.last = 0.0
        if count:
            last = 0.0
            for last in deque(iter(self), maxlen=1):
                pass
            self.first, self.last = next(iter(self)), last

    def _raw(self) -> Iterator[float]:
        """The times without the stall."""
        count = self._count
        if not self._jitter:
            at = self._ttft
            if not self._interval:  # every frame at the first one's time
                return repeat(at, count)
            return accumulate(repeat(self._interval, count - 1), initial=at)
        rng = seeded_rng(self._seed, self._index, "jitter")
        scale = self._jitter

        def jittered(ms: float) -> float:
            return ms * (1.0 + scale * (2.0 * rng.random() - 1.0))

        at = jittered(self._ttft)  # drawn first, as the schedule always drew it
        return accumulate(map(jittered, repeat(self._interval, count - 1)), initial=at)

    def __iter__(self) -> Iterator[float]:
        if not self._count:
            return iter(())
        raw = self._raw()
        stall = self._stall
        if stall is None:
            return raw
        return chain(islice(raw, stall), map(add, raw, repeat(self._stall_ms)))

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, key: int) -> float: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[float, ...]: ...
    def __getitem__(self, key: int | slice) -> float | tuple[float, ...]:
        if isinstance(key, slice):
            return tuple(self)[key]
        position = key + self._count if key < 0 else key
        if not 0 <= position < self._count:
            raise IndexError("time index out of range")
        if position == 0:
            return self.first
        if position == self._count - 1:
            return self.last
        return next(islice(iter(self), position, None))

    def first_of(self, count: int) -> PacedTimes:
        """The first ``count`` times (``count`` ≤ ``len(self)``)."""
        return PacedTimes(self._ttft, self._interval, self._jitter, self._seed, self._index, count, self._stall, self._stall_ms)


class FrameView(_Computed[bytes]):
    """The first ``stop`` of a reply's ``frames``, frame ``replaced`` (if not ``None``) read as
    ``replacement``: a stream cut or made malformed by its spec without a copy of its frames."""

    __slots__ = ("_frames", "_replaced", "_replacement", "_stop")

    def __init__(self, frames: Sequence[bytes], stop: int, replaced: int | None, replacement: bytes) -> None:
        self._frames, self._stop, self._replacement = frames, stop, replacement
        self._replaced = replaced if replaced is not None and replaced < stop else None

    def __len__(self) -> int:
        return self._stop

    def __iter__(self) -> Iterator[bytes]:
        replaced = self._replaced
        if replaced is None:
            return islice(self._frames, self._stop)
        return chain(islice(self._frames, replaced), (self._replacement,), islice(self._frames, replaced + 1, self._stop))

    @overload
    def __getitem__(self, key: int) -> bytes: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[bytes, ...]: ...
    def __getitem__(self, key: int | slice) -> bytes | tuple[bytes, ...]:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._stop)
            if step != 1:
                return tuple(self)[key]
            part = tuple(self._frames[start:stop])
            replaced = self._replaced
            if replaced is not None and start <= replaced < stop:
                part = (*part[: replaced - start], self._replacement, *part[replaced - start + 1 :])
            return part
        position = key + self._stop if key < 0 else key
        if not 0 <= position < self._stop:
            raise IndexError("frame index out of range")
        return self._replacement if position == self._replaced else self._frames[position]


class GroupedFrames(_Computed[bytes]):
    """``frames`` joined ``per_write`` at a time, each write joined when it is read."""

    __slots__ = ("_frames", "_per_write")

    def __init__(self, frames: Sequence[bytes], per_write: int) -> None:
        self._frames, self._per_write = frames, per_write

    def __len__(self) -> int:
        return (len(self._frames) + self._per_write - 1) // self._per_write

    def __iter__(self) -> Iterator[bytes]:
        frames, per_write = self._frames, self._per_write
        for start in range(0, len(frames), per_write):
            yield b"".join(frames[start : start + per_write])

    @overload
    def __getitem__(self, key: int) -> bytes: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[bytes, ...]: ...
    def __getitem__(self, key: int | slice) -> bytes | tuple[bytes, ...]:
        if isinstance(key, slice):
            return tuple(self[position] for position in range(*key.indices(len(self))))
        count = len(self)
        position = key + count if key < 0 else key
        if not 0 <= position < count:
            raise IndexError("write index out of range")
        start = position * self._per_write
        return b"".join(self._frames[start : start + self._per_write])
