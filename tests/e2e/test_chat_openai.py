"""The official openai SDK against `mockoss` (profile vllm): /v1/chat/completions, every shipped scenario."""

import re

import openai
import pytest

MODEL = "openai/gpt-oss-20b"
USER = [{"role": "user", "content": "List the files."}]
TERMINAL = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "description": "Run a shell command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    }
]
#: hermes-agent's leak detector (agent/codex_responses_adapter.py _TOOL_CALL_LEAK_PATTERN).
LEAK = re.compile(r"(?:^|[\s>|])to=functions\.[A-Za-z_][\w.]*")


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


def _collect(stream):
    """Fold a chat stream into (role, reasoning, content, tool_calls, finish_reason, usage, chunks)."""
    role, reasoning, content, calls, finish, usage, chunks = None, "", "", {}, None, None, []
    for chunk in stream:
        chunks.append(chunk)
        usage = chunk.usage or usage
        for choice in chunk.choices:
            delta = choice.delta
            role = delta.role or role
            reasoning += getattr(delta, "reasoning", None) or ""
            content += delta.content or ""
            for call in delta.tool_calls or ():
                entry = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                entry["id"] = call.id or entry["id"]
                if call.function:
                    entry["name"] += call.function.name or ""
                    entry["arguments"] += call.function.arguments or ""
            finish = choice.finish_reason or finish
    return role, reasoning, content, [calls[i] for i in sorted(calls)], finish, usage, chunks


def test_clean_answer(mockoss, client):
    mockoss.use("clean-answer")
    reply = client.chat.completions.create(model=MODEL, messages=USER)
    message = reply.choices[0].message
    assert message.role == "assistant"
    assert message.content == "2 + 2 = 4."
    assert message.reasoning == "User asks: What is 2 + 2? Simple arithmetic. Provide answer."
    assert not message.tool_calls
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == MODEL
    assert reply.id.startswith("chatcmpl-")
    completion_tokens = len(mockoss.server.scenario.steps[0].completion.tokens)
    assert reply.usage.completion_tokens == completion_tokens
    assert reply.usage.prompt_tokens > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + completion_tokens


def test_clean_answer_streamed_one_chunk_per_content_token(mockoss, client):
    mockoss.use("clean-answer")
    stream = client.chat.completions.create(
        model=MODEL, messages=USER, stream=True, stream_options={"include_usage": True}
    )
    role, reasoning, content, calls, finish, usage, chunks = _collect(stream)
    assert role == "assistant"
    assert reasoning == "User asks: What is 2 + 2? Simple arithmetic. Provide answer."
    assert content == "2 + 2 = 4."
    assert calls == [] and finish == "stop"
    completion = mockoss.server.scenario.steps[0].completion
    assert usage.completion_tokens == len(completion.tokens)
    assert len({chunk.id for chunk in chunks}) == 1
    content_chunks = [c for c in chunks if c.choices and c.choices[0].delta.content]
    trace = completion.trace()
    final_deltas = [s.delta for s in trace.steps if s.delta and s.channel == "final"]
    assert [c.choices[0].delta.content for c in content_chunks] == final_deltas


def test_clean_tool_call_then_answer(mockoss, client):
    mockoss.use("clean-tool-call")
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.reasoning == "Need to use function get_weather."
    (call,) = choice.message.tool_calls
    assert call.type == "function"
    assert call.id.startswith("chatcmpl-tool-")
    assert call.function.name == "get_weather"
    # Non-streamed, vLLM re-serialises the arguments: json.dumps(json.loads(text)).
    assert call.function.arguments == '{"location": "San Francisco"}'
    assert not choice.message.content

    follow_up = USER + [
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": '{"sunny": true, "temperature": 20}'},
    ]
    answer = client.chat.completions.create(model=MODEL, messages=follow_up, tools=WEATHER)
    assert answer.choices[0].message.content == "It is sunny in San Francisco at 20 °C."
    assert answer.choices[0].finish_reason == "stop"
    assert [r.step for r in mockoss.requests] == [0, 1]
    assert mockoss.requests[1].messages[-1]["role"] == "tool"


def test_clean_tool_call_streamed_arguments(mockoss, client):
    mockoss.use("clean-tool-call")
    stream = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER, stream=True)
    _, reasoning, content, calls, finish, _, _ = _collect(stream)
    assert reasoning == "Need to use function get_weather."
    assert content == ""
    assert finish == "tool_calls"
    assert len(calls) == 1 and calls[0]["name"] == "get_weather"
    assert calls[0]["id"].startswith("chatcmpl-tool-")
    # Streamed, the argument deltas are the model's raw text.
    assert calls[0]["arguments"] == '{"location":"San Francisco"}'


