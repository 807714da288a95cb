"""llama.cpp's gpt-oss output parsers (``mockoss.profiles.llamacpp.gptoss`` and ``.regex_parser``):
exact outcomes for the emulation-checklist fixtures."""

from __future__ import annotations

import pytest

from mockoss.profiles.llamacpp import peg
from mockoss.profiles.llamacpp.gptoss import (
    PEG_FORMAT_ERROR,
    ChatMsg,
    ParseFailed,
    build_grammar,
)
from mockoss.profiles.llamacpp.plan import DiffError, compute_diffs
from mockoss.profiles.llamacpp.regex_parser import parse_regex

WEATHER = ("get_weather",)
ANALYSIS = "<|channel|>analysis<|message|>Need weather.<|end|>"
ANSWER = ANALYSIS + "<|start|>assistant<|channel|>final<|message|>It is sunny."
CALL_IN_CHANNEL = ANALYSIS + '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}'
CALL_IN_ROLE = ANALYSIS + '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city":"Paris"}'
UNDECLARED = ANALYSIS + '<|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}'
DUPLICATE = ANALYSIS + "<|start|>assistant<|channel|>commentary to=functions.get_weather to=functions.get_weather json<|message|>{}"
BARE_FINAL = "It is sunny."
CONSTRAINED_FINAL = '<|channel|>final <|constrain|>json<|message|>{"ok":true}'
NAME_LEAK = '<|channel|>commentary to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Paris"}'
NON_JSON = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>ls -R\n"
BUILTIN = ANALYSIS + '<|start|>assistant<|channel|>analysis to=browser.search code<|message|>{"query":"x"}'


def parse(text: str, tools: tuple[str, ...] = (), choice: str = "auto", reasoning: bool = True, partial: bool = False) -> ChatMsg:
    return build_grammar(tools, choice, reasoning).parse(text, partial=partial)


def test_clean_answer():
    assert parse(ANSWER) == ChatMsg(content="It is sunny.", reasoning_content="Need weather.")


@pytest.mark.parametrize("text", [CALL_IN_CHANNEL, CALL_IN_ROLE])
def test_clean_tool_call_in_either_header_position(text):
    expected = ChatMsg(reasoning_content="Need weather.", tool_calls=(("get_weather", '{"city":"Paris"}'),))
    assert parse(text, WEATHER) == expected


def test_tool_call_without_declared_tools_is_consumed_and_dropped():
    # no tools: (start any)* start (final | unsolicited); the unsolicited call leaves nothing
    assert parse(CALL_IN_CHANNEL) == ChatMsg(reasoning_content="Need weather.")
    assert parse(BUILTIN, WEATHER, "none") == ChatMsg(reasoning_content="Need weather.")


@pytest.mark.parametrize(
    ("text", "tools"),
    [
        (BARE_FINAL, ()),  # llama.cpp#25321: a bare final without channel markup
        (BARE_FINAL, WEATHER),
        (UNDECLARED, WEATHER),  # NAME must be a declared tool
        (DUPLICATE, WEATHER),  # a malformed header has no branch
        (CONSTRAINED_FINAL, ()),  # final has no constraint without a response format
        (NAME_LEAK, WEATHER),  # <|channel|> right after the name
        (NON_JSON, WEATHER),  # arguments must be JSON
        (BUILTIN, WEATHER),  # tools declared: no unsolicited branch
    ],
)
def test_output_outside_the_grammar_fails_the_final_parse(text, tools):
    with pytest.raises(ParseFailed, match="^The model produced output that does not match the expected peg-native format$"):
        parse(text, tools)
    assert parse(text, tools, partial=True) == ChatMsg()  # a partial parse just does not advance
    assert PEG_FORMAT_ERROR == "The model produced output that does not match the expected peg-native format"


def test_constrained_final_is_accepted_with_a_response_format():
    grammar = build_grammar((), "auto", True, True)
    assert grammar.parse(CONSTRAINED_FINAL, partial=False) == ChatMsg(content='{"ok":true}')


def test_required_has_no_final_branch():
    with pytest.raises(ParseFailed):
        parse(ANSWER, WEATHER, "required")
    assert parse(CALL_IN_CHANNEL, WEATHER, "required").tool_calls == (("get_weather", '{"city":"Paris"}'),)


def test_tool_choice_none_uses_the_no_tools_grammar():
    assert parse(CALL_IN_CHANNEL, WEATHER, "none") == ChatMsg(reasoning_content="Need weather.")


def test_reasoning_format_none_keeps_the_analysis_markup_in_content():
    assert parse(ANSWER, reasoning=False) == ChatMsg(
        content="<|channel|>analysis<|message|>Need weather.<|end|>It is sunny."
    )


