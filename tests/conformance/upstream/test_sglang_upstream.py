"""SGLang's own gpt-oss parser tests, converted. First the Harmony string parser's, ``test/srt/test_harmony_parser.py`` at
sgl-project/sglang@042e90cce27dab3b7c562ac7d3caa7a5e19d6feb (every test of every class, named
``Class::test``). The upstream tests drive SGLang's parser pieces (``prefix_hold``,
``iter_tokens``, ``CanonicalStrategy.parse``, ``TextStrategy.parse``, ``HarmonyParser.parse``); here
the same inputs go through their counterparts in :mod:`mockoss.profiles.sglang.harmony_text`
(``hold_partial``, ``scan_markers``, ``canonical_parse``, ``text_parse``, ``SglangHarmonyParser.feed``)
and the upstream assertions are kept. Assertions on private attributes (``strategy``,
``guard_tokens``, ``patterns``) become assertions on the behaviour they stand for.

That file tests the module when it lived at ``sglang/srt/harmony_parser.py``; the profile
reproduces the 0.5.23 module (``sglang/srt/parser/harmony_parser.py``), which
``tools/sglang_parser_diff.py`` compares with mockoss's directly. Then the gpt-oss tool-call and
reasoning detectors' tests (sources at their sections below). Left out: the detector's
``structure_info``/structural-tag tests (grammar constraints for sampling; mockoss samples nothing).
"""

from __future__ import annotations

import json

import pytest
from upstream_support import case

from mockoss.profiles.sglang.detectors import (
    BOT_TOKEN,
    ReasoningStream,
    ToolCallStream,
    parse_tool_calls,
    split_reasoning,
)
from mockoss.profiles.sglang.harmony_text import (
    Event,
    Marker,
    SglangHarmonyParser,
    _channel_word,
    canonical_parse,
    hold_partial,
    scan_markers,
    text_parse,
)

SRC = "sgl-project/sglang@042e90cce27dab3b7c562ac7d3caa7a5e19d6feb:test/srt/test_harmony_parser.py"
#: Why the four unreproduced cases are not mockoss's divergence: SGLang 0.5.23's own
#: ``parser/harmony_parser.py``, loaded from the wheel and given the same input, fails them the
#: same way (partial-analysis streaming came after this test file); mockoss follows 0.5.23.
SAME_IN_0523 = "SGLang 0.5.23's own parser gives the same result (checked by loading it):"
GUARDS = ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>"]


def _c(test: str, *values, xfail: str | None = None):
    return case("sglang", SRC, test, *values, xfail=xfail)


def kinds(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.kind, e.content) for e in events]


def feed_all(chunks: list[str]) -> list[Event]:
    parser = SglangHarmonyParser()
    return [event for chunk in chunks for event in parser.feed(chunk)]


# -- TestPrefixHold, TestIterTokens --------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "guards", "expected"),
    [
        _c("TestPrefixHold::test_empty_text", "", ["<|start|>"], ("", "")),
        _c("TestPrefixHold::test_no_matching_prefixes", "hello world", ["<|start|>", "<|end|>"], ("hello world", "")),
        _c("TestPrefixHold::test_partial_token_suffix", "hello <|ret", ["<|return|>"], ("hello ", "<|ret")),
        _c("TestPrefixHold::test_multiple_potential_matches", "text <|", ["<|start|>", "<|end|>"], ("text ", "<|")),
        _c("TestPrefixHold::test_exact_token_match", "text <|start|>", ["<|start|>"], ("text <|start|>", "")),
    ],
)
def test_prefix_hold(text, guards, expected):
    assert hold_partial(text, guards) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        _c("TestIterTokens::test_empty_text", "", []),
        _c("TestIterTokens::test_plain_text", "hello world", [("TEXT", 0, 11)]),
        _c("TestIterTokens::test_single_token", "<|start|>", [("START", 0, 9)]),
        _c("TestIterTokens::test_mixed_content", "text<|start|>more text", [("TEXT", 0, 4), ("START", 4, 13), ("TEXT", 13, 22)]),
        _c("TestIterTokens::test_unknown_token_partial_suffix", "text <|ret", [("TEXT", 0, 5), ("TEXT", 5, 10)]),
        # upstream checks the count (5) and the first four kinds; the fifth is the empty span
        _c("TestIterTokens::test_unknown_token_middle", "text <|weird|> more <|start|>", ["TEXT", "TEXT", "TEXT", "START", "TEXT"]),
        _c("TestIterTokens::test_all_structural_tokens", "".join(GUARDS), ["START", "CHANNEL", "MESSAGE", "CONSTRAIN", "END", "CALL", "RETURN"]),
    ],
)
def test_iter_tokens(text, expected):
    marks = scan_markers(text)
    if expected and isinstance(expected[0], str):
        assert [m.kind for m in marks] == expected
    else:
        assert marks == [Marker(*m) for m in expected]


