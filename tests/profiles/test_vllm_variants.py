"""Dated vLLM profiles (``vllm-2025``, ``vllm-0.10.1``) and the switches behind them, one test per
vLLM row of the public bug table (reference §5, rows 1–13), with exact strings and statuses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, IdSource, Reply, RequestContext, ResponsesRequestView, ToolDecl
from mockoss.profiles.registry import PROFILES, get_profile
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
WEATHER = (ToolDecl("function", "get_weather"),)
ANSWER = (
    "<|channel|>analysis<|message|>User asks 2+2.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
)
TOOL_CALL = (
    "<|channel|>analysis<|message|>Need weather.<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":\n "Paris"}<|call|>'
)
PREAMBLE_THEN_ANSWER = (
    "<|channel|>analysis<|message|>Think.<|end|>"
    "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>Done.<|return|>"
)


def ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=1, prompt_tokens=10)


def chat(profile: str, text: str, switches: dict[str, Any] | None = None, **request: Any) -> Reply:
    return get_profile(profile, switches).chat(Completion.from_text(text), ChatRequestView(model=MODEL, **request), ctx())


def body(reply: Reply) -> Any:
    assert not reply.frames
    return json.loads(reply.body)


def message(reply: Reply) -> dict[str, Any]:
    assert reply.status == 200, reply.body
    return body(reply)["choices"][0]["message"]


def sse(reply: Reply) -> list[Any]:
    assert reply.status == 200 and reply.media_type == "text/event-stream"
    out = []
    for frame in reply.frames:
        text = frame.decode()
        assert text.startswith("data: ") and text.endswith("\n\n")
        payload = text[len("data: ") : -2]
        out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def test_variants_are_registered_vllm_profiles_with_the_completions_endpoint():
    assert {"vllm", "vllm-2025", "vllm-0.10.1"} <= set(PROFILES)
    for name in ("vllm", "vllm-2025", "vllm-0.10.1"):
        assert PROFILES[name].name == name
        assert PROFILES[name].endpoints == frozenset({"chat", "responses", "completions"})


def test_vllm_2025_message_shape_reasoning_content_and_empty_tool_calls():
    reply = chat("vllm-2025", ANSWER)
    data = body(reply)
    assert data["choices"][0] == {
        "index": 0,
        "message": {
            "role": "assistant",
            "content": "2 + 2 = 4.",
            "refusal": None,
            "annotations": None,
            "audio": None,
            "function_call": None,
            "tool_calls": [],
            "reasoning_content": "User asks 2+2.",
        },
        "logprobs": None,
        "finish_reason": "stop",
        "stop_reason": None,
        "token_ids": None,
    }
    assert list(data) == [
        "id", "object", "created", "model", "choices", "service_tier", "system_fingerprint", "usage",
        "prompt_logprobs", "prompt_token_ids", "kv_transfer_params",
    ]
    tokens = len(Completion.from_text(ANSWER).tokens)
    assert data["usage"] == {
        "prompt_tokens": 10, "total_tokens": 10 + tokens, "completion_tokens": tokens, "prompt_tokens_details": None,
    }


@pytest.mark.parametrize(
    ("field", "members"),
    [
        ("reasoning", {"reasoning": "User asks 2+2."}),
        ("reasoning_content", {"reasoning_content": "User asks 2+2."}),
        ("both", {"reasoning": "User asks 2+2.", "reasoning_content": "User asks 2+2."}),
    ],
)
def test_reasoning_field_switch_on_both_chat_paths(field, members):
    for profile in ("vllm", "vllm-2025"):
        got = message(chat(profile, ANSWER, {"reasoning_field": field}))
        assert {k: v for k, v in got.items() if k.startswith("reasoning")} == members


def test_reasoning_field_both_puts_null_reasoning_content_on_every_streamed_delta():
    chunks = sse(chat("vllm", ANSWER, {"reasoning_field": "both"}, stream=True))
    deltas = [c["choices"][0]["delta"] for c in chunks[:-1]]
    assert deltas[0] == {"role": "assistant", "content": "", "reasoning_content": None}
    assert {"reasoning": "User", "reasoning_content": "User"} in deltas
    assert {"content": "2", "reasoning_content": None} in deltas
    assert all("reasoning_content" in d for d in deltas)


# -- row 1 / 2 / 7: HarmonyError in a 2025 chat stream: HTTP 200, a 400 error chunk, [DONE] ----------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (  # row 1, openai/harmony#38
            "<|channel|>commentary ––commentary to=functions.x json<|message|>{}<|call|>",
            'unexpected tokens remaining in message header: Some("––commentary")',
        ),
        (  # row 2, openai/harmony#60: a stray token after <|end|> (12606 = "comment")
            "<|channel|>analysis<|message|>Hi<|end|>comment",
            "Unexpected token 12606 while expecting start token 200006",
        ),
    ],
)
def test_harmony_error_in_2025_stream_is_a_400_chunk_then_done(text, error):
    chunks = sse(chat("vllm-2025", text, stream=True))
    assert chunks[-2:] == [{"error": {"message": error, "type": "BadRequestError", "param": None, "code": 400}}, "[DONE]"]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}


def test_harmony_error_in_2025_non_stream_is_http_500_internal_server_error():
    reply = chat("vllm-2025", "<|channel|>analysis<|message|>Hi<|end|>comment")
    assert reply.status == 500
    assert body(reply) == {
        "error": {
            "message": "Unexpected token 12606 while expecting start token 200006",
            "type": "Internal Server Error",
            "param": None,
            "code": 500,
        }
    }


# -- row 3: constrained final becomes a recipient ---------------------------------------------------

CONSTRAINED_FINAL = '<|channel|>final <|constrain|>json<|message|>{"result":true}<|return|>'


def _responses(profile: str, text: str, tools: tuple[ToolDecl, ...] = ()) -> list[dict[str, Any]]:
    reply = get_profile(profile).responses(
        Completion.from_text(text), ResponsesRequestView(model=MODEL, tools=tools), ctx()
    )
    assert reply.status == 200
    return body(reply)["output"]


def test_row3_constrained_final_is_mcp_call_in_2025_and_a_message_in_2026():
    (item,) = _responses("vllm-2025", CONSTRAINED_FINAL)
    assert (item["type"], item["name"], item["server_label"], item["arguments"]) == (
        "mcp_call", "<|constrain|>json", "<|constrain|>json", '{"result":true}',
    )
    (item,) = _responses("vllm", CONSTRAINED_FINAL)
    assert item["type"] == "message" and item["content"][0]["text"] == '{"result":true}'
    assert message(chat("vllm-2025", CONSTRAINED_FINAL))["content"] == '{"result":true}'


def test_responses_2025_preamble_is_reasoning_and_analysis_function_call_is_mcp():
    text = (
        "<|channel|>commentary<|message|>Let me check.<|end|>"
        '<|start|>assistant<|channel|>analysis to=functions.get_weather<|message|>{"a":1}<|call|>'
    )
    items = _responses("vllm-2025", text, WEATHER)
    assert [i["type"] for i in items] == ["reasoning", "mcp_call"]
    assert items[0]["content"] == [{"text": "Let me check.", "type": "reasoning_text"}]
    assert (items[1]["server_label"], items[1]["name"]) == ("functions", "get_weather")
    assert [i["type"] for i in _responses("vllm", text, WEATHER)] == ["message", "function_call"]


def test_responses_2025_function_call_item_has_null_status():
    (call,) = _responses("vllm-2025", '<|channel|>commentary to=functions.get_weather<|message|>{}<|call|>', WEATHER)
    assert call["type"] == "function_call" and call["name"] == "get_weather" and call["status"] is None
    assert call["id"][3:] == call["call_id"][5:]


# -- row 4 / 5: HarmonyError on a malformed header, non-streamed -----------------------------------

DUPLICATE_TO = "<|channel|>commentary to=functions.web-browsing to=functions.web-browsing json<|message|>{}<|call|>"
DUPLICATE_TO_ERROR = 'unexpected tokens remaining in message header: Some("to=functions.web-browsing")'


def test_row5_current_vllm_drops_the_message_with_200_and_the_raise_switch_answers_500():
    """vLLM 0.32/0.33 HarmonyParser.process_chunk skips tokens that raise (vllm-project/vllm@v0.32.0:
    vllm/parser/harmony.py): HTTP 200, the message dropped (measured, shared/reference/vllm-on-cpu.md).
    The 500 is the ``harmony_errors="raise"`` switch."""
    dropped = chat("vllm", DUPLICATE_TO, {"harmony_errors": "skip"}, tools=WEATHER)
    assert dropped.status == 200 and "tool_calls" not in body(dropped)["choices"][0]["message"]
    reply = chat("vllm", DUPLICATE_TO, {"harmony_errors": "raise"}, tools=WEATHER)
    assert reply.status == 500
    assert body(reply) == {"error": {"message": DUPLICATE_TO_ERROR, "type": "InternalServerError", "param": None, "code": 500}}


def test_row4_v0_10_1_answers_500_in_the_flat_body():
    reply = chat("vllm-0.10.1", DUPLICATE_TO)
    assert reply.status == 500
    assert body(reply) == {
        "object": "error", "message": DUPLICATE_TO_ERROR, "type": "Internal Server Error", "param": None, "code": 500,
    }


# -- row 6: streaming HarmonyError in current vLLM --------------------------------------------------


def test_row6_return_after_end_fails_mid_stream_with_500_chunk():
    # harmony_errors="raise"; vLLM 0.32/0.33 skip the stray <|return|> (HarmonyParser.process_chunk).
    skipped = sse(chat("vllm", "<|channel|>analysis<|message|>Hi<|end|><|return|>", {"harmony_errors": "skip"}, stream=True))
    assert skipped[-1] == "[DONE]" and "error" not in skipped[-2]
    chunks = sse(chat("vllm", "<|channel|>analysis<|message|>Hi<|end|><|return|>", {"harmony_errors": "raise"}, stream=True))
    assert chunks[-2:] == [
        {"error": {"message": "Unexpected token 200002 while expecting start token 200006", "type": "InternalServerError", "param": None, "code": 500}},
        "[DONE]",
    ]
    assert [c["choices"][0]["delta"] for c in chunks[1:-2]] == [{"reasoning": "Hi"}]


# -- row 8: v0.10.1's two-message assertion ----------------------------------------------------------


def test_row8_three_messages_is_400_expected_2_output_messages():
    reply = chat("vllm-0.10.1", PREAMBLE_THEN_ANSWER)
    assert reply.status == 400
    assert reply.body == (
        b'{"object":"error","message":"Expected 2 output messages (reasoning and final), but got 3.",'
        b'"type":"BadRequestError","param":null,"code":400}'
    )


def test_row8_two_messages_answer_with_reasoning_content_and_empty_tool_calls():
    reply = chat("vllm-0.10.1", ANSWER)
    data = body(reply)
    assert data["choices"][0] == {
        "index": 0,
        "message": {
            "role": "assistant", "content": "2 + 2 = 4.", "refusal": None, "annotations": None, "audio": None,
            "function_call": None, "tool_calls": [], "reasoning_content": "User asks 2+2.",
        },
        "logprobs": None,
        "finish_reason": "stop",
        "stop_reason": None,
    }
    assert "prompt_token_ids" not in data


def test_row8_tool_call_is_500_not_supported():
    reply = chat("vllm-0.10.1", TOOL_CALL, tools=WEATHER)
    assert reply.status == 500
    assert body(reply)["message"] == (
        "Tool call in Chat Completion API is not supported for gpt-oss yet. Please use Responses API instead."
    )


def test_v0_10_1_stream_leaks_tool_call_json_into_reasoning_content():
    chunks = sse(chat("vllm-0.10.1", TOOL_CALL, tools=WEATHER, stream=True))
    reasoning = "".join(c["choices"][0]["delta"].get("reasoning_content", "") for c in chunks[1:-1])
    assert reasoning == 'Need weather.{"location":\n "Paris"}'
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop" and chunks[-2]["choices"][0]["stop_reason"] == 200012
    assert "token_ids" not in chunks[-2]["choices"][0]


def test_v0_10_1_stream_without_reasoning_sends_no_finish_chunk():
    chunks = sse(chat("vllm-0.10.1", ANSWER, stream=True, include_reasoning=False))
    assert [c["choices"][0]["delta"] for c in chunks[1:-1]] == [{"content": ""}, {"content": "2"}, {"content": " +"},
        {"content": " "}, {"content": "2"}, {"content": " ="}, {"content": " "}, {"content": "4"}, {"content": "."}]
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1])


# -- row 9: tool call duplicated in content before PR #25514 ---------------------------------------


def test_row9_before_pr_25514_the_call_is_also_the_content():
    got = message(chat("vllm-2025", TOOL_CALL, {"tool_call_in_content": True}, tools=WEATHER))
    assert got["content"] == '{"location":\n "Paris"}'
    assert [c["function"] for c in got["tool_calls"]] == [{"name": "get_weather", "arguments": '{"location":\n "Paris"}'}]
    assert got["reasoning_content"] == "Need weather."


def test_row9_after_pr_25514_content_is_null_and_arguments_reserialised():
    reply = chat("vllm-2025", TOOL_CALL, tools=WEATHER)
    got = message(reply)
    assert got["content"] is None
    assert [c["function"] for c in got["tool_calls"]] == [{"name": "get_weather", "arguments": '{"location": "Paris"}'}]
    assert got["tool_calls"][0]["id"].startswith("chatcmpl-tool-")
    assert body(reply)["choices"][0]["finish_reason"] == "tool_calls"


def test_2025_drops_every_non_functions_recipient_and_last_final_wins():
    text = (
        '<|channel|>commentary to=repo_browser.open_file json<|message|>{"path":"a"}<|end|>'
        "<|start|>assistant<|channel|>commentary to=get_weather json<|message|>{}<|end|>"
        "<|start|>assistant<|channel|>final<|message|>first<|end|>"
        "<|start|>assistant<|channel|>final<|message|>second<|return|>"
    )
    got = message(chat("vllm-2025", text, tools=WEATHER))
    assert got["tool_calls"] == [] and got["content"] == "second"
    assert got["reasoning_content"] == '{"path":"a"}\n{}\nfirst'


# -- row 10: <|channel|> leaked into the tool name -----------------------------------------------


def test_row10_channel_token_leaks_into_the_tool_name():
    """vllm#32587's tool name came from openai-harmony 0.0.8's header parse; oss-harmony 0.0.11
    (vLLM 0.32/0.33's dependency) cuts the second ``<|channel|>`` out: the tool is ``bash``."""
    text = "<|channel|>commentary to=functions.bash<|channel|>commentary json<|message|>{}<|call|>"
    old = {"harmony_library": "openai-harmony-0.0.8"}
    for profile in ("vllm", "vllm-2025"):
        got = message(chat(profile, text, old, tools=(ToolDecl("function", "bash"),)))
        assert [c["function"]["name"] for c in got["tool_calls"]] == ["bash<|channel|>commentary"]
    got = message(chat("vllm", text, tools=(ToolDecl("function", "bash"),)))
    assert [c["function"]["name"] for c in got["tool_calls"]] == ["bash"]


# -- row 11: silent null content when the parser ends non-terminal --------------------------------

OPEN_HEADER = "<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant<|channel|>commentary to=functions.x"


def test_row11_flush_raw_recovery_off_is_silent_null_content():
    got = message(chat("vllm", OPEN_HEADER, {"flush_raw_recovery": False}))
    assert got["content"] is None and got["reasoning"] == "Hmm."
    reply = chat("vllm", OPEN_HEADER, {"flush_raw_recovery": False})
    assert body(reply)["choices"][0]["finish_reason"] == "stop"


def test_row11_flush_raw_recovery_on_surfaces_the_raw_header():
    got = message(chat("vllm", OPEN_HEADER, {"end_of_script_eos": False}))
    assert got["content"] == "<|start|>assistant<|channel|>commentary to=functions.x"
    # With the scripted engine's <|endoftext|> after the script (end_of_script_eos, the default), the
    # open header holds that token too, as the vLLM 0.33 golden scenario-answer-cut-inside-header shows.
    got = message(chat("vllm", OPEN_HEADER))
    assert got["content"] == "<|start|>assistant<|channel|>commentary to=functions.x<|endoftext|>"


# -- rows 12 / 13: tool_choice ignored ---------------------------------------------------------------

WEATHER_CALL = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Paris"}<|call|>'


def test_row12_tool_choice_none_drops_calls_unless_ignored():
    reply = chat("vllm", WEATHER_CALL, tools=WEATHER, tool_choice="none")
    assert "tool_calls" not in message(reply) and body(reply)["choices"][0]["finish_reason"] == "stop"
    for profile, switches in (("vllm", {"tool_choice_none": "ignored"}), ("vllm-2025", None)):
        reply = chat(profile, WEATHER_CALL, switches, tools=WEATHER, tool_choice="none")
        assert [c["function"]["name"] for c in message(reply)["tool_calls"]] == ["get_weather"]
        assert body(reply)["choices"][0]["finish_reason"] == "tool_calls"


def test_row13_tool_choice_required_with_a_prose_reply():
    # Releases before 0.33 said tool_calls for required + a prose reply (finish_tool_calls_needs_calls=False,
    # vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/chat_completion/serving.py); 0.33's
    # resolve_finish_reason says stop (vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/tool_calls_utils.py).
    reply = chat("vllm", ANSWER, {"finish_tool_calls_needs_calls": False}, tools=WEATHER, tool_choice="required")
    assert body(reply)["choices"][0]["finish_reason"] == "tool_calls"
    assert body(chat("vllm", ANSWER, tools=WEATHER, tool_choice="required"))["choices"][0]["finish_reason"] == "stop"
    reply = chat("vllm", ANSWER, {"tool_choice_required": "ignored"}, tools=WEATHER, tool_choice="required")
    assert "tool_calls" not in message(reply) and body(reply)["choices"][0]["finish_reason"] == "stop"
    reply = chat("vllm-2025", ANSWER, tools=WEATHER, tool_choice="required")
    assert message(reply)["tool_calls"] == [] and body(reply)["choices"][0]["finish_reason"] == "stop"


# -- stream rules -------------------------------------------------------------------------------------


def _stream_deltas(switches: dict[str, Any]) -> list[dict[str, Any]]:
    text = (
        "<|channel|>analysis<|message|>A<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Pre<|end|>"
        '<|start|>assistant<|channel|>analysis to=functions.f<|message|>{"x":1}<|call|>'
    )
    chunks = sse(chat("vllm-2025", text, switches, stream=True, tools=(ToolDecl("function", "f"),)))
    return [c["choices"][0]["delta"] for c in chunks[1:-1]]


def test_inline_stream_rule_drops_preambles_and_keeps_analysis_calls_as_reasoning():
    deltas = _stream_deltas({})
    assert deltas[:2] == [{"reasoning_content": ""}, {"reasoning_content": "A"}]
    assert {"content": "Pre"} not in deltas and not any("tool_calls" in d for d in deltas)
    assert "".join(d.get("reasoning_content", "") for d in deltas) == 'A{"x":1}'


def test_stream_harmony_rule_streams_preambles_as_content_and_analysis_calls_as_tool_calls():
    deltas = _stream_deltas({"chat_stream": "stream_harmony"})
    assert {"content": "Pre"} in deltas and {"reasoning_content": ""} not in deltas
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert calls[0]["function"] == {"name": "f", "arguments": ""} and calls[0]["index"] == 0
    assert "".join(c["function"].get("arguments", "") for c in calls[1:]) == '{"x":1}'


# -- switches through the server ------------------------------------------------------------------


def test_switches_validate_and_apply_per_request():
    with pytest.raises(ValueError, match="chat_parser must be"):
        get_profile("vllm", {"chat_parser": "nope"})
    server = MockServer(scenario="clean-answer", profile="vllm-2025")
    raw = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "Hi"}]}).encode()
    plain = json.loads(server.handle("chat", raw, {}).body)["choices"][0]["message"]
    assert "reasoning_content" in plain and "reasoning" not in plain
    switched = server.handle("chat", raw, {"x-mockoss-switch": "reasoning_field=reasoning"})
    got = json.loads(switched.body)["choices"][0]["message"]
    assert "reasoning" in got and "reasoning_content" not in got


def test_flat_error_body_switch_applies_to_every_error():
    server = MockServer(scenario="clean-answer", profile="vllm-0.10.1")
    reply = server.handle("chat", json.dumps({"model": "other", "messages": [{"role": "user", "content": "x"}]}).encode(), {})
    assert reply.status == 404
    assert json.loads(reply.body) == {
        "object": "error", "message": "The model `other` does not exist.", "type": "NotFoundError", "param": "model", "code": 404,
    }
