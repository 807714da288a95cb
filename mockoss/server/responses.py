"""Starlette responses for a profile's :class:`~mockoss.profiles.base.Reply`: at once, or on the
schedule a transport spec gives (:mod:`mockoss.server.transport`).

Shared by the app (:mod:`mockoss.server.app`) and the upstream proxy (:mod:`mockoss.upstream.proxy`),
so that neither imports the other.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from mockoss.profiles.base import Reply
from mockoss.server.transport import (
    FRAMES_PER_WRITE,
    Delivery,
    Schedule,
    StreamAborted,
    build_schedule,
    end,
    play,
    wait_until,
)

__all__ = ["to_response", "to_scheduled_response"]


async def _frames(frames: Sequence[bytes], abort: str | None, taken: list[int] | None) -> AsyncIterator[bytes]:
    for start in range(0, len(frames), FRAMES_PER_WRITE):
        if taken is not None:
            taken[0] = min(start + FRAMES_PER_WRITE, len(frames))
        yield b"".join(frames[start : start + FRAMES_PER_WRITE])
    if abort is not None:
        # Escaping the ASGI app after the response started makes uvicorn close the connection
        # without the terminating chunk: the client sees a truncated stream.
        raise StreamAborted(f"mockoss: stream dropped as the emulated server drops it: {abort}")


class _Released(StreamingResponse):
    """A streaming response that lets go of its body once it is over, however it ended.

    When the client leaves mid-stream, Starlette cancels the task writing the body (anyio's task
    group, ``starlette/responses.py`` ``StreamingResponse.__call__`` under ASGI spec 2.3, which
    uvicorn 0.54 announces); the cancelled task, its exception and the traceback's frames form a
    reference cycle that holds this response and its body iterator until the garbage collector's
    next full collection (``mockoss serve`` makes those rare, :func:`mockoss.server.run.serve_forever`).
    Dropping the iterator here frees the reply's frames by reference counting (issue 9 review,
    eighth session, finding 4: 100 dropped paced streams left 494 MB until a full collection).
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()

    def _release(self) -> None:
        self.body_iterator = _NOTHING


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""  # pragma: no cover  (makes this an async generator)


#: A finished, empty body, what a released response iterates.
_NOTHING = _nothing()


def to_response(reply: Reply, *, taken: list[int] | None = None) -> Response:
    """Turn a profile's reply into a Starlette response (streamed when it has frames).

    ``taken[0]``: the frames in the writes handed to ``send`` so far, the one being sent included
    (set before each write is handed over)."""
    headers = dict(reply.headers)
    if reply.streamed:
        return _Released(
            _frames(reply.frames, reply.abort, taken), status_code=reply.status, media_type=reply.media_type, headers=headers
        )
    return Response(reply.body, status_code=reply.status, media_type=reply.media_type, headers=headers)


class _Scheduled(_Released):
    """A response written on a :class:`~mockoss.server.transport.Schedule`: headers at ``head_ms``,
    then its writes; Starlette cancels the waits when the client disconnects."""

    def __init__(
        self, reply: Reply, schedule: Schedule, progress: list[int] | None = None, done: Callable[[], None] | None = None
    ) -> None:
        self._clock = asyncio.get_running_loop().time
        self._start, self._head_ms = self._clock(), schedule.head_ms
        self.schedule = schedule
        self._progress, self._done = progress if progress is not None else [0], done
        headers = dict(reply.headers)
        if schedule.content_length is not None:
            headers["content-length"] = str(schedule.content_length)
        body = play(schedule, self._start, clock=self._clock, progress=progress, done=done)
        super().__init__(body, status_code=reply.status, media_type=reply.media_type, headers=headers)

    async def stream_response(self, send: Callable[..., Awaitable[None]]) -> None:
        await wait_until(self._start, self._head_ms, clock=self._clock)
        schedule = self.schedule
        if not schedule.at_once:
            schedule = None  # type: ignore[assignment]  # see _Released: this frame may outlive the stream
            await super().stream_response(send)  # each write from play(), at its time
            return
        # Every write is due at once: sent from this loop, with play()'s wait, progress and end,
        # but no generator between the bytes and send(): 0.39 -> 0.23 us a write of a 2,000-token
        # stream sent one frame per write, in process (bare Starlette over a generator: 0.28).
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            await wait_until(self._start, schedule.times[0], clock=self._clock)
            progress = self._progress
            for progress[0], chunk in enumerate(schedule.data):  # progress[0]: the writes sent before this one
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            progress[0] = len(schedule.data)
            await end(schedule, self._start, clock=self._clock, done=self._done)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            schedule = None  # type: ignore[assignment]  # see _Released: this frame may outlive the stream

    def _release(self) -> None:
        super()._release()
        self.schedule, self._done = None, None  # type: ignore[assignment]


def to_scheduled_response(
    reply: Reply, delivery: Delivery, *, progress: list[int] | None = None, done: Callable[[], None] | None = None
) -> Response:
    """Deliver ``reply`` with the timing and faults of ``delivery`` (see :mod:`mockoss.server.transport`).

    ``progress`` and ``done``: see :func:`mockoss.server.transport.play` (the writes sent so far,
    and a call once the last one is sent, before the closing message); the response's
    ``schedule`` attribute holds the writes."""
    schedule = build_schedule(reply, delivery.spec, delivery.seed, delivery.index, tokens=delivery.tokens)
    return _Scheduled(reply, schedule, progress, done)
