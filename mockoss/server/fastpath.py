"""The short path of a scripted generation request: one ASGI callable instead of five layers.

A ``POST`` to a generation endpoint is the request mockoss answers most, and for a short reply the
HTTP glue around :meth:`MockServer.respond` used to cost more CPU than the answer itself: the
control plane's guard and log middleware wrapping every ``send``, the limits middleware's
``asyncio.timeout`` around every ``receive``, the off-loop gate, the recording hold, a Starlette
``Response`` and Starlette's error middleware (``benchmarks/bench_http.py``, "Where the time goes"
in ``benchmarks/README.md``). :class:`GenerationPath` does the same work in one place for the
common case and hands everything else, untouched, to the layered app it was built from:

* handled here: a ``Content-Length`` body within the limit that arrives in one piece (the body of
  a short request comes with its head), a valid or absent test id, no recorder, nothing being
  answered off the event loop, a body below the off-loop threshold, without a long unbroken
  run of text and, for a batch of prompts, with few items (:func:`mockoss.server.offload.is_heavy`);
* handed over (``fallback``, the same guard, limits, gate and durable layers as every other
  route): chunked or multi-part bodies, a body above the limit (413) or late (408), an invalid
  test id (400), big bodies and everything while one is in flight (:class:`mockoss.server.offload.Gate`),
  ``--record`` (:mod:`mockoss.server.durable`).

What a request gets is the same on both paths, byte for byte: status, headers (as Starlette's
``Response`` builds them), body, the request log entry and the metrics
(``tests/server/test_fastpath.py`` compares them).
"""

from __future__ import annotations

import asyncio
import time
from itertools import repeat
from typing import TYPE_CHECKING, Any

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mockoss.profiles.base import Reply
from mockoss.profiles.sse import is_sse_events
from mockoss.server.control import _TEST_ID, TEST_ID_HEADER, frame_separator, header_map
from mockoss.server.limits import BODY_DEADLINE
from mockoss.server.offload import is_heavy, wanted_off_loop
from mockoss.server.records import REQUEST_RECORDS
from mockoss.server.responses import to_response, to_scheduled_response
from mockoss.server.transport import Delivery, Schedule

if TYPE_CHECKING:
    from mockoss.server.control import ControlPlane
    from mockoss.server.offload import Gate

__all__ = ["GenerationPath", "plain_head"]


def plain_head(reply: Reply) -> list[tuple[bytes, bytes]]:
    """The raw headers Starlette's ``Response(reply.body, status, headers, media_type)`` sends for
    a non-streamed ``reply`` (``starlette/responses.py`` ``Response.init_headers``): the reply's
    headers lower-cased, then ``content-length`` and ``content-type`` unless given, a ``text/*``
    type with ``; charset=utf-8`` appended."""
    raw = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in dict(reply.headers).items()] if reply.headers else []
    given = {name for name, _ in raw} if raw else ()
    status = reply.status
    if b"content-length" not in given and not (status < 200 or status in (204, 304)):
        raw.append((b"content-length", str(len(reply.body)).encode("latin-1")))
    media = reply.media_type
    if media is not None and b"content-type" not in given:
        pair = _CONTENT_TYPES.get(media)
        if pair is None:
            pair = (b"content-type", (media + "; charset=utf-8" if media.startswith("text/") and "charset=" not in media.lower() else media).encode("latin-1"))
            if len(_CONTENT_TYPES) < 64 and len(media) <= 128:
                _CONTENT_TYPES[media] = pair
        raw.append(pair)
    return raw


#: The ``content-type`` header pair of a media type (a profile uses a handful): at most 64.
_CONTENT_TYPES: dict[str, tuple[bytes, bytes]] = {}


