"""Deliver a reply as a :class:`~mockoss.scenario.transport.TransportSpec` says: a seeded schedule of writes.

Framework-free. :func:`build_schedule` turns a profile's :class:`~mockoss.profiles.base.Reply`, a
spec, a seed and a request index into a :class:`Schedule` (when the headers go out, which bytes
are written when, and whether the response ends cleanly or the connection is dropped);
:func:`play` writes it out with ``asyncio.sleep`` (never blocking the event loop). The same
reply, spec, seed and index always give the same schedule; the profile's frames are not changed,
only cut, replaced, regrouped, split and spaced in time.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from mockoss.profiles.base import Reply
from mockoss.profiles.sse import is_sse_events
from mockoss.scenario.transport import MAX_DELAY_MS, TransportSpec
from mockoss.server.schedule_parts import FrameView, GroupedFrames, PacedTimes, seeded_rng

__all__ = [
    "FRAMES_PER_WRITE",
    "Delivery",
    "FrameView",
    "GroupedFrames",
    "PacedTimes",
    "Schedule",
    "StreamAborted",
    "Write",
    "build_schedule",
    "end",
    "play",
    "wait_until",
]

#: Frames written per ``send`` when a stream is not paced; the bytes on the wire are the same.
FRAMES_PER_WRITE = 64
#: A Harmony special token as text: ``<|start|>``, ``<|channel|>``, ``<|reserved_200013|>``, …
SPECIAL_TOKEN = re.compile(rb"<\|[a-z0-9_]+\|>")

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[object]]


class StreamAborted(Exception):
    """Raised after a response started to drop the connection, as the emulated server does.

    Escaping the ASGI app after the headers were sent makes uvicorn close the connection without
    the terminating chunk: the client sees an incomplete body (httpx ``RemoteProtocolError``).
    """


@dataclass(frozen=True, slots=True)
class Delivery:
    """What the HTTP layer needs to deliver one reply: the merged spec and the seeding.

    Attributes:
        spec: the server default, step and header layers merged.
        seed: the server seed.
        index: the request index (0-based since the last reset).
        tokens: completion tokens behind a non-streamed reply (its pacing), 0 for errors.
    """

    spec: TransportSpec
    seed: int | str
    index: int
    tokens: int = 0


class Write(NamedTuple):
    """Bytes to write ``at_ms`` milliseconds after the request was answered (one ``more_body`` chunk).

    A view of one write of a :class:`Schedule` (:attr:`Schedule.writes`); the schedule itself keeps
    the times and the bytes in two tuples, so a stream written one frame per send builds no
    object per frame (a ``Write`` per frame cost 0.15 us, 0.77 ms for 5,000 frames, measured)."""

    at_ms: float
    data: bytes


@dataclass(frozen=True, slots=True)
class Schedule:
    """How one response goes out, times in ms after the request was answered.

    Attributes:
        head_ms: when the status line and headers are written (0 for streams; the whole wait for
            a non-streamed reply, which a server sends once generation is done).
        times: when each body write goes out, non-decreasing. A tuple, or for a stream written
            one frame per send or all at once a :class:`PacedTimes` computed as it is iterated.
        data: the bytes of each body write (one ``more_body`` chunk each), as many as ``times``:
            a tuple, the reply's own frames, or a view of them (:class:`FrameView`,
            :class:`GroupedFrames`), so that a stream keeps nothing per frame beside its reply
            (issue 9 review, eighth session, finding 4). Iterate them; indexing a view may cost
            ``O(k)``.
        end_ms: when the response ends (≥ the last write).
        drop: ``None``: end cleanly; else drop the connection at ``end_ms``, the text says why.
        content_length: for a non-streamed reply, the ``Content-Length`` to announce (the full
            body's, so that a drop is seen as an incomplete body); ``None`` for streams.
        separators: when known without reading the bytes, ``separators[k]`` is the number of
            SSE separators (``b"\\n\\n"``) in ``data[:k]``: the reply's frames are
            :class:`~mockoss.profiles.sse.SseEvents` and every write is whole, unchanged frames
            (no ``malformed_at_frame`` replacement, no ``split_special``); ``None`` otherwise.
    """

    head_ms: float
    times: tuple[float, ...]
    data: tuple[bytes, ...]
    end_ms: float
    drop: str | None = None
    content_length: int | None = None
    separators: Sequence[int] | None = None

    @property
    def at_once(self) -> bool:
        """Whether there are writes and all are due at the same time (an unpaced stream)."""
        return bool(self.times) and self.times[0] == self.times[-1]  # times never decrease

    @property
    def writes(self) -> tuple[Write, ...]:
        """The body writes, each its time and bytes."""
        return tuple(map(Write._make, zip(self.times, self.data)))

    @classmethod
    def of(
        cls,
        head_ms: float,
        writes: Sequence[Write],
        end_ms: float,
        drop: str | None = None,
        content_length: int | None = None,
    ) -> Schedule:
        """A schedule of the given writes (no separator count)."""
        return cls(head_ms, tuple(w.at_ms for w in writes), tuple(w.data for w in writes), end_ms, drop, content_length)


def _after(count: int | None, total: int) -> int | None:
    """Resolve "after N frames" (negative: from the end) to 0..total."""
    if count is None:
        return None
    return max(0, total + count) if count < 0 else min(count, total)


def _at(position: int | None, total: int) -> int | None:
    """Resolve a frame position (negative: from the end); ``None`` if out of range."""
    if position is None:
        return None
    resolved = total + position if position < 0 else position
    return resolved if 0 <= resolved < total else None


def _jitter(spec: TransportSpec, seed: int | str, index: int) -> Callable[[float], float]:
    """Scale a duration by ``1 ± jitter`` (seeded); without jitter, no generator is seeded (5 us)."""
    if not spec.jitter:
        return lambda ms: ms
    rng = seeded_rng(seed, index, "jitter")
    return lambda ms: ms * (1.0 + spec.jitter * (2.0 * rng.random() - 1.0))


def build_schedule(reply: Reply, spec: TransportSpec, seed: int | str, index: int, *, tokens: int = 0) -> Schedule:
    """Plan the delivery of ``reply`` under ``spec``.

    Args:
        reply: the profile's reply (streamed when it has frames' media type).
        spec: merged transport settings.
        seed, index: the server seed and request index; they seed jitter and split positions.
        tokens: completion tokens behind a non-streamed reply (``ttft_ms + tokens * 1000 /
            tokens_per_s`` is its wait); ignored for streams, where one frame counts as one token.

    Order for streams: cut (``truncate_after_frames``, ``disconnect_after_frames``, the earlier
    wins, a disconnect on a tie), replace the malformed frame, time the frames, insert the stall,
    cut at ``disconnect_after_ms``, group frames into writes, split writes. A ``Reply.abort`` drops
    the connection after the last frame unless the stream was cut before it.
    """
    if reply.streamed:
        return _stream(reply, spec, seed, index)
    return _body(reply, spec, seed, index, tokens)


def _body(reply: Reply, spec: TransportSpec, seed: int | str, index: int, tokens: int) -> Schedule:
    jitter = _jitter(spec, seed, index)
    wait = jitter(spec.ttft_ms)
    if spec.tokens_per_s is not None and tokens:
        wait += jitter(tokens * 1000.0 / spec.tokens_per_s)
    body = spec.malformed_text.encode() if _at(spec.malformed_at_frame, 1) == 0 else reply.body
    if _after(spec.disconnect_after_frames, 1) == 0:
        return Schedule(wait, (), (), wait, "disconnect after 0 frames (before the body)", len(body))
    if spec.disconnect_after_ms is not None and spec.disconnect_after_ms < wait:
        ms = spec.disconnect_after_ms
        return Schedule(ms, (), (), ms, f"disconnect after {ms:g} ms (before the body)", len(body))
    return Schedule(wait, (wait,), (body,), wait, None, len(body))


def _stream(reply: Reply, spec: TransportSpec, seed: int | str, index: int) -> Schedule:
    frames = reply.frames
    total = len(frames)
    cut, drop = total, reply.abort
    truncate = _after(spec.truncate_after_frames, total)
    if truncate is not None and truncate < cut:
        cut, drop = truncate, None
    disconnect = _after(spec.disconnect_after_frames, total)
    if disconnect is not None and disconnect <= cut:
        cut, drop = disconnect, f"disconnect after {disconnect} frames"
    malformed = _at(spec.malformed_at_frame, total)
    if malformed is not None and malformed >= cut:
        malformed = None
    events = is_sse_events(frames) and malformed is None and not spec.split_special

    interval = 1000.0 / spec.tokens_per_s if spec.tokens_per_s is not None else 0.0
    stall = _after(spec.stall_after_frames, total)
    if stall is not None and stall > cut:
        stall = None
    timing = PacedTimes(spec.ttft_ms, interval, spec.jitter, seed, index, cut)
    end = timing.last if cut else 0.0
    if stall is not None:
        start = timing[stall - 1] if stall else 0.0
        if spec.stall_ms == "forever":
            cut = stall
            timing = PacedTimes(spec.ttft_ms, interval, spec.jitter, seed, index, cut)
            end, drop = start + MAX_DELAY_MS, f"stalled after {stall} frames for the {MAX_DELAY_MS:g} ms maximum"
            stall = None
        else:
            timing = PacedTimes(spec.ttft_ms, interval, spec.jitter, seed, index, cut, stall, spec.stall_ms)
            end = timing.last if stall < cut else start + spec.stall_ms

    limit = spec.disconnect_after_ms
    if limit is not None and limit < end:
        kept = sum(1 for t in timing if t <= limit)  # times never decrease: the writes due by the limit
        cut = kept
        timing = timing.first_of(kept)
        end, drop = limit, f"disconnect after {limit:g} ms"
    data: Sequence[bytes] = frames if cut == total and malformed is None else FrameView(frames, cut, malformed, spec.malformed_text.encode())

    per_write = spec.frames_per_write or (1 if spec.paced else FRAMES_PER_WRITE)
    if per_write == 1 and not spec.split_special:
        # One frame per send (the paced path): the reply's own frames and times computed as they
        # are read; nothing per frame is copied or kept (issue 9 review, eighth session, finding 4).
        return Schedule(0.0, timing, data, end, drop, None, range(cut + 1) if events else None)  # type: ignore[arg-type]
    if not interval and not spec.split_special and (stall is None or stall >= cut):
        # Unpaced, every write due at once: the writes are joined as they are read, not all at
        # build time (a copy of the whole reply, kept as long as the stream).
        groups = -(-cut // per_write)
        times = PacedTimes(spec.ttft_ms, 0.0, spec.jitter, seed, index, groups)
        ends = [*range(0, cut, per_write), cut]
        return Schedule(0.0, times, GroupedFrames(data, per_write), end, drop, None, ends if events else None)  # type: ignore[arg-type]
    at_ms, writes, ends = _group(list(data), list(timing), per_write, stall if stall is not None and stall < cut else None)
    if spec.split_special:
        at_ms, writes = _split(at_ms, writes, spec.split_gap_ms, seeded_rng(seed, index, "split"))
    end = max(end, at_ms[-1]) if at_ms else end
    return Schedule(0.0, tuple(at_ms), tuple(writes), end, drop, None, ends if events else None)


def _group(
    frames: list[bytes], times: list[float], per_write: int, stall: int | None
) -> tuple[list[float], list[bytes], Sequence[int]]:
    """Join consecutive frames, ``per_write`` at a time, written when the last of them is due; a
    group never spans the stall, so everything before it is on the wire when it starts.

    Returns the writes' times and bytes, and ``ends``: ``ends[k]`` is the number of frames in
    the first ``k`` writes."""
    if per_write == 1 and stall is None:  # one frame per send: the paced path
        return times, frames, range(len(frames) + 1)
    at_ms: list[float] = []
    data: list[bytes] = []
    ends = [0]
    start = 0
    while start < len(frames):
        stop = min(start + per_write, len(frames))
        if stall is not None and start < stall < stop:
            stop = stall
        at_ms.append(times[stop - 1])
        data.append(b"".join(frames[start:stop]))
        ends.append(stop)
        start = stop
    return at_ms, data, ends


def _split(times: list[float], data: list[bytes], gap_ms: float, rng: random.Random) -> tuple[list[float], list[bytes]]:
    """Cut each write in two: inside its first special token's text, else at a seeded byte."""
    out_times: list[float] = []
    out_data: list[bytes] = []
    for at, chunk in zip(times, data):
        if len(chunk) < 2:
            out_times.append(at)
            out_data.append(chunk)
            continue
        token = SPECIAL_TOKEN.search(chunk)
        cut = rng.randint(token.start() + 1, token.end() - 1) if token else rng.randint(1, len(chunk) - 1)
        at = max(at, out_times[-1]) if out_times else at
        out_times += (at, at + gap_ms)
        out_data += (chunk[:cut], chunk[cut:])
    return out_times, out_data


