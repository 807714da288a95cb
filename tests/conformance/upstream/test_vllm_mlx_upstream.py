"""vllm-mlx's own gpt-oss parser tests, converted: ``tests/test_harmony_parsers.py`` and
``tests/test_reasoning_parser.py::TestGptOssParser`` of the vllm-mlx 0.6.0 sdist
(``pip download --no-deps --no-binary :all: vllm-mlx==0.6.0``), cited as
``waybarrios/vllm-mlx@v0.6.0:tests/<file>::Class::test``. Each upstream input goes through the
counterpart in :mod:`mockoss.profiles.vllm_mlx.parsers` and the upstream assertion is kept.

Converted here: every test of the Harmony tool parser, the ``harmony`` reasoning parser, the edge
cases and the ``gpt_oss`` reasoning parser, the gpt-oss cases of the output cleaner
(``tests/test_api_utils.py``), plus the server's gpt-oss glue
(``tests/test_gpt_oss_tool_parsing.py`` and the two Harmony tests of ``test_server.py``
``TestHelperFunctions``, whose monkeypatched reasoning and tool parsers become functions passed
to :func:`~mockoss.profiles.vllm_mlx.chat.extract_reasoning_and_calls`). ``reset()`` /
``reset_state()`` become a fresh per-request parser, which is what the server builds for each
stream. Left out: ``TestHarmonyToolDefinitionConverter`` (prompt rendering, which mockoss does not
emulate; so is ``tests/test_harmony_render.py``), ``TestHarmonyReasoningParser::test_streaming_reset`` (it sets private attributes and
calls ``reset_state``; mockoss has no reset, a request gets a new parser) and
``test_tool_call_parser_accepts_harmony_aliases`` (argparse of the CLI; the aliases
are checked as switch values instead).
"""

from __future__ import annotations

import json

import pytest
from upstream_support import case

from mockoss.profiles.vllm_mlx.chat import extract_reasoning_and_calls
from mockoss.profiles.vllm_mlx.parsers import (
    SPECIAL_TOKENS,
    GptOssReasoningStream,
    HarmonyReasoningStream,
    HarmonyToolStream,
    clean_output_text,
    gpt_oss_extract,
    harmony_extract,
    harmony_tool_extract,
)
from mockoss.profiles.vllm_mlx.stream import markup_possible

SRC = "waybarrios/vllm-mlx@v0.6.0:tests/test_harmony_parsers.py"
SRC_GPT_OSS = "waybarrios/vllm-mlx@v0.6.0:tests/test_reasoning_parser.py"


def _t(test, *values):
    return case("vllm-mlx", SRC, test, *values)


CALL_SF = '<|start|>\n<|channel|>commentary to=functions.get_weather\n<|constrain|>json\n<|message|>{"location": "San Francisco", "unit": "celsius"}\n<|call|>'
TWO = '<|start|>\n<|channel|>commentary to=functions.get_weather\n<|constrain|>json\n<|message|>{"location": "SF"}\n<|call|>\n<|channel|>commentary to=functions.get_time\n<|constrain|>json\n<|message|>{"timezone": "PST"}\n<|call|>'
FLOW = '<|start|>\n<|channel|>analysis\n<|message|>Think 1.\n<|end|>\n<|channel|>commentary to=functions.search\n<|constrain|>json\n<|message|>{"q": "test"}\n<|call|>\n<|channel|>analysis\n<|message|>Think 2.\n<|end|>\n<|channel|>final\n<|message|>Done.\n<|return|>'


