"""Exact LM Studio replies from the ``lmstudio`` profile: reasoning field, silently omitted tool
calls, switches, identity routes."""

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
from mockoss.profiles.lmstudio import LmstudioProfile
from mockoss.profiles.lmstudio.chat import chat_id
from mockoss.profiles.registry import ProfileError, get_profile

MODEL = "openai/gpt-oss-20b"
CREATED = 1_767_225_600
PROMPT = 30
WEATHER = (ToolDecl("function", "get_weather"),)
_ids = IdSource(0, 0)
CHAT_ID = chat_id(_ids)
#: Unverified: a 9-digit call id is mockoss's choice (mockoss/profiles/lmstudio/chat.py); no source
#: shows LM Studio's call-id shape.
CALL_ID = _ids.digits(9)

ANALYSIS = "<|channel|>analysis<|message|>Need weather.<|end|>"
ANSWER = Completion.from_text(ANALYSIS + "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>")
CALL = Completion.from_text(
    ANALYSIS + '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
)
UNDECLARED = Completion.from_text(ANALYSIS + "<|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}<|call|>")
NON_JSON = Completion.from_text(ANALYSIS + "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>ls -R<|call|>")
MALFORMED = Completion.from_text(ANALYSIS + "<|start|>assistant<|channel|>commentary to=functions.get_weather to=functions.get_weather json<|message|>{}<|call|>")
LEAKED_NO_TOOLS = Completion.from_text(ANALYSIS + '<|start|>assistant to=tool.mcp<|channel|>commentary<|message|>{"a":1}<|call|>')
CONSTRAINED_FINAL = Completion.from_text('<|channel|>final <|constrain|>json<|message|>{"ok":true}<|return|>')
NAME_LEAK = Completion.from_text(
    '<|channel|>commentary to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
)
BARE = Completion.from_text("Hello!<|return|>")


def ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=CREATED, prompt_tokens=PROMPT)


def chat(completion: Completion, profile: LmstudioProfile | None = None, **view: Any) -> Reply:
    return (profile or LmstudioProfile()).chat(completion, ChatRequestView(model=MODEL, **view), ctx())


def message(reply: Reply) -> dict[str, Any]:
    data = json.loads(reply.body)
    ChatCompletion.model_validate(data)
    return data["choices"][0]["message"] | {"finish_reason": data["choices"][0]["finish_reason"]}


def test_clean_answer_exact_pretty_body():
    reply = chat(ANSWER)
    assert reply.status == 200
    assert reply.body.decode() == json.dumps(
        {
            "id": CHAT_ID,
            "object": "chat.completion",
            "created": CREATED,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "logprobs": None,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Sunny.", "reasoning": "Need weather.", "tool_calls": []},
                }
            ],
            "usage": {"prompt_tokens": 30, "completion_tokens": 15, "total_tokens": 45},
            "stats": {},
            "system_fingerprint": MODEL,  # unverified: the model key as fingerprint (lmstudio/chat.py)
        },
        indent=2,  # unverified: switch pretty_json (LmstudioProfile.pretty_json), from curl transcripts only
    )
    assert CHAT_ID.startswith("chatcmpl-") and len(CHAT_ID) == 30


def test_clean_tool_call():
    assert message(chat(CALL, tools=WEATHER)) == {
        "role": "assistant",
        "content": "",
        "reasoning": "Need weather.",
        "tool_calls": [{"id": CALL_ID, "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}],
        "finish_reason": "tool_calls",
    }


@pytest.mark.parametrize("completion", [UNDECLARED, NON_JSON, MALFORMED, NAME_LEAK])
def test_a_tool_call_that_fails_to_parse_is_silently_omitted(completion):
    got = message(chat(completion, tools=WEATHER))
    assert got["tool_calls"] == [] and got["finish_reason"] == "stop" and got["content"] == ""


def test_leaked_recipient_without_tools_and_constrained_final_are_dropped():
    assert message(chat(LEAKED_NO_TOOLS)) == {"role": "assistant", "content": "", "reasoning": "Need weather.", "tool_calls": [], "finish_reason": "stop"}
    assert message(chat(CONSTRAINED_FINAL))["content"] == ""  # recipient "<|constrain|>json" is no tool
    assert message(chat(CALL, tools=WEATHER, tool_choice="none"))["tool_calls"] == []


def test_bare_final_without_channel_is_not_an_answer():
    # openai-harmony reads "Hello!" as a header that never completes; nothing survives (unverified)
    assert message(chat(BARE)) == {"role": "assistant", "content": "", "tool_calls": [], "finish_reason": "stop"}


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("reasoning_content", {"role": "assistant", "content": "Sunny.", "reasoning_content": "Need weather.", "tool_calls": []}),
        ("content", {"role": "assistant", "content": "Need weather.Sunny.", "tool_calls": []}),
    ],
)
def test_reasoning_field_switch(field, expected):
    assert message(chat(ANSWER, profile=LmstudioProfile(reasoning_field=field))) == expected | {"finish_reason": "stop"}