async def wait_until(start: float, at_ms: float, *, clock: Clock, sleep: Sleep = asyncio.sleep) -> None:
    """Sleep until ``start + at_ms / 1000`` on ``clock`` (seconds); return at once if that has passed."""
    delay = start + at_ms / 1000.0 - clock()
    if delay > 0:
        await sleep(delay)


async def _turn() -> None:
    """Let the event loop run what is ready before the next write of a stream that fell behind.

    A paced stream whose writes are overdue (the loop was busy: many streams, a big request)
    used to send them all in one go, never suspending, so nothing could tell it that its client
    had left: asyncio learns of a failed ``send`` inside the write and reports it to uvicorn only
    from a callback (``connection_lost``, ``loop.call_soon`` in CPython 3.11
    ``asyncio/selector_events.py`` ``_force_close``); every later write of the burst went to the
    dead transport, which logs ``socket.send() raised exception.`` from the fifth
    (``_SelectorSocketTransport.write``, ``LOG_THRESHOLD_FOR_CONNLOST_WRITES``), and a stream
    could reach its end before uvicorn (0.55 ``protocols/http/h11_impl.py``, ``httptools_impl.py``:
    ``connection_lost`` sets ``disconnected``) and Starlette's disconnect listener
    (``starlette/responses.py`` ``StreamingResponse.__call__``, ASGI spec 2.3 as uvicorn
    announces) could stop it (issue 9, twelfth-session breaker, finding 6: 200 streams dropped
    after 2 chunks gave 636 such lines). With one turn per late write, at most one write follows
    the failed one (and uvicorn drops it: ``send`` returns once ``disconnected``) before the
    listener cancels the stream, which is then logged as any dropped stream. vLLM stops a stream
    whose client left the same way: the same Starlette listener cancels its generator and
    ``AsyncLLM.generate`` aborts the request (vllm-project/vllm@v0.33.0:vllm/v1/engine/async_llm.py,
    ``except (asyncio.CancelledError, GeneratorExit)``). Writes due together (one time) still go
    out in one go; a write on time sleeps anyway.
    """
    await asyncio.sleep(0)