@pytest.mark.parametrize(
    ("text", "names", "arguments", "content"),
    [
        _t("TestHarmonyToolParser::test_single_tool_call", CALL_SF, ["get_weather"], [{"location": "San Francisco", "unit": "celsius"}], None),
        _t("TestHarmonyToolParser::test_tool_call_with_analysis_and_final", '<|start|>\n<|channel|>analysis\n<|message|>The user wants weather. I should call get_weather.\n<|end|>\n<|channel|>commentary to=functions.get_weather\n<|constrain|>json\n<|message|>{"location": "SF"}\n<|call|>', ["get_weather"], None, None),
        _t("TestHarmonyToolParser::test_final_response_only", "<|start|>\n<|channel|>final\n<|message|>The weather in San Francisco is 72F and sunny!\n<|return|>", [], None, "The weather in San Francisco is 72F and sunny!"),
        _t("TestHarmonyToolParser::test_multiple_tool_calls", TWO, ["get_weather", "get_time"], None, None),
        _t("TestHarmonyToolParser::test_tool_call_without_constrain", '<|channel|>commentary to=functions.simple_func\n<|message|>{"arg": "value"}\n<|call|>', ["simple_func"], None, None),
        _t("TestHarmonyToolParser::test_malformed_json_arguments", "<|channel|>commentary to=functions.broken_func\n<|constrain|>json\n<|message|>{invalid json here}\n<|call|>", ["broken_func"], ["{invalid json here}"], None),
        _t("TestHarmonyToolParser::test_tool_call_with_final_content", '<|channel|>commentary to=functions.search\n<|constrain|>json\n<|message|>{"query": "python"}\n<|call|>\n<|channel|>final\n<|message|>Here are the results.\n<|return|>', ["search"], None, "Here are the results."),
        _t("TestHarmonyToolParser::test_empty_input", "", [], None, None),
        _t("TestHarmonyToolParser::test_plain_text_input", "Just a regular response.", [], None, "Just a regular response."),
        _t("TestHarmonyToolParser::test_nested_json_arguments", '<|channel|>commentary to=functions.query\n<|constrain|>json\n<|message|>{"filter": {"type": "range", "min": 0, "max": 100}, "sort": "asc"}\n<|call|>', ["query"], [{"filter": {"type": "range", "min": 0, "max": 100}, "sort": "asc"}], None),
        _t("TestHarmonyEdgeCases::test_tool_parser_incomplete_call_with_valid_args", '<|channel|>commentary to=functions.func\n<|message|>{"arg": "value"}', ["func"], [{"arg": "value"}], None),
        _t("TestHarmonyEdgeCases::test_tool_parser_truncated_at_eos_does_not_extract", '<|channel|>commentary to=functions.read_file\n<|message|>{"path": "/etc/hosts"', [], None, None),
        _t("TestHarmonyEdgeCases::test_tool_parser_explicit_terminator_with_invalid_json_keeps_raw", '<|channel|>commentary to=functions.read_file\n<|message|>{"path": "/etc/hosts",}<|call|>', ["read_file"], ['{"path": "/etc/hosts",}'], None),
        _t("TestHarmonyEdgeCases::test_tool_parser_commentary_followed_by_final_extracts_clean_args", '<|channel|>commentary to=functions.get_weather<|message|>{"loc": "SF"}\n<|channel|>final<|message|>Done<|return|>', ["get_weather"], [{"loc": "SF"}], None),
        _t("TestHarmonyEdgeCases::test_tool_parser_truncated_commentary_followed_by_final_no_call", '<|channel|>commentary to=functions.read_file\n<|message|>{"path": "/etc/hosts"\n<|channel|>final<|message|>Done<|return|>', [], None, None),
        _t("TestHarmonyEdgeCases::test_tool_parser_unicode_content", '<|channel|>commentary to=functions.translate\n<|constrain|>json\n<|message|>{"text": "日本語テスト"}\n<|call|>', ["translate"], [{"text": "日本語テスト"}], None),
        _t("TestHarmonyEdgeCases::test_mixed_channels_full_flow", FLOW, ["search"], None, "Done."),
        _t("TestHarmonyEdgeCases::test_tool_parser_empty_arguments", "<|channel|>commentary to=functions.ping\n<|constrain|>json\n<|message|>{}\n<|call|>", ["ping"], [{}], None),
        _t("TestHarmonyEdgeCases::test_tool_parser_whitespace_handling", '<|channel|>commentary to=functions.func\n<|constrain|>json\n<|message|>  {"key": "value"}  \n<|call|>', ["func"], [{"key": "value"}], None),
    ],
)
def test_harmony_tool_parser(text, names, arguments, content):
    calls, found = harmony_tool_extract(text)
    assert [c.name for c in calls] == names
    if arguments is not None:  # a string: kept raw; else the JSON value the arguments decode to
        assert [c.arguments if isinstance(a, str) else json.loads(c.arguments) for c, a in zip(calls, arguments, strict=True)] == arguments
    if content is not None:
        assert found == content


