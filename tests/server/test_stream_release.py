"""What a stream holds, and for how long: issue 9 review, eighth session, findings 4 and 5.

Finding 4: a paced stream copied its reply's frames and kept a float per frame for as long as it
lasted (up to 600 s), and a stream cancelled because its client left stayed in a reference cycle
(anyio's cancelled task, its traceback's frames) that only a full garbage collection frees, which
``mockoss serve`` makes rare. Finding 5: a client that reads nothing kept its whole reply in the
server for as long as its connection stayed open; there was no write deadline.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import tracemalloc
from types import SimpleNamespace
from typing import Any

import pytest

from mockoss.profiles.base import SSE_MEDIA_TYPE, Reply
from mockoss.profiles.sse import SseEvents
from mockoss.scenario.transport import TransportSpec
from mockoss.server.connection import timed_protocol
from mockoss.server.responses import to_response, to_scheduled_response
from mockoss.server.transport import Delivery, build_schedule

FRAMES = SseEvents(f'data: {{"n":{i}}}\n\n'.encode() for i in range(5_000))
STREAM = Reply(200, SSE_MEDIA_TYPE, frames=FRAMES)


def test_a_paced_schedule_keeps_the_replys_frames_and_no_per_frame_list():
    """Issue 9 review, eighth session, finding 4: one frame per send, the schedule is the reply's
    own frames and times computed as they are read (the old one: a copied tuple and a tuple of
    5,000 floats, ~40 KB each)."""
    sched = build_schedule(STREAM, TransportSpec(tokens_per_s=5, ttft_ms=10), 0, 0)
    assert sched.data is FRAMES
    assert sys.getsizeof(sched.times) < 1024
    assert list(sched.times)[:3] == [10.0, 210.0, 410.0] and len(sched.times) == len(FRAMES)
    assert sched.separators is not None and sched.separators[4_000] == 4_000


@pytest.mark.parametrize(
    "spec",
    [
        {"truncate_after_frames": 1_000},
        {"malformed_at_frame": 3},
        {"disconnect_after_ms": 300_000},
        {"stall_after_frames": 5, "stall_ms": 100},
    ],
)
def test_a_cut_or_malformed_paced_schedule_is_a_view_of_the_frames(spec):
    """Issue 9 review, eighth session, finding 4: faults cut or replace frames without copying them."""
    sched = build_schedule(STREAM, TransportSpec(tokens_per_s=5, **spec), 0, 0)
    assert (sched.data is FRAMES or sys.getsizeof(sched.data) < 1024) and sys.getsizeof(sched.times) < 1024
    writes = sched.writes
    assert len(writes) == len(sched.data) == len(sched.times)
    if "malformed_at_frame" in spec:
        assert writes[3].data.startswith(b"data: {malformed") and writes[4].data == FRAMES[4]
    else:
        assert [w.data for w in writes] == list(FRAMES[: len(writes)])


@pytest.mark.parametrize(
    "spec",
    [
        {"tokens_per_s": 5},
        {"ttft_ms": 10},
        {"ttft_ms": 10, "jitter": 0.5},
        {"tokens_per_s": 5, "malformed_at_frame": 7},
    ],
)
def test_a_schedule_keeps_nothing_per_frame(spec):
    """Issue 9 review, eighth session, finding 4: what a schedule keeps beside the reply is a few
    objects, not a copy of its frames (paced) or of their bytes joined (unpaced), nor a time per
    frame. Measured as the bytes still allocated by ``build_schedule`` while the schedule lives
    (before: ~200 KB for these 5,000 frames of ~17 bytes, paced; ~90 KB unpaced)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sched = build_schedule(STREAM, TransportSpec(**spec), 0, 0)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 4_096
    assert b"".join(sched.data) == b"".join(w.data for w in sched.writes)
    if "malformed_at_frame" not in spec:
        assert b"".join(sched.data) == b"".join(FRAMES)