class GenerationPath:
    """ASGI app answering scripted generation ``POST``\\ s (see the module docstring).

    ``fallback``: the layered app (guard and log, limits, gate, durable) that answers whatever
    this path does not; ``names``: route path → endpoint name (``/v1/chat/completions`` →
    ``"chat"``); ``request_timeout_s``: the body deadline (``None``: none).
    """

    def __init__(
        self, fallback: ASGIApp, plane: ControlPlane, gate: Gate, names: dict[str, str], request_timeout_s: float | None
    ) -> None:
        self.fallback, self.plane, self.gate, self.names, self.timeout = fallback, plane, gate, names, request_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path.startswith("/s/") or self.gate.busy:
            await self.fallback(scope, receive, send)  # the prefix rewrite, or a big request in flight
            return
        headers = header_map(scope)
        test_id = headers.get(TEST_ID_HEADER)
        length = headers.get("content-length")
        # The test id's session (its server and log epoch), looked up once.
        session = self.plane.session(test_id) if test_id is None or _TEST_ID.fullmatch(test_id) else None
        target = session.server if session is not None else None
        limit = target.max_body_bytes if target is not None else None
        if (
            target is None
            or target.recorder is not None
            or length is None
            or not length.isdigit()
            or int(length) >= self.gate.offload_bytes
            or (limit is not None and int(length) > limit)
        ):
            await self.fallback(scope, receive, send)
            return
        began = time.perf_counter()
        epoch = session.epoch  # type: ignore[union-attr]  # target is not None, nor is session
        message = await self._first(receive, scope)
        name, raw = self.names[path], message.get("body", b"")
        if (
            message.get("more_body", False)
            or message["type"] != "http.request"
            or is_heavy(name, raw, self.gate.offload_bytes)
            or wanted_off_loop(target, name, raw, headers)
        ):
            # A long run, a big batch, the first request of a shape on a long scripted answer
            # (mockoss.server.warmup): off the loop (offload).
            await self.fallback(scope, _replay(message, receive), send)
            return
        # The usual reply (a whole body at once) is answered here, with no inner function: a
        # closure made every variable it reads a cell and cost three function objects a request
        # (~1.3 us in all, timeit); a stream is handed to _stream, which keeps them. With the
        # header blocks (mockoss.server.request_headers), this path around a stubbed respond():
        # 10.4 -> 7.7 us a new short chat turn (in process, old and new alternated, min of 5).
        records: list[Any] = []
        token = REQUEST_RECORDS.set(records)
        status, started, logged = 500, False, False
        try:
            reply, delivery = target.respond(name, raw, headers)
            status = reply.status
            if delivery is None and not reply.streamed:
                started = True
                await send({"type": "http.response.start", "status": status, "headers": plain_head(reply)})
                logged = True  # before the last byte leaves, as the guard logs (mockoss.server.control)
                self.plane.log(scope, records[-1] if records else None, status, 0, time.perf_counter() - began, epoch, headers)
                await send({"type": "http.response.body", "body": reply.body})
                return
            started = logged = True  # from here the stream answers errors and logs (_stream)
            await self._stream(scope, receive, send, reply, delivery, records, began, epoch)
        except Exception:
            if not started:
                status = await _answer_unexpected(scope, receive, send)
            raise
        finally:
            REQUEST_RECORDS.reset(token)
            if not logged:  # a request that ended without its last body message (an error, a disconnect)
                self.plane.log(scope, records[-1] if records else None, status, 0, time.perf_counter() - began, epoch)

    async def _stream(
        self, scope: Scope, receive: Receive, send: Send, reply: Reply, delivery: Delivery | None, records: list[Any], began: float, epoch: int
    ) -> None:
        """Send a streamed or paced ``reply`` and log the request once, when its last body message
        is sent or the stream ends otherwise (errors answered as :meth:`__call__` answers them)."""
        status, frames, started, logged = reply.status, 0, False, False

        def finish() -> None:
            nonlocal logged
            if not logged:
                logged = True
                self.plane.log(scope, records[-1] if records else None, status, frames, time.perf_counter() - began, epoch)

        try:
            separator = frame_separator(reply.media_type)
            if delivery is not None:  # a paced stream: counted by play(), no wrapper around each send
                sent = [0]

                def ended() -> None:
                    nonlocal frames
                    if separator is not None:
                        frames = _count(schedule, sent[0], separator)
                    finish()

                scheduled = to_scheduled_response(reply, delivery, progress=sent, done=ended)
                schedule = scheduled.schedule  # type: ignore[attr-defined]
                started = True  # from here an error is uvicorn's to answer (its own 500 if nothing was sent)
                try:
                    await scheduled(scope, receive, send)
                finally:
                    if not logged and separator is not None:  # dropped, aborted or failed part-way
                        frames = _count(schedule, sent[0], separator)
                    # ``ended`` shares this cell and may be kept by a cancelled stream's frames
                    # (mockoss.server.responses._Released): the reply's frames go with it now.
                    schedule = scheduled = None
                return
            # SseEvents frames: the separators sent are the frames sent (mockoss.profiles.sse), no
            # scan of the bytes (0.9 ms of a 2,000-token stream, measured); else counted per write.
            taken = [0] if separator == b"\n\n" and is_sse_events(reply.frames) else None
            response = to_response(reply, taken=taken)

            async def counted(message: Message) -> None:
                nonlocal frames, started
                if message["type"] == "http.response.body":
                    if taken is not None:
                        frames = taken[0]
                    elif separator is not None:
                        frames += message.get("body", b"").count(separator)
                    if not message.get("more_body", False):
                        finish()
                else:
                    started = True
                await send(message)

            await response(scope, receive, counted)
        except Exception:
            if not started:
                status = await _answer_unexpected(scope, receive, send)
            raise
        finally:
            finish()  # a request that ended without its last body message (an error, a disconnect)

    async def _first(self, receive: Receive, scope: Scope) -> Message:
        """The first body message; if it has not arrived by the deadline, a stand-in (an empty
        part of a body still coming) that sends the request down the layered path, whose limits
        answer 408 at once: the deadline is passed on in ``scope["state"]``."""
        if self.timeout is None or getattr(getattr(receive, "__self__", None), "more_body", True) is False:
            # No deadline, or uvicorn has the whole body already (its request cycle's
            # ``more_body`` is false once the message is complete): receive() cannot wait.
            return await receive()
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        deadline = loop.time() + self.timeout
        fired: list[bool] = []

        def expire() -> None:
            fired.append(True)
            task.cancel()

        timer = loop.call_at(deadline, expire)
        try:
            return await receive()
        except asyncio.CancelledError:
            if fired and task.uncancel() == 0:
                scope.setdefault("state", {})[BODY_DEADLINE] = deadline
                return {"type": "http.request", "body": b"", "more_body": True}
            raise
        finally:
            timer.cancel()


async def _answer_unexpected(scope: Scope, receive: Receive, send: Send) -> int:
    """Answer an unexpected error before the response started as Starlette's
    ``ServerErrorMiddleware`` does (its plain-text 500; the layered path's answer to the same
    error); the status, for the request log."""
    await PlainTextResponse("Internal Server Error", status_code=500)(scope, receive, send)
    return 500


def _count(schedule: Schedule, sent: int, separator: bytes) -> int:
    """Separators in the data of the schedule's first ``sent`` writes.

    An SSE stream whose writes are whole :class:`~mockoss.profiles.sse.SseEvents` frames knows
    the count without reading the bytes (:attr:`Schedule.separators`; 1 ms less CPU for a
    2,000-token stream, measured); any other is counted in C."""
    if schedule.separators is not None and separator == b"\n\n":
        return schedule.separators[sent]
    return sum(map(bytes.count, schedule.data[:sent], repeat(separator)))


def _replay(first: Message, receive: Receive) -> Receive:
    """``receive`` that answers ``first`` once before the rest."""
    pending = [first]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay
