"""Rules: which rule answers a request, step sequencing (times, when_exhausted), the no-match error."""

import json
import textwrap

import pytest

from mockoss.scenario.loader import ScenarioError, load_scenario, scenario_from_data
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
USER = {"role": "user", "content": "List the files."}
TERMINAL = [{"type": "function", "function": {"name": "terminal"}}]


def _final(text):
    return {"completion": {"messages": [{"channel": "final", "content": text}]}}


def _server(data, **kwargs):
    return MockServer(scenario=scenario_from_data(data, name="t", default_version=True), **kwargs)


def _chat(server, messages=(USER,), headers=None, **body):
    raw = json.dumps({"model": MODEL, "messages": list(messages), **body}).encode()
    reply = server.handle("chat", raw, headers or {})
    payload = json.loads(reply.body)
    if reply.status != 200:
        return reply.status, payload["error"]["message"]
    return reply.status, payload["choices"][0]["message"]["content"]


def _responses(server, input, headers=None, **body):
    raw = json.dumps({"model": MODEL, "input": input, **body}).encode()
    reply = server.handle("responses", raw, headers or {})
    payload = json.loads(reply.body)
    if reply.status != 200:
        return reply.status, payload["error"]["message"]
    return reply.status, payload["output"][-1]["content"][0]["text"]


def _answers(server, count, **kwargs):
    return [_chat(server, **kwargs)[1] for _ in range(count)]


def test_first_matching_rule_answers_and_rules_keep_their_own_cursors():
    server = _server(
        {
            "rules": [
                {"name": "tools", "match": {"tools": True}, "steps": [_final("t1"), _final("t2")]},
                {"name": "plain", "steps": [_final("p1"), _final("p2")]},
            ]
        }
    )
    assert _chat(server, tools=TERMINAL) == (200, "t1")
    assert _chat(server) == (200, "p1")
    assert _chat(server, tools=TERMINAL) == (200, "t2")
    assert _chat(server) == (200, "p2")
    assert [(r.rule, r.step) for r in server.requests] == [("tools", 0), ("plain", 0), ("tools", 1), ("plain", 1)]


def test_times_answers_consecutive_requests_then_moves_on():
    server = _server({"steps": [{**_final("a"), "times": 3}, _final("b")], "when_exhausted": "error"})
    assert _answers(server, 4) == ["a", "a", "a", "b"]
    assert _chat(server) == (500, "mockoss: scenario exhausted: every scripted step has been used")
    assert [r.step for r in server.requests] == [0, 0, 0, 1, None]


def test_when_exhausted_next_rule_falls_through_to_the_next_rule():
    server = _server(
        {
            "rules": [
                {"name": "first", "when_exhausted": "next_rule", "steps": [{**_final("a"), "times": 2}]},
                {"name": "rest", "steps": [_final("z")]},
            ]
        }
    )
    assert _answers(server, 4) == ["a", "a", "z", "z"]
    assert [r.rule for r in server.requests] == ["first", "first", "rest", "rest"]


def test_rule_level_exhausted_error_overrides_the_scenario_default():
    server = _server(
        {
            "rules": [
                {
                    "steps": [_final("once")],
                    "when_exhausted": "error",
                    "exhausted_error": {"status": 429, "message": "slow down", "retry_after": 3},
                }
            ]
        }
    )
    assert _chat(server) == (200, "once")
    raw = json.dumps({"model": MODEL, "messages": [USER]}).encode()
    reply = server.handle("chat", raw, {})
    assert reply.status == 429 and ("retry-after", "3") in reply.headers
    assert json.loads(reply.body)["error"]["message"] == "slow down"
    assert server.requests[-1].rule == "#1"


