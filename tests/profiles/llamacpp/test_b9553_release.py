"""``llamacpp@b9553`` and its three switches (the b9553 goldens hold the byte-for-byte check:
tests/golden/test_llamacpp_goldens.py); the timeline that places them.

Sources: llama.cpp tag b9553 as vendored at Telosnex/fllama@1d28604d ``src/llama.cpp``:
``common/chat.cpp:2529`` (the failed parse's words), ``common/chat.cpp:1118-1190`` and
``common/chat-peg-parser.cpp:320-333`` (when a streamed call opens), ``common/jinja/runtime.cpp:818-822``
and ``value.h:135`` (an array parameter without ``items``); the later
``common/parsers/gpt-oss.cpp@2629d7b5`` the profile follows by default.
"""

from __future__ import annotations

import json
import random
import warnings
from itertools import pairwise

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.llamacpp import LlamacppProfile
from mockoss.profiles.llamacpp import plan as plan_module
from mockoss.profiles.llamacpp.gptoss import PEG_FORMAT_ERROR, ChatMsg, ParseFailed, build_grammar
from mockoss.profiles.llamacpp.incremental import materialize, partial_parses
from mockoss.profiles.llamacpp.releases import LLAMACPP_TIMELINE
from mockoss.profiles.llamacpp.template_checks import ARRAY_WITHOUT_ITEMS, error_text, tools_refusal
from mockoss.profiles.registry import get_profile
from mockoss.profiles.releases import ReleaseWarning
from mockoss.profiles.timeline import release_key

B9553 = {"parse_error": "position", "tool_call_opens": "header", "template_items_check": True}
CALL = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'


def _profile(name: str) -> LlamacppProfile:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a listed or in-between release resolves without a warning
        return get_profile(name)  # type: ignore[return-value]


# --- the timeline -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["llamacpp@b6100", "llamacpp@b6301", "llamacpp@b8651"])
def test_earlier_releases_still_resolve(name):
    profile = _profile(name)
    assert profile.parser == ("regex" if name in ("llamacpp@b6100", "llamacpp@b6301") else "peg")


def test_b9553_has_the_behaviour_its_goldens_showed_and_the_newest_release_is_the_default():
    b9553 = _profile("llamacpp@b9553")
    assert {k: getattr(b9553, k) for k in B9553} == B9553
    newest = _profile(f"llamacpp@{LLAMACPP_TIMELINE.newest}")
    default = LlamacppProfile()
    assert LLAMACPP_TIMELINE.newest == "b10864"
    assert {k: getattr(newest, k) for k in B9553} == {k: getattr(default, k) for k in B9553}
    assert (default.parse_error, default.tool_call_opens, default.template_items_check) == (
        "format",
        "recipient",
        True,  # no later fix known: the 500 stays (a review found the listed 'fix' unsupported)
    )


def test_b9000_is_a_build_before_b9553_and_b8651_keeps_the_old_words():
    """``b9000`` named the followed build until 2026-12; as a build number it comes before b9553."""
    assert release_key("b9000") < release_key("b9553") < release_key("b10216") < release_key("b10864")
    # A user who pinned llamacpp@b9000 for the followed build is told what to pin now.
    with pytest.warns(ReleaseWarning, match=r"llamacpp@b9000 named llamacpp@b10864 .* pin llamacpp@b10864"):
        b9000 = get_profile("llamacpp@b9000")
    assert b9000.tool_call_opens == "header"  # type: ignore[attr-defined]
    assert _profile("llamacpp@b8651").parse_error == "position"  # not the later words, as the timeline said
    assert _profile("llamacpp@b10216").parse_error == "format"


def test_changes_are_ordered_and_sit_at_listed_releases():
    changes = LLAMACPP_TIMELINE.ordered_changes()
    keys = [release_key(c.release) for c in changes]
    assert keys == sorted(keys)
    assert {c.release for c in changes} <= {r.name for r in LLAMACPP_TIMELINE.releases}
    by_switch = {c.switch: c for c in changes if c.switch in B9553}
    assert set(by_switch) == set(B9553)
    assert [c.release for c in changes if c.switch == "template_items_check"] == ["b7756"]