LEAKS = [
    'to=functions.terminal {"command":"ls"}',
    'assistant to=functions.terminal {"command":"ls"}',
    '<|channel|>commentary to=functions.terminal {"command":"ls"}',
]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_tool_call_leaked_as_text_each_form_then_a_real_call(mockoss, client, stream):
    mockoss.use("tool-call-leaked-as-text")
    for leak in LEAKS:
        if stream:
            _, reasoning, content, calls, finish, _, _ = _collect(
                client.chat.completions.create(model=MODEL, messages=USER, tools=TERMINAL, stream=True)
            )
        else:
            message = client.chat.completions.create(model=MODEL, messages=USER, tools=TERMINAL).choices[0]
            content, calls, finish, reasoning = (
                message.message.content,
                message.message.tool_calls or [],
                message.finish_reason,
                message.message.reasoning,
            )
        assert content == leak
        assert calls == []
        assert finish == "stop"
        assert reasoning == "Need to list files. Use terminal."
        assert LEAK.search(content)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=TERMINAL)
    (call,) = reply.choices[0].message.tool_calls
    assert call.function.name == "terminal"
    assert call.function.arguments == '{"command": "ls"}'
    assert reply.choices[0].finish_reason == "tool_calls"


def _agent_turn(client, messages, max_leaks=3):
    """A re-prompt loop like hermes-agent PR #84231: discard a leaked call, nudge, at most 3 times."""
    for _ in range(max_leaks + 1):
        message = client.chat.completions.create(model=MODEL, messages=messages, tools=TERMINAL).choices[0].message
        if message.tool_calls:
            return message.tool_calls
        if not LEAK.search(message.content or ""):
            return message.content
        messages = messages + [{"role": "user", "content": "Emit the tool call as a structured tool call."}]
    return "gave up"


def test_reprompt_loop_recovers_after_three_leaks(mockoss, client):
    mockoss.use("tool-call-leaked-as-text")
    calls = _agent_turn(client, USER)
    assert [c.function.name for c in calls] == ["terminal"]
    assert len(mockoss.requests) == 4
    assert [len(r.messages) for r in mockoss.requests] == [1, 2, 3, 4]


def test_reprompt_loop_gives_up_when_the_model_keeps_leaking(mockoss, client):
    mockoss.use({"steps": [{"completion": {"messages": [{"channel": "final", "content": LEAKS[0]}]}}]})
    assert _agent_turn(client, USER) == "gave up"
    assert len(mockoss.requests) == 4


def test_malformed_header_drops_the_message_with_http_200_like_vllm_0_32(mockoss, client):
    """vLLM 0.32/0.33 ``HarmonyParser.process_chunk`` skips the tokens that raise
    (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py): the client gets HTTP 200, reasoning only."""
    mockoss.use("malformed-header-duplicate-recipient")
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=TERMINAL)
    assert reply.choices[0].message.tool_calls is None and reply.choices[0].finish_reason == "stop"


def test_malformed_header_is_a_500_with_the_exact_harmony_error(mockoss, client):
    mockoss.use("malformed-header-duplicate-recipient")
    mockoss.switches(harmony_errors="raise")  # releases that surfaced the HarmonyError (vllm#51977)
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(model=MODEL, messages=USER, tools=TERMINAL)
    assert info.value.status_code == 500
    assert info.value.body == {
        "message": 'unexpected tokens remaining in message header: Some("to=functions.x")',
        "type": "InternalServerError",
        "param": None,
        "code": 500,
    }


def test_malformed_header_is_a_400_with_the_older_status_switch(mockoss, client):
    mockoss.use("malformed-header-duplicate-recipient")
    mockoss.switches(harmony_error_status=400, harmony_errors="raise")
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model=MODEL, messages=USER)
    assert info.value.body["message"] == 'unexpected tokens remaining in message header: Some("to=functions.x")'
    assert info.value.body["type"] == "BadRequestError"


def test_malformed_header_in_a_stream_is_an_error_chunk_after_http_200(mockoss, client):
    mockoss.use("malformed-header-duplicate-recipient")
    mockoss.switches(harmony_errors="raise")  # releases that surfaced the HarmonyError (vllm#46464)
    with client.chat.completions.with_streaming_response.create(model=MODEL, messages=USER, stream=True) as raw:
        assert raw.status_code == 200
        frames = raw.read().decode().split("\n\n")
    assert frames[-3:] == [
        (
            'data: {"error": {"message": "unexpected tokens remaining in message header: Some(\\"to=functions.x\\")", '
            '"type": "InternalServerError", "param": null, "code": 500}}'
        ),
        "data: [DONE]",
        "",
    ]
    mockoss.server.reset()
    stream = client.chat.completions.create(model=MODEL, messages=USER, stream=True)
    with pytest.raises(openai.APIError, match=re.escape('Some("to=functions.x")')):
        _collect(stream)


async def test_async_client_chat(mockoss):
    mockoss.use("clean-answer")
    async with openai.AsyncOpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        reply = await client.chat.completions.create(model=MODEL, messages=USER)
        assert reply.choices[0].message.content == "2 + 2 = 4."
        stream = await client.chat.completions.create(model=MODEL, messages=USER, stream=True)
        content = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
        assert content == "2 + 2 = 4."
