"""The official openai SDK against ``MockServer(profile="lmstudio")`` over HTTP."""

from __future__ import annotations

import httpx
import openai
import pytest

from mockoss.scenario.loader import scenario_from_data

MODEL = "openai/gpt-oss-20b"
USER = [{"role": "user", "content": "Weather in Paris?"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


# The suite's own pytest plugin serves these tests (one session server, reset per test).
pytestmark = pytest.mark.mockoss(profile="lmstudio")


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="lm-studio", max_retries=0) as client:
        yield client


def test_clean_answer_has_reasoning_and_an_empty_tool_calls_list(server, client):
    server.server.use_scenario("clean-answer")
    message = client.chat.completions.create(model=MODEL, messages=USER).choices[0].message
    assert message.content == "2 + 2 = 4."
    assert message.model_extra["reasoning"] == "User asks: What is 2 + 2? Simple arithmetic. Provide answer."
    assert message.tool_calls == []


def test_malformed_tool_call_is_silently_omitted(server, client):
    server.server.use_scenario("malformed-header-duplicate-recipient")
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=[{"type": "function", "function": {"name": "x"}}])
    assert reply.choices[0].message.tool_calls == [] and reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.model_extra["reasoning"] == "Need to call x."


def test_streamed_tool_call_and_reasoning_content_switch(server, client):
    server.server.use_scenario("clean-tool-call")
    calls, reasoning = [], ""
    with client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER, stream=True) as stream:
        for chunk in stream:
            delta = chunk.choices[0].delta
            reasoning += delta.model_extra.get("reasoning") or ""
            calls += [(c.function.name, c.function.arguments) for c in delta.tool_calls or ()]
    assert (reasoning, calls) == ("Need to use function get_weather.", [("get_weather", '{"location":"San Francisco"}')])
    server.server.set_switches({"reasoning_field": "reasoning_content"})
    message = client.chat.completions.create(model=MODEL, messages=USER).choices[0].message
    assert message.model_extra["reasoning_content"] == "The tool says it is sunny and 20 degrees."


def test_responses_and_identity(server, client):
    server.server.use_scenario(scenario_from_data({"steps": [{"completion": {"raw": "<|channel|>final<|message|>Hi!<|return|>"}}]}, name="lms", default_version=True))
    response = client.responses.create(model=MODEL, input="Hello")
    assert (response.output_text, response.status) == ("Hi!", "completed")
    assert [m.id for m in client.models.list()] == [MODEL]
    with httpx.Client(base_url=server.url, timeout=10) as http:
        unknown = http.get("/props")
        assert (unknown.status_code, unknown.json()) == (200, {"error": "Unexpected endpoint or method. (GET /props)"})
        assert http.get("/api/v0/models").json()["data"][0]["state"] == "loaded"
