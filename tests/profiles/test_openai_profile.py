"""The ``openai`` reference profile: what a correct server returns for each checklist fixture, in
the official OpenAI wire shapes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from mockoss.harmony import Completion
from mockoss.profiles.base import (
    ChatRequestView,
    IdSource,
    Reply,
    RequestContext,
    ResponsesRequestView,
    ServerInfo,
    ToolDecl,
)
from mockoss.profiles.openai import OpenAIProfile
from mockoss.profiles.openai.normalize import clean_recipient, normalised
from mockoss.profiles.registry import get_profile

MODEL = "openai/gpt-oss-20b"
CREATED = 1_767_225_600
WEATHER = (ToolDecl("function", "get_weather"),)
_ids = IdSource(0, 0)
CHAT_ID = _ids.next("chatcmpl-")
CALL_ID = "call_" + _ids.next()[:24]

ANALYSIS = "<|channel|>analysis<|message|>Need weather.<|end|>"
ANSWER = Completion.from_text(ANALYSIS + "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>")
CALL = Completion.from_text(
    ANALYSIS + '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
)
MALFORMED = Completion.from_text(ANALYSIS + "<|start|>assistant<|channel|>commentary to=functions.get_weather to=functions.get_weather json<|message|>{}<|call|>")
CONSTRAINED_FINAL = Completion.from_text('<|channel|>final <|constrain|>json<|message|>{"ok":true}<|return|>')
NAME_LEAK = Completion.from_text(
    '<|channel|>commentary to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
)
LEAKED_NO_TOOLS = Completion.from_text(ANALYSIS + '<|start|>assistant to=tool.mcp<|channel|>commentary<|message|>{"a":1}<|call|>')
BARE = Completion.from_text("Hello!<|return|>")
NON_JSON = Completion.from_text("<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>ls -R<|call|>")


def ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=CREATED, prompt_tokens=25)


def chat(completion: Completion, **view: Any) -> Reply:
    return OpenAIProfile().chat(completion, ChatRequestView(model=MODEL, **view), ctx())


def message(reply: Reply) -> dict[str, Any]:
    assert reply.status == 200
    data = json.loads(reply.body)
    ChatCompletion.model_validate(data)
    return data["choices"][0]["message"] | {"finish_reason": data["choices"][0]["finish_reason"]}


def test_clean_answer_exact_official_body():
    assert json.loads(chat(ANSWER).body) == {
        "id": CHAT_ID,
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Sunny.", "refusal": None, "annotations": [], "reasoning": "Need weather."},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 25,
            "completion_tokens": 15,
            "total_tokens": 40,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 3, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
        },
        "service_tier": "default",
        "system_fingerprint": None,
    }


def test_clean_tool_call():
    assert message(chat(CALL, tools=WEATHER)) == {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "annotations": [],
        "tool_calls": [{"id": CALL_ID, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}],
        "reasoning": "Need weather.",
        "finish_reason": "tool_calls",
    }


def test_malformed_header_is_recovered_as_raw_content_not_a_500():
    got = message(chat(MALFORMED, tools=WEATHER))
    assert got["content"] == "<|start|>assistant<|channel|>commentary to=functions.get_weather to=functions.get_weather json<|message|>{}"
    assert (got["reasoning"], got["finish_reason"], "tool_calls" in got) == ("Need weather.", "stop", False)
    assert message(chat(BARE))["content"] == "Hello!"  # a bare final: the unfinished header is the text


def test_constrain_is_a_content_type_and_control_tokens_never_reach_a_tool_name():
    assert message(chat(CONSTRAINED_FINAL))["content"] == '{"ok":true}'
    assert message(chat(CONSTRAINED_FINAL, tools=WEATHER))["content"] == '{"ok":true}'
    leak = message(chat(NAME_LEAK, tools=WEATHER))
    assert leak["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}


def test_recipients_are_ignored_without_tools():
    assert message(chat(CALL)) | {} == {
        "role": "assistant", "content": '{"city":"Paris"}', "refusal": None, "annotations": [],
        "reasoning": "Need weather.", "finish_reason": "stop",
    }
    assert message(chat(LEAKED_NO_TOOLS))["content"] == '{"a":1}'


def test_non_json_arguments_stay_raw_text():
    assert message(chat(NON_JSON, tools=WEATHER))["tool_calls"][0]["function"]["arguments"] == "ls -R"


def test_stream_chunks_are_official_and_never_carry_an_error():
    reply = chat(MALFORMED, stream=True, tools=WEATHER, include_usage=True)
    assert reply.frames[-1] == b"data: [DONE]\n\n"
    chunks = [json.loads(f[6:]) for f in reply.frames[:-1]]
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk)
        assert list(chunk) == ["id", "object", "created", "model", "service_tier", "system_fingerprint", "choices", "usage"]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert content == "<|start|>assistant<|channel|>commentary to=functions.get_weather to=functions.get_weather json<|message|>{}"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


def test_responses_without_tools_yield_a_message_not_an_mcp_call():
    data = json.loads(OpenAIProfile().responses(LEAKED_NO_TOOLS, ResponsesRequestView(model=MODEL), ctx()).body)
    assert [i["type"] for i in data["output"]] == ["reasoning", "message"]
    assert data["output"][1]["content"][0]["text"] == '{"a":1}'
    assert "input_messages" not in data and "input_tokens_per_turn" not in data["usage"]["input_tokens_details"]
    stream = OpenAIProfile().responses(CALL, ResponsesRequestView(model=MODEL, stream=True, tools=WEATHER, body={"tools": [{"type": "function", "name": "get_weather"}]}), ctx())
    events = [json.loads(f.split(b"data: ", 1)[1]) for f in stream.frames]
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    assert [(i["type"], i["id"][:3]) for i in added] == [("reasoning", "rs_"), ("function_call", "fc_")]
    done = [e["item"] for e in events if e["type"] == "response.output_item.done" and e["item"]["type"] == "function_call"]
    assert done[0]["id"] == added[1]["id"] and "sequence_number" not in done[0]


def test_normalisation_rules():
    assert clean_recipient("functions.bash<|channel|>commentary", tools_declared=True) == "functions.bash"
    assert clean_recipient("<|constrain|>json", tools_declared=True) is None
    assert clean_recipient("functions.x <|constrain|>json", tools_declared=True) == "functions.x"
    assert clean_recipient("functions.x", tools_declared=False) is None
    view = normalised(CONSTRAINED_FINAL, None, tools_declared=False)
    assert view.text == '<|channel|>final<|message|>{"ok":true}<|return|>'
    cut = normalised(ANSWER, 5, tools_declared=False)
    assert (cut.text, cut.finish_reason) == ("<|channel|>analysis<|message|>Need weather", "length")
    header = normalised(ANSWER, 8, tools_declared=False)  # cut after <|start|>: nothing to recover
    assert header.text == "<|channel|>analysis<|message|>Need weather.<|end|>"


def test_identity_and_errors():
    profile = get_profile("openai")
    info = ServerInfo(served_model_names=(MODEL,), created=CREATED)
    assert json.loads(profile.probe("GET", "/v1/models", info).body) == {"object": "list", "data": [{"id": MODEL, "object": "model", "created": CREATED, "owned_by": "openai"}]}
    missing = profile.model_not_found("gpt-x")
    assert (missing.status, json.loads(missing.body)) == (404, {"error": {"message": "The model `gpt-x` does not exist or you do not have access to it.", "type": "invalid_request_error", "param": None, "code": "model_not_found"}})
    route = profile.route_error(404, "GET", "/v1/nothing")
    assert json.loads(route.body)["error"]["message"] == "Invalid URL (GET /v1/nothing)"


@pytest.mark.parametrize("completion", [ANSWER, CALL, MALFORMED, BARE])
def test_byte_identical_replies(completion):
    assert chat(completion, stream=True, tools=WEATHER).frames == chat(completion, stream=True, tools=WEATHER).frames
