"""Exact llama-server replies from the ``llamacpp`` profile: chat (JSON and SSE), Responses,
identity routes and errors."""

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
from mockoss.profiles.llamacpp import LlamacppProfile
from mockoss.profiles.llamacpp.wire import random_string
from mockoss.profiles.registry import ProfileError, get_profile

MODEL = "openai/gpt-oss-20b"
CREATED = 1_767_225_600
PROMPT = 40
WEATHER = (ToolDecl("function", "get_weather"),)
_ids = IdSource(0, 0)
R = [random_string(_ids) for _ in range(6)]  # the random_string()s a request draws, in order
PEG = '{"error":{"code":500,"message":"The model produced output that does not match the expected peg-native format","type":"server_error"}}'

ANSWER = Completion.from_text(
    "<|channel|>analysis<|message|>Hi there<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>"
)
CALL = Completion.from_text(
    "<|channel|>analysis<|message|>Need weather.<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
)
BARE = Completion.from_text("Hello!<|return|>")
UNSOLICITED = Completion.from_text('<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>')


def ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=CREATED, prompt_tokens=PROMPT)


def chat(completion: Completion, profile: LlamacppProfile | None = None, **view: Any) -> Reply:
    return (profile or LlamacppProfile()).chat(completion, ChatRequestView(model=MODEL, **view), ctx())


def body(reply: Reply) -> dict[str, Any]:
    assert reply.status == 200 and reply.media_type == "application/json"
    data = json.loads(reply.body)
    ChatCompletion.model_validate(data)
    return data


def timings(predicted: int) -> dict[str, Any]:
    return {
        "cache_n": 0, "prompt_n": PROMPT, "prompt_ms": 40.0, "prompt_per_token_ms": 1.0, "prompt_per_second": 1000.0,
        "predicted_n": predicted, "predicted_ms": predicted * 20.0, "predicted_per_token_ms": 20.0, "predicted_per_second": 50.0,
    }


def events(reply: Reply) -> list[Any]:
    assert reply.status == 200 and reply.media_type == "text/event-stream"
    out = []
    for frame in reply.frames:
        assert frame.startswith(b"data: ") and frame.endswith(b"\n\n"), frame
        payload = frame[6:-2]
        out.append("[DONE]" if payload == b"[DONE]" else json.loads(payload))
    return out


def test_clean_answer_exact_body():
    reply = chat(ANSWER)
    assert reply.body.decode() == (
        '{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"Hello!",'
        '"reasoning_content":"Hi there"}}],"created":1767225600,"model":"openai/gpt-oss-20b",'
        '"system_fingerprint":"b9000-2629d7b5","object":"chat.completion","usage":{"completion_tokens":14,'
        f'"prompt_tokens":40,"total_tokens":54}},"id":"chatcmpl-{R[0]}","timings":{json.dumps(timings(14), separators=(",", ":"))}}}'
    )
    body(reply)


def test_clean_tool_call_body():
    data = body(chat(CALL, tools=WEATHER))
    assert data["choices"] == [
        {
            "finish_reason": "tool_calls",
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "",
                "reasoning_content": "Need weather.",
                "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}, "id": R[1]}],
            },
        }
    ]


def test_grammar_failure_is_a_500_peg_native_error():
    reply = chat(BARE)
    assert (reply.status, reply.body.decode()) == (500, PEG)
    assert chat(CALL, tools=(ToolDecl("function", "get_time"),)).body.decode() == PEG  # undeclared tool


def test_unsolicited_call_without_tools_leaves_the_raw_text_as_content():
    # the grammar consumes and drops the call; an empty message falls back to the generated text
    message = body(chat(UNSOLICITED))["choices"][0]["message"]
    assert message == {"role": "assistant", "content": '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}'}
    assert body(chat(CALL))["choices"][0]["message"] == {"role": "assistant", "content": "", "reasoning_content": "Need weather."}