@pytest.mark.parametrize(
    ("text", "reasoning", "content"),
    [
        _t("TestHarmonyReasoningParser::test_extract_analysis_and_final", "<|channel|>analysis\n<|message|>Let me think step by step.\n<|end|>\n<|channel|>final\n<|message|>The answer is 42.\n<|return|>", "Let me think step by step.", "The answer is 42."),
        _t("TestHarmonyReasoningParser::test_no_analysis_channel", "<|channel|>final\n<|message|>Direct answer.\n<|return|>", None, "Direct answer."),
        _t("TestHarmonyReasoningParser::test_analysis_only_no_final", "<|channel|>analysis\n<|message|>Just thinking...\n<|end|>", "Just thinking...", None),
        _t("TestHarmonyReasoningParser::test_empty_input", "", None, None),
        _t("TestHarmonyReasoningParser::test_analysis_with_commentary_and_final", '<|channel|>analysis\n<|message|>Need to call a tool.\n<|end|>\n<|channel|>commentary to=functions.search\n<|constrain|>json\n<|message|>{"q": "test"}\n<|call|>\n<|channel|>final\n<|message|>Found results.\n<|return|>', "Need to call a tool.", "Found results."),
        _t("TestHarmonyEdgeCases::test_reasoning_parser_unicode_content", "<|channel|>analysis\n<|message|>让我想想...\n<|end|>\n<|channel|>final\n<|message|>答案是42。\n<|return|>", "让我想想...", "答案是42。"),
        _t("TestHarmonyReasoningParser::test_multiple_analysis_blocks", "<|channel|>analysis\n<|message|>First thought.\n<|end|>\n<|channel|>analysis\n<|message|>Second thought.\n<|end|>\n<|channel|>final\n<|message|>Result.\n<|return|>", "First thought.\nSecond thought.", "Result."),
    ],
)
def test_harmony_reasoning_parser(text, reasoning, content):
    assert harmony_extract(text) == (reasoning, content)


def _g(test, *values):
    return case("vllm-mlx", SRC_GPT_OSS, f"TestGptOssParser::{test}", *values)


@pytest.mark.parametrize(
    ("text", "reasoning", "content"),
    [
        _g("test_extract_both_channels", "<|channel|>analysis<|message|>Let me think step by step<|start|>assistant<|channel|>final<|message|>The answer is 42<|return|>", "Let me think step by step", "The answer is 42"),
        _g("test_extract_only_final", "<|channel|>final<|message|>Just the answer<|return|>", None, "Just the answer"),
        _g("test_extract_only_analysis", "<|channel|>analysis<|message|>Just thinking out loud", "Just thinking out loud", None),
        _g("test_no_channel_tokens_fallback", "Just a regular response.", None, "Just a regular response."),
        _g("test_empty_analysis_channel", "<|channel|>analysis<|message|><|start|>assistant<|channel|>final<|message|>Content here<|return|>", None, "Content here"),
        _g("test_no_return_token", "<|channel|>analysis<|message|>Thinking<|start|>assistant<|channel|>final<|message|>Answer", "Thinking", "Answer"),
        _g("test_multiline_analysis", "<|channel|>analysis<|message|>Step 1: Analyze\nStep 2: Solve\nStep 3: Verify<|start|>assistant<|channel|>final<|message|>Result: 42<|return|>", "Step 1: Analyze\nStep 2: Solve\nStep 3: Verify", "Result: 42"),
    ],
)
def test_gpt_oss_reasoning_parser(text, reasoning, content):
    assert gpt_oss_extract(text) == (reasoning, content)


# -- streaming and registration cases ------------------------------------------------------------

HSRC = SRC


