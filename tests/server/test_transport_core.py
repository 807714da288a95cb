"""MockServer.respond: which transport applies to which reply (server default, step, header)."""

import json

import pytest

from mockoss.scenario.loader import scenario_from_data
from mockoss.scenario.transport import TransportError, TransportSpec
from mockoss.server.core import MockServer
from mockoss.server.transport import Delivery

MODEL = "openai/gpt-oss-20b"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
FINAL = {"messages": [{"channel": "final", "content": "Hello there, friend."}]}


def body(**extra):
    return json.dumps({**CHAT, **extra}).encode()


def server(steps, **options):
    scenario = scenario_from_data({"steps": steps, "when_exhausted": "error"}, name="t", default_version=True)
    return MockServer(scenario=scenario, seed=5, **options)


def test_no_transport_anywhere_means_no_delivery():
    reply, delivery = server([{"completion": FINAL}]).respond("chat", body(), {})
    assert reply.status == 200 and delivery is None


def test_step_transport_gives_a_delivery_seeded_by_server_seed_and_index():
    mock = server([{"completion": FINAL}, {"completion": FINAL, "transport": {"ttft_ms": 300}}])
    assert mock.respond("chat", body(), {})[1] is None
    reply, delivery = mock.respond("chat", body(), {})
    tokens = len(mock.scenario.steps[1].completion.tokens)
    assert delivery == Delivery(TransportSpec(ttft_ms=300), 5, 1, tokens)
    assert reply.status == 200


def test_non_streamed_pacing_counts_the_tokens_the_request_lets_the_engine_emit():
    mock = server([{"completion": FINAL, "transport": {"tokens_per_s": 10}}] * 2)
    assert mock.respond("chat", body(max_tokens=3), {})[1].tokens == 3
    assert mock.respond("chat", body(max_completion_tokens=4, max_tokens=9), {})[1].tokens == 4


def test_header_overrides_step_which_overrides_server_default():
    mock = server(
        [{"completion": FINAL, "transport": {"tokens_per_s": 20, "truncate_after_frames": -1}}],
        transport={"ttft_ms": 300, "tokens_per_s": 50},
    )
    _, delivery = mock.respond("chat", body(), {"x-mockoss-transport": "tokens_per_s=100"})
    spec = delivery.spec
    assert (spec.ttft_ms, spec.tokens_per_s, spec.truncate_after_frames) == (300.0, 100.0, -1)


def test_invalid_header_is_a_400_that_consumes_no_step():
    mock = server([{"completion": FINAL}])
    reply, delivery = mock.respond("chat", body(), {"x-mockoss-transport": "ttft_ms=soon"})
    assert (reply.status, delivery) == (400, None)
    error = json.loads(reply.body)["error"]
    assert error["message"] == (
        "mockoss: X-Mockoss-Transport: ttft_ms: Input should be a valid number, "
        "unable to parse string as a number (got 'soon')"
    )
    assert error["type"] == "BadRequestError" and error["code"] == 400
    assert mock.respond("chat", body(), {})[0].status == 200
    assert [r.step for r in mock.requests] == [None, 0]


def test_validation_errors_are_never_delayed():
    mock = server([{"completion": FINAL}], transport={"ttft_ms": 300})
    reply, delivery = mock.respond("chat", json.dumps({"model": MODEL}).encode(), {"x-mockoss-transport": "ttft_ms=5"})
    assert (reply.status, delivery) == (400, None)


def test_scripted_errors_and_the_exhausted_error_take_the_transport():
    mock = server(
        [{"error": {"status": 429, "retry_after": 2}, "transport": {"ttft_ms": 80}}], transport={"jitter": 0.1}
    )
    reply, delivery = mock.respond("chat", body(), {})
    assert reply.status == 429 and dict(reply.headers)["retry-after"] == "2"
    assert (delivery.spec.ttft_ms, delivery.spec.jitter, delivery.tokens) == (80.0, 0.1, 0)
    reply, delivery = mock.respond("chat", body(), {})
    assert reply.status == 500 and delivery.spec == TransportSpec(jitter=0.1)


def test_handle_still_returns_the_reply_alone():
    mock = server([{"completion": FINAL, "transport": {"ttft_ms": 1}}])
    assert mock.handle("chat", body(), {}).status == 200


def test_server_transport_is_validated_at_construction_and_on_assignment():
    with pytest.raises(TransportError, match=r"^MockServer\(transport=…\): ttft: unknown field"):
        server([{"completion": FINAL}], transport={"ttft": 3})
    mock = server([{"completion": FINAL}])
    mock.transport = {"ttft_ms": 7}
    assert mock.respond("chat", body(), {})[1].spec == TransportSpec(ttft_ms=7)
