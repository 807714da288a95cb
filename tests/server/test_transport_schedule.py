"""build_schedule and play: exact schedules for given specs, with a fake clock (nothing really sleeps)."""

import asyncio
import itertools

import pytest

from mockoss.profiles.base import SSE_MEDIA_TYPE, Reply
from mockoss.scenario.transport import MAX_DELAY_MS, TransportSpec
from mockoss.server.transport import (
    Schedule,
    StreamAborted,
    Write,
    build_schedule,
    play,
)

FRAMES = tuple(f'data: {{"n":{i}}}\n\n'.encode() for i in range(6)) + (b"data: [DONE]\n\n",)
STREAM = Reply(200, SSE_MEDIA_TYPE, frames=FRAMES)
BODY = Reply(200, body=b'{"ok":true}')


def schedule(reply=STREAM, seed=0, index=0, tokens=0, **spec):
    return build_schedule(reply, TransportSpec(**spec), seed, index, tokens=tokens)


def frames_of(sched):
    return b"".join(w.data for w in sched.writes)


def test_unpaced_stream_is_written_64_frames_at_a_time_at_once():
    reply = Reply(200, SSE_MEDIA_TYPE, frames=tuple(b"data: x\n\n" for _ in range(100)))
    sched = schedule(reply)
    assert [(w.at_ms, len(w.data)) for w in sched.writes] == [(0.0, 64 * 9), (0.0, 36 * 9)]
    assert (sched.head_ms, sched.end_ms, sched.drop, sched.content_length) == (0.0, 0.0, None, None)


def test_ttft_alone_delays_the_first_write_and_keeps_batching():
    sched = schedule(ttft_ms=250)
    assert sched.writes == (Write(250.0, b"".join(FRAMES)),)
    assert sched.head_ms == 0.0 and sched.end_ms == 250.0


def test_paced_stream_writes_one_frame_per_token_interval_after_ttft():
    sched = schedule(ttft_ms=300, tokens_per_s=50)
    assert sched.writes == tuple(Write(300.0 + 20.0 * i, frame) for i, frame in enumerate(FRAMES))
    assert sched.end_ms == 420.0 and sched.drop is None


def test_frames_per_write_groups_frames_written_when_the_last_is_due():
    sched = schedule(tokens_per_s=100, frames_per_write=3)
    assert [(w.at_ms, w.data) for w in sched.writes] == [
        (20.0, b"".join(FRAMES[0:3])),
        (50.0, b"".join(FRAMES[3:6])),
        (60.0, FRAMES[6]),
    ]


def test_non_streamed_reply_waits_ttft_plus_tokens_over_rate_before_the_headers():
    sched = schedule(BODY, tokens=200, ttft_ms=300, tokens_per_s=50)
    assert sched == Schedule.of(4300.0, (Write(4300.0, BODY.body),), 4300.0, None, len(BODY.body))


def test_non_streamed_error_waits_ttft_only():
    error = Reply(429, body=b'{"error":{}}', headers=(("retry-after", "2"),))
    sched = schedule(error, tokens=0, ttft_ms=80, tokens_per_s=50)
    assert (sched.head_ms, sched.writes, sched.drop) == (80.0, (Write(80.0, error.body),), None)


def test_jitter_is_seeded_by_seed_and_request_index_and_bounded():
    spec = {"ttft_ms": 100, "tokens_per_s": 10, "jitter": 0.5}
    first = schedule(seed=7, index=3, **spec)
    assert first == schedule(seed=7, index=3, **spec)
    assert first != schedule(seed=7, index=4, **spec)
    assert first != schedule(seed=8, index=3, **spec)
    assert first != schedule(seed="7", index=3, **spec)
    times = [w.at_ms for w in first.writes]
    assert 50 <= times[0] <= 150
    assert all(50 <= b - a <= 150 for a, b in itertools.pairwise(times))
    assert len({b - a for a, b in itertools.pairwise(times)}) > 1


