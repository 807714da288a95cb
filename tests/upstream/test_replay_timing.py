"""Stream timing kept in recordings (`frame_times_ms`) and replayed through the transport pacing:
recorded from a paced upstream, derived into ttft_ms + tokens_per_s, the schedule checked without
timing anything (no timed tests: lower bounds on what was recorded, exact numbers on the plan)."""

from __future__ import annotations

import re

import pytest
import yaml
from upstream_helpers import stopped, stream_bytes

from mockoss.profiles.base import Reply
from mockoss.scenario.loader import ScenarioError, load_scenario, scenario_from_data
from mockoss.scenario.replay import ReplaySpec, frame_times, replay_data, replay_transport
from mockoss.server.core import MockServer
from mockoss.server.transport import build_schedule
from mockoss.steps import final, script
from mockoss.upstream import Recorder
from mockoss.upstream.config import Upstream

CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Count"}], "stream": True}


def test_frame_times_follow_the_network_chunks():
    chunks = [b"data: 1\n\nda", b"ta: 2\n\n", b"data: 3\n\ndata: 4\n\n"]
    frames = [b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n", b"data: 4\n\n"]
    # a frame is complete when the chunk holding its last byte arrived
    assert frame_times(chunks, [5.04, 12.0, 30.0], frames) == [5.0, 12.0, 30.0, 30.0]
    data = replay_data(200, "text/event-stream", chunks, chunk_times_ms=[5.04, 12.0, 30.0])
    assert data["frames"] == [f.decode() for f in frames] and data["frame_times_ms"] == [5.0, 12.0, 30.0, 30.0]
    body = replay_data(200, "application/json", [b'{"a":', b"1}"], chunk_times_ms=[3.0, 7.25])
    assert body["body"] == '{"a":1}' and body["frame_times_ms"] == [7.2]


def test_recorded_timing_becomes_the_replay_pacing_and_the_schedule_reproduces_it():
    spec = ReplaySpec(status=200, content_type="text/event-stream", frames=["a\n\n", "b\n\n", "c\n\n", "d\n\n"],
                      frame_times_ms=[120.0, 150.0, 200.0, 270.0])
    transport = replay_transport(spec)
    assert transport is not None and transport.ttft_ms == 120.0 and transport.tokens_per_s == pytest.approx(20.0)
    reply = Reply(200, "text/event-stream", frames=(b"a\n\n", b"b\n\n", b"c\n\n", b"d\n\n"))
    first = build_schedule(reply, transport, 0, 0)
    times = [w.at_ms for w in first.writes]
    assert times[0] == 120.0 and times[-1] == pytest.approx(270.0) and times == pytest.approx([120, 170, 220, 270])
    assert build_schedule(reply, transport, 0, 5) == first  # no jitter: the same plan every time
    assert replay_transport(ReplaySpec(status=200, body="{}")) is None


def test_a_step_transport_replaces_the_recorded_timing():
    replay = {"status": 200, "content_type": "text/event-stream", "frames": ["a\n\n", "b\n\n"], "frame_times_ms": [10, 40]}
    recorded, own = scenario_from_data(
        {"steps": [{"replay": replay}, {"replay": replay, "transport": {}}]}, name="t", default_version=True
    ).steps
    assert (recorded.transport.ttft_ms, recorded.transport.tokens_per_s) == (10, pytest.approx(1000 / 30))
    assert own.transport is not None and not own.transport.paced and own.transport.ttft_ms == 0


@pytest.mark.parametrize(
    ("times", "problem"),
    [([1.0], "'frame_times_ms' has 1 values for 2 frame(s)"), ([5.0, 4.0], "non-decreasing"), ([0.0, 700000.0], "non-decreasing")],
)
def test_bad_frame_times_are_refused(tmp_path, times, problem):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "steps": [{"replay": {
        "status": 200, "content_type": "text/event-stream", "frames": ["a\n\n", "b\n\n"], "frame_times_ms": times}}]}))
    with pytest.raises(ScenarioError, match=re.escape(problem)):
        load_scenario(path)


def test_a_paced_upstream_is_recorded_with_its_timing_and_replays_paced(serve, http, tmp_path):
    upstream = serve(MockServer(scenario=script(final("one two three four five six")), transport={"ttft_ms": 150, "tokens_per_s": 40}))
    recorder = Recorder(tmp_path, "timed")
    with stopped(serve(MockServer(upstream=Upstream(upstream.url), recorder=recorder))) as proxy:
        first = stream_bytes(http, proxy.url, "/v1/chat/completions", CHAT)
    (step,) = yaml.safe_load((tmp_path / "timed.yaml").read_text())["steps"]
    times = step["replay"]["frame_times_ms"]
    count = len(step["replay"]["frames"])
    assert len(times) == count > 3 and times == sorted(times)
    # the upstream wrote frame i no earlier than 150 + i * 25 ms after it was asked
    assert times[0] >= 150 and times[-1] >= 150 + (count - 1) * 25
    pacing = load_scenario(tmp_path / "timed.yaml").steps[0].transport
    assert pacing.ttft_ms == times[0] and pacing.tokens_per_s == pytest.approx((count - 1) * 1000 / (times[-1] - times[0]))
    replay = serve(MockServer(scenario=str(tmp_path / "timed.yaml")))
    assert stream_bytes(http, replay.url, "/v1/chat/completions", CHAT) == first  # same bytes, paced as recorded
