"""Exact-output tests for the ollama profile's OpenAI-compatible endpoints: ``/v1/chat/completions``
and ``/v1/responses`` (ollama/ollama@fb307609 middleware/openai.go, openai/openai.go,
openai/responses.go)."""

from __future__ import annotations

import json

import pytest
from ollama_support import ANSWER, BAD_ARGS, BAD_ARGS_ONLY, BAD_ERROR, TOOL  # tests/profiles is on sys.path
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, IdSource, Reply, RequestContext, ResponsesRequestView
from mockoss.profiles.ollama import OllamaProfile
from mockoss.profiles.ollama.ids import rand_int, tool_call_id
from mockoss.profiles.ollama.openai_chat import _deltas
from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"
CREATED = 1_750_000_000

_ids = IdSource(0, 0)
CHAT_ID = f"chatcmpl-{rand_int(_ids, 999)}"
CHAT_CALL = tool_call_id(_ids)
_ids = IdSource(0, 0)
RESP_ID, MSG_ID = f"resp_{rand_int(_ids, 999999)}", f"msg_{rand_int(_ids, 999999)}"
RESP_CALL = tool_call_id(_ids)
WEATHER = [{"type": "function", "function": {"name": "get-weather", "parameters": {"type": "object"}}}]
HEAD = f'data: {{"id":"{CHAT_ID}","object":"chat.completion.chunk","created":{CREATED},"model":"gpt-oss:20b","system_fingerprint":"fp_ollama","choices":['
ARGS = '"{\\"city\\":\\"\\\\u003cParis\\\\u003e\\"}"'  # the Go JSON of the arguments, as a JSON string


def ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=CREATED, prompt_tokens=100)


def chat(
    completion: Completion, profile: OllamaProfile | None = None, *, stream: bool = False, **body: object
) -> Reply:
    view = ChatRequestView(model=MODEL, stream=stream, include_usage=bool(body.pop("include_usage", False)), body=body)
    return (profile or OllamaProfile()).surface("chat", completion, view, ctx())


def responses(completion: Completion, *, stream: bool = False, **body: object) -> Reply:
    view = ResponsesRequestView(model=MODEL, stream=stream, body=body)
    return OllamaProfile().surface("responses", completion, view, ctx())


def frames(reply: Reply) -> list[str]:
    assert (reply.status, reply.media_type) == (200, "text/event-stream")
    assert ("content-type", "text/event-stream") in reply.headers
    return [frame.decode() for frame in reply.frames]


# --------------------------------------------------------------------------- chat completions


def test_chat_stream_reasoning_field_role_first_finish_chunk_and_done():
    assert frames(chat(ANSWER, stream=True)) == [
        HEAD + '{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Hi"},"finish_reason":null}]}\n\n',
        HEAD + '{"index":0,"delta":{"content":"","reasoning":"."},"finish_reason":null}]}\n\n',
        HEAD + '{"index":0,"delta":{"content":"Yes"},"finish_reason":null}]}\n\n',
        HEAD + '{"index":0,"delta":{"content":"."},"finish_reason":null}]}\n\n',
        HEAD + '{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
        "data: [DONE]\n\n",
    ]


def test_chat_stream_usage_chunk_has_empty_choices():
    last = frames(chat(ANSWER, stream=True, include_usage=True))[-2]
    assert last == HEAD + '],"usage":{"prompt_tokens":100,"completion_tokens":14,"total_tokens":114}}\n\n'
    ChatCompletionChunk.model_validate_json(last.removeprefix("data: "))


def test_chat_stream_tool_call_chunk_then_tool_calls_finish():
    out = frames(chat(TOOL, stream=True, tools=WEATHER))
    tool = (
        '{"id":"'
        + CHAT_CALL
        + '","index":0,"type":"function","function":{"name":"get-weather","arguments":'
        + ARGS
        + "}}"
    )
    assert out[-3:] == [
        HEAD + '{"index":0,"delta":{"content":"","tool_calls":[' + tool + ']},"finish_reason":null}]}\n\n',
        HEAD + '{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n',
        "data: [DONE]\n\n",
    ]
    for frame in out[:-1]:
        ChatCompletionChunk.model_validate_json(frame.removeprefix("data: "))


def test_a_response_with_thinking_and_content_is_split_in_two_chunks():
    assert list(_deltas("x", "t", None, role=True)) == ['{"role":"assistant","reasoning":"t"}', '{"content":"x"}']
    assert list(_deltas("", "t", "[]", role=False)) == ['{"reasoning":"t"}', '{"content":"","tool_calls":[]}']
    assert list(_deltas("", "t", None, role=False)) == ['{"content":"","reasoning":"t"}']


