"""``Schedule.separators``: the SSE separators in the first k writes of a schedule, known without
reading the bytes when the reply's frames are :class:`~mockoss.profiles.sse.SseEvents`, equal for
every k to counting them in the bytes (what ``mockoss.server.fastpath._count`` did for every
stream), under every transport fault and grouping."""

from __future__ import annotations

import pytest

from mockoss.profiles.base import SSE_MEDIA_TYPE, Reply
from mockoss.profiles.sse import SseEvents
from mockoss.scenario.transport import TransportSpec
from mockoss.server.fastpath import _count
from mockoss.server.transport import build_schedule

FRAMES = tuple(f'data: {{"n":{i},"text":"<|channel|>x"}}\n\n'.encode() for i in range(20)) + (b"data: [DONE]\n\n",)
EVENTS = Reply(200, SSE_MEDIA_TYPE, frames=SseEvents(FRAMES))
ABORTED = Reply(200, SSE_MEDIA_TYPE, frames=SseEvents(FRAMES[:-1]), abort="boom")
PLAIN = Reply(200, SSE_MEDIA_TYPE, frames=FRAMES)

#: (spec, whether the writes are whole unchanged frames, so the count is known)
SPECS = [
    ({}, True),
    ({"frames_per_write": 1}, True),
    ({"frames_per_write": 3}, True),
    ({"tokens_per_s": 100}, True),
    ({"tokens_per_s": 100, "ttft_ms": 50, "jitter": 0.5}, True),
    ({"tokens_per_s": 100, "frames_per_write": 4}, True),
    ({"truncate_after_frames": 5}, True),
    ({"truncate_after_frames": -3, "frames_per_write": 1}, True),
    ({"disconnect_after_frames": 7, "frames_per_write": 2}, True),
    ({"disconnect_after_frames": 0}, True),
    ({"disconnect_after_ms": 35, "tokens_per_s": 100}, True),
    ({"disconnect_after_ms": 0, "frames_per_write": 1}, True),
    ({"stall_after_frames": 4, "stall_ms": 100, "tokens_per_s": 100}, True),
    ({"stall_after_frames": 5, "stall_ms": 100, "frames_per_write": 3}, True),
    ({"stall_after_frames": 6, "stall_ms": "forever", "frames_per_write": 1}, True),
    ({"stall_after_frames": 2, "stall_ms": 50, "disconnect_after_ms": 30, "tokens_per_s": 100}, True),
    ({"malformed_at_frame": 2, "frames_per_write": 1}, False),
    ({"malformed_at_frame": 2, "malformed_text": "a\n\nb\n\n\n\n"}, False),
    ({"malformed_at_frame": -1, "truncate_after_frames": 3}, True),  # the replaced frame was cut: none replaced
    ({"split_special": True}, False),
    ({"split_special": True, "frames_per_write": 1, "tokens_per_s": 100}, False),
]


def _bytes_count(schedule, k: int) -> int:
    return sum(data.count(b"\n\n") for data in schedule.data[:k])


@pytest.mark.parametrize(("spec", "known"), SPECS)
@pytest.mark.parametrize("reply", [EVENTS, ABORTED, PLAIN], ids=["events", "aborted", "plain"])
def test_the_known_count_equals_the_count_of_the_bytes_for_every_prefix(spec, known, reply):
    for index in range(3):  # jitter and split positions depend on the request index
        schedule = build_schedule(reply, TransportSpec(**spec), 7, index)
        assert (schedule.separators is not None) == (known and reply is not PLAIN)
        if schedule.separators is not None:
            assert len(schedule.separators) == len(schedule.data) + 1
        for k in range(len(schedule.data) + 1):
            assert _count(schedule, k, b"\n\n") == _bytes_count(schedule, k), (spec, k)
        # NDJSON's separator is never taken from the SSE count.
        assert _count(schedule, len(schedule.data), b"\n") == sum(d.count(b"\n") for d in schedule.data)


def test_a_non_streamed_body_has_no_known_count():
    schedule = build_schedule(Reply(200, body=b"{}\n\n"), TransportSpec(), 0, 0)
    assert schedule.separators is None and _count(schedule, 1, b"\n\n") == 1
