"""Ollama's string-level Harmony parser (profile ollama), on well-formed and malformed completions.

Expected outcomes follow ollama/ollama:harmony/harmonyparser.go@fb307609 read rule by rule; each
test names the rule it pins, and where openai-harmony's parser differs, says how.
"""

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.ollama.generation import pieces, run
from mockoss.profiles.ollama.parser import FunctionNameMap, Header, MessageHandler, StringParser, parse_header


def _run(text, tools=(), prefill=None, max_tokens=None):
    return run(Completion.from_text(text), max_tokens, tuple(tools), prefill)


# --------------------------------------------------------------------------- headers


@pytest.mark.parametrize(
    ("raw", "header"),
    [
        ("assistant<|channel|>analysis", Header("assistant", "analysis", "")),
        (
            "assistant<|channel|>commentary to=functions.get_weather <|constrain|>json",
            Header("assistant", "commentary", "functions.get_weather"),
        ),
        (
            "assistant to=functions.get_weather<|channel|>commentary <|constrain|>json",
            Header("assistant", "commentary", "functions.get_weather"),
        ),
        # glued <|constrain|>: a space is inserted before the first one
        (
            "assistant<|channel|>commentary to=functions.x<|constrain|>json",
            Header("assistant", "commentary", "functions.x"),
        ),
        # <|constrain|>json is never a recipient (openai-harmony makes it one)
        ("assistant<|channel|>commentary <|constrain|>json", Header("assistant", "commentary", "")),
        ("assistant<|channel|>final <|constrain|>json", Header("assistant", "final", "")),
        # a bare recipient is not recognised (openai-harmony takes it)
        ("assistant<|channel|>commentary functions.x", Header("assistant", "commentary", "")),
        # the recipient must be the field right after the role
        ("assistant<|channel|>commentary json to=functions.x", Header("assistant", "commentary", "")),
        # duplicate to=: the first wins, no error (openai-harmony raises)
        (
            "assistant<|channel|>commentary to=functions.x to=functions.y json",
            Header("assistant", "commentary", "functions.x"),
        ),
        # role position to=X: role "tool"
        ("to=functions.x<|channel|>commentary", Header("tool", "commentary", "functions.x")),
        # the channel runs to the next whitespace, '<' included
        ("assistant<|channel|>analysis<|channel|>final", Header("assistant", "analysis<|channel|>final", "")),
        ("assistant<|channel|>commentary.functions.x", Header("assistant", "commentary.functions.x", "")),
        ("", Header("", "", "")),
    ],
)
def test_header_rules(raw, header):
    assert parse_header(raw) == header


def test_an_empty_header_logs_a_missing_role():
    log = []
    assert parse_header("<|channel|>final", log) == Header("", "final", "")
    assert log == ["harmony parser: missing role in header: ''"]


# --------------------------------------------------------------------------- streaming


def test_a_possible_end_tag_is_held_back_until_the_next_piece():
    parser = StringParser()
    assert parser.add("<|start|>assistant<|channel|>final<|message|>a <") == [
        ("start", None),
        ("header", Header("assistant", "final", "")),
        ("content", "a "),
    ]
    assert parser.add("b") == [("content", "<b")]
    assert parser.add("<|end|>") == [("end", None)]


def test_canonical_answer_streams_thinking_then_content_one_token_at_a_time():
    gen = _run(
        "<|channel|>analysis<|message|>User asks.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
    )
    assert [(c.thinking, c.content) for c in gen.chunks] == [
        ("User", ""),
        (" asks", ""),
        (".", ""),
        ("", "2"),
        ("", " +"),
        ("", " "),
        ("", "2"),
        ("", " ="),
        ("", " "),
        ("", "4"),
        ("", "."),
    ]
    assert (gen.thinking, gen.content, gen.tool_call, gen.error, gen.done_reason) == (
        "User asks.",
        "2 + 2 = 4.",
        None,
        None,
        "stop",
    )
    assert gen.eval_count == 21 and gen.log == ()


