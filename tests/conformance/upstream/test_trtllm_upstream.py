"""TensorRT-LLM's own Harmony adapter tests, converted: every test of
``tests/unittest/llmapi/apps/test_harmony_parsing.py`` (NVIDIA/TensorRT-LLM@2d6bc802…, the fixes of
NVIDIA/TensorRT-LLM#12046 and NVIDIA/TensorRT-LLM#12292) and of
``tests/unittest/llmapi/apps/test_harmony_channel_validation.py`` (NVIDIA/TensorRT-LLM@30d2c50c…,
NVIDIA/TensorRT-LLM#7849), named ``Class::test``.

The upstream tests drive ``tensorrt_llm.serve.harmony_adapter`` pieces, often with a mocked
parser; here the same inputs go through their counterparts in :mod:`mockoss.profiles.trtllm`:
``HarmonyStreamState._create_delta_from_parser_state`` → ``StreamState.delta_from_parser``,
``_parse_tool_call_from_harmony_message`` → ``tool_call``, ``harmony_output_to_openai`` with a
patched parse → ``map_messages`` on the same messages, ``_merge_consecutive_deltas`` →
``merge_deltas``, ``_create_usage_info`` → ``usage_info``, ``_create_response_message`` →
``response_message``, ``create_openai_streaming_response`` with patched deltas → ``wire_delta``.
Tests of ``handle_streaming_response`` with a mocked engine result become streams of a scripted
completion whose engine batches (``stream_interval``) put the same tokens in the same place; the
upstream assertions are kept. Not converted (no gpt-oss behaviour, or an internal registry mockoss
does not have): ``test_none_tokenizer_num_postprocess_workers`` (``logit_bias`` without a
tokenizer) and ``TestHarmonyStreamStateChannelValidation::test_stream_state_cleanup`` (the
adapter's per-request state map). TensorRT-LLM's GPU tests of the served model
(``_test_openai_chat_harmony.py``) need the model and are not converted.
"""

from __future__ import annotations

import json

import pytest
from openai_harmony import Message, Role
from upstream_support import case

from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, IdSource, RequestContext
from mockoss.profiles.trtllm import TrtllmProfile
from mockoss.profiles.trtllm.adapter import (
    StreamState,
    ToolFilter,
    check_channel_valid,
    map_messages,
    merge_deltas,
    tool_call,
)
from mockoss.profiles.trtllm.chat import response_message, usage_info, wire_delta

PARSING = "NVIDIA/TensorRT-LLM@2d6bc80262dd1d2c073bbcd2fb3bb57b39c305b7:tests/unittest/llmapi/apps/test_harmony_parsing.py"
CHANNELS = "NVIDIA/TensorRT-LLM@30d2c50cffa7cb02284d339c0caa335431df007b:tests/unittest/llmapi/apps/test_harmony_channel_validation.py"


def _p(test: str, *values, xfail: str | None = None):
    return case("trtllm", PARSING, test, *values, xfail=xfail)


def _c(test: str, *values, xfail: str | None = None):
    return case("trtllm", CHANNELS, test, *values, xfail=xfail)


def _one(source: str, test: str, *, xfail: str | None = None):
    """The marks of a single (not parametrized) converted test."""
    def mark(function):
        function = pytest.mark.upstream("trtllm", f"{source}::{test}")(function)
        return pytest.mark.xfail(strict=True, reason=xfail)(function) if xfail else function
    return mark


def _ids():
    counter = iter(range(10**6))
    return lambda: f"call_{next(counter):08x}"


def _state(tools: ToolFilter | None = None) -> StreamState:
    return StreamState(tools or ToolFilter(), _ids())


def _message(text: str, *, channel: str | None = None, recipient: str | None = None, content_type: str | None = None) -> Message:
    message = Message.from_role_and_content(Role.ASSISTANT, text)
    if channel:
        message = message.with_channel(channel)
    if recipient:
        message = message.with_recipient(recipient)
    if content_type:
        message = message.with_content_type(content_type)
    return message


