"""Exact SGLang replies from the ``sglang`` profile: body and chunk bytes, stop-token trimming,
switches, identity routes. Each expectation follows SGLang 0.5.23's serving code (cited in
:mod:`mockoss.profiles.sglang.chat`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, IdSource, Reply, RequestContext, ServerInfo, ToolDecl
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.profiles.sglang import SglangProfile
from mockoss.profiles.sglang.detokenizer import stream_deltas

MODEL = "openai/gpt-oss-20b"
CREATED = 1_767_225_600
PROMPT = 30
WEATHER = (ToolDecl("function", "get_weather"),)
ANALYSIS = "<|channel|>analysis<|message|>Need weather.<|end|>"
ANSWER = Completion.from_text(ANALYSIS + "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>")
CALL = Completion.from_text(ANALYSIS + '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>')
RID = IdSource(0, 0).next()


def chat(completion: Completion, profile: SglangProfile | None = None, **view: Any) -> Reply:
    request = ChatRequestView(model=MODEL, **view)
    return (profile or SglangProfile()).chat(completion, request, RequestContext(ids=IdSource(0, 0), created=CREATED, prompt_tokens=PROMPT))


def frames(reply: Reply) -> list[dict[str, Any]]:
    assert reply.frames[-1] == b"data: [DONE]\n\n"
    return [json.loads(f.removeprefix(b"data: ")) for f in reply.frames[:-1]]


def test_clean_answer_exact_body():
    reply = chat(ANSWER)
    assert reply.status == 200
    completion_tokens = len(ANSWER.emit(None).tokens)
    reasoning_tokens = ANSWER.emit(None).tokens.index(200007) + 1  # up to and with the first <|end|>
    assert json.loads(reply.body) == {
        "id": RID, "object": "chat.completion", "created": CREATED, "model": MODEL,
        "choices": [{
            "index": 0, "message": {"role": "assistant", "content": "Sunny.", "reasoning_content": "Need weather."},
            "logprobs": None, "finish_reason": "stop", "matched_stop": 200002,
        }],
        "usage": {
            "prompt_tokens": PROMPT, "total_tokens": PROMPT + completion_tokens, "completion_tokens": completion_tokens,
            "prompt_tokens_details": None, "reasoning_tokens": reasoning_tokens, "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
        },
        "metadata": {"weight_version": "default"},
    }
    ChatCompletion.model_validate_json(reply.body)


def test_same_seed_same_bytes_and_ids_in_sglang_shapes():
    first, second = chat(CALL, tools=WEATHER), chat(CALL, tools=WEATHER)
    assert first.body == second.body
    body = json.loads(first.body)
    assert len(body["id"]) == 32 and int(body["id"], 16) >= 0
    call_id = body["choices"][0]["message"]["tool_calls"][0]["id"]
    assert call_id.startswith("call_") and len(call_id) == 29 and int(call_id[5:], 16) >= 0


def test_stream_exact_chunks():
    chunks = frames(chat(ANSWER, stream=True, include_usage=True))
    head = {"id": RID, "object": "chat.completion.chunk", "created": CREATED, "model": MODEL}
    assert chunks[0] == {**head, "choices": [{"index": 0, "delta": {"reasoning_content": None, "role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None, "matched_stop": None}]}
    deltas = [c["choices"][0]["delta"] for c in chunks[1:-2]]
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == "Need weather."
    assert "".join(d.get("content") or "" for d in deltas) == "Sunny."
    assert all(set(d) in ({"reasoning_content"}, {"reasoning_content", "content"}) for d in deltas)
    assert chunks[-2]["choices"] == [{"index": 0, "delta": {"reasoning_content": None}, "logprobs": None, "finish_reason": "stop", "matched_stop": 200002}]
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == len(ANSWER.emit(None).tokens)
    for chunk in chunks:
        ChatCompletionChunk.model_validate(chunk)


def test_stream_tool_call_chunk_is_a_full_pydantic_dump():
    chunks = frames(chat(CALL, stream=True, tools=WEATHER))
    [call_chunk] = [c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("tool_calls")]
    delta = call_chunk["choices"][0]["delta"]
    assert {k: delta[k] for k in ("role", "content", "reasoning_content")} == {"role": None, "content": None, "reasoning_content": None}
    assert delta["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert call_chunk["usage"] is None
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls" and chunks[-1]["choices"][0]["matched_stop"] == 200012


def test_length_stop_keeps_the_text_and_has_no_matched_stop():
    body = json.loads(chat(ANSWER, max_tokens=5).body)
    choice = body["choices"][0]
    assert (choice["finish_reason"], choice["matched_stop"]) == ("length", None)
    # an open analysis block surfaces what it has so far (CanonicalStrategy._parse_partial_analysis)
    assert (choice["message"]["content"], choice["message"]["reasoning_content"]) == ("", "Need weather")


def test_stream_loses_what_the_parser_holds_at_the_end():
    # A commentary block without <|end|>/<|call|> is held; the stream end flushes nothing for gpt-oss.
    open_block = Completion.from_text(ANALYSIS + "<|start|>assistant<|channel|>commentary<|message|>Preamble")
    chunks = frames(chat(open_block, stream=True))
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks[1:]) == ""


def test_skip_special_tokens_switch_uses_the_text_fallback():
    reply = json.loads(chat(ANSWER, SglangProfile(skip_special_tokens=True)).body)
    message = reply["choices"][0]["message"]
    # "analysisNeed weather.assistantfinalSunny." parses by the text fallback
    assert (message["reasoning_content"], message["content"]) == ("Need weather.", "Sunny.")


def test_unknown_tools_forwarded_with_the_switch():
    other = (ToolDecl("function", "get_time"),)
    assert "tool_calls" not in json.loads(chat(CALL, tools=other).body)["choices"][0]["message"]
    forwarded = json.loads(chat(CALL, SglangProfile(forward_unknown_tools=True), tools=other).body)["choices"][0]["message"]
    assert forwarded["tool_calls"][0]["function"]["name"] == "get_weather"


def test_tool_choice_none_leaves_the_call_markup_in_content():
    message = json.loads(chat(CALL, tools=WEATHER, tool_choice="none").body)["choices"][0]["message"]
    assert message["content"].startswith("<|start|>assistant<|channel|>commentary to=functions.get_weather")


def test_stream_deltas_send_a_cut_characters_printable_prefix_first():
    # DetokenizerManager + find_printable_text (checked against SGLang's own detokenizer by
    # tools/sglang_serving_diff.py): " 雨" is cut after the space's token, so the space goes first.
    tokens = Completion.from_text("Done 雨が降る").tokens
    assert stream_deltas(tokens, skip_special=False, trim_last=False) == ["Done", " ", "雨", "が", "降", "る"]
    tokens = Completion.from_text("é€😀<|return|>").tokens
    deltas = stream_deltas(tokens, skip_special=False, trim_last=True)
    assert "".join(deltas) == "é€😀" and all("\ufffd" not in t for t in deltas) and deltas[-1] == ""


def test_identity_routes_and_errors():
    profile, info = SglangProfile(), ServerInfo(served_model_names=(MODEL,), created=CREATED)
    models = json.loads(profile.probe("GET", "/v1/models", info).body)
    assert models == {"object": "list", "data": [{"id": MODEL, "object": "model", "created": CREATED, "owned_by": "sglang", "root": MODEL, "parent": None, "max_model_len": 131072}]}
    assert (profile.probe("GET", "/health", info).status, profile.probe("GET", "/health", info).body) == (200, b"")
    assert json.loads(profile.probe("GET", "/model_info", info).body)["architectures"] == ["GptOssForCausalLM"]
    assert profile.probe("POST", "/health", info) is None
    assert json.loads(profile.error(400, "bad").body) == {"object": "error", "message": "bad", "type": "Bad Request", "param": None, "code": 400}
    assert json.loads(profile.route_error(404, "GET", "/x").body) == {"detail": "Not Found"}
    assert json.loads(profile.route_error(405, "GET", "/v1/chat/completions").body) == {"detail": "Method Not Allowed"}
    assert SglangProfile.model_check is False


def test_switches_are_validated_through_the_registry():
    assert get_profile("sglang", {"reasoning_parser": None}).reasoning_parser is None
    with pytest.raises(ProfileError, match="reasoning_parser must be 'gpt-oss' or null"):
        get_profile("sglang", {"reasoning_parser": "qwen3"})
    with pytest.raises(ProfileError, match="context_length"):
        get_profile("sglang", {"context_length": 0})


def test_continuous_usage_stats_and_default_include_usage():
    chunks = frames(chat(ANSWER, SglangProfile(stream_default_include_usage=True), stream=True, continuous_usage_stats=True))
    counted = [c["usage"] for c in chunks[1:-2] if "usage" in c]
    assert counted and [u["completion_tokens"] for u in counted] == sorted(u["completion_tokens"] for u in counted)
    reasoning_end = ANSWER.emit(None).tokens.index(200007) + 1
    assert all(u["reasoning_tokens"] == min(u["completion_tokens"], reasoning_end) for u in counted)
    assert "usage" not in chunks[0] and "usage" not in chunks[-2]  # the role and finish chunks carry none
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == len(ANSWER.emit(None).tokens)
    plain = frames(chat(ANSWER, stream=True))
    assert plain[-1]["choices"] and all("usage" not in c for c in plain)


def test_count_reasoning_tokens_switch():
    usage = json.loads(chat(ANSWER, SglangProfile(count_reasoning_tokens=False)).body)["usage"]
    assert (usage["reasoning_tokens"], usage["completion_tokens_details"]) == (0, None)


def test_releases_before_0_5_3_lose_a_streamed_answer_when_tools_are_declared():
    # sgl-project/sglang@v0.5.2 gpt_oss_detector.py keeps marker-free text in its buffer.
    def content(profile):
        return "".join(c["choices"][0]["delta"].get("content") or "" for c in frames(chat(ANSWER, profile, stream=True, tools=WEATHER))[1:])

    assert content(get_profile("sglang@0.5.2")) == ""
    assert content(get_profile("sglang@0.5.3")) == content(get_profile("sglang")) == "Sunny."


def test_releases_before_0_5_4_drop_a_call_to_a_hyphenated_tool():
    hyphen = Completion.from_text(ANALYSIS + '<|start|>assistant<|channel|>commentary to=functions.get-weather <|constrain|>json<|message|>{}<|call|>')
    tools = (ToolDecl("function", "get-weather"),)
    assert "tool_calls" not in json.loads(chat(hyphen, get_profile("sglang@0.5.3"), tools=tools).body)["choices"][0]["message"]
    assert json.loads(chat(hyphen, get_profile("sglang@0.5.4"), tools=tools).body)["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get-weather"