def test_text_between_end_and_start_is_dropped_with_a_warning():
    gen = _run(
        "<|channel|>analysis<|message|>think<|end|>stray words<|start|>assistant<|channel|>final<|message|>Hi<|return|>"
    )
    assert (gen.thinking, gen.content) == ("think", "Hi")
    assert gen.log == ("harmony parser: found message start tag in the middle of the content: 'stray words<|start|>'",)


def test_text_after_the_last_end_is_lost_silently():
    gen = _run("<|channel|>final<|message|>Hi<|end|>trailing text<|return|>")
    assert (gen.content, gen.log) == ("Hi", ())


def test_unknown_channel_leaves_the_state_so_its_text_is_content():
    gen = _run("<|channel|>analysis<|message|>t<|end|><|start|>assistant<|channel|>weird<|message|>X<|return|>")
    assert (gen.thinking, gen.content) == ("t", "X")


def test_unknown_channel_right_after_a_tool_header_keeps_calling_the_tool():
    # the state is only reset by a message end: an unknown channel inside the same message is not possible,
    # but a message without a channel after a tool message still starts from Normal
    gen = _run(
        "<|channel|>commentary to=functions.f<|message|>{}<|end|><|start|>assistant<|message|>after<|return|>", ["f"]
    )
    assert (gen.content, gen.tool_call.name, gen.tool_call.arguments) == ("after", "f", "{}")


def test_constrained_commentary_without_recipient_is_content():
    gen = _run('<|channel|>commentary <|constrain|>json<|message|>{"a":1}<|call|>')
    assert (gen.content, gen.tool_call) == ('{"a":1}', None)


def test_final_with_a_recipient_is_content_not_a_tool_call():
    gen = _run('<|channel|>final to=functions.f<|message|>{"a":1}<|return|>', ["f"])
    assert (gen.content, gen.tool_call) == ('{"a":1}', None)


def test_bare_recipient_is_ignored_so_the_arguments_are_content():
    gen = _run('<|channel|>commentary functions.get_weather<|message|>{"location":"SF"}<|call|>', ["get_weather"])
    assert (gen.content, gen.tool_call) == ('{"location":"SF"}', None)


def test_analysis_with_a_recipient_is_a_tool_call():
    gen = _run('<|channel|>analysis to=browser.search code<|message|>{"query":"x"}<|call|>', ["browser.search"])
    assert (gen.thinking, gen.content) == ("", "")
    assert (gen.tool_call.name, gen.tool_call.arguments) == ("browser.search", '{"query":"x"}')


def test_missing_end_before_start_keeps_the_tags_as_text():
    gen = _run("<|channel|>analysis<|message|>think<|start|>assistant<|channel|>final<|message|>Hi<|return|>")
    assert (gen.thinking, gen.content) == ("think<|start|>assistant<|channel|>final<|message|>Hi", "")


def test_leaked_recipient_in_final_text_stays_text():
    gen = _run('<|channel|>final<|message|>to=functions.get_weather {"location":"SF"}<|return|>', ["get_weather"])
    assert (gen.content, gen.tool_call) == ('to=functions.get_weather {"location":"SF"}', None)


def test_truncation_keeps_what_was_streamed_and_reports_length():
    gen = _run("<|channel|>analysis<|message|>one two three four<|end|>", max_tokens=5)
    assert (gen.thinking, gen.done_reason, gen.eval_count) == ("one two", "length", 5)


def test_truncated_tool_header_fails_with_an_empty_raw():
    gen = _run("<|channel|>commentary to=functions.f<|message|>", ["f"])
    assert gen.error == "error parsing tool call: raw='', err=unexpected end of JSON input"


def test_prefill_final_reads_the_output_as_the_answer_continuation():
    gen = _run(
        "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>y<|return|>",
        prefill="final",
    )
    assert (gen.thinking, gen.content) == ("", "<|channel|>analysis<|message|>xy")


def test_prefill_analysis_reads_the_output_as_more_thinking():
    gen = _run(" more<|end|><|start|>assistant<|channel|>final<|message|>y<|return|>", prefill="analysis")
    assert (gen.thinking, gen.content) == (" more", "y")