def _stream(raw: str, *, max_tokens: int | None = None, body: dict | None = None, **switches) -> list:
    """The chunks of a streamed reply (``"[DONE]"`` for the end frame)."""
    profile = TrtllmProfile(**switches)
    request = ChatRequestView(model="test-model", stream=True, max_tokens=max_tokens, body=body or {})
    reply = profile.chat(Completion.from_text(raw), request, RequestContext(ids=IdSource(0, 0), created=1, prompt_tokens=10))
    return ["[DONE]" if frame == b"data: [DONE]\n\n" else json.loads(frame[len(b"data: "):]) for frame in reply.frames]


# -- test_harmony_parsing.py: streamed deltas (TestStreamingToolCallOnAnalysisChannel, TestStreamingNonFunctionsToolCall)

@pytest.mark.parametrize(
    ("channel", "recipient", "text", "tools", "expected"),
    [
        _p("TestStreamingToolCallOnAnalysisChannel::test_functions_tool_call_on_analysis_channel", "analysis", "functions.get_weather", '{"city":"SF"}', None, ("call", "get_weather", '{"city":"SF"}')),
        _p("TestStreamingToolCallOnAnalysisChannel::test_functions_tool_call_on_commentary_channel", "commentary", "functions.get_weather", '{"city":"SF"}', None, ("call", "get_weather", '{"city":"SF"}')),
        _p("TestStreamingToolCallOnAnalysisChannel::test_functions_tool_call_on_analysis_strips_prefix", "analysis", "functions.my_tool", "{}", None, ("call", "my_tool", "{}")),
        _p("TestStreamingToolCallOnAnalysisChannel::test_functions_tool_call_filtered_when_not_in_available_tools", "analysis", "functions.get_weather", "{}", {"other_tool"}, None),
        _p("TestStreamingToolCallOnAnalysisChannel::test_analysis_without_recipient_returns_reasoning", "analysis", None, "Let me think...", None, ("reasoning", "Let me think...")),
        _p("TestStreamingNonFunctionsToolCall::test_non_functions_recipient_on_commentary", "commentary", "python", 'print("hello")', None, ("call", "python", 'print("hello")')),
        _p("TestStreamingNonFunctionsToolCall::test_non_functions_recipient_filtered", "commentary", "python", "code", {"browser.search"}, None),
        _p("TestStreamingNonFunctionsToolCall::test_commentary_assistant_recipient_returns_preamble", "commentary", "assistant", "Action plan:", None, ("content",)),
        _p("TestStreamingNonFunctionsToolCall::test_commentary_no_recipient_returns_preamble", "commentary", None, "Step 1: ...", None, ("content",)),
    ],
)
def test_streamed_delta(channel, recipient, text, tools, expected):
    delta = _state(ToolFilter(True, frozenset(tools)) if tools else None).delta_from_parser(channel, recipient, text)
    if expected is None:
        assert delta is None
    elif expected[0] == "call":
        assert "reasoning" not in delta
        [call] = delta["tool_calls"]
        assert (call["function"]["name"], call["function"]["arguments"]) == expected[1:]
    elif expected[0] == "reasoning":
        assert delta == {"reasoning": expected[1]} and "tool_calls" not in delta
    else:
        assert "content" in delta and delta.get("tool_calls", []) == []


# -- TestParseToolCallFromHarmonyMessage ---------------------------------------------------------

