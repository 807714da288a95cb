"""``malformed_at_frame`` naming no frame of the reply is a 400 in the profile's error shape, not a
clean 200 without the fault (t18 breaker report, finding 10: ``X-Mockoss-Transport:
malformed_at_frame=99999``, or ``-100``, on a shorter stream passed a typo'd test).
Positions stay 0..n-1 or -n..-1 (README, "Frame positions can be negative, counted from the end";
mockoss/scenario/transport.py ``TransportSpec.frame_problem``); the frame count is known only once
the reply is built, so the check is made then (mockoss/server/core.py).
"""

from __future__ import annotations

import json

import pytest

from mockoss.scenario.transport import TransportSpec
from mockoss.server.core import MockServer

CHAT = {"messages": [{"role": "user", "content": "Hi"}]}
STEP = {"completion": {"messages": [{"channel": "final", "content": "Hello there."}]}}


def _respond(server: MockServer, header: str | None, stream: bool = True):
    headers = [("x-mockoss-transport", header)] if header is not None else []
    body = {**CHAT, "model": server.served_model_names[0], "stream": stream}
    return server.respond("chat", json.dumps(body).encode(), headers)


def _frames(profile: str = "vllm") -> int:
    reply, _ = _respond(MockServer(scenario={"steps": [STEP]}, profile=profile), None)
    return len(reply.frames)


@pytest.mark.parametrize("position", [99999, -100])
def test_a_header_position_outside_the_stream_is_a_400_naming_the_range(position):
    server = MockServer(scenario={"steps": [STEP]})
    frames = _frames()
    reply, delivery = _respond(server, f"malformed_at_frame={position}")
    assert reply.status == 400 and delivery is None
    message = json.loads(reply.body)["error"]["message"]
    assert message == (
        f"mockoss: transport malformed_at_frame={position} names no frame of this reply (a stream of {frames} "
        f"frames: 0 to {frames - 1}, or {-frames} to -1), so the fault would not happen; fix the position "
        "(X-Mockoss-Transport, the step's transport: or the server's)"
    )
    assert server.requests[-1].status == 400


@pytest.mark.parametrize("edge", ["first", "last", "minus-first", "minus-last"])
def test_positions_at_the_edges_still_replace_a_frame(edge):
    server = MockServer(scenario={"steps": [STEP]})
    frames = _frames()
    position = {"first": 0, "last": frames - 1, "minus-first": -frames, "minus-last": -1}[edge]
    reply, delivery = _respond(server, f"malformed_at_frame={position}")
    assert reply.status == 200 and delivery is not None and delivery.spec.malformed_at_frame == position


def test_a_step_transport_past_the_end_is_the_same_400():
    server = MockServer(scenario={"steps": [{**STEP, "transport": {"malformed_at_frame": 5000}}]})
    reply, _ = _respond(server, None)
    assert reply.status == 400
    assert "malformed_at_frame=5000 names no frame of this reply" in json.loads(reply.body)["error"]["message"]


def test_a_non_streamed_reply_is_one_frame():
    server = MockServer(scenario={"steps": [STEP, STEP]})
    assert _respond(server, "malformed_at_frame=0", stream=False)[0].status == 200
    reply, _ = _respond(server, "malformed_at_frame=1", stream=False)
    assert reply.status == 400
    assert "(a non-streamed reply, one frame: 0 or -1)" in json.loads(reply.body)["error"]["message"]


def test_the_400_is_in_the_profile_error_shape():
    server = MockServer(scenario={"steps": [STEP]}, profile="ollama")
    reply, _ = _respond(server, "malformed_at_frame=99999")
    assert reply.status == 400 and set(json.loads(reply.body)) == {"error"}


def test_an_error_reply_is_left_alone():
    server = MockServer(scenario={"steps": [{"error": {"status": 503, "message": "busy"}}]})
    reply, _ = _respond(server, "malformed_at_frame=7")
    assert reply.status == 503


def test_frame_problem():
    spec = TransportSpec(malformed_at_frame=3)
    assert spec.frame_problem(4, True) is None
    assert "a stream of 3 frames: 0 to 2, or -3 to -1" in spec.frame_problem(3, True)
    assert TransportSpec().frame_problem(0, True) is None


@pytest.mark.parametrize(
    ("profile", "endpoint", "body", "shape"),
    [
        ("ollama", "chat", {**CHAT, "stream": True}, lambda e: e["error"]["message"]),  # /v1: OpenAI's shape
        ("ollama", "ollama.chat", {**CHAT, "stream": True}, lambda e: e["error"]),  # /api/chat: Ollama's own
        ("sglang", "responses", {"input": "Hi", "stream": True}, lambda e: e["error"]["message"]),
    ],
)
def test_the_400_takes_the_endpoints_error_shape(profile, endpoint, body, shape):
    """The endpoint's scope of the profile answers (``_for_endpoint``, as ``failure_reply`` does):
    Ollama's /v1 routes the OpenAI shape, not /api's ``{"error": "…"}``; SGLang's Responses its
    own, not the chat route's ``{"object": "error", …}`` (final review, session 18)."""
    server = MockServer(scenario={"steps": [STEP]}, profile=profile)
    raw = json.dumps({**body, "model": server.served_model_names[0]}).encode()
    reply, _ = server.respond(endpoint, raw, [("x-mockoss-transport", "malformed_at_frame=99999")])
    assert reply.status == 400
    error = json.loads(reply.body)
    assert shape(error).startswith("mockoss: transport malformed_at_frame=99999"), error
    assert "object" not in error