# -- TestEvent, TestToken, TestCanonicalStrategy -------------------------------------------------

@pytest.mark.parametrize(
    "check",
    [
        _c("TestEvent::test_init", lambda: (Event("reasoning", "content").kind, Event("reasoning", "content").content) == ("reasoning", "content")),
        _c("TestToken::test_init", lambda: (Marker("START", 0, 7).kind, Marker("START", 0, 7).start, Marker("START", 0, 7).end) == ("START", 0, 7)),
        # guard_tokens include <|start|> and <|constrain|>: a trailing prefix of either is held
        _c("TestCanonicalStrategy::test_init", lambda: canonical_parse("x<|sta") == ([Event("normal", "x")], "<|sta") and canonical_parse("x<|constr")[1] == "<|constr"),
        _c("TestCanonicalStrategy::test_extract_channel_type", lambda: [
            _channel_word(h) for h in ("analysis", "commentary to=functions.tool", "final to=user", "ANALYSIS", "unknown")
        ] == ["analysis", "commentary", "final", "analysis", None]),
    ],
)
def test_pieces(check):
    assert check()


@pytest.mark.parametrize(
    ("text", "events", "remaining"),
    [
        _c("TestCanonicalStrategy::test_parse_single_analysis_block", "<|channel|>analysis<|message|>Let me think about this<|end|>", [("reasoning", "Let me think about this")], ""),
        _c("TestCanonicalStrategy::test_parse_single_commentary_block", "<|channel|>commentary<|message|>User-visible message<|end|>", [("normal", "User-visible message")], ""),
        _c("TestCanonicalStrategy::test_parse_single_final_block", "<|start|>assistant<|channel|>final<|message|>The answer is 42<|return|>", [("normal", "The answer is 42")], ""),
        _c("TestCanonicalStrategy::test_parse_tool_call_commentary", '<|channel|>commentary to=functions.get_weather<|message|>{"location": "SF"}<|call|>', [("tool_call", '{"location": "SF"}')], ""),
        _c("TestCanonicalStrategy::test_parse_tool_call_analysis", '<|channel|>analysis to=browser.search<|message|>{"query": "SGLang"}<|call|>', [("tool_call", '{"query": "SGLang"}')], ""),
        _c(
            "TestCanonicalStrategy::test_parse_complex_sequence",
            '<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{"location":"San Francisco"}<|call|>',
            [("reasoning", "Need to use function get_weather."), ("tool_call", '{"location":"San Francisco"}')], "",
        ),
        _c(
            "TestCanonicalStrategy::test_parse_with_interspersed_text",
            "Some text <|channel|>analysis<|message|>reasoning<|end|> more text <|start|>assistant<|channel|>final<|message|>answer<|return|> trailing text",
            [("normal", "Some text "), ("reasoning", "reasoning"), ("normal", " more text "), ("normal", "answer trailing text")], "",
        ),
        _c(
            "TestCanonicalStrategy::test_parse_incomplete_block", "<|channel|>analysis<|message|>partial content", [], "<|channel|>analysis<|message|>partial content",
            xfail=f"{SAME_IN_0523} it streams an open analysis block: reasoning 'partial content', the header kept",
        ),
        _c("TestCanonicalStrategy::test_parse_partial_token_suffix", "complete text <|ret", [("normal", "complete text ")], "<|ret"),
        _c("TestCanonicalStrategy::test_parse_tool_response_message", '<|start|>functions.get_weather to=assistant<|message|>{"sunny": true}<|end|>', [("normal", '{"sunny": true}')], ""),
        _c("TestCanonicalStrategy::test_parse_empty_content_blocks", "<|channel|>analysis<|message|><|end|>", [("reasoning", "")], ""),
    ],
)
def test_canonical_strategy(text, events, remaining):
    got, held = canonical_parse(text)
    assert (kinds(got), held) == (events, remaining)