def _h(test: str):
    return pytest.mark.upstream("vllm-mlx", f"{HSRC}::{test}")


def _gp(test: str):
    return pytest.mark.upstream("vllm-mlx", f"{SRC_GPT_OSS}::TestGptOssParser::{test}")


def _feed_all(stream, pieces):
    """Feed ``pieces`` one delta at a time; the joined reasoning and content."""
    text, reasoning, content = "", [], []
    for piece in pieces:
        previous, text = text, text + piece
        out = stream.feed(previous, text, piece)
        if out is not None:
            reasoning.append(out.reasoning or "")
            content.append(out.content or "")
    return "".join(reasoning), "".join(content)


@_h("TestHarmonyToolParser::test_registration")
def test_tool_parser_registered_as_harmony_and_gpt_oss():
    from mockoss.profiles.registry import get_profile

    assert get_profile("vllm-mlx", {"tool_call_parser": "gpt-oss"}).tool_call_parser == "harmony"
    assert get_profile("vllm-mlx", {"tool_call_parser": "harmony"}).tool_call_parser == "harmony"


@_h("TestHarmonyReasoningParser::test_registration")
def test_reasoning_parser_registered_as_harmony():
    from mockoss.profiles.registry import get_profile

    assert get_profile("vllm-mlx", {"reasoning_parser": "harmony"}).reasoning_parser == "harmony"


@_gp("test_registry_includes_gpt_oss")
def test_registry_includes_gpt_oss():
    from mockoss.profiles.registry import get_profile

    assert get_profile("vllm-mlx", {"reasoning_parser": "gpt_oss"}).reasoning_parser == "gpt_oss"


@_h("TestHarmonyToolParser::test_unique_tool_ids")
def test_unique_tool_ids():
    text = "<|channel|>commentary to=functions.func_a\n<|constrain|>json\n<|message|>{}\n<|call|>\n<|channel|>commentary to=functions.func_b\n<|constrain|>json\n<|message|>{}\n<|call|>"
    ids = iter(f"call_{n:08x}" for n in range(100))
    found = HarmonyToolStream(new_id=lambda: next(ids)).feed("", text, "<|call|>")["tool_calls"]
    assert len({ident for _, ident, _ in found}) == 2 and all(ident.startswith("call_") for _, ident, _ in found)


@_h("TestHarmonyToolParser::test_streaming_no_tool_markers")
def test_streaming_no_tool_markers():
    assert HarmonyToolStream().feed("", "Hello", "Hello") == {"content": "Hello"}


@_h("TestHarmonyToolParser::test_streaming_tool_call_complete")
def test_streaming_tool_call_complete():
    current = '<|channel|>commentary to=functions.func\n<|constrain|>json\n<|message|>{"a": 1}\n<|call|>'
    result = HarmonyToolStream().feed("", current, "<|call|>")
    assert result is not None and result["tool_calls"][0][2].name == "func"


@_h("TestHarmonyToolParser::test_streaming_building_tool_call")
def test_streaming_building_tool_call():
    current = '<|channel|>commentary to=functions.func\n<|constrain|>json\n<|message|>{"a":'
    assert HarmonyToolStream().feed("", current, '{"a":') is None


@_h("TestHarmonyToolParser::test_streaming_emits_tool_call_on_final_channel_transition")
def test_streaming_emits_tool_call_on_final_channel_transition():
    previous = '<|channel|>commentary to=functions.get_weather\n<|message|>{"loc": "SF"}'
    current = previous + "\n<|channel|>final<|message|>Done<|return|>"
    result = HarmonyToolStream().feed(previous, current, "<|channel|>final<|message|>Done<|return|>")
    (_, _, call), = result["tool_calls"]
    assert call.name == "get_weather" and json.loads(call.arguments) == {"loc": "SF"}


