"""A stream's frames that are known, by construction, to be whole SSE events, one per frame.

The server counts the SSE separators (``b"\\n\\n"``) it wrote for the request log and metrics
(:mod:`mockoss.server.fastpath`, :mod:`mockoss.server.control`). Scanning a 2,000-token stream
for them costs about 1 ms of CPU a request (``bytes.count`` over 1.2 MB, 0.25 us per frame,
measured), as much as building the stream. A profile that builds every frame as
``<bytes without a newline> + b"\\n\\n"`` says so by returning :class:`SseEvents` instead of a
plain tuple; the transport then knows the count of any run of whole, unchanged frames without
reading them (:attr:`mockoss.server.transport.Schedule.separators`).

Why the count is exact: if no frame holds a ``b"\\n"`` except its last two bytes, a concatenation
of ``n`` whole frames holds ``b"\\n"`` only as ``n`` disjoint pairs, each followed by a frame's
first byte (not a newline) or the end, so ``bytes.count(b"\\n\\n")`` (non-overlapping, left to
right) finds exactly those ``n``. A frame a fault replaced (``malformed_at_frame``) or a write cut
inside a frame (``split_special``) breaks the premise; the transport then counts bytes as before.
"""

from __future__ import annotations

__all__ = ["SseEvents", "is_sse_events"]


class SseEvents(tuple[bytes, ...]):
    """A tuple of SSE frames, each ending with ``b"\\n\\n"`` and holding no other ``b"\\n"``.

    Only its exact type carries the claim: slicing or adding to it gives a plain tuple, so frames
    taken or changed by someone else never inherit it. Compares equal to the plain tuple of the
    same frames.
    """

    __slots__ = ()


def is_sse_events(frames: object) -> bool:
    """Whether ``frames`` carries the :class:`SseEvents` claim (its exact type, not a subclass)."""
    return frames.__class__ is SseEvents