def test_stray_commentary_before_analysis_and_preambles_concatenate():
    text = (
        "<|channel|>commentary<|channel|>analysis<|message|>a<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>b<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Done."
    )
    assert parse(text) == ChatMsg(content="Checking.Done.", reasoning_content="ab")


def test_whitespace_only_reasoning_is_dropped_and_text_after_the_match_is_ignored():
    text = "<|channel|>analysis<|message|> \n<|end|><|start|>assistant<|channel|>final<|message|>Hi<|end|>trailing"
    assert parse(text) == ChatMsg(content="Hi")


def test_partial_parse_grows_the_tool_name_and_opens_arguments_with_a_brace():
    # common_chat_peg_mapper: a call appears with its (partial) name and arguments "{"
    head = ANALYSIS + "<|start|>assistant<|channel|>commentary to=functions.get"
    assert parse(head, WEATHER, partial=True).tool_calls == (("get", "{"),)
    assert parse(head + "_weather <|constrain|>json<|message|>", WEATHER, partial=True).tool_calls == (("get_weather", "{"),)
    assert parse(head + '_weather json<|message|>{"ci', WEATHER, partial=True).tool_calls == (("get_weather", '{"ci'),)


def test_until_stops_before_a_delimiter_prefix_at_the_end():
    assert peg.until("<|end|>")("abc<|en", 0)[:2] == (peg.OK, 3)
    assert peg.until("<|end|>")("abc<|end|>x", 0)[:2] == (peg.OK, 3)
    assert peg.json_value('{"a": [1, -2.5e3, true, null, "x\\u00e9"]}', 0)[0] == peg.OK
    assert peg.json_value('{"a": tru', 0)[0] == peg.NEED
    assert peg.json_value("{a}", 0)[0] == peg.FAIL


def test_compute_diffs_matches_llamacpp():
    old = ChatMsg(reasoning_content="Need", tool_calls=(("get", "{"),))
    new = ChatMsg(reasoning_content="Need it", tool_calls=(("get_weather", '{"a'),))
    assert compute_diffs(old, new) == (("reasoning", " it"), ("tool", 0, "get_weather", '"a', True))
    assert compute_diffs(ChatMsg(), ChatMsg(content="x", tool_calls=(("f", "{}"),))) == (
        ("content", "x"),
        ("tool", 0, "f", "{}", True),
    )
    with pytest.raises(DiffError, match="^Invalid diff: 'ab' not found at start of 'ax'$"):
        compute_diffs(ChatMsg(content="ab"), ChatMsg(content="ax"))
    with pytest.raises(DiffError, match="^Invalid diff: now finding less tool calls!"):
        compute_diffs(ChatMsg(tool_calls=(("f", "{}"),)), ChatMsg(content="x"))


# --------------------------------------------------------------------------- regex parser (2025)


def regex(text: str, *, reasoning: bool = True, calls: bool = True, partial: bool = False) -> ChatMsg:
    return parse_regex(text, extract_reasoning=reasoning, tool_calls=calls, partial=partial)


def test_regex_parser_clean_outputs():
    assert regex(ANSWER) == ChatMsg(content="It is sunny.", reasoning_content="Need weather.")
    expected = ChatMsg(reasoning_content="Need weather.", tool_calls=(("get_weather", '{"city":"Paris"}'),))
    assert regex(CALL_IN_CHANNEL) == expected
    assert regex(CALL_IN_ROLE) == expected


def test_regex_parser_never_fails_it_skips():
    assert regex(DUPLICATE) == ChatMsg(reasoning_content="Need weather.")  # unknown header dropped
    assert regex(CALL_IN_CHANNEL, calls=False) == ChatMsg(reasoning_content="Need weather.")
    assert regex(NON_JSON + "<|start|>assistant<|channel|>final<|message|>ok") == ChatMsg(content="ok")
    assert regex(CONSTRAINED_FINAL) == ChatMsg(content='{"ok":true}')
    assert regex(NAME_LEAK) == ChatMsg()  # "get_weather<|channel|>commentary" matches neither form


def test_regex_parser_incomplete_header_falls_back_to_the_whole_output_as_content():
    assert regex(BARE_FINAL) == ChatMsg(content="It is sunny.")
    assert regex(BARE_FINAL, partial=True) == ChatMsg()
    assert regex(ANALYSIS + "<|start|>assistant<|channel|>fin") == ChatMsg(
        content=ANALYSIS + "<|start|>assistant<|channel|>fin", reasoning_content="Need weather."
    )


def test_regex_parser_reasoning_format_none():
    assert regex(ANSWER, reasoning=False) == ChatMsg(
        content="<|channel|>analysis<|message|>Need weather.<|end|>It is sunny."
    )