# -- TestTextStrategy ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "events", "remaining"),
    [
        _c("TestTextStrategy::test_parse_analysis_then_final", "analysis I need to think about this. assistantfinal The answer is 42.", [("reasoning", "I need to think about this."), ("normal", "The answer is 42.")], ""),
        _c("TestTextStrategy::test_parse_commentary_then_final", "commentary User-visible preamble. assistantfinal The answer is 42.", [("normal", "User-visible preamble."), ("normal", "The answer is 42.")], ""),
        _c("TestTextStrategy::test_parse_final_only", "assistantfinal The direct answer.", [("normal", "The direct answer.")], ""),
        _c("TestTextStrategy::test_parse_analysis_only", "analysis This is reasoning content.", [("reasoning", " This is reasoning content.")], "analysis"),
        _c("TestTextStrategy::test_parse_incomplete_assistantfinal", "analysis reasoning content assistantfin", [], "analysis reasoning content assistantfin"),
        _c("TestTextStrategy::test_parse_partial_analysis_streaming", "analysis partial content", [("reasoning", " partial content")], "analysis"),
        _c("TestTextStrategy::test_parse_plain_text_fallback", "Just plain text without any markers.", [("normal", "Just plain text without any markers.")], ""),
        _c(
            "TestTextStrategy::test_parse_analysis_no_space_after_header",
            "analysisThe user typed random strings. We should respond politely.assistantfinalIt looks like you're testing. How can I help?",
            [("reasoning", "The user typed random strings. We should respond politely."), ("normal", "It looks like you're testing. How can I help?")], "",
        ),
    ],
)
def test_text_strategy(text, events, remaining):
    got, held = text_parse(text)
    assert (kinds(got), held) == (events, remaining)


@pytest.mark.parametrize(
    "check",
    [
        # patterns["analysis_then_final"] exists: the two-part form parses in one go
        _c("TestTextStrategy::test_init", lambda: [e.kind for e in text_parse("analysis a assistantfinal b")[0]] == ["reasoning", "normal"]),
        _c("TestTextStrategy::test_parse_case_insensitive", lambda: [e.kind for e in text_parse("ANALYSIS reasoning ASSISTANTFINAL answer")[0]] == ["reasoning", "normal"]),
    ],
)
def test_text_strategy_checks(check):
    assert check()


# -- TestHarmonyParser, TestIntegrationScenarios, TestEdgeCases -----------------------------------

def _strategy_canonical():
    parser = SglangHarmonyParser()
    events = parser.feed("<|channel|>analysis<|message|>test<|end|>")
    return parser._parse is canonical_parse and [e.kind for e in events] == ["reasoning"]


def _strategy_text():
    parser = SglangHarmonyParser()
    events = parser.feed("analysis test content")
    return parser._parse is text_parse and [e.kind for e in events] == ["reasoning"]


def _strategy_delayed():
    parser = SglangHarmonyParser()
    first = parser.feed("some")
    undecided = parser._parse is None
    second = parser.feed(" analysis content")
    return first == [] and undecided and parser._parse is text_parse and len(second) == 1