def test_chat_not_streamed_exact_body():
    reply = chat(ANSWER)
    assert (reply.status, reply.media_type, reply.headers) == (200, "application/json", ())
    assert reply.body.decode() == (
        f'{{"id":"{CHAT_ID}","object":"chat.completion","created":{CREATED},"model":"gpt-oss:20b","system_fingerprint":"fp_ollama",'
        '"choices":[{"index":0,"message":{"role":"assistant","content":"Yes.","reasoning":"Hi."},"finish_reason":"stop"}],'
        '"usage":{"prompt_tokens":100,"completion_tokens":14,"total_tokens":114}}\n'
    )
    ChatCompletion.model_validate_json(reply.body)


def test_chat_not_streamed_tool_call_arguments_are_a_string():
    message = json.loads(chat(TOOL, tools=WEATHER).body)["choices"][0]
    assert message["finish_reason"] == "tool_calls"
    assert message["message"]["tool_calls"] == [
        {
            "id": CHAT_CALL,
            "index": 0,
            "type": "function",
            "function": {"name": "get-weather", "arguments": '{"city":"\\u003cParis\\u003e"}'},
        }
    ]


def test_chat_max_tokens_is_num_predict_and_length_stays():
    body = json.loads(chat(ANSWER, max_tokens=4).body)
    assert (body["choices"][0]["finish_reason"], body["usage"]["completion_tokens"]) == ("length", 4)


def test_chat_bad_arguments_not_streamed_is_a_500_api_error():
    reply = chat(BAD_ARGS)
    assert (reply.status, reply.body.decode()) == (
        500,
        '{"error":{"message":"' + BAD_ERROR + '","type":"api_error","param":null,"code":null}}\n',
    )


def test_chat_bad_arguments_mid_stream_end_with_an_empty_model_chunk_and_no_done():
    out = frames(chat(BAD_ARGS, stream=True))
    empty_model = HEAD.replace('"model":"gpt-oss:20b"', '"model":""')
    assert out[-1] == empty_model + '{"index":0,"delta":{"content":""},"finish_reason":null}]}\n\n'
    assert "data: [DONE]\n\n" not in out and len(out) == 3


def test_chat_bad_arguments_before_any_chunk_is_a_500():
    assert chat(BAD_ARGS_ONLY, stream=True).status == 500


def test_v0_11_3_stream_opens_with_a_role_chunk_then_stops():
    out = frames(chat(BAD_ARGS_ONLY, OllamaProfile(tool_call_error="v0.11.3"), stream=True))
    created = json.loads(out[0].removeprefix("data: "))["created"]
    assert out == [
        HEAD.replace('"model":"gpt-oss:20b"', '"model":""').replace(f'"created":{CREATED}', f'"created":{created}')
        + '{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n'
    ]


# --------------------------------------------------------------------------- responses


def test_responses_not_streamed_reasoning_item_carries_raw_thinking():
    reply = responses(ANSWER, input="hi")
    data = json.loads(reply.body)
    assert reply.body.endswith(b"}\n")
    assert data["output"] == [
        {
            "id": f"rs_{RESP_ID}",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Hi."}],
            "encrypted_content": "Hi.",
        },
        {
            "id": MSG_ID,
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Yes.", "annotations": [], "logprobs": []}],
        },
    ]
    assert list(data) == [
        "id",
        "object",
        "created_at",
        "completed_at",
        "status",
        "incomplete_details",
        "model",
        "previous_response_id",
        "instructions",
        "output",
        "error",
        "tools",
        "tool_choice",
        "truncation",
        "parallel_tool_calls",
        "text",
        "top_p",
        "presence_penalty",
        "frequency_penalty",
        "top_logprobs",
        "temperature",
        "reasoning",
        "usage",
        "max_output_tokens",
        "max_tool_calls",
        "store",
        "background",
        "service_tier",
        "metadata",
        "safety_identifier",
        "prompt_cache_key",
    ]
    assert b'"top_p":1,"presence_penalty":0,"frequency_penalty":0,"top_logprobs":0,"temperature":1,' in reply.body
    assert (data["store"], data["tool_choice"], data["usage"]["output_tokens_details"]) == (
        False,
        "auto",
        {"reasoning_tokens": 0},
    )


def test_responses_not_streamed_tool_call_replaces_the_message():
    tools = [{"type": "function", "name": "get-weather", "parameters": {"type": "object", "properties": {}}}]
    data = json.loads(responses(TOOL, input="weather?", tools=tools, temperature=0.7).body)
    assert data["output"][1] == {
        "id": f"fc_{RESP_ID}_0",
        "type": "function_call",
        "status": "completed",
        "call_id": RESP_CALL,
        "name": "get-weather",
        "arguments": '{"city":"\\u003cParis\\u003e"}',
    }
    assert [item["type"] for item in data["output"]] == ["reasoning", "function_call"]
    assert data["tools"] == [
        {
            "type": "function",
            "name": "get-weather",
            "description": None,
            "strict": None,
            "parameters": {"properties": {}, "type": "object"},
        }
    ]
    assert data["temperature"] == 0.7