def test_strict_switch_changes_what_a_header_cut_by_a_stop_token_yields():
    cut = Completion.from_text("<|channel|>final Hello there<|end|>")
    assert message(chat(cut))["content"] == "Hello there"  # non-strict: the header words are the text
    assert message(chat(cut, profile=LmstudioProfile(strict=True)))["content"] == ""


def test_stream_exact_chunks():
    reply = chat(CALL, stream=True, tools=WEATHER, include_usage=True)
    assert reply.status == 200 and reply.media_type == "text/event-stream" and reply.frames[-1] == b"data: [DONE]\n\n"
    chunks = [json.loads(f[6:]) for f in reply.frames[:-1]]
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk)
        # system_fingerprint = model key: unverified (lmstudio/chat.py), pinned so a change is seen.
        assert (chunk["id"], chunk["object"], chunk["system_fingerprint"]) == (CHAT_ID, "chat.completion.chunk", MODEL)
    assert [c["choices"][0]["delta"] for c in chunks] == [
        {"role": "assistant", "reasoning": "Need"},
        {"role": "assistant", "reasoning": " weather"},
        {"role": "assistant", "reasoning": "."},
        {"role": "assistant", "tool_calls": [{"index": 0, "id": CALL_ID, "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {},
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["usage"] == {"prompt_tokens": 30, "completion_tokens": 27, "total_tokens": 57}


def test_responses_body_and_stream():
    view = ResponsesRequestView(model=MODEL, tools=WEATHER, body={"tools": [{"type": "function", "name": "get_weather"}]})
    data = json.loads(LmstudioProfile().responses(CALL, view, ctx()).body)
    assert (data["object"], data["id"][:5]) == ("response", "resp_")
    assert [(i["type"], i.get("name")) for i in data["output"]] == [("reasoning", None), ("function_call", "get_weather")]
    assert data["status"] == "completed" and data["usage"]["output_tokens"] == 27
    stream = LmstudioProfile().responses(ANSWER, ResponsesRequestView(model=MODEL, stream=True), ctx())
    kinds = [json.loads(f.split(b"data: ", 1)[1]) for f in stream.frames]
    assert [k["sequence_number"] for k in kinds] == list(range(len(kinds)))
    assert [k["type"] for k in kinds] == [
        "response.created", "response.in_progress",
        "response.output_item.added", "response.reasoning_text.delta", "response.reasoning_text.delta",
        "response.reasoning_text.delta", "response.reasoning_text.done", "response.output_item.done",
        "response.output_item.added", "response.content_part.added", "response.output_text.delta",
        "response.output_text.delta", "response.output_text.done", "response.content_part.done",
        "response.output_item.done", "response.completed",
    ]


INFO = ServerInfo(served_model_names=(MODEL,), created=CREATED)


def test_identity_and_route_errors():
    profile = LmstudioProfile(pretty_json=False)
    assert profile.probe("GET", "/v1/models", INFO).body == b'{"data":[{"id":"openai/gpt-oss-20b","object":"model","owned_by":"organization_owner"}],"object":"list"}'
    v0 = json.loads(profile.probe("GET", "/api/v0/models", INFO).body)
    assert v0["data"][0] | {} == json.loads(profile.probe("GET", f"/api/v0/models/{MODEL}", INFO).body)
    assert (v0["data"][0]["type"], v0["data"][0]["publisher"], v0["data"][0]["max_context_length"]) == ("llm", "openai", 131072)
    assert profile.probe("GET", "/health", INFO) is None
    error = profile.route_error(404, "GET", "/props")
    assert (error.status, error.body) == (200, b'{"error":"Unexpected endpoint or method. (GET /props)"}')
    assert LmstudioProfile(route_error_status=404).route_error(404, "GET", "/x").status == 404


def test_switches_are_validated_through_the_registry():
    assert get_profile("lmstudio", {"reasoning_field": "content"}).reasoning_field == "content"
    for bad in ({"reasoning_field": "thinking"}, {"route_error_status": 500}, {"strict": "yes"}, {"nope": 1}):
        with pytest.raises(ProfileError):
            get_profile("lmstudio", bad)