@_h("TestHarmonyToolParser::test_streaming_does_not_reemit_same_call")
def test_streaming_does_not_reemit_same_call():
    stream = HarmonyToolStream()
    previous = '<|channel|>commentary to=functions.get_weather\n<|message|>{"loc": "SF"}'
    current = previous + "\n<|call|>"
    assert "tool_calls" in stream.feed(previous, current, "<|call|>")
    second = stream.feed(current, current + "\n<|channel|>final<|message|>ok", "\n<|channel|>final<|message|>ok")
    assert second is None or "tool_calls" not in second


@_h("TestHarmonyToolParser::test_streaming_reset_clears_dedup_state")
def test_streaming_reset_clears_dedup_state():
    # vllm-mlx's reset() is a fresh per-request parser here (the profile builds one per request).
    previous = '<|channel|>commentary to=functions.get_weather\n<|message|>{"loc": "SF"}'
    current = previous + "\n<|call|>"
    HarmonyToolStream().feed(previous, current, "<|call|>")
    again = HarmonyToolStream().feed(previous, current, "<|call|>")
    assert again is not None and "tool_calls" in again


@_h("TestHarmonyReasoningParser::test_streaming_analysis_to_final")
def test_harmony_streaming_analysis_to_final():
    stream = HarmonyReasoningStream()
    assert stream.feed("", "<|channel|>analysis\n", "<|channel|>analysis\n") is None
    assert stream.feed("<|channel|>analysis\n", "<|channel|>analysis\n<|message|>", "<|message|>") is None
    r3 = stream.feed("<|channel|>analysis\n<|message|>", "<|channel|>analysis\n<|message|>Thinking", "Thinking")
    assert r3 is not None and r3.reasoning == "Thinking" and r3.content is None
    assert stream.feed("<|channel|>analysis\n<|message|>Thinking", "<|channel|>analysis\n<|message|>Thinking<|end|>", "<|end|>") is None
    before = "<|channel|>analysis\n<|message|>Thinking<|end|>"
    assert stream.feed(before, before + "\n<|channel|>final\n", "\n<|channel|>final\n") is None
    prev = before + "\n<|channel|>final\n<|message|>"
    stream.feed(before + "\n<|channel|>final\n", prev, "<|message|>")
    r6 = stream.feed(prev, prev + "Answer", "Answer")
    assert r6 is not None and r6.content == "Answer" and r6.reasoning is None


@_h("TestHarmonyReasoningParser::test_streaming_commentary_suppressed")
def test_harmony_streaming_commentary_suppressed():
    stream = HarmonyReasoningStream()
    head = "<|channel|>commentary to=functions.f\n"
    stream.feed("", head, head)
    stream.feed(head, head + "<|message|>", "<|message|>")
    assert stream.feed(head + "<|message|>", head + '<|message|>{"a":1}', '{"a":1}') is None


@_gp("test_streaming_full_flow")
def test_gpt_oss_streaming_full_flow():
    pieces = ["<|channel|>", "analysis", "<|message|>", "Let me ", "think", "<|start|>", "assistant", "<|channel|>", "final", "<|message|>", "The answer", " is 42", "<|return|>"]
    reasoning, content = _feed_all(GptOssReasoningStream(), pieces)
    assert "Let me think" in reasoning and "The answer is 42" in content


@_gp("test_streaming_only_final")
def test_gpt_oss_streaming_only_final():
    _, content = _feed_all(GptOssReasoningStream(), ["<|channel|>", "final", "<|message|>", "Direct ", "answer", "<|return|>"])
    assert "Direct answer" in content


@_gp("test_streaming_suppresses_structural_tokens")
def test_gpt_oss_streaming_suppresses_structural_tokens():
    pieces = ["<|channel|>analysis<|message|>", "thinking", "<|start|>", "assistant", "<|channel|>final<|message|>", "answer", "<|return|>"]
    reasoning, content = _feed_all(GptOssReasoningStream(), pieces)
    assert "<|" not in reasoning + content


@_gp("test_streaming_constrain_format")
def test_gpt_oss_streaming_constrain_format():
    pieces = ["<|channel|>analysis<|message|>", "Thinking...", "<|end|>", "<|channel|>final <|constrain|>JSON<|message|>", '{"result":', '"ok"}', "<|return|>"]
    reasoning, content = _feed_all(GptOssReasoningStream(), pieces)
    assert "Thinking" in reasoning and '{"result":"ok"}' in content and "<|constrain|>" not in content


