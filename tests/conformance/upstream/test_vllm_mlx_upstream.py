"""vllm-mlx's own gpt-oss parser tests, converted: ``tests/test_harmony_parsers.py`` and
``tests/test_reasoning_parser.py::TestGptOssParser`` of the vllm-mlx 0.6.0 sdist
(``pip download --no-deps --no-binary :all: vllm-mlx==0.6.0``), cited as
``waybarrios/vllm-mlx@v0.6.0:tests/<file>::Class::test``. Each upstream input goes through the
counterpart in :mod:`mockoss.profiles.vllm_mlx.parsers` and the upstream assertion is kept.

Converted here: the non-streaming extraction cases of the Harmony tool parser, the ``harmony``
reasoning parser, the edge cases and the ``gpt_oss`` reasoning parser. Left out (not done in this
session, not failures): the streaming cases (``tools/vllm_mlx_diff.py`` compares the streaming
parsers with vllm-mlx's own on every shipped and 300 seeded completions instead), the registry
tests, and ``TestHarmonyToolDefinitionConverter`` (prompt rendering, which mockoss does not emulate).
"""

from __future__ import annotations

import json

import pytest
from upstream_support import case

from mockoss.profiles.vllm_mlx.parsers import gpt_oss_extract, harmony_extract, harmony_tool_extract

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
    if arguments is not None:
        assert [a if isinstance(a, str) else json.loads(c.arguments) for c, a in zip(calls, arguments)] == [a if isinstance(a, str) else a for a in arguments]
        assert all(c.arguments == a for c, a in zip(calls, arguments) if isinstance(a, str))
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