def _streaming_text():
    events = feed_all(["analysis reasoning", " content assistantfinal", " the answer"])
    return any(e.kind == "reasoning" for e in events) and any(e.kind == "normal" for e in events)


def _fallback_formats():
    first = SglangHarmonyParser().feed("analysis thinking assistantfinal answer")
    second = SglangHarmonyParser().feed("assistantfinal direct answer")
    return [e.kind for e in first].count("reasoning") == 1 and [e.kind for e in first].count("normal") == 1 and [e.kind for e in second] == ["normal"]


def _chunked_equals_oneshot():
    text = "<|channel|>analysis<|message|>reasoning content<|end|><|start|>assistant<|channel|>final<|message|>final content<|return|>"
    return kinds(feed_all([text])) == kinds(feed_all([text[i : i + 10] for i in range(0, len(text), 10)]))


def _chunked_equals_oneshot_text():
    def joined(events, kind):
        return "".join(e.content for e in events if e.kind == kind)

    one = feed_all(["analysis reasoning content assistantfinal final answer"])
    chunked = feed_all(["analysis reason", "ing content assistant", "final final answer"])
    return all(joined(one, k) == joined(chunked, k) for k in ("reasoning", "normal"))


def _mixed_unknown():
    events = feed_all(["text <|weird|> more text <|channel|>analysis<|message|>content<|end|>"])
    return [e.kind for e in events].count("reasoning") == 1 and any(e.kind == "normal" for e in events)


def _streaming_whitespace():
    reasoning = "".join(e.content for e in feed_all(["analysis The user typed ", '"wapppa". Not a question.']) if e.kind == "reasoning")
    return 'typed "wapppa"' in reasoning and 'typed"wapppa"' not in reasoning


@pytest.mark.parametrize(
    "check",
    [
        _c("TestHarmonyParser::test_init", lambda: SglangHarmonyParser()._parse is None and SglangHarmonyParser()._held == ""),
        _c("TestHarmonyParser::test_strategy_selection_canonical", _strategy_canonical),
        _c("TestHarmonyParser::test_strategy_selection_text", _strategy_text),
        _c("TestHarmonyParser::test_strategy_selection_delayed", _strategy_delayed),
        _c("TestHarmonyParser::test_streaming_text_format", _streaming_text),
        _c("TestIntegrationScenarios::test_text_fallback_formats", _fallback_formats),
        _c(
            "TestIntegrationScenarios::test_streaming_property_canonical", _chunked_equals_oneshot,
            xfail=f"{SAME_IN_0523} 10-character chunks split <|end|> inside the open analysis block, so the rest of the text, markers and final answer included, streams as reasoning",
        ),
        _c(
            "TestIntegrationScenarios::test_streaming_property_text", _chunked_equals_oneshot_text,
            xfail=f"{SAME_IN_0523} streamed, the open analysis keeps the leading space (' reasoning content ' against 'reasoning content')",
        ),
        _c("TestEdgeCases::test_malformed_channel_headers", lambda: feed_all(["<|channel|>unknown<|message|>content<|end|>"]) == []),
        _c("TestEdgeCases::test_mixed_unknown_tokens", _mixed_unknown),
        _c("TestEdgeCases::test_empty_input", lambda: feed_all([""]) == []),
        _c("TestEdgeCases::test_streaming_whitespace_preservation", _streaming_whitespace),
    ],
)
def test_parser_behaviour(check):
    assert check()


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        _c(
            "TestHarmonyParser::test_streaming_canonical_format",
            ["<|channel|>analysis<|message|>", "reasoning content", "<|end|>", "<|start|>assistant<|channel|>final<|message|>", "final answer", "<|return|>"],
            [("reasoning", "reasoning content"), ("normal", "final answer")],
            xfail=f"{SAME_IN_0523} the open analysis block streams as it grows: reasoning events '', 'reasoning content', '' and an empty normal event",
        ),
        _c(
            "TestIntegrationScenarios::test_complete_reasoning_flow",
            ['<|channel|>analysis<|message|>User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>'],
            [("reasoning", 'User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.'), ("normal", "2 + 2 = 4.")],
        ),
        _c(
            "TestIntegrationScenarios::test_tool_call_sequence",
            ['<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>'],
            [("reasoning", "Need to use function get_weather."), ("tool_call", '{"location":"San Francisco"}')],
        ),
        _c(
            "TestIntegrationScenarios::test_preamble_sequence",
            ['<|channel|>analysis<|message|>Long chain of thought<|end|><|start|>assistant<|channel|>commentary<|message|>**Action plan**: 1. Generate file 2. Start server<|end|><|start|>assistant<|channel|>commentary to=functions.generate_file<|message|>{"template": "basic_html"}<|call|>'],
            [("reasoning", "Long chain of thought"), ("normal", "**Action plan**: 1. Generate file 2. Start server"), ("tool_call", '{"template": "basic_html"}')],
        ),
        _c("TestIntegrationScenarios::test_built_in_tool_call", ['<|channel|>analysis to=browser.search<|message|>{"query": "SGLang"}<|call|>'], [("tool_call", '{"query": "SGLang"}')]),
        _c(
            "TestIntegrationScenarios::test_tool_response_handling",
            ['<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"sunny": true, "temperature": 20}<|end|>'],
            [("normal", '{"sunny": true, "temperature": 20}')],
        ),
        _c("TestEdgeCases::test_whitespace_preservation", ["<|channel|>analysis<|message|>  content with spaces  <|end|>"], [("reasoning", "  content with spaces  ")]),
        _c(
            "TestEdgeCases::test_consecutive_blocks_same_type",
            ["<|channel|>analysis<|message|>first reasoning<|end|><|channel|>analysis<|message|>second reasoning<|end|>"],
            [("reasoning", "first reasoning"), ("reasoning", "second reasoning")],
        ),
    ],
)
def test_parser_events(chunks, expected):
    assert kinds(feed_all(chunks)) == expected