def test_reasoning_format_none_from_the_request_or_the_server_flag():
    expected = {"role": "assistant", "content": "<|channel|>analysis<|message|>Hi there<|end|>Hello!"}
    assert body(chat(ANSWER, body={"reasoning_format": "none"}))["choices"][0]["message"] == expected
    assert body(chat(ANSWER, profile=LlamacppProfile(reasoning_format="none")))["choices"][0]["message"] == expected
    bad = chat(ANSWER, body={"reasoning_format": "think"})
    assert (bad.status, bad.body) == (500, b'{"error":{"code":500,"message":"Unknown reasoning format: think","type":"server_error"}}')


def test_max_tokens_finish_is_length():
    data = body(chat(ANSWER, max_tokens=7))
    assert data["choices"][0]["finish_reason"] == "length"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "", "reasoning_content": "Hi there"}
    assert data["usage"] == {"completion_tokens": 7, "prompt_tokens": 40, "total_tokens": 47}


def test_stream_clean_answer_exact_chunks():
    frames = events(chat(ANSWER, stream=True, include_usage=True))
    head = {"created": CREATED, "id": f"chatcmpl-{R[0]}", "model": MODEL, "system_fingerprint": "b9000-2629d7b5", "object": "chat.completion.chunk"}

    def delta(d: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [{"finish_reason": None, "index": 0, "delta": d}], **head}

    assert frames == [
        delta({"role": "assistant", "content": None}),
        delta({"reasoning_content": "Hi"}),
        delta({"reasoning_content": " there"}),
        delta({"content": "Hello"}),
        delta({"content": "!"}),
        {"choices": [{"finish_reason": "stop", "index": 0, "delta": {}}], **head},
        {"choices": [], **head, "usage": {"completion_tokens": 14, "prompt_tokens": 40, "total_tokens": 54}, "timings": timings(14)},
        "[DONE]",
    ]
    for frame in frames[:-1]:
        ChatCompletionChunk.model_validate(frame)


def test_stream_tool_call_grows_its_name_then_streams_arguments():
    frames = events(chat(CALL, stream=True, tools=WEATHER))
    calls = [f["choices"][0]["delta"]["tool_calls"][0] for f in frames[:-1] if "tool_calls" in f["choices"][0]["delta"]]
    assert calls == [
        {"index": 0, "id": R[1], "type": "function", "function": {"name": "get", "arguments": "{"}},
        {"index": 0, "id": R[1], "type": "function", "function": {"name": "get_weather"}},
        {"index": 0, "function": {"arguments": '"'}},
        {"index": 0, "function": {"arguments": "city"}},
        {"index": 0, "function": {"arguments": '":"'}},
        {"index": 0, "function": {"arguments": "Paris"}},
        {"index": 0, "function": {"arguments": '"}'}},
    ]
    assert frames[-2]["choices"][0]["finish_reason"] == "tool_calls" and frames[-2]["timings"] == timings(27)


def test_stream_grammar_failure_is_an_error_frame_without_done():
    reply = chat(Completion.from_text("<|channel|>analysis<|message|>Hm<|end|><|start|>assistant Hello<|return|>"), stream=True)
    frames = events(reply)
    assert [f["choices"][0]["delta"] for f in frames[:-1]] == [{"role": "assistant", "content": None}, {"reasoning_content": "Hm"}]
    assert reply.frames[-1] == b"data: " + PEG.encode() + b"\n\n"


def test_regex_parser_switch_never_fails():
    data = body(chat(BARE, profile=LlamacppProfile(parser="regex")))
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "Hello!"}


