"""A stream's frames that are known, by construction, to be whole SSE events, one per frame.

The server counts the SSE separators (``b"\\n\\n"``) it wrote for the request log and metrics
(:mod:`mockoss.server.fastpath`, :mod:`mockoss.server.control`). A profile whose frames are each
one whole SSE event says so by returning :class:`SseEvents` instead of a plain tuple; the
transport then knows the count of any run of whole, unchanged frames without reading them
(:attr:`mockoss.server.transport.Schedule.separators`).

The claim, per frame: it ends with ``b"\\n\\n"``, holds no other ``b"\\n\\n"``, and does not start
with ``b"\\n"`` (:func:`whole_event`). ``data: {…}\\n\\n`` and ``event: T\\ndata: {…}\\n\\n`` with
compact JSON (which escapes newlines) are such frames. Why the count is then exact: in a
concatenation of ``n`` such frames a ``b"\\n\\n"`` inside a frame is its last two bytes, and none
spans two frames (the second would start with ``b"\\n"``), so ``bytes.count(b"\\n\\n")``
(non-overlapping, left to right) finds exactly ``n``: it cannot start one byte early either, as
that would be another pair inside the frame. A frame a fault replaced (``malformed_at_frame``) or
a write cut inside a frame (``split_special``) breaks the premise; the transport then counts
bytes as before. Scanning costs ~0.9 ms for a 2,000-token chat stream and ~1.9 ms for a
10,000-token Responses stream (2.3 MB), as much as building the stream from its memo.
"""

from __future__ import annotations

__all__ = ["SseEvents", "is_sse_events", "whole_event"]


class SseEvents(tuple[bytes, ...]):
    """A tuple of SSE frames, each one whole event (:func:`whole_event`).

    Only its exact type carries the claim: slicing or adding to it gives a plain tuple, so frames
    taken or changed by someone else never inherit it. Compares equal to the plain tuple of the
    same frames.
    """

    __slots__ = ()


def is_sse_events(frames: object) -> bool:
    """Whether ``frames`` carries the :class:`SseEvents` claim (its exact type, not a subclass)."""
    return frames.__class__ is SseEvents


def whole_event(frame: bytes) -> bool:
    """Whether ``frame`` is one whole SSE event as :class:`SseEvents` claims: it ends with
    ``b"\\n\\n"``, holds no other ``b"\\n\\n"`` and does not start with ``b"\\n"``."""
    return frame.find(b"\n\n") == len(frame) - 2 and not frame.startswith(b"\n")