@pytest.mark.parametrize(
    ("recipient", "text", "content_type", "expected"),
    [
        _p("TestParseToolCallFromHarmonyMessage::test_parse_functions_prefixed_recipient_strips_prefix", "functions.get_weather", '{"city":"SF"}', "<|constrain|>json", ("get_weather", '{"city":"SF"}')),
        _p("TestParseToolCallFromHarmonyMessage::test_parse_code_content_type_strips_prefix", "functions.run_python", "x = 1 + 1", "code", ("run_python", "x = 1 + 1")),
        _p("TestParseToolCallFromHarmonyMessage::test_parse_non_prefixed_recipient_unchanged", "browser.search", '{"query":"test"}', "<|constrain|>json", ("browser.search", '{"query":"test"}')),
        _p("TestParseToolCallFromHarmonyMessage::test_parse_assistant_recipient_returns_none", "assistant", "hello", "<|constrain|>json", None),
        _p("TestParseToolCallFromHarmonyMessage::test_parse_no_recipient_returns_none", None, "hello", "<|constrain|>json", None),
    ],
)
def test_parse_tool_call(recipient, text, content_type, expected):
    call = tool_call(_message(text, channel="commentary", recipient=recipient, content_type=content_type), "call_0123abcd", strip_code_prefix=True)
    if expected is None:
        assert call is None
    else:
        assert (call["function"]["name"], call["function"]["arguments"], call["type"]) == (*expected, "function")
        assert call["id"].startswith("call_")


# -- TestNonStreamingToolCallOnAnalysisChannel ---------------------------------------------------

@pytest.mark.parametrize(
    ("channel", "recipient", "text", "content_type", "name"),
    [
        _p("TestNonStreamingToolCallOnAnalysisChannel::test_nonstreaming_functions_tool_on_analysis_channel", "analysis", "functions.get_weather", '{"city":"SF"}', "<|constrain|>json", "get_weather"),
        _p("TestNonStreamingToolCallOnAnalysisChannel::test_nonstreaming_functions_tool_on_commentary_channel", "commentary", "functions.search", '{"q":"test"}', "<|constrain|>json", "search"),
        _p("TestNonStreamingToolCallOnAnalysisChannel::test_nonstreaming_non_functions_tool_on_commentary", "commentary", "python", "x = 1", "code", "python"),
        _p("TestNonStreamingToolCallOnAnalysisChannel::test_nonstreaming_analysis_without_recipient_is_reasoning", "analysis", None, "Let me think about this...", None, None),
    ],
)
def test_non_streamed_grouping(channel, recipient, text, content_type, name):
    result = map_messages([_message(text, channel=channel, recipient=recipient, content_type=content_type)], ToolFilter(), _ids(), analysis_calls=True)
    if name is None:
        assert "Let me think" in result["reasoning"]
        assert "tool_calls" not in result or len(result.get("tool_calls", [])) == 0
    else:
        assert len(result["tool_calls"]) == 1 and result["tool_calls"][0]["function"]["name"] == name


# -- TestReasoningContentField ------------------------------------------------------------------

@_one(PARSING, "TestReasoningContentField::test_streaming_delta_has_reasoning_content")
def test_streaming_delta_has_reasoning_content():
    delta, should_stop = wire_delta({"reasoning": "step 1: think"}, set(), alias=True)
    assert not should_stop
    assert delta["reasoning"] == "step 1: think" and delta["reasoning_content"] == "step 1: think"


@_one(PARSING, "TestReasoningContentField::test_create_response_message_has_reasoning_content")
def test_create_response_message_has_reasoning_content():
    result = response_message({"role": "assistant", "content": "The answer is 42.", "reasoning": "Let me calculate..."}, alias=True)
    assert result["reasoning"] == "Let me calculate..." and result["reasoning_content"] == "Let me calculate..."


@_one(PARSING, 
    "TestReasoningContentField::test_create_response_message_without_reasoning",
    xfail="the upstream dict leaves both keys out; ChatMessage(**…).model_dump(), what the server sends, has them as null, so mockoss's message holds them",
)
def test_create_response_message_without_reasoning():
    result = response_message({"role": "assistant", "content": "Hello!"}, alias=True)
    assert "reasoning" not in result and "reasoning_content" not in result


# -- TestRemainingTokensOnDone (handle_streaming_response with done=True) --------------------------

TAIL = "<|channel|>final<|message|>Hello world tail<|return|>"  # 7 tokens: " tail" is the 6th