# -- the gpt-oss tool-call detector ----------------------------------------------------------------
# sgl-project/sglang@bf845b969d0497d55c6537f684253e6e1fd7aaf7:test/registered/unit/function_call/test_gptoss_detector.py
# (every test but test_structure_info_not_implemented: structure_info feeds xgrammar constraints,
# and mockoss samples nothing) and
# sgl-project/sglang@4e285c7766ea604ac2100100d7d02962b0831a57:test/registered/function_call/test_gpt_oss_detector.py
# (all three) and the marker test of
# sgl-project/sglang@5c57d4c3bcd7b2f9d5478c7a76e557c014211b7d:test/registered/unit/function_call/test_gpt_oss_detector.py
# (its structural-tag test is left out), through mockoss.profiles.sglang.detectors (parse_tool_calls, ToolCallStream). The
# detector's has_tool_call is the BOT_TOKEN substring test.

FC_SRC = "sgl-project/sglang@bf845b969d0497d55c6537f684253e6e1fd7aaf7:test/registered/unit/function_call/test_gptoss_detector.py"
FC_MARKER = "sgl-project/sglang@5c57d4c3bcd7b2f9d5478c7a76e557c014211b7d:test/registered/unit/function_call/test_gpt_oss_detector.py"
FC_OLD = "sgl-project/sglang@4e285c7766ea604ac2100100d7d02962b0831a57:test/registered/function_call/test_gpt_oss_detector.py"
#: Why the three FC_OLD cases are not reproduced: they test a truncation of the text after a call
#: that SGLang 0.5.23's own detector (loaded from the wheel with its heavy imports stubbed, as
#: tools/sglang_parser_diff.py does) does not do either; checked case by case.
NO_TRUNCATION_0523 = "SGLang 0.5.23's own GptOssDetector gives the same result (checked by loading it): no truncation of text after a call;"
FC_TOOLS = frozenset({"get_weather", "search"})
BEIJING = '<|start|>assistant<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{"city":"Beijing"}<|call|>'
READ_FILE = (
    "<|channel|>analysis<|message|>Reasoning...<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{\n  "files": []\n}<|call|>'
    "<|start|>assistant<|channel|>final<|message|>This text should be truncated."
)