# --- parse_error --------------------------------------------------------------------------------

#: A turn that ends with a final answer where tool_choice "required" wants a call.
ANSWER = "<|channel|>analysis<|message|>pensé<|end|><|start|>assistant<|channel|>final<|message|>Hi"


@pytest.mark.parametrize("opens", ["header", "recipient"])
def test_a_failed_parse_in_b9553s_words_counts_bytes_and_quotes_the_rest(opens):
    grammar = build_grammar(("get_weather",), "required", True, False, opens)
    with pytest.raises(ParseFailed) as failed:
        grammar.parse(ANSWER, partial=False, wording="position")
    head = "<|start|>assistant" + ANSWER[: ANSWER.index("<|start|>") + len("<|start|>assistant")]
    rest = "<|channel|>final<|message|>Hi"
    if opens == "header":  # b9553: fails after the last <|start|>assistant, a byte past the characters ("é")
        assert str(failed.value) == f"Failed to parse input at pos {len(head) + 1}: {rest}"
    else:  # the later grammar's choice starts before <|start|>assistant
        assert str(failed.value).startswith("Failed to parse input at pos ")
    with pytest.raises(ParseFailed, match=PEG_FORMAT_ERROR):
        grammar.parse(ANSWER, partial=False)


def test_the_profile_answers_a_failed_parse_in_its_releases_words():
    completion = Completion.from_text(ANSWER + "<|return|>")
    body = {"tools": [{"type": "function", "function": {"name": "get_weather"}}], "tool_choice": "required"}
    # 79: 18 + 30 + 6 ("pensé", UTF-8) + 7 + 18 bytes up to the last <|start|>assistant
    for profile, word in (
        (LlamacppProfile(), PEG_FORMAT_ERROR),
        (LlamacppProfile(**B9553), "Failed to parse input at pos 79: "),
    ):
        plan = profile.plan(completion, body, ("get_weather",), None, stream=True)
        assert plan.error is not None and plan.error.startswith(word)
        assert plan.stream_error == plan.error


# --- tool_call_opens ----------------------------------------------------------------------------


def _tool_diffs(profile: LlamacppProfile, text: str) -> list[tuple]:
    body = {
        "tools": [
            {"type": "function", "function": {"name": "get_weather"}},
            {"type": "function", "function": {"name": "get"}},
        ]
    }
    plan = profile.plan(Completion.from_text(text), body, ("get", "get_weather"), None, stream=True)
    return [diff for _, diffs in plan.steps for diff in diffs if diff[0] == "tool"]


def test_b9553_opens_a_streamed_call_with_its_whole_name_after_the_header():
    b9553 = _tool_diffs(LlamacppProfile(**B9553), CALL)
    assert b9553[0] == ("tool", 0, "get_weather", "{", True)
    assert all(not d[2] for d in b9553[1:])  # never renamed
    later = _tool_diffs(LlamacppProfile(), CALL)
    assert later[0][:3] == ("tool", 0, "get")  # the followed build streams a name prefix first


def test_b9553_sends_no_tool_delta_for_a_header_that_fails():
    bad = "<|channel|>commentary to=functions.get_weather <|constrain|> json<|message|>{}<|call|>"
    assert _tool_diffs(LlamacppProfile(**B9553), bad) == []
    assert _tool_diffs(LlamacppProfile(), bad) != []


FRAGMENTS = (
    "<|start|>assistant",
    "<|channel|>",
    "analysis",
    "final",
    "commentary",
    " to=functions.get_weather",
    " to=functions.get",
    " to=assistant",
    " to=",
    "<|constrain|>",
    "json",
    " ",
    "<|message|>",
    "<|end|>",
    "<|end",
    "<|",
    "hello",
    '{"city":',
    '"Paris"',
    "}",
    "{",
    "[1, true]",
    '"\\u00',
    "é",
)