@_one(PARSING, "TestRemainingTokensOnDone::test_done_with_remaining_tokens_processes_them")
def test_done_with_remaining_tokens_processes_them():
    # stream_interval 5: responses after tokens 1-5 and at the end (" tail", then <|return|>).
    chunks = _stream(TAIL, stream_interval=5)
    contents = [c["choices"][0]["delta"].get("content") for c in chunks[:-1] if c["choices"]]
    tail = contents.index(" tail")
    finish = next(i for i, c in enumerate(chunks[:-1]) if c["choices"] and "finish_reason" in c["choices"][0])
    assert 0 < tail < finish and "".join(filter(None, contents)) == "Hello world tail"


@_one(PARSING, "TestRemainingTokensOnDone::test_done_with_empty_tokens_skips_processing")
def test_done_with_empty_tokens_skips_processing():
    chunks = _stream(TAIL)  # the last response holds only <|return|>, which is not output
    assert [c["choices"][0]["delta"] if c["choices"] else "usage" for c in chunks[-4:-1]] == [{"content": " tail"}, {}, "usage"]
    assert chunks[-3]["choices"][0]["finish_reason"] == "stop"


@_one(PARSING, "TestRemainingTokensOnDone::test_done_first_iteration_prepends_role_delta")
def test_done_first_iteration_prepends_role_delta():
    chunks = _stream("<|channel|>final<|message|>hi<|return|>", stream_interval=100)  # one response, done
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[1]["choices"][0]["delta"] == {"content": "hi"}


# -- TestMergeConsecutiveDeltas ------------------------------------------------------------------

def _call(call_id: str, args: str) -> dict:
    return {"tool_calls": [{"id": call_id, "function": {"arguments": args}}]}


@pytest.mark.parametrize(
    ("deltas", "expected"),
    [
        _p("TestMergeConsecutiveDeltas::test_empty_list", [], []),
        _p("TestMergeConsecutiveDeltas::test_single_delta_unchanged", [{"reasoning": "a"}], [{"reasoning": "a"}]),
        _p("TestMergeConsecutiveDeltas::test_merge_consecutive_reasoning", [{"reasoning": "a"}, {"reasoning": "b"}], [{"reasoning": "ab"}]),
        _p("TestMergeConsecutiveDeltas::test_merge_three_consecutive_reasoning", [{"reasoning": "a"}, {"reasoning": "b"}, {"reasoning": "c"}], [{"reasoning": "abc"}]),
        _p("TestMergeConsecutiveDeltas::test_merge_consecutive_content", [{"content": "hello "}, {"content": "world"}], [{"content": "hello world"}]),
        _p("TestMergeConsecutiveDeltas::test_merge_content_with_tool_calls_key", [{"content": "Step 1", "tool_calls": []}, {"content": " done", "tool_calls": []}], [{"content": "Step 1 done", "tool_calls": []}]),
        _p("TestMergeConsecutiveDeltas::test_no_merge_content_different_keys", [{"content": "a"}, {"content": "b", "tool_calls": []}], 2),
        _p("TestMergeConsecutiveDeltas::test_merge_consecutive_tool_calls_same_id", [_call("call_1", '{"a'), _call("call_1", '":1}')], [_call("call_1", '{"a":1}')]),
        _p("TestMergeConsecutiveDeltas::test_no_merge_tool_calls_different_ids", [_call("call_1", "a"), _call("call_2", "b")], 2),
        _p("TestMergeConsecutiveDeltas::test_no_merge_reasoning_with_extra_keys", [{"reasoning": "a", "content": "x"}, {"reasoning": "b"}], 2),
        _p("TestMergeConsecutiveDeltas::test_interleaved_types_not_merged", [{"reasoning": "a"}, {"content": "b"}, {"reasoning": "c"}], 3),
        _p(
            "TestMergeConsecutiveDeltas::test_mixed_sequence",
            [{"reasoning": "think "}, {"reasoning": "more"}, {"content": "The ", "tool_calls": []}, {"content": "answer", "tool_calls": []}, _call("c1", "{}")],
            [{"reasoning": "think more"}, {"content": "The answer", "tool_calls": []}, _call("c1", "{}")],
        ),
        _p("TestMergeConsecutiveDeltas::test_should_stop_not_merged", [{"should_stop": "reason1"}, {"should_stop": "reason2"}], 2),
        _p("TestMergeConsecutiveDeltas::test_tool_calls_with_content_key_not_merged", [_call("c1", "a"), {**_call("c1", "b"), "content": "x"}], 2),
    ],
)
def test_merge_consecutive_deltas(deltas, expected):
    merged = merge_deltas(deltas)
    assert (len(merged) if isinstance(expected, int) else merged) == expected