def test_responses_exact_body_and_stream_events():
    view = ResponsesRequestView(model=MODEL, tools=WEATHER, body={"input": "hi", "tools": [{"type": "function", "name": "get_weather"}]})
    reply = LlamacppProfile().responses(CALL, view, ctx())
    assert json.loads(reply.body) == {
        "completed_at": CREATED,
        "created_at": CREATED,
        "id": f"resp_{R[0]}",
        "model": MODEL,
        "object": "response",
        "output": [
            {"id": f"rs_{R[4]}", "summary": [], "type": "reasoning", "content": [{"text": "Need weather.", "type": "reasoning_text"}], "encrypted_content": "", "status": "completed"},
            # ggml-org/llama.cpp#24882 (2026-06-21): an item id "fc_…", call_id "call_…" (switch function_call_item_id)
            {"id": f"fc_{R[3]}", "type": "function_call", "status": "completed", "arguments": '{"city":"Paris"}', "call_id": f"call_{R[3]}", "name": "get_weather"},
        ],
        "status": "completed",
        "usage": {"input_tokens": 40, "output_tokens": 27, "total_tokens": 67},
    }
    stream = LlamacppProfile().responses(ANSWER, ResponsesRequestView(model=MODEL, stream=True, body={"input": "hi"}), ctx())
    names = [f.split(b"\n", 1)[0].decode() for f in stream.frames]
    assert names == [
        "event: response.created", "event: response.in_progress", "event: response.output_item.added",
        "event: response.reasoning_text.delta", "event: response.reasoning_text.delta",
        "event: response.output_item.added", "event: response.content_part.added",
        "event: response.output_text.delta", "event: response.output_text.delta",
        "event: response.output_item.done", "event: response.output_text.done", "event: response.content_part.done",
        "event: response.output_item.done", "event: response.completed",
    ]
    assert stream.frames[3] == (
        f'event: response.reasoning_text.delta\ndata: {{"type":"response.reasoning_text.delta","delta":"Hi","item_id":"rs_{R[1]}"}}\n\n'.encode()
    )
    failed = LlamacppProfile().responses(BARE, ResponsesRequestView(model=MODEL, body={"input": "hi"}), ctx())
    assert (failed.status, failed.body.decode()) == (500, PEG)
    previous = LlamacppProfile().responses(ANSWER, ResponsesRequestView(model=MODEL, body={"input": "hi", "previous_response_id": "resp_1"}), ctx())
    assert previous.body == b'{"error":{"code":400,"message":"llama.cpp does not support \'previous_response_id\'.","type":"invalid_request_error"}}'


INFO = ServerInfo(served_model_names=(MODEL,), created=CREATED)


def test_identity_routes_and_route_errors():
    profile = LlamacppProfile()
    assert profile.probe("GET", "/health", INFO).body == b'{"status":"ok"}'
    assert profile.probe("GET", "/v1/health", INFO).body == b'{"status":"ok"}'
    models = json.loads(profile.probe("GET", "/v1/models", INFO).body)
    assert models == json.loads(profile.probe("GET", "/models", INFO).body)
    assert [(m["id"], m["object"], m["owned_by"]) for m in models["data"]] == [(MODEL, "model", "llamacpp")]
    assert models["data"][0]["meta"]["n_ctx"] == 131072 and models["models"][0]["name"] == MODEL
    props = json.loads(profile.probe("GET", "/props", INFO).body)
    assert props["default_generation_settings"]["n_ctx"] == 131072
    assert (props["model_alias"], props["build_info"], props["total_slots"]) == (MODEL, "b9000-2629d7b5", 1)
    assert profile.probe("POST", "/health", INFO) is None
    for status in (404, 405):
        error = profile.route_error(status, "GET", "/v1/chat/completions")
        assert (error.status, error.body) == (404, b'{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}')
    assert profile.model_not_found("x").body == b'{"error":{"code":400,"message":"model not found","type":"invalid_request_error"}}'


def test_switches_are_validated_through_the_registry():
    assert get_profile("llamacpp", {"parser": "regex"}).parser == "regex"
    for bad in ({"parser": "lalr"}, {"reasoning_format": "think"}, {"predicted_tokens_per_second": 0}, {"nope": 1}):
        with pytest.raises(ProfileError):
            get_profile("llamacpp", bad)


def test_same_request_is_byte_identical():
    first, second = chat(CALL, stream=True, tools=WEATHER), chat(CALL, stream=True, tools=WEATHER)
    assert first.frames == second.frames