def test_no_match_error_names_the_scenario_and_explains_each_rule_unmatched_first(tmp_path):
    path = tmp_path / "agent.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            version: 1
            rules:
              - name: spent
                when_exhausted: next_rule
                steps:
                  - completion: {raw: "<|channel|>final<|message|>x<|return|>"}
              - name: leak
                match: {turn: 1}
                steps:
                  - completion: {raw: "<|channel|>final<|message|>x<|return|>"}
              - match: {last_tool: "^ERROR", endpoint: responses, tool_choice: required}
                steps:
                  - completion: {raw: "<|channel|>final<|message|>x<|return|>"}
            """
        )
    )
    server = MockServer(scenario=str(path))
    assert _chat(server)[0] == 200  # 'spent' answers once
    conversation = [USER, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]
    status, message = _chat(server, [*conversation, {"role": "tool", "content": "fine"}])
    assert status == 400
    assert message == (
        f"mockoss: no rule of scenario 'agent' answers this chat request (model '{MODEL}', turn 3):\n"
        f"rule 'leak' (scenario {path}:7): turn 3 not in [1]\n"
        f"rule #3 (scenario {path}:11): endpoint chat not in [responses]; tool_choice is none, not required; "
        "last tool message 'fine' does not match /^ERROR/\n"
        f"rule 'spent' (scenario {path}:3): matches, but all 1 of its answers are used and when_exhausted is next_rule"
    )
    recorded = server.requests[-1]
    assert (recorded.status, recorded.scenario, recorded.rule, recorded.step) == (400, "agent", None, None)


def test_each_match_field(tmp_path):
    cases = [
        ({"endpoint": ["responses", "completions"]}, "endpoint chat not in [completions, responses]"),
        ({"model": "other"}, f"model '{MODEL}' not in ['other']"),
        ({"model": {"regex": "120b$"}}, f"model '{MODEL}' does not match /120b$/"),
        ({"tools": True}, "no tools declared"),
        ({"tool_names": ["terminal", "browser"]}, "tools not declared: browser, terminal (declared: none)"),
        ({"tool_choice": "named"}, "tool_choice is none, not named"),
        ({"tool_choice": "terminal"}, "tool_choice is none, not named 'terminal'"),
        ({"last_user": "(?i)weather"}, "last user message 'List the files.' does not match /(?i)weather/"),
        ({"last_tool": "ok"}, "no tool message"),
        ({"last_message": "^$"}, "last message 'List the files.' does not match /^$/"),
        ({"role": "tool"}, "last message is from user, not tool"),
        ({"turn": {"min": 2, "max": 4}}, "turn 1 not in [2..4]"),
        ({"turn": {"min": 3}}, "turn 1 not in [3..]"),
        ({"headers": {"X-Agent": "^hermes"}}, "header x-agent missing"),
    ]
    for match, reason in cases:
        server = _server({"rules": [{"name": "r", "match": match, "steps": [_final("hit")]}]})
        status, message = _chat(server)
        assert status == 400, match
        assert message.splitlines()[1] == f"rule 'r' (scenario t): {reason}", match


def test_matches_on_tools_tool_choice_headers_and_model():
    server = _server(
        {
            "rules": [
                {"name": "named", "match": {"tool_choice": "terminal"}, "steps": [_final("named")]},
                {
                    "name": "required",
                    "match": {"tool_choice": "required", "tool_names": ["terminal"]},
                    "steps": [_final("req")],
                },
                {"name": "hdr", "match": {"headers": {"X-Agent": "^hermes/"}}, "steps": [_final("hdr")]},
                {
                    "name": "auto",
                    "match": {"tool_choice": "auto", "model": {"regex": "gpt-oss"}},
                    "steps": [_final("auto")],
                },
                {"name": "none", "match": {"tools": False}, "steps": [_final("none")]},
            ]
        }
    )
    named = {"type": "function", "function": {"name": "terminal"}}
    assert _chat(server, tools=TERMINAL, tool_choice=named) == (200, "named")
    assert _chat(server, tools=TERMINAL, tool_choice="required") == (200, "req")
    assert _chat(server, headers={"x-agent": "hermes/1.2"}) == (200, "hdr")
    assert _chat(server, headers=[("X-Agent", "hermes/1.2")]) == (200, "hdr")  # any case
    assert _chat(server, tools=TERMINAL) == (200, "auto")  # no tool_choice + tools ⇒ auto
    assert _chat(server) == (200, "none")


def test_rule_keyed_on_the_last_tool_message_in_chat_and_responses():
    server = _server(
        {
            "rules": [
                {
                    "name": "failed",
                    "match": {"last_tool": "(?i)permission denied"},
                    "steps": [_final("retry with sudo")],
                },
                {"name": "other", "steps": [_final("done")]},
            ]
        }
    )
    call = {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}],
    }
    denied = {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ls: Permission denied"}]}
    assert _chat(server, [USER, call, denied]) == (200, "retry with sudo")
    assert _chat(server, [USER, call, {**denied, "content": "a.txt"}]) == (200, "done")
    items = [
        {"role": "user", "content": "List the files."},
        {"type": "function_call", "call_id": "c1", "name": "terminal", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "permission denied"},
    ]
    assert _responses(server, items) == (200, "retry with sudo")


def test_a_steps_file_is_one_catch_all_rule():
    scenario = load_scenario("tool-call-leaked-as-text")
    assert len(scenario.rules) == 1
    rule = scenario.rules[0]
    assert (rule.label, rule.match.checks, rule.when_exhausted) == ("rule #1", (), "repeat_last")
    assert rule.steps == scenario.steps and rule.ends == (1, 2, 3, 4)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"steps": [_final("a")], "rules": [{"steps": [_final("b")]}]},
            "(top level): Value error, give exactly one of 'steps' or 'rules'",
        ),
        ({}, "(top level): Value error, give exactly one of 'steps' or 'rules'"),
        (
            {"rules": [{"name": "a", "steps": [_final("x")]}, {"name": "a", "steps": [_final("y")]}]},
            "(top level): Value error, rule names must be unique; repeated: a",
        ),
        (
            {"rules": [{"match": {"turn": 0}, "steps": [_final("x")]}]},
            "rules[0].match.turn: Input should be greater than or equal to 1",
        ),
        (
            {"rules": [{"match": {"turn": [1, 0]}, "steps": [_final("x")]}]},
            "rules[0].match.turn[1]: Input should be greater than or equal to 1",
        ),
        (
            {"rules": [{"match": {"turn": "2"}, "steps": [_final("x")]}]},
            (
                "rules[0].match.turn: Input should be a valid integer; or Input should be a valid list; "
                "or Input should be a valid dictionary or instance of TurnRange"
            ),
        ),
        (
            {"rules": [{"match": {"turn": {"min": 3, "max": 2}}, "steps": [_final("x")]}]},
            "rules[0].match.turn: 'min' (3) is above 'max' (2)",
        ),
        (
            {"rules": [{"match": {"model": {"regex": "("}}, "steps": [_final("x")]}]},
            "rules[0].match.model.regex: invalid regular expression '(': missing ): (",
        ),
        (
            {"rules": [{"steps": [_final("x")], "when_exhausted": "loop"}]},
            "rules[0].when_exhausted: Input should be 'repeat_last', 'error' or 'next_rule'",
        ),
        (
            {"rules": [{"match": {"tools": "yes"}, "steps": [_final("x")]}]},
            "rules[0].match.tools: Input should be a valid boolean",
        ),
        ({"rules": [{"match": {"colour": "red"}, "steps": [_final("x")]}]}, "rules[0].match.colour: unknown field"),
    ],
)
def test_bad_rules_are_rejected_with_one_clear_line(data, expected):
    with pytest.raises(ScenarioError) as info:
        scenario_from_data(data, name="t", default_version=True)
    assert str(info.value) == f"<inline>: {expected}"


def test_unknown_endpoint_lists_the_valid_ones():
    from mockoss.endpoints import ENDPOINTS

    with pytest.raises(ScenarioError) as info:
        scenario_from_data(
            {"rules": [{"match": {"endpoint": ["chat", "chta"]}, "steps": [_final("x")]}]},
            name="t",
            default_version=True,
        )
    assert str(info.value) == (
        f"<inline>: rules[0].match.endpoint[1]: unknown endpoint 'chta'; valid endpoints: {', '.join(ENDPOINTS)}"
    )


def test_the_readme_rules_example_and_its_no_match_message(tmp_path, monkeypatch):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("### Rules") : readme.index("### Turns and sessions")]
    example, message = re.findall(r"```(?:yaml)?\n(.*?)```", section, re.DOTALL)
    (tmp_path / "x.yaml").write_text(example)
    monkeypatch.chdir(tmp_path)
    server = MockServer(scenario="x.yaml")
    turn_four = [USER, *[{"role": "assistant", "content": "a"}] * 3, {"role": "tool", "content": "ok"}]
    assert _chat(server, turn_four) == (400, message.rstrip("\n"))
    assert [_chat(server, tools=TERMINAL)[1] for _ in range(3)] == ['to=functions.terminal {"command":"ls"}'] * 3