@pytest.mark.parametrize(
    ("text", "reasoning", "content"),
    [
        _g("test_extract_constrain_format", '<|channel|>analysis<|message|>We need to output JSON<|end|><|channel|>final <|constrain|>JSON<|message|>{"hello":"world"}<|return|>', "We need to output JSON", '{"hello":"world"}'),
        _g("test_extract_constrain_no_analysis", '<|channel|>final <|constrain|>JSON<|message|>{"key":"value"}<|return|>', None, '{"key":"value"}'),
        _g("test_constrain_tokens_stripped", '<|channel|>final <|constrain|>JSON<|message|>{"hello":"world"}<|return|>', None, '{"hello":"world"}'),
    ],
)
def test_gpt_oss_constrain(text, reasoning, content):
    assert gpt_oss_extract(text) == (reasoning, content)


# -- the server's gpt-oss glue: tests/test_gpt_oss_tool_parsing.py and tests/test_server.py -------

TOOLS_SRC = "waybarrios/vllm-mlx@v0.6.0:tests/test_gpt_oss_tool_parsing.py"
SERVER_SRC = "waybarrios/vllm-mlx@v0.6.0:tests/test_server.py::TestHelperFunctions"
THINK_CALL = '<|channel|>analysis<|message|>thinking...<|channel|>commentary to=functions.read_file<|message|>{"path":"/etc/hosts"}<|call|>'


def _glue(raw, reasoning, declared, parse_result):
    seen = []

    def parse(text):
        seen.append(text)
        return parse_result(text)

    out = extract_reasoning_and_calls(raw, lambda _: (reasoning, None), parse, declared=declared)
    return out, seen


@pytest.mark.upstream("vllm-mlx", f"{TOOLS_SRC}::test_tools_branch_strips_analysis_block_before_parser")
def test_tools_branch_strips_analysis_block_before_parser():
    raw = '<|channel|>analysis<|message|>I will use {"name": "get_weather", "arguments": {"city": "SF"}}<|end|><|channel|>commentary to=functions.get_weather<|message|>{"city": "S'
    (reasoning, _, calls), seen = _glue(raw, 'I will use {"name": "get_weather", "arguments": {"city": "SF"}}', True, lambda t: ([], t))
    assert reasoning and calls == [] and len(seen) == 1
    assert seen[0] == '<|end|><|channel|>commentary to=functions.get_weather<|message|>{"city": "S'


@pytest.mark.upstream("vllm-mlx", f"{TOOLS_SRC}::test_tools_branch_analysis_then_commentary_call_passes_through")
def test_tools_branch_analysis_then_commentary_call_passes_through():
    (reasoning, _, calls), seen = _glue(THINK_CALL, "analysis content", True, lambda t: (["call_extracted"], ""))
    assert (reasoning, calls) == ("analysis content", ["call_extracted"])
    assert seen == ['<|channel|>commentary to=functions.read_file<|message|>{"path":"/etc/hosts"}<|call|>']


@pytest.mark.upstream("vllm-mlx", f"{SERVER_SRC}::test_extract_reasoning_no_tools_drops_raw_harmony_commentary")
def test_extract_reasoning_no_tools_drops_raw_harmony_commentary():
    (reasoning, cleaned, calls), seen = _glue(THINK_CALL, "analysis content", False, lambda t: ([], t))
    assert (reasoning, cleaned, calls, seen) == ("analysis content", "", [], [])


@pytest.mark.upstream("vllm-mlx", f"{SERVER_SRC}::test_extract_reasoning_with_tools_strips_analysis_for_parser")
def test_extract_reasoning_with_tools_strips_analysis_for_parser():
    (reasoning, _, calls), seen = _glue(THINK_CALL, "analysis content", True, lambda t: (["call_extracted"], ""))
    assert (reasoning, calls) == ("analysis content", ["call_extracted"])
    assert seen == ['<|channel|>commentary to=functions.read_file<|message|>{"path":"/etc/hosts"}<|call|>']