def _stream_calls(chunks, tools=FC_TOOLS):
    stream = ToolCallStream(tools)
    text, calls = "", []
    for chunk in chunks:
        piece, new = stream.feed(chunk)
        text, calls = text + piece, calls + new
    return text, calls


def _fast_path():
    stream = ToolCallStream(frozenset({"read_file"}))
    _, first = stream.feed("<|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{}<|call|>")
    second, _ = stream.feed("This is normal text that should be ignored.")
    return len(first) == 1 and second == ""


@pytest.mark.parametrize(
    "check",
    [
        case("sglang", FC_SRC, "TestGptOssDetector::test_has_tool_call_true", lambda: BOT_TOKEN in BEIJING),
        case("sglang", FC_SRC, "TestGptOssDetector::test_has_tool_call_false", lambda: BOT_TOKEN not in "The weather in Beijing is sunny today."),
        case("sglang", FC_SRC, "TestGptOssDetector::test_single_tool_call", lambda: [(c.name, json.loads(c.arguments)["city"]) for c in parse_tool_calls(BEIJING, FC_TOOLS)[1]] == [("get_weather", "Beijing")]),
        case("sglang", FC_SRC, "TestGptOssDetector::test_normal_text_before_tool_call", lambda: parse_tool_calls("Let me check." + BEIJING, FC_TOOLS)[0] == "Let me check."),
        case("sglang", FC_SRC, "TestGptOssDetector::test_no_tool_call", lambda: parse_tool_calls("The weather is nice today.", FC_TOOLS) == ("The weather is nice today.", [])),
        case("sglang", FC_SRC, "TestGptOssDetector::test_multiple_tool_calls", lambda: [c.name for c in parse_tool_calls(
            BEIJING + '<|start|>assistant<|channel|>commentary to=functions.search<|constrain|>json<|message|>{"query":"restaurants"}<|call|>', FC_TOOLS)[1]] == ["get_weather", "search"]),
        case("sglang", FC_SRC, "TestGptOssDetector::test_streaming_single_tool_call", lambda: [(c.name, json.loads(c.arguments)["city"]) for c in _stream_calls(
            ["<|start|>", "assistant<|channel|>", "commentary to=functions.get_weather", '<|constrain|>json<|message|>{"city":"Beijing"}<|call|>'])[1]] == [("get_weather", "Beijing")]),
        case("sglang", FC_SRC, "TestGptOssDetector::test_streaming_normal_text_before_tool", lambda: _stream_calls(["Let me check the weather. "]) == ("Let me check the weather. ", [])),
        case("sglang", FC_SRC, "TestGptOssDetector::test_streaming_text_then_tool_call", lambda: (r := _stream_calls(
            ["I'll look", " that up. <|start|>", "assistant<|channel|>", "commentary to=functions.get_weather", '<|constrain|>json<|message|>{"city":"Beijing", "unit":"celsius"}<|call|>'])
        )[0] == "I'll look that up. " and [(c.name, json.loads(c.arguments)) for c in r[1]] == [("get_weather", {"city": "Beijing", "unit": "celsius"})],
             xfail="SGLang 0.5.23's own GptOssDetector gives the same result (checked by loading it): the first chunk is passed through "
                   "while its parser still holds it, so the text is \"I'll lookI'll look that up. \""),
        case("sglang", FC_MARKER, "TestGptOssDetector::test_has_tool_call_detects_marker",
             lambda: BOT_TOKEN in "<|start|>assistant<|channel|>commentary to=get_weather<|return|>" and BOT_TOKEN not in "no tool call here"),
        case("sglang", FC_OLD, "TestGptOssDetector::test_detect_and_parse_truncate_normal", lambda: (r := parse_tool_calls(READ_FILE, frozenset({"read_file"})))[0] == "" and [c.name for c in r[1]] == ["read_file"],
             xfail=f"{NO_TRUNCATION_0523} the text is 'This text should be truncated.'"),
        case("sglang", FC_OLD, "TestGptOssDetector::test_parse_streaming_truncate_normal", lambda: (r := _stream_calls(
            [READ_FILE[i : i + 10] for i in range(0, len(READ_FILE), 10)], frozenset({"read_file"}))
        )[0] == "" and [c.name for c in r[1]] == ["read_file"],
             xfail=f"{NO_TRUNCATION_0523} 10-character chunks split the markers, so no call is found and the markup streams out as text"),
        case("sglang", FC_OLD, "TestGptOssDetector::test_parse_streaming_fast_path_fix", _fast_path,
             xfail=f"{NO_TRUNCATION_0523} the text after the call is returned"),
    ],
)
def test_tool_call_detector(check):
    assert check()