def test_disconnect_after_frames_drops_the_connection_after_them():
    sched = schedule(disconnect_after_frames=3)
    assert frames_of(sched) == b"".join(FRAMES[:3])
    assert sched.drop == "disconnect after 3 frames"
    assert frames_of(schedule(disconnect_after_frames=-2)) == b"".join(FRAMES[:5])
    assert schedule(disconnect_after_frames=0).writes == ()


def test_truncate_omits_the_last_frames_and_ends_cleanly():
    sched = schedule(truncate_after_frames=-1)
    assert frames_of(sched) == b"".join(FRAMES[:-1]) and sched.drop is None
    assert frames_of(schedule(truncate_after_frames=2)) == b"".join(FRAMES[:2])
    assert frames_of(schedule(truncate_after_frames=50)) == b"".join(FRAMES)


def test_a_tie_between_truncate_and_disconnect_is_a_disconnect():
    assert schedule(truncate_after_frames=3, disconnect_after_frames=3).drop == "disconnect after 3 frames"
    assert schedule(truncate_after_frames=2, disconnect_after_frames=3).drop is None


def test_reply_abort_drops_after_the_last_frame_unless_truncated_before():
    aborting = Reply(200, SSE_MEDIA_TYPE, frames=FRAMES[:3], abort="HarmonyError: unexpected token")
    assert schedule(aborting, tokens_per_s=100).drop == "HarmonyError: unexpected token"
    assert schedule(aborting, truncate_after_frames=2).drop is None


def test_malformed_frame_replaces_the_frame_at_its_position():
    sched = schedule(malformed_at_frame=2, tokens_per_s=1000)
    assert [w.data for w in sched.writes] == [*FRAMES[:2], b"data: {malformed json: <<<mockoss>>>\n\n", *FRAMES[3:]]
    last = schedule(malformed_at_frame=-1, malformed_text="data: oops\n\n", tokens_per_s=1000)
    assert last.writes[-1].data == b"data: oops\n\n"
    assert frames_of(schedule(malformed_at_frame=40)) == b"".join(FRAMES)
    assert b"malformed" not in frames_of(schedule(malformed_at_frame=5, truncate_after_frames=5))


def test_stall_inserts_a_pause_after_k_frames_and_flushes_them_first():
    sched = schedule(tokens_per_s=100, frames_per_write=4, stall_after_frames=2, stall_ms=500)
    assert [(w.at_ms, w.data) for w in sched.writes] == [
        (10.0, b"".join(FRAMES[0:2])),
        (550.0, b"".join(FRAMES[2:6])),
        (560.0, FRAMES[6]),
    ]
    assert sched.end_ms == 560.0 and sched.drop is None


def test_stall_after_the_last_frame_delays_the_end():
    sched = schedule(ttft_ms=10, stall_after_frames=7, stall_ms=300)
    assert frames_of(sched) == b"".join(FRAMES) and sched.end_ms == 310.0 and sched.drop is None


def test_stall_forever_writes_nothing_more_and_drops_at_the_maximum():
    sched = schedule(tokens_per_s=100, stall_after_frames=3)
    assert [w.at_ms for w in sched.writes] == [0.0, 10.0, 20.0]
    assert sched.end_ms == 20.0 + MAX_DELAY_MS
    assert sched.drop == "stalled after 3 frames for the 600000 ms maximum"


def test_disconnect_after_ms_keeps_what_was_due_by_then():
    sched = schedule(tokens_per_s=100, disconnect_after_ms=25)
    assert [w.data for w in sched.writes] == list(FRAMES[:3])
    assert (sched.end_ms, sched.drop) == (25.0, "disconnect after 25 ms")
    assert schedule(tokens_per_s=100, disconnect_after_ms=60).drop is None  # the stream is complete by then
    during_stall = schedule(ttft_ms=5, stall_after_frames=1, disconnect_after_ms=1000)
    assert (len(during_stall.writes), during_stall.end_ms, during_stall.drop) == (1, 1000.0, "disconnect after 1000 ms")


