"""The official openai SDK against `mockoss` (profile vllm): /v1/responses."""


import httpx
import openai
import pytest

MODEL = "openai/gpt-oss-20b"
#: The request from the vLLM pull request: tool text in the input, no tools declared.
LEAKY_INPUT = (
    'Use the time MCP server to call get_current_time for America/Los_Angeles. "tools": '
    '[ { "type": "mcp", "server_label": "time" } ], YOU MUST CALL THE MCP TOOL'
)
CALL_TEXT = '{"name":"get_current_time","arguments":{"timezone":"America/Los_Angeles"}}'
REASONING = "The user asks to call get_current_time on the time MCP server for America/Los_Angeles."


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


def _create(client, **extra):
    return client.responses.create(
        model=MODEL, input=LEAKY_INPUT, max_output_tokens=512, reasoning={"effort": "low"}, tool_choice="none", **extra
    )


def test_shipped_vllm_turns_an_invented_recipient_into_an_mcp_call(mockoss, client):
    mockoss.use("leaked-recipient-no-tools")
    response = _create(client)
    assert response.status == "completed"
    assert response.tools == []
    assert [item.type for item in response.output] == ["reasoning", "mcp_call"]
    reasoning, call = response.output
    assert reasoning.id.startswith("rs_")
    assert [part.text for part in reasoning.content] == [REASONING]
    assert (call.server_label, call.name, call.arguments) == ("tool", "mcp", CALL_TEXT)
    assert call.id.startswith("mcp_")


def test_with_the_fix_the_same_completion_is_an_assistant_message(mockoss, client):
    mockoss.use("leaked-recipient-no-tools")
    mockoss.switches(responses_ignore_recipients_without_tools=True)
    response = _create(client)
    assert [item.type for item in response.output] == ["reasoning", "message"]
    message = response.output[1]
    assert message.role == "assistant" and message.status == "completed"
    assert [(part.type, part.text) for part in message.content] == [("output_text", CALL_TEXT)]
    assert response.output_text == CALL_TEXT


def test_the_fix_keeps_tool_items_when_tools_are_declared(mockoss, client):
    mockoss.use("leaked-recipient-no-tools")
    mockoss.switches(responses_ignore_recipients_without_tools=True)
    response = client.responses.create(
        model=MODEL,
        input=LEAKY_INPUT,
        tools=[{"type": "mcp", "server_label": "time", "server_url": "http://127.0.0.1:1/mcp"}],
    )
    assert [item.type for item in response.output] == ["reasoning", "mcp_call"]


@pytest.mark.parametrize(
    ("switch", "kinds"),
    [(False, ["reasoning", "mcp_call"]), (True, ["reasoning", "message"])],
    ids=["shipped", "fixed"],
)
def test_streamed_items_match_the_non_streamed_ones(mockoss, client, switch, kinds):
    mockoss.use("leaked-recipient-no-tools")
    mockoss.switches(responses_ignore_recipients_without_tools=switch)
    events = list(_create(client, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[1].type == "response.in_progress"
    assert events[-1].type == "response.completed"
    done = [e.item.type for e in events if e.type == "response.output_item.done"]
    assert done == kinds
    assert [item.type for item in events[-1].response.output] == kinds
    types = {e.type for e in events}
    if switch:
        assert not any(t.startswith("response.mcp_call") for t in types)
        assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == CALL_TEXT
    else:
        assert "".join(e.delta for e in events if e.type == "response.mcp_call_arguments.delta") == CALL_TEXT
    assert "".join(e.delta for e in events if e.type == "response.reasoning_text.delta") == REASONING


def test_clean_answer(mockoss, client):
    mockoss.use("clean-answer")
    response = client.responses.create(model=MODEL, input="What is 2 + 2?")
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.output_text == "2 + 2 = 4."
    completion = mockoss.server.scenario.steps[0].completion
    assert response.usage.output_tokens == len(completion.tokens)
    assert response.usage.input_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens


def test_clean_function_call(mockoss, client):
    mockoss.use("clean-tool-call")
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
    response = client.responses.create(model=MODEL, input="Weather in SF?", tools=tools)
    assert [item.type for item in response.output] == ["reasoning", "function_call"]
    call = response.output[1]
    assert call.name == "get_weather"
    assert call.arguments == '{"location":"San Francisco"}'
    assert call.call_id.startswith("call_") and call.id.startswith("fc_")
    follow_up = client.responses.create(
        model=MODEL,
        input=[
            {"role": "user", "content": "Weather in SF?"},
            {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": '{"sunny": true}'},
        ],
        tools=tools,
    )
    assert follow_up.output_text == "It is sunny in San Francisco at 20 °C."


def test_clean_function_call_streamed(mockoss, client):
    mockoss.use("clean-tool-call")
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
    events = list(client.responses.create(model=MODEL, input="Weather in SF?", tools=tools, stream=True))
    arguments = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert arguments == '{"location":"San Francisco"}'
    (done,) = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert done.arguments == arguments


def test_malformed_header_drops_the_message_like_vllm_0_32(mockoss, client):
    """vLLM 0.32/0.33 skip the tokens the parser rejects (HarmonyParser.process_chunk,
    vllm-project/vllm@v0.32.0:vllm/parser/harmony.py): 200, the reasoning item only."""
    mockoss.use("malformed-header-duplicate-recipient")
    assert [item.type for item in client.responses.create(model=MODEL, input="hi").output] == ["reasoning"]


def test_malformed_header_is_a_500(mockoss, client):
    mockoss.use("malformed-header-duplicate-recipient")
    mockoss.switches(harmony_errors="raise")  # releases that surfaced the HarmonyError
    with pytest.raises(openai.InternalServerError) as info:
        client.responses.create(model=MODEL, input="hi")
    assert info.value.body["message"] == 'unexpected tokens remaining in message header: Some("to=functions.x")'


async def test_async_client_responses_stream(mockoss):
    mockoss.use("clean-answer")
    async with openai.AsyncOpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        response = await client.responses.create(model=MODEL, input="2+2?")
        assert response.output_text == "2 + 2 = 4."
        stream = await client.responses.create(model=MODEL, input="2+2?", stream=True)
        text = "".join([e.delta async for e in stream if e.type == "response.output_text.delta"])
        assert text == "2 + 2 = 4."


def test_harmony_error_mid_stream_drops_the_connection_after_the_events_so_far(mockoss, client):
    # vLLM's responses_stream_generator only catches GenerationError: a HarmonyError escapes after
    # HTTP 200, so the client gets the events so far and a truncated body, no error event.
    mockoss.use("malformed-header-duplicate-recipient")
    mockoss.switches(harmony_errors="raise")
    seen = []
    with pytest.raises((openai.APIConnectionError, httpx.RemoteProtocolError)):
        for event in client.responses.create(model=MODEL, input="hi", stream=True):
            seen.append(event.type)
    assert seen[:2] == ["response.created", "response.in_progress"]
    assert seen[-1] == "response.output_item.done"
    assert "response.completed" not in seen and "error" not in seen
    assert mockoss.requests[-1].status == 200


def test_harmony_error_mid_stream_as_an_error_event_with_the_switch(mockoss, client):
    mockoss.use("malformed-header-duplicate-recipient")
    mockoss.switches(responses_stream_error="error_event", harmony_errors="raise")
    events = list(client.responses.create(model=MODEL, input="hi", stream=True))
    # The SDK yields an OpenAI `error` event for Responses streams rather than raising.
    assert events[-1].type == "error"
    assert events[-1].message == 'unexpected tokens remaining in message header: Some("to=functions.x")'
    assert events[-1].sequence_number == len(events) - 1