# -- TestCreateUsageInfoCachedTokens, TestStreamOptionsUsage ---------------------------------------

@pytest.mark.parametrize(
    ("prompt", "outputs", "cached", "expected"),
    [
        _p("TestCreateUsageInfoCachedTokens::test_cached_tokens_zero", 10, [5], 0, (10, 5, 15, 0)),
        _p("TestCreateUsageInfoCachedTokens::test_cached_tokens_positive", 100, [20], 50, (100, 20, 120, 50)),
        _p("TestCreateUsageInfoCachedTokens::test_cached_tokens_default", 10, [5], None, (10, 5, 15, 0)),
        _p("TestCreateUsageInfoCachedTokens::test_usage_token_counts_correct_with_cached", 100, [30, 20], 40, (100, 50, 150, 40)),
    ],
)
def test_usage_info(prompt, outputs, cached, expected):
    usage = usage_info(prompt, outputs) if cached is None else usage_info(prompt, outputs, cached=cached)
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"], usage["prompt_tokens_details"]["cached_tokens"]) == expected


@pytest.mark.parametrize(
    ("options", "usage_chunks"),
    [
        _p("TestStreamOptionsUsage::test_stream_options_include_usage_true", {"include_usage": True}, 1),
        _p("TestStreamOptionsUsage::test_stream_options_include_usage_false", {"include_usage": False}, 0),
        _p("TestStreamOptionsUsage::test_stream_options_none_defaults_to_include", None, 1),
    ],
)
def test_stream_options_usage(options, usage_chunks):
    body = {} if options is None else {"stream_options": options}
    chunks = _stream("<|channel|>final<|message|>Hello<|return|>", body=body)
    assert sum(1 for c in chunks if c != "[DONE]" and "prompt_tokens" in c.get("usage", {})) == usage_chunks


# -- test_harmony_channel_validation.py ----------------------------------------------------------

@pytest.mark.parametrize(
    ("start", "channels", "valid", "after"),
    [
        _c("TestChannelValidation::test_empty_list_first_channel", [], ["analysis"], True, ["analysis"]),
        _c("TestChannelValidation::test_different_consecutive_channels", ["analysis"], ["final"], True, ["analysis", "final"]),
        _c("TestChannelValidation::test_same_consecutive_channel_not_duplicated", ["analysis"], ["analysis"], True, ["analysis"]),
        _c("TestChannelValidation::test_valid_two_channel_sequence", ["analysis"], ["final", "final"], True, ["analysis", "final"]),
        _c("TestChannelValidation::test_invalid_three_channel_sequence_with_analysis_and_final", ["analysis", "final"], ["commentary"], False, ["analysis", "final", "commentary"]),
        _c("TestChannelValidation::test_invalid_extra_channel_after_complete_message", ["analysis"], ["final", "analysis"], False, ["analysis", "final", "analysis"]),
        _c("TestChannelValidation::test_three_channels_without_both_analysis_and_final", ["commentary"], ["final", "other"], True, ["commentary", "final", "other"]),
        _c("TestChannelValidation::test_only_final_channel", [], ["final"], True, ["final"]),
        _c("TestChannelValidation::test_only_analysis_channel", [], ["analysis"], True, ["analysis"]),
        _c("TestChannelValidation::test_multiple_different_channels_without_trigger", [], ["preamble", "commentary", "other"], True, ["preamble", "commentary", "other"]),
        _c("TestChannelValidation::test_analysis_final_exact_sequence", [], ["analysis", "final"], True, ["analysis", "final"]),
        _c("TestChannelValidation::test_final_analysis_then_third", [], ["final", "analysis", "other"], False, ["final", "analysis", "other"]),
        _c("TestIntegrationChannelValidation::test_channel_validation_order_matters", [], ["extra", "analysis", "final", "another"], False, ["extra", "analysis", "final", "another"]),
        _c("TestIntegrationChannelValidation::test_repeated_same_channel_still_counts_as_two", [], ["analysis", "analysis", "final", "other"], False, ["analysis", "final", "other"]),
        _c("TestIntegrationChannelValidation::test_edge_case_exactly_two_channels", [], ["analysis", "final", "final"], True, ["analysis", "final"]),
        _c("TestIntegrationChannelValidation::test_neither_analysis_nor_final_allows_many_channels", [], [f"channel_{i}" for i in range(10)], True, [f"channel_{i}" for i in range(10)]),
        _c("TestIntegrationChannelValidation::test_only_one_of_analysis_or_final_allows_many_channels", ["final"], [f"channel_{i}" for i in range(10)], True, ["final", *(f"channel_{i}" for i in range(10))]),
    ],
)
def test_check_channel_valid(start, channels, valid, after):
    generated = list(start)
    results = [check_channel_valid(generated, channel) for channel in channels]
    assert results[-1] is valid and generated == after


