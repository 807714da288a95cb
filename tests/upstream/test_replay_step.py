"""The `replay:` step form: validation, exact bytes through YAML, and what a server answers with it."""

import json

import pytest
import yaml

from mockoss.scenario.loader import ScenarioError, load_scenario, scenario_from_data
from mockoss.scenario.replay import replay_data, split_frames
from mockoss.server.core import MockServer
from mockoss.upstream.record import _dump, _exact

TRICKY = "a\u2028b\u2029c\x85d\r\ne\rf\tg  \n  h\ufeffi \U0001f600 \"quoted\" 'single' \\back {{ not a template }} # hash: colon - dash\n\n"


@pytest.mark.parametrize(
    ("replay", "problem"),
    [
        ({"status": 200}, "give exactly one of 'body', 'body_base64' or 'frames'"),
        ({"status": 200, "body": "{}", "frames": ["x"]}, "give exactly one of 'body', 'body_base64' or 'frames'"),
        ({"status": 200, "body_base64": "***"}, "'body_base64' is not valid base64"),
        ({"status": 200, "body": "{}", "headers": {"Content-Type": "text/plain"}}, "give the Content-Type as 'content_type', not in 'headers'"),
        ({"status": 99, "body": "{}"}, "status: Input should be greater than or equal to 200"),
    ],
)
def test_bad_replay_steps_are_refused_with_the_reason(tmp_path, replay, problem):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "steps": [{"replay": replay}]}))
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert problem in str(info.value) and str(info.value).startswith(f"{path}:")


def test_a_replay_step_takes_no_other_answer():
    with pytest.raises(ScenarioError, match="give exactly one of 'completion', 'error', 'pick' or 'replay'"):
        scenario_from_data({"steps": [{"replay": {"status": 200, "body": "{}"}, "error": {"status": 500}}]}, name="x", default_version=True)


@pytest.mark.parametrize("content_type", ["text/event-stream; charset=utf-8", "application/x-ndjson", "application/json", "text/plain"])
def test_bytes_survive_yaml_exactly(tmp_path, content_type):
    frames = [f"data: {json.dumps({'t': TRICKY})}\n\n".encode(), TRICKY.encode() + b"\n\n", b"tail without end"]
    data = b"".join(frames)
    step = replay_data(200, content_type, data, {"Retry-After": "2", "content-type": "ignored"})
    assert step["headers"] == {"retry-after": "2"}
    path = tmp_path / "exact.yaml"
    path.write_text("version: 1\nsteps:\n" + _dump([_exact({"replay": step})]), encoding="utf-8")
    reply = load_scenario(path).steps[0].replay
    assert reply.body + b"".join(reply.frames) == data
    assert reply.status == 200 and reply.headers == (("retry-after", "2"),)


def test_bodies_that_are_not_utf8_are_stored_as_base64(tmp_path):
    data = b"\xff\xfe binary \x00"
    step = replay_data(200, "application/octet-stream", data)
    assert list(step) == ["status", "content_type", "body_base64"]
    reply = scenario_from_data({"steps": [{"replay": step}]}, name="b", default_version=True).steps[0].replay
    assert reply.frames == (data,)


def test_streams_are_cut_into_events_whatever_the_network_chunks():
    assert split_frames("text/event-stream", b"data: 1\n\ndata: 2\r\n\r\nevent: x\ndata: 3\n\npartial") == [
        b"data: 1\n\n", b"data: 2\r\n\r\n", b"event: x\ndata: 3\n\n", b"partial"]
    assert split_frames("application/x-ndjson", b'{"a":1}\n{"b":2}\n') == [b'{"a":1}\n', b'{"b":2}\n']
    assert split_frames("application/json", b"{}") == [b"{}"]


def test_the_server_answers_the_recorded_bytes_as_is():
    server = MockServer(
        scenario=scenario_from_data(
            {"steps": [
                {"replay": {"status": 503, "headers": {"retry-after": "9"}, "body": '{"error":"busy"}'}},
                {"replay": {"status": 200, "content_type": "text/event-stream", "frames": ["data: 1\n\n", "data: 2\n\n"], "abort": "dropped"}},
            ]},
            name="r",
            default_version=True,
        )
    )
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    first = server.handle("chat", body, {})
    assert (first.status, first.body, first.headers, first.media_type) == (503, b'{"error":"busy"}', (("retry-after", "9"),), "application/json")
    second = server.handle("responses", json.dumps({"input": "hi"}).encode(), {})
    assert (second.frames, second.abort) == ((b"data: 1\n\n", b"data: 2\n\n"), "dropped")
    assert [r.step for r in server.requests] == [0, 1]