async def play(
    schedule: Schedule,
    start: float,
    *,
    clock: Clock,
    sleep: Sleep = asyncio.sleep,
    progress: list[int] | None = None,
    done: Callable[[], None] | None = None,
) -> AsyncIterator[bytes]:
    """Yield the schedule's writes at their times after ``start`` (a ``clock()`` reading, seconds).

    Deadlines are absolute, so sleeping late once does not delay every later write; a late write
    still waits for the event loop's next turn (:func:`_turn`: a client that left stops the stream
    at the first failed write).
    ``progress[0]`` is set to the number of writes the consumer took and came back for (sent,
    when the consumer sends each before asking for the next); ``done()`` runs once the last write
    was taken and ``end_ms`` has passed, before the generator ends (so before a response's
    closing message).

    Raises:
        StreamAborted: at ``end_ms`` when the schedule drops the connection.
    """
    if progress is None:
        progress = [0]
    previous = 0.0
    try:
        for progress[0], (at_ms, chunk) in enumerate(zip(schedule.times, schedule.data)):
            if at_ms > 0:  # wait_until, inlined: this runs once per frame
                delay = start + at_ms / 1000.0 - clock()
                if delay > 0:
                    await sleep(delay)
                elif at_ms != previous:
                    await _turn()  # late: the loop's turn first, as on time (see _turn)
                previous = at_ms
            yield chunk  # progress[0]: the writes taken before this one
        progress[0] = len(schedule.data)
        await end(schedule, start, clock=clock, sleep=sleep, done=done)
    finally:
        # A stream cancelled when its client left leaves this frame in a reference cycle (the
        # task's CancelledError -> traceback -> frames -> task) that only a full collection
        # frees: without the schedule it holds only a few small objects (issue 9 review, eighth
        # session, finding 4: 10 dropped paced streams kept 28 MB of frames).
        schedule = done = None  # type: ignore[assignment]


async def end(
    schedule: Schedule, start: float, *, clock: Clock, sleep: Sleep = asyncio.sleep, done: Callable[[], None] | None = None
) -> None:
    """After the last write was taken: wait for ``end_ms``, then drop the connection (raise
    :class:`StreamAborted`) or call ``done()``."""
    end_ms, drop = schedule.end_ms, schedule.drop
    schedule = None  # type: ignore[assignment]  # this frame may outlive the stream (see play)
    await wait_until(start, end_ms, clock=clock, sleep=sleep)
    if drop is not None:
        raise StreamAborted(f"mockoss: connection dropped: {drop}")
    if done is not None:
        done, call = None, done
        call()