@_one(CHANNELS, "TestHarmonyStreamStateChannelValidation::test_stream_state_tracks_generated_channels")
def test_stream_state_tracks_generated_channels():
    state = _state()
    assert state.generated == []
    state.delta_from_parser("analysis", None, "think")
    state.delta_from_parser("final", None, "answer")
    assert state.generated == ["analysis", "final"]


@_one(CHANNELS, "TestHarmonyStreamStateChannelValidation::test_create_openai_streaming_response_with_should_stop_signal")
def test_streaming_response_with_should_stop_signal():
    delta, should_stop = wire_delta({"should_stop": "Repeated message"}, set(), alias=True)
    assert should_stop is True and delta == {}
    # and in a stream: the model repeats analysis after final; the chunk that stops it says "stop"
    chunks = _stream("<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>b<|end|><|start|>assistant<|channel|>analysis<|message|>c<|end|>")
    stop = [c for c in chunks if c != "[DONE]" and c["choices"] and c["choices"][0].get("finish_reason")]
    assert [c["choices"][0] for c in stop] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]


@_one(CHANNELS, "TestHarmonyStreamStateChannelValidation::test_create_openai_streaming_response_without_stop_signal")
def test_streaming_response_without_stop_signal():
    results = [wire_delta(d, set(), alias=True) for d in ({"reasoning": "some reasoning"}, {"content": "some content"})]
    assert [should_stop for _, should_stop in results] == [False, False] and len(results) == 2


@_one(CHANNELS, "TestHandleStreamingResponse::test_handle_streaming_response_aborts_on_invalid_channels")
def test_stream_aborts_on_invalid_channels():
    raw = (
        "<|channel|>analysis<|message|>thinking<|end|><|start|>assistant<|channel|>final<|message|>Could you provide information?<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>Could you provide information? Could you<|end|>"
    )
    chunks = _stream(raw)
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks[:-1] if c["choices"])
    assert content == "Could you provide information?"
    assert chunks[-3]["choices"][0]["finish_reason"] == "stop" and chunks[-2]["choices"] == [] and chunks[-1] == "[DONE]"


@_one(CHANNELS, "TestHandleStreamingResponse::test_handle_streaming_response_continues_on_valid_channels")
def test_stream_continues_on_valid_channels():
    chunks = _stream("<|channel|>analysis<|message|>thinking...<|end|><|start|>assistant<|channel|>final<|message|>response<|return|>")
    deltas = [c["choices"][0]["delta"] for c in chunks[:-1] if c["choices"]]
    assert "".join(d.get("reasoning", "") for d in deltas) == "thinking..." and "".join(d.get("content", "") for d in deltas) == "response"
    assert chunks[-3]["choices"][0]["finish_reason"] == "stop" and "stop_reason" not in chunks[-3]["choices"][0]