def test_responses_stream_event_order_and_sorted_keys():
    out = frames(responses(ANSWER, stream=True, input="hi"))
    events = [frame.split("\n", 1)[0].removeprefix("event: ") for frame in out]
    assert events == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    datas = [frame.split("\ndata: ", 1)[1].removesuffix("\n\n") for frame in out]
    assert [json.loads(d)["sequence_number"] for d in datas] == list(range(15))
    reasoning_id = json.loads(datas[2])["item"]["id"]
    assert (
        datas[3]
        == f'{{"delta":"Hi","item_id":"{reasoning_id}","output_index":0,"sequence_number":3,"summary_index":0,"type":"response.reasoning_summary_text.delta"}}'
    )
    assert datas[6] == (
        f'{{"item":{{"encrypted_content":"Hi.","id":"{reasoning_id}","summary":[{{"text":"Hi.","type":"summary_text"}}],"type":"reasoning"}},'
        '"output_index":0,"sequence_number":6,"type":"response.output_item.done"}'
    )
    assert (
        datas[9]
        == f'{{"content_index":0,"delta":"Yes","item_id":"{MSG_ID}","logprobs":[],"output_index":1,"sequence_number":9,"type":"response.output_text.delta"}}'
    )
    completed = json.loads(datas[-1])["response"]
    assert list(completed) == sorted(completed)
    assert [item["type"] for item in completed["output"]] == ["reasoning", "message"]


def test_responses_stream_tool_call_events():
    out = frames(responses(TOOL, stream=True, input="hi", tools=[{"type": "function", "name": "get_weather"}]))
    events = [frame.split("\n", 1)[0].removeprefix("event: ") for frame in out]
    assert events[-5:] == [
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    delta = json.loads(out[-4].split("data: ", 1)[1])
    assert delta["delta"] == '{"city":"\\u003cParis\\u003e"}' and delta["item_id"].endswith("_0")


def test_responses_bad_arguments_stream_stops_without_completed_or_failed():
    out = frames(responses(BAD_ARGS, stream=True, input="hi"))
    events = [frame.split("\n", 1)[0] for frame in out]
    assert events[-1] == "event: response.reasoning_summary_text.delta"
    assert responses(BAD_ARGS, input="hi").status == 500


# --------------------------------------------------------------------------- errors through MockServer


@pytest.fixture(scope="module")
def server() -> MockServer:
    return MockServer(scenario="clean-answer", profile="ollama", served_model_names=[MODEL])


def test_v1_unknown_model_is_a_not_found_error(server):
    reply = server.handle(
        "chat", json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]}).encode(), {}
    )
    assert (reply.status, reply.body) == (
        404,
        b'{"error":{"message":"model \'x\' not found","type":"not_found_error","param":null,"code":null}}\n',
    )


def test_v1_invalid_request_is_an_invalid_request_error(server):
    reply = server.handle("responses", b'{"model":"gpt-oss:20b"}', {})
    assert reply.status == 400
    assert json.loads(reply.body)["error"]["type"] == "invalid_request_error"


def test_responses_stream_is_byte_identical_for_the_same_request_and_seed():
    first = responses(TOOL, stream=True, input="hi", tools=[{"type": "function", "name": "get_weather"}])
    again = responses(TOOL, stream=True, input="hi", tools=[{"type": "function", "name": "get_weather"}])
    assert first.frames == again.frames
    other = OllamaProfile().surface(
        "responses",
        TOOL,
        ResponsesRequestView(model=MODEL, stream=True, body={"input": "hi"}),
        RequestContext(ids=IdSource(1, 0), created=CREATED, prompt_tokens=100),
    )
    assert other.frames != first.frames  # another seed, other ids


def test_scripted_errors_take_the_shape_of_the_route():
    from mockoss.scenario.loader import scenario_from_data

    scenario = scenario_from_data(
        {"version": 1, "steps": [{"error": {"status": 503, "message": "overloaded"}}]}, name="busy"
    )
    server = MockServer(scenario=scenario, profile="ollama", served_model_names=[MODEL])
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}).encode()
    native, openai_shaped = server.handle("ollama.chat", body, {}), server.handle("chat", body, {})
    assert (native.status, native.body) == (503, b'{"error":"overloaded"}')
    assert (openai_shaped.status, openai_shaped.body) == (
        503,
        b'{"error":{"message":"overloaded","type":"api_error","param":null,"code":null}}\n',
    )