# -- the gpt-oss reasoning detector ----------------------------------------------------------------
# sgl-project/sglang@e0bfdb2b8105fe856bd3192ac46af67b74206f5e:test/registered/unit/parser/test_reasoning_parser.py
# (TestGptOssDetector, TestGptOssDetectorToolCall), through split_reasoning and ReasoningStream.
RP_SRC = "sgl-project/sglang@e0bfdb2b8105fe856bd3192ac46af67b74206f5e:test/registered/unit/parser/test_reasoning_parser.py"


def _stream_reasoning(chunks):
    stream = ReasoningStream()
    pieces = [stream.feed(chunk) for chunk in chunks]
    return "".join(r for r, _ in pieces), "".join(n for _, n in pieces)


@pytest.mark.parametrize(
    ("run", "reasoning_has", "normal_has"),
    [
        case("sglang", RP_SRC, "TestGptOssDetector::test_detect_and_parse_with_analysis_and_final",
             lambda: split_reasoning("<|start|><|channel|>analysis<|message|>thinking hard<|end|><|channel|>final<|message|>the answer<|end|>"), "thinking hard", "the answer"),
        case("sglang", RP_SRC, "TestGptOssDetector::test_detect_and_parse_normal_only",
             lambda: split_reasoning("<|start|><|channel|>final<|message|>just the answer<|end|>"), "", "just the answer"),
        case("sglang", RP_SRC, "TestGptOssDetector::test_streaming_analysis_then_final",
             lambda: _stream_reasoning(["<|start|><|channel|>analysis<|message|>", "reasoning part", "<|end|>", "<|channel|>final<|message|>answer", "<|end|>"]), "reasoning part", "answer"),
        case("sglang", RP_SRC, "TestGptOssDetector::test_streaming_with_tool_call",
             lambda: split_reasoning("<|start|><|channel|>analysis<|message|>think<|end|><|call|>tool_data<|return|><|channel|>final<|message|>result<|end|>"), "think", "result"),
        case("sglang", RP_SRC, "TestGptOssDetectorToolCall::test_detect_and_parse_tool_call_raw_text",
             lambda: split_reasoning("<|start|><|channel|>analysis<|message|>think<|end|><|call|>function_data<|return|><|channel|>final<|message|>result<|end|>"), "think", "result"),
        case("sglang", RP_SRC, "TestGptOssDetectorToolCall::test_streaming_tool_call_raw_text",
             lambda: _stream_reasoning(["<|start|><|channel|>analysis<|message|>reason<|end|>", "<|call|>tool_payload<|return|>", "<|channel|>final<|message|>done<|end|>"]), "reason", "done"),
    ],
)
def test_reasoning_detector(run, reasoning_has, normal_has):
    reasoning, normal = run()
    assert reasoning_has in reasoning and normal_has in normal
