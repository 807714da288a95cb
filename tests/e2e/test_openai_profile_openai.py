"""The official openai SDK against ``MockServer(profile="openai")``: the expected values a gate test
compares a real server's output with."""

from __future__ import annotations

import pytest

MODEL = "openai/gpt-oss-20b"
USER = [{"role": "user", "content": "Weather?"}]


# The suite's own pytest plugin serves these tests (one session server, reset per test).
pytestmark = pytest.mark.mockoss(profile="openai")


def test_malformed_header_is_content_not_a_500(server, client):
    server.server.use_scenario("malformed-header-duplicate-recipient")
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=[{"type": "function", "function": {"name": "x"}}])
    message = reply.choices[0].message
    assert message.content.startswith("<|start|>assistant<|channel|>commentary to=functions.x to=functions.x json")
    assert message.model_extra["reasoning"] == "Need to call x." and message.tool_calls is None
    chunks = list(client.chat.completions.create(model=MODEL, messages=USER, stream=True))
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_no_tools_responses_give_a_message(server, client):
    server.server.use_scenario("leaked-recipient-no-tools")
    response = client.responses.create(model=MODEL, input="call the time tool", tool_choice="none")
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.output_text == '{"name":"get_current_time","arguments":{"timezone":"America/Los_Angeles"}}'


def test_clean_tool_call_then_answer(server, client):
    server.server.use_scenario("clean-tool-call")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    call = client.chat.completions.create(model=MODEL, messages=USER, tools=tools).choices[0].message.tool_calls[0]
    assert call.id.startswith("call_") and (call.function.name, call.function.arguments) == ("get_weather", '{"location": "San Francisco"}')
    with client.chat.completions.stream(model=MODEL, messages=USER, tools=tools) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].message.content == "It is sunny in San Francisco at 20 °C."