def _check_replay(grammar, pieces: list[str]) -> None:
    """The stream plan (steps, error, final diffs) from the incremental parses equals the one
    from a full parse per piece, failed final parse in b9553's words included."""

    def parse(text: str, partial: bool) -> ChatMsg:
        return grammar.parse(text, partial=partial, wording="position")

    numbered = list(enumerate(pieces, 1))
    fast = plan_module._replay(parse, numbered, lambda p: partial_parses(grammar, "", p))
    assert fast == plan_module._replay(parse, numbered)


@pytest.mark.parametrize("seed", range(3))
def test_b9553_partial_parses_equal_full_reparses(seed):
    """The incremental stream (:mod:`.incremental`) over b9553's grammar equals a full parse per
    piece, as llama-server does it, for random texts and every request shape."""
    rng = random.Random(seed)
    shapes = [(tools, choice, extract, schema) for tools in ((), ("get", "get_weather")) for choice in ("auto", "required", "none")
              for extract in (True, False) for schema in (False, True) if not (schema and choice != "auto")]  # fmt: skip
    for _ in range(150):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 16))).removeprefix("<|start|>assistant")
        cuts = (
            sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(0, len(text) // 2))))
            if len(text) > 1
            else []
        )
        pieces = [text[a:b] for a, b in pairwise([0, *cuts, len(text)])]
        tools, choice, extract, schema = rng.choice(shapes)
        grammar = build_grammar(tools, choice, extract, schema, "header")
        expected, so_far = [], ""
        for piece in pieces:
            so_far += piece
            expected.append(grammar.parse(so_far, partial=True))
        assert list(materialize(partial_parses(grammar, "", pieces))) == expected, (text, pieces)
        _check_replay(grammar, pieces)
    assert isinstance(expected[-1], ChatMsg)


# --- template_items_check -----------------------------------------------------------------------


def _tool(properties: dict) -> dict:
    return {
        "type": "function",
        "function": {"name": "bash", "parameters": {"type": "object", "properties": properties}},
    }


@pytest.mark.parametrize(
    ("properties", "refused"),
    [
        ({"cmd": {"type": "array"}}, True),
        ({"cmd": {"type": "array", "items": {"type": "string"}}}, False),
        ({"cmd": {"type": "array", "items": {}}}, False),  # present but empty: "any[]"
        ({"cmd": {"type": "array", "items": {"type": "array"}}}, True),  # the items are rendered too
        ({"o": {"type": "object", "properties": {"cmd": {"type": "array"}}}}, True),
        ({"u": {"oneOf": [{"type": "array"}, {"type": "string"}]}}, True),
        ({"u": {"oneOf": [{"type": "array"}, {"type": "object"}]}}, False),  # "any": variants not rendered
        ({"t": {"type": ["array", "null"]}}, False),
        ({"s": {"type": "string"}}, False),
    ],
)
def test_an_array_parameter_without_items_fails_b9553s_template(properties, refused):
    assert (tools_refusal([_tool(properties)]) is ARRAY_WITHOUT_ITEMS) is refused


def test_the_items_error_is_a_500_before_generating_and_comes_before_the_messages_refusals():
    body = {"messages": [{"role": "tool", "content": "x"}], "tools": [_tool({"cmd": {"type": "array"}})]}
    reply = LlamacppProfile(**B9553).request_refusal("chat", body)
    assert reply is not None and reply.status == 500
    assert json.loads(reply.body)["error"]["message"] == error_text(ARRAY_WITHOUT_ITEMS, "jinja")
    assert error_text(ARRAY_WITHOUT_ITEMS, "jinja").endswith("^\nError: Function is not a bool value")
    default = LlamacppProfile().request_refusal("chat", body)  # on by default too
    assert default is not None and json.loads(default.body) == json.loads(reply.body)
    off = LlamacppProfile(template_items_check=False).request_refusal("chat", body)  # the tool-role raise instead
    assert off is not None and "Message has tool role" in json.loads(off.body)["error"]["message"]