def _held_by_garbage(targets: set[int]) -> set[int]:
    """The ``targets`` ids among what a collection finds unreachable (kept with ``DEBUG_SAVEALL``)
    and what those objects refer to directly (untracked objects such as bytes, or tuples of them,
    are never in that list themselves)."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = {id(item) for item in gc.garbage} & targets
        stack = [referent for item in gc.garbage for referent in gc.get_referents(item)]
        seen: set[int] = set()
        while stack:  # through tuples and lists (a schedule's writes), not modules or functions
            item = stack.pop()
            if id(item) in targets:
                found.add(id(item))
            elif type(item) in (tuple, list) and id(item) not in seen:
                seen.add(id(item))
                stack.extend(item)
        return found
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


#: The frames of the stream a client leaves; a module global, so that only the response refers to them.
FRAMES_300 = SseEvents(f'data: {{"n":{i}}}\n\n'.encode() for i in range(300))


def _drop_mid_stream(paced: bool) -> None:
    """Serve a streamed response over ASGI (spec 2.3, as uvicorn announces) to a client that takes
    three writes, then stops reading and leaves (Starlette cancels the stream)."""

    async def main() -> None:
        left = asyncio.Event()
        taken = 0

        async def receive() -> dict[str, Any]:
            await left.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal taken
            if message["type"] == "http.response.body":
                taken += 1
                if taken >= 3:
                    left.set()
                    await asyncio.Event().wait()  # the client reads nothing more

        reply = Reply(200, SSE_MEDIA_TYPE, frames=FRAMES_300)
        if paced:
            response = to_scheduled_response(reply, Delivery(TransportSpec(tokens_per_s=1_000), 0, 0))
        else:
            response = to_response(reply)
        del reply
        await response({"type": "http", "asgi": {"spec_version": "2.3"}}, receive, send)

    asyncio.run(main())


@pytest.mark.parametrize("paced", [True, False])
def test_a_stream_whose_client_left_keeps_its_frames_out_of_reference_cycles(paced):
    """Issue 9 review, eighth session, finding 4: nothing the collector has to find holds the frames
    of a cancelled stream (before: the schedule's copy of 11,003 frames per dropped stream)."""
    targets = {id(FRAMES_300), *map(id, FRAMES_300)}
    gc.collect()
    gc.disable()
    try:
        _drop_mid_stream(paced)
        held = _held_by_garbage(targets)
        # At most the write being sent when the client left (Starlette's loop variable).
        assert id(FRAMES_300) not in held and len(held) <= 1
    finally:
        gc.enable()


class _Transport:
    """A transport whose write buffer the test sets."""

    def __init__(self) -> None:
        self.buffered, self.closing, self.aborted = 0, False, False

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data: bytes) -> None:
        self.buffered += len(data)

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = self.aborted = True


class _Base:
    """The part of uvicorn's protocol :func:`timed_protocol` builds on."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.paused = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False

    def connection_lost(self, exc: Exception | None) -> None:
        pass


def _connected(timeout_s: float) -> tuple[Any, _Transport]:
    protocol = timed_protocol(_Base, timeout_s)()
    transport = _Transport()
    protocol.connection_made(transport)
    protocol.cycle = SimpleNamespace(response_complete=False)  # answering a request (the head deadline waits)
    return protocol, transport


def test_a_client_that_takes_no_bytes_for_the_request_timeout_is_disconnected():
    """Issue 9 review, eighth session, finding 5: writing paused (the buffer over its high-water
    mark) and nothing taken for ``request_timeout_s``: the connection is aborted, which tells the
    app the client left, so that its stream ends and lets go of its reply."""

    async def main() -> None:
        protocol, transport = _connected(0.05)
        transport.buffered = 100_000
        protocol.pause_writing()
        await asyncio.sleep(0.12)
        assert transport.aborted

    asyncio.run(main())


def test_a_slow_reader_that_takes_bytes_is_not_disconnected():
    """Issue 9 review, eighth session, finding 5: the deadline measures the client's not reading,
    not our pacing nor a slow reader: bytes taken start a new period."""

    async def main() -> None:
        protocol, transport = _connected(0.1)
        transport.buffered = 100_000
        protocol.pause_writing()
        for _ in range(6):
            await asyncio.sleep(0.05)
            transport.buffered -= 1_000  # the client reads a little
        assert not transport.aborted
        protocol.resume_writing()
        await asyncio.sleep(0.25)  # no longer paused: nothing waits for the client
        assert not transport.aborted

    asyncio.run(main())


def test_a_closed_connection_whose_bytes_wait_for_a_client_that_reads_nothing_is_aborted():
    """Issue 9 review, eighth session, finding 5: a close (keep-alive or head deadline) waits for
    the buffer to drain, for ever if the client never reads; it is aborted after the timeout."""

    async def main() -> None:
        protocol, transport = _connected(0.05)
        protocol.transport.write(b"x" * 10_000)
        protocol.transport.close()
        await asyncio.sleep(0.12)
        assert transport.aborted

    asyncio.run(main())


def test_closed_connections_leave_no_reference_cycle():
    """The write deadline's hook on the transport refers to the protocol; once the connection is
    lost it is dropped, so a connection is freed by reference counting, as before the hook
    (issue 9 review, eighth session, finding 5)."""
    import json
    import socket
    import time

    from mockoss.server.core import MockServer
    from mockoss.server.run import ThreadedServer

    served = ThreadedServer(MockServer("clean-answer")).start()
    try:
        host, port = served.url.removeprefix("http://").rsplit(":", 1)
        body = json.dumps(
            {"model": "openai/gpt-oss-20b", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        ).encode()
        request = (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)
        )

        def exchange() -> None:
            with socket.create_connection((host, int(port)), timeout=10) as sock:
                sock.sendall(request)
                while sock.recv(65536):
                    pass

        exchange()
        gc.collect()
        gc.disable()
        try:
            for _ in range(3):
                exchange()
            connections = served._uvicorn.server_state.connections
            for _ in range(500):  # the server thread sees the connections lost after the client does
                if not connections:
                    break
                time.sleep(0.01)
            time.sleep(0.05)  # and finishes connection_lost
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            protocols = [item for item in gc.garbage if type(item).__name__.startswith("Timed")]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
        assert protocols == []
    finally:
        served.stop()