@pytest.mark.upstream("vllm-mlx", f"{TOOLS_SRC}::test_streaming_marker_possible_for_commentary")
def test_streaming_marker_possible_for_commentary():
    assert markup_possible('<|channel|>commentary to=functions.get_weather<|message|>{"city": "SF"}<|call|>')
    assert markup_possible(("prefix text " + "<|channel|>commentary to=functions.get_weather")[-512:])
    assert markup_possible('<|channel|>commentary to=functions.get_weather<|message|>{"city": "SF"}' + "<|call|>")


@pytest.mark.upstream("vllm-mlx", f"{TOOLS_SRC}::test_streaming_marker_false_for_plain_text")
def test_streaming_marker_false_for_plain_text():
    assert not markup_possible("The weather in San Francisco is 72 degrees and sunny.")
    assert not markup_possible("72 degrees")
    assert not markup_possible("<|channel|>final<|message|>The answer is 42.<|return|>")


# -- the output cleaner the engine runs first: tests/test_api_utils.py ---------------------------

UTILS_SRC = "waybarrios/vllm-mlx@v0.6.0:tests/test_api_utils.py"


def _u(test: str, *values):
    return case("vllm-mlx", UTILS_SRC, test, *values)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        _u("TestCleanOutputText::test_gpt_oss_commentary_final_returns_final_text", '<|channel|>commentary to=functions.get_weather<|message|>{"loc": "SF"}<|channel|>final<|message|>Done<|return|>', "Done"),
        _u("TestCleanOutputText::test_gpt_oss_commentary_call_returns_args_json", '<|channel|>commentary to=functions.get_weather<|message|>{"loc": "SF"}<|call|>', '{"loc": "SF"}'),
        _u("TestGptOssSpecialTokens::test_clean_output_extracts_final_channel", "<|channel|>analysis<|message|>Thinking about it<|start|>assistant<|channel|>final<|message|>The answer is 42<|return|>", "The answer is 42"),
        _u("TestGptOssSpecialTokens::test_clean_output_final_only", "<|channel|>final<|message|>Just the answer<|return|>", "Just the answer"),
        _u("TestGptOssSpecialTokens::test_clean_output_strips_return_token", "<|channel|>final<|message|>Hello world<|return|>", "Hello world"),
        _u("TestGptOssSpecialTokens::test_clean_output_no_channel_tokens_passthrough", "Normal text without any channel tokens.", "Normal text without any channel tokens."),
        _u("TestGptOssSpecialTokens::test_clean_output_constrain_format", '<|channel|>analysis<|message|>Thinking<|end|><|channel|>final <|constrain|>JSON<|message|>{"hello":"world"}<|return|>', '{"hello":"world"}'),
        _u("TestGptOssSpecialTokens::test_clean_output_constrain_final_only", '<|channel|>final <|constrain|>JSON<|message|>{"key":"value"}<|return|>', '{"key":"value"}'),
    ],
)
def test_clean_output_text(text, expected):
    assert clean_output_text(text) == expected
    assert not any(t in clean_output_text(text) for t in ("<|channel|>", "<|message|>", "<|call|>", "<|return|>", "<|constrain|>"))


@pytest.mark.upstream("vllm-mlx", f"{UTILS_SRC}::TestGptOssSpecialTokens::test_clean_output_no_final_strips_constrain")
def test_clean_output_no_final_strips_constrain():
    assert "<|constrain|>" not in clean_output_text("<|channel|>analysis<|message|>Just thinking <|constrain|>something")


@pytest.mark.parametrize(
    "token",
    [
        _u(f"TestGptOssSpecialTokens::test_pattern_matches_{name}_token", token)
        for name, token in (("channel", "<|channel|>"), ("message", "<|message|>"), ("start", "<|start|>"), ("return", "<|return|>"), ("call", "<|call|>"), ("constrain", "<|constrain|>"))
    ],
)
def test_special_tokens_pattern(token):
    assert SPECIAL_TOKENS.search(token) is not None