def test_split_special_cuts_inside_the_special_token_text():
    leaked = b'data: {"content":"x<|channel|>commentary"}\n\n'
    reply = Reply(200, SSE_MEDIA_TYPE, frames=(leaked, b"data: [DONE]\n\n"))
    sched = schedule(reply, tokens_per_s=1000, split_special=True)
    first, second = sched.writes[0], sched.writes[1]
    assert first.data + second.data == leaked
    token = leaked.index(b"<|channel|>")
    assert token < len(first.data) < token + len(b"<|channel|>")
    assert second.at_ms == first.at_ms + 1.0
    assert b"".join(w.data for w in sched.writes[2:]) == b"data: [DONE]\n\n"


def test_split_without_special_token_is_at_a_seeded_position():
    cuts = {index: len(schedule(index=index, split_special=True, split_gap_ms=0).writes[0].data) for index in range(8)}
    assert cuts == {index: len(schedule(index=index, split_special=True).writes[0].data) for index in range(8)}
    assert len(set(cuts.values())) > 1 and all(0 < cut < len(b"".join(FRAMES)) for cut in cuts.values())
    sched = schedule(split_special=True)
    assert frames_of(sched) == b"".join(FRAMES) and len(sched.writes) == 2


def test_split_keeps_write_times_non_decreasing():
    sched = schedule(tokens_per_s=2000, split_special=True, split_gap_ms=2)
    times = [w.at_ms for w in sched.writes]
    assert times == sorted(times) and len(times) == 2 * len(FRAMES)
    assert frames_of(sched) == b"".join(FRAMES)


def test_non_streamed_faults():
    assert schedule(BODY, ttft_ms=50, disconnect_after_frames=0) == Schedule.of(
        50.0, (), 50.0, "disconnect after 0 frames (before the body)", len(BODY.body)
    )
    early = schedule(BODY, ttft_ms=500, disconnect_after_ms=20)
    assert (early.head_ms, early.writes, early.drop) == (20.0, (), "disconnect after 20 ms (before the body)")
    assert schedule(BODY, ttft_ms=5, disconnect_after_ms=20).drop is None
    assert schedule(BODY, malformed_at_frame=0).writes[0].data == b"data: {malformed json: <<<mockoss>>>\n\n"
    # Stream-only settings leave a body alone.
    assert schedule(BODY, truncate_after_frames=0, stall_after_frames=0, split_special=True).writes == (
        Write(0.0, BODY.body),
    )


class FakeClock:
    """A clock that advances only when slept on; records every sleep."""

    def __init__(self, now=100.0):
        self.now, self.sleeps = now, []

    def __call__(self):
        return self.now

    async def sleep(self, seconds):
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


def run_play(sched, clock):
    async def collect():
        out = []
        async for data in play(sched, clock.now, clock=clock, sleep=clock.sleep):
            out.append((round((clock.now - 100.0) * 1000, 3), data))
        return out

    return asyncio.run(collect())


def test_play_writes_at_absolute_deadlines():
    clock = FakeClock()
    written = run_play(schedule(ttft_ms=300, tokens_per_s=50, truncate_after_frames=3), clock)
    assert written == [(300.0, FRAMES[0]), (320.0, FRAMES[1]), (340.0, FRAMES[2])]
    assert clock.sleeps == [0.3, 0.02, 0.02]


def test_play_does_not_sleep_for_deadlines_already_passed():
    clock = FakeClock()
    assert run_play(schedule(), clock) == [(0.0, b"".join(FRAMES))]
    assert clock.sleeps == []


def test_play_raises_stream_aborted_at_the_drop_time():
    clock = FakeClock()
    with pytest.raises(StreamAborted, match="connection dropped: disconnect after 25 ms"):
        run_play(schedule(tokens_per_s=100, disconnect_after_ms=25), clock)
    assert clock.sleeps == [0.01, 0.01, 0.005]