# --------------------------------------------------------------------------- tool calls


def test_tool_call_name_is_trimmed_and_mapped_back_to_the_declared_name():
    gen = _run(
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"SF"}<|call|>',
        ["get-weather"],
    )
    assert (gen.tool_call.name, gen.tool_call.arguments, gen.log) == ("get-weather", '{"location":"SF"}', ())


def test_unknown_tool_name_passes_through_with_a_warning():
    gen = _run("<|channel|>commentary to=functions.do_it<|message|>{}<|call|>", ["other"])
    assert gen.tool_call.name == "do_it"
    assert gen.log == ("harmony parser: no reverse mapping found for function name: 'do_it'",)


def test_non_json_arguments_fail_with_gos_message():
    gen = _run("<|channel|>commentary to=functions.terminal<|message|>ls -R\n<|call|>", ["terminal"])
    assert (
        gen.error == "error parsing tool call: raw='ls -R\n', err=invalid character 'l' looking for beginning of value"
    )
    assert gen.error_cause == "invalid character 'l' looking for beginning of value"
    assert gen.tool_call is None


def test_text_of_every_tool_message_is_decoded_as_one_value():
    text = (
        '<|channel|>commentary to=functions.a<|message|>{"x":1}<|end|>'
        '<|start|>assistant<|channel|>commentary to=functions.b<|message|>{"y":2}<|call|>'
    )
    gen = _run(text, ["a", "b"])
    assert (
        gen.error
        == "error parsing tool call: raw='{\"x\":1}{\"y\":2}', err=invalid character '{' after top-level value"
    )


def test_arguments_are_rewritten_as_go_writes_them():
    gen = _run('<|channel|>commentary to=functions.f<|message|>{"z": {"b": 1.50, "a": "<x>"}, "n": 10}<|call|>', ["f"])
    assert gen.tool_call.arguments == '{"z":{"a":"\\u003cx\\u003e","b":1.5},"n":10}'


@pytest.mark.parametrize(
    ("declared", "prompt_names"),
    [
        (["get-weather"], ["get_weather"]),
        (["get-weather", "get_weather"], ["get_weather", "get_weather_2"]),
        (
            ["a b.c", "9lives", "$x", "ünï", "!!!", "browser.search", "python"],
            ["a_b_c", "_9lives", "$x", "ünï", "unnamed", "browser.search", "python"],
        ),
        (["f", "f", "f"], ["f", "f_2", "f_3"]),
    ],
)
def test_function_names_are_sanitised_for_the_prompt(declared, prompt_names):
    mapping = FunctionNameMap()
    assert [mapping.add(name) for name in declared] == prompt_names


def test_duplicate_sanitised_names_map_back_to_each_declaration():
    mapping = FunctionNameMap.from_tools(["get-weather", "get_weather", ""])
    assert mapping.original("get_weather") == "get-weather"
    assert mapping.original("get_weather_2") == "get_weather"


def test_handler_reports_the_tool_call_only_when_done():
    handler = MessageHandler.for_request(["f"])
    assert handler.add("<|channel|>commentary to=functions.f<|message|>", False) == ("", "", None)
    assert handler.add('{"a":1}', False) == ("", "", None)
    _, _, call = handler.add("", True)
    assert (call.name, call.arguments) == ("f", '{"a":1}')


# --------------------------------------------------------------------------- detokenisation


def test_pieces_keep_preserved_tags_and_drop_other_special_tokens():
    tokens = Completion.from_text("<|channel|>final<|message|>Hi<|endoftext|>!<|return|>ignored").tokens
    assert [text for _, text in pieces(tokens)] == ["<|channel|>", "final", "<|message|>", "Hi", "!"]
    assert [text for _, text in pieces(tokens, preserved=frozenset())] == ["final", "Hi", "!"]


def test_a_character_split_over_tokens_arrives_whole():
    tokens = Completion.from_text("<|channel|>final<|message|>🦙 x<|return|>").tokens
    assert [text for _, text in pieces(tokens)][-2:] == ["🦙", " x"]
