"""The player's cheap paths give what the full ones give (mockoss.scenario.player, issue 9).

A scenario without ``match`` checks is played without building RequestFacts: the turn comes from
``body_turn`` and the session header from ``header_of``. These tests pin both to what
RequestFacts says, and the no-rule-answers message to what ``select.pick`` raises.
"""

from __future__ import annotations

import dataclasses

import pytest

from mockoss.scenario.conversation import LowerCaseHeaders, RequestFacts, body_turn, header_of
from mockoss.scenario.loader import Step, scenario_from_data
from mockoss.scenario.pick import replaced
from mockoss.scenario.player import Played, Player
from mockoss.scenario.select import NoRuleMatched, pick

MODEL = "openai/gpt-oss-20b"
FINAL = {"messages": [{"channel": "final", "content": "ok"}]}
ASSISTANT = {"role": "assistant", "content": "a"}
USER = {"role": "user", "content": "u"}

BODIES = [
    {"messages": [USER]},
    {"messages": [USER, ASSISTANT, {"role": "tool", "content": "r"}, ASSISTANT, USER]},
    {"messages": [USER, ["not", "a", "dict"], "text", ASSISTANT, {"content": "no role"}]},
    {"messages": []},
    {
        "messages": "not a list",
        "input": [USER, {"type": "reasoning"}, {"type": "function_call"}, {"type": "function_call_output"}],
    },
    {"input": "hi"},
    {"input": [USER, {"type": "message", "role": "assistant", "content": []}, {"type": "reasoning"}, USER]},
    {"input": 5},
    {"prompt": ["a", "b"]},
    {"prompt": None},
    {},
]


#: Each body's turn as the README's turn rule gives it: 1 + the model's earlier replies (chat:
#: assistant messages that are dicts; Responses: runs of model items, a reasoning item after an
#: answer starting a new one), 1 for a prompt.
TURNS = [1, 3, 2, 1, 2, 1, 3, 1, 1, 1, 1]


@pytest.mark.parametrize(("body", "turn"), list(zip(BODIES, TURNS, strict=True)))
def test_body_turn_is_the_facts_turn(body, turn):
    assert body_turn(body) == RequestFacts("chat", body, {}, MODEL).turn == turn


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({"x-mockoss-session": "a"}, "a"),
        ({"X-Mockoss-Session": "b", "Host": "h"}, "b"),
        ({"HOST": "h", "X-MOCKOSS-SESSION": "c"}, "c"),
        ({"host": "h"}, None),
        ({}, None),
        ({"X-Mockoss-Session": None}, None),
        ({b"x-mockoss-session": "bytes"}, None),  # a bytes name never equals the str name
        (LowerCaseHeaders({"x-mockoss-session": "d"}), "d"),
        (LowerCaseHeaders({"X-Mockoss-Session": "e"}), None),  # promised lower-case: not searched
    ],
)
def test_header_of_is_the_facts_header(headers, expected):
    assert header_of(headers, "x-mockoss-session") == expected
    assert RequestFacts("chat", {}, headers, MODEL).header("x-mockoss-session") == expected


def _scenario(data):
    return scenario_from_data(data, name="paths", default_version=True)


def test_a_plain_scenario_used_up_explains_itself_as_pick_does():
    scenario = _scenario({"steps": [{"completion": FINAL}], "when_exhausted": "next_rule"})
    body = {"messages": [USER, ASSISTANT, USER]}
    player = Player()
    assert player.play(scenario, "chat", body, {}, MODEL, 0, 0).problem is None
    played = player.play(scenario, "chat", body, {}, MODEL, 1, 0)
    with pytest.raises(NoRuleMatched) as raised:
        pick(scenario, RequestFacts("chat", body, {}, MODEL), [1])
    assert played.problem == str(raised.value)
    assert "turn 2" in played.problem
    assert (played.rule, played.step, played.turn, played.rule_id) == (None, None, 2, None)


def test_turns_and_sessions_with_and_without_match_checks_agree():
    plain = _scenario({"steps": [{"completion": FINAL}], "when_exhausted": "repeat_last"})
    checked = _scenario(
        {"rules": [{"match": {"turn": {"min": 1}}, "steps": [{"completion": FINAL}], "when_exhausted": "repeat_last"}]}
    )
    body = {"messages": [USER, ASSISTANT, USER, ASSISTANT, USER]}
    for headers in ({}, {"X-Mockoss-Session": "k"}, {"x-mockoss-session": "auto"}):
        results = []
        for scenario in (plain, checked):
            player = Player()
            results.append([player.play(scenario, "chat", body, headers, MODEL, i, 0)[2:] for i in range(3)])
        assert results[0] == results[1]
    assert results[0][0][:2] == (3, results[0][1][1])  # auto key: the body's turn, one stable key


def test_played_is_immutable_and_read_by_name():
    scenario = _scenario({"rules": [{"name": "only", "steps": [{"completion": FINAL}]}]})
    played = Player().play(scenario, "chat", {"messages": [USER]}, {}, MODEL, 0, 0)
    assert isinstance(played, Played)
    assert (played.rule_id, played.turn, played.session, played.problem, played.warnings) == ("only", 1, "", None, ())
    assert played == Played(scenario.rules[0], scenario.rules[0].steps[0], 1, "")
    with pytest.raises(AttributeError):
        played.turn = 2  # type: ignore[misc]
    unnamed = dataclasses.replace(scenario.rules[0], name=None, index=2)
    assert Played(unnamed, None, 1, "").rule_id == "#3"


def test_replaced_is_dataclasses_replace_for_every_step_field():
    # replaced() copies fields without calling Step.__init__: valid only while __init__ does
    # nothing but set them, which these two lines pin.
    assert not hasattr(Step, "__post_init__")
    assert all(field.init for field in dataclasses.fields(Step))
    scenario = _scenario({"steps": [{"completion": FINAL, "times": 2, "note": "n", "transport": {"ttft_ms": 5}}]})
    step = scenario.rules[0].steps[0]
    assert replaced(step) == step and replaced(step) is not step
    for field in dataclasses.fields(Step):
        marker = object()
        new = replaced(step, **{field.name: marker})
        assert type(new) is Step
        assert new == dataclasses.replace(step, **{field.name: marker})
        with pytest.raises(dataclasses.FrozenInstanceError):
            new.note = "changed"  # type: ignore[misc]
