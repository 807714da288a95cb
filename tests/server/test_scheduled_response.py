"""Responses (``mockoss.server.responses``): the scheduled response sends a schedule whose writes
are all due at once from its own loop; what the ASGI ``send`` sees (messages, their order, the
progress counter at each send, when ``done()`` runs, the drop) is what Starlette's loop over
:func:`mockoss.server.transport.play` gives. An unscheduled stream reports the frames handed to
``send`` so far, which for :class:`~mockoss.profiles.sse.SseEvents` is the separators sent."""

from __future__ import annotations

import asyncio

import pytest
from starlette.responses import StreamingResponse

from mockoss.profiles.base import SSE_MEDIA_TYPE, Reply
from mockoss.profiles.sse import SseEvents
from mockoss.scenario.transport import TransportSpec
from mockoss.server.responses import to_response, to_scheduled_response
from mockoss.server.transport import Delivery, StreamAborted

FRAMES = SseEvents(f'data: {{"n":{i}}}\n\n'.encode() for i in range(150))
SPECS = [
    {},
    {"frames_per_write": 1},
    {"frames_per_write": 1, "ttft_ms": 5},
    {"ttft_ms": 5, "truncate_after_frames": 70},
    {"frames_per_write": 1, "disconnect_after_frames": 3},
    {"disconnect_after_frames": 0},
    {"frames_per_write": 7, "malformed_at_frame": 4, "stall_after_frames": 140, "stall_ms": 3},
    {"frames_per_write": 1, "tokens_per_s": 2000},  # paced: play() on both sides
]


def _run(spec: dict, generic: bool, abort: str | None = None, reply: Reply | None = None) -> list:
    """The messages sent, each with ``progress[0]`` when it was sent, and where ``done()`` ran."""

    async def main() -> list:
        seen: list = []
        progress = [0]
        response = to_scheduled_response(
            reply or Reply(200, SSE_MEDIA_TYPE, frames=FRAMES, abort=abort),
            Delivery(TransportSpec(**spec), 3, 0, 4),
            progress=progress,
            done=lambda: seen.append("done"),
        )

        async def send(message: dict) -> None:
            seen.append((progress[0], message))

        try:
            if generic:  # Starlette's own loop over the play() generator
                await StreamingResponse.stream_response(response, send)
            else:
                await response.stream_response(send)
        except StreamAborted as error:
            seen.append(str(error))
        seen.append(progress[0])
        return seen

    return asyncio.run(main())


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("abort", [None, "crash"])
def test_the_at_once_loop_sends_what_play_gives(spec, abort):
    ours = _run(spec, generic=False, abort=abort)
    assert ours == _run(spec, generic=True, abort=abort)
    assert ours[0][1]["type"] == "http.response.start" and len(ours) > 2


@pytest.mark.parametrize("spec", [{}, {"ttft_ms": 5, "tokens_per_s": 1000}, {"ttft_ms": 20, "disconnect_after_ms": 5}])
def test_a_paced_body_is_sent_as_play_gives_it(spec):
    body = Reply(200, body=b'{"ok":true}')
    assert _run(spec, generic=False, reply=body) == _run(spec, generic=True, reply=body)


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 150])
@pytest.mark.parametrize("abort", [None, "crash"])
def test_an_unscheduled_stream_reports_the_frames_handed_to_send(count, abort):
    taken = [0]
    response = to_response(Reply(200, SSE_MEDIA_TYPE, frames=FRAMES[:count], abort=abort), taken=taken)
    seen: list = []
    separators = 0

    async def send(message: dict) -> None:
        nonlocal separators
        separators += message.get("body", b"").count(b"\n\n")
        seen.append((taken[0], separators))

    async def receive() -> dict:
        await asyncio.sleep(10)
        return {"type": "http.disconnect"}

    scope = {"type": "http", "asgi": {"spec_version": "2.4"}}
    try:
        asyncio.run(response(scope, receive, send))
    except StreamAborted:
        assert abort is not None
    assert [taken for taken, _ in seen] == [separators for _, separators in seen]
    assert seen[-1][1] == count and len(seen) == (1 if abort else 2) + (count + 63) // 64  # start, writes, end
