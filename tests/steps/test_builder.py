"""The Python step builder (mockoss.steps): equal to the YAML format, both ways, and served alike."""

from __future__ import annotations

import json

import openai
import pytest
import yaml

from mockoss import steps as steps_module
from mockoss.harmony.faults import FaultError
from mockoss.scenario.loader import ScenarioError, builtin_names, load_scenario
from mockoss.server.core import MockServer
from mockoss.steps import (
    Message,
    Script,
    Step,
    error,
    fault,
    final,
    leak,
    preamble,
    raw,
    reasoning,
    rule,
    script,
    tool_call,
)

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def _shipped(name: str) -> dict:
    import importlib.resources

    return yaml.safe_load((importlib.resources.files("mockoss.scenarios") / f"{name}.yaml").read_text("utf-8"))


def test_a_tool_call_step_is_the_yaml_form():
    step = reasoning("Need the weather.") + tool_call("get_weather", {"location": "Tokyo"})
    assert step.to_dict() == {
        "completion": {
            "messages": [
                {"channel": "analysis", "content": "Need the weather."},
                {
                    "channel": "commentary",
                    "recipient": "functions.get_weather",
                    "content_type": "<|constrain|>json",
                    "content": '{"location":"Tokyo"}',
                },
            ]
        }
    }


def test_arguments_as_json_text_are_kept_verbatim():
    assert tool_call("x", '{"a": 1,').content == '{"a": 1,'
    assert tool_call("browser.search", {"q": "x"}).recipient == "browser.search"


def test_builders_return_copies():
    base = final("Hi")
    changed = base.with_channel("analysis")
    assert base.channel == "final" and changed.channel == "analysis"
    step = Step(messages=(base,))
    assert step.with_times(3).times == 3 and step.times == 1


@pytest.mark.parametrize("name", builtin_names())
def test_every_shipped_scenario_round_trips_through_the_builder(name):
    """YAML → builder → YAML is the identity, and the printed builder code evaluates to it."""
    data = _shipped(name)
    built = Script.from_dict(data)
    assert built.to_dict() == data
    assert yaml.safe_load(built.to_yaml()) == data
    evaluated = eval(built.to_python(), vars(steps_module))  # our own generated code
    assert evaluated.to_dict() == data


def test_builder_and_yaml_serve_byte_identical_replies():
    built = script(
        reasoning("Need the weather.") + tool_call("get_weather", {"location": "Tokyo"}),
        final("Sunny."),
        leak("get_weather", {"location": "Tokyo"}, form="role"),
        error(429, "Slow down", retry_after=2),
    )
    from_yaml = yaml.safe_load(built.to_yaml())
    body = json.dumps({"messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS}).encode()
    a, b = MockServer(scenario=built), MockServer(scenario=None)
    b.use_scenario(built)  # builder items straight into MockServer
    from mockoss.scenario.loader import scenario_from_data

    c = MockServer(scenario=scenario_from_data(from_yaml, name="script"))
    for _ in range(4):
        replies = [server.handle("chat", body, {}) for server in (a, b, c)]
        assert replies[0] == replies[1] == replies[2]
    assert replies[0].status == 429


def test_leak_forms_give_the_text_real_models_emit():
    server = MockServer(scenario=script(*(leak("terminal", {"command": "ls"}, form=f) for f in ("bare", "role", "json"))))
    body = json.dumps({"messages": [{"role": "user", "content": "ls"}]}).encode()
    contents = [json.loads(server.handle("chat", body, {}).body)["choices"][0]["message"]["content"] for _ in range(3)]
    assert contents[0] == 'to=functions.terminal {"command":"ls"}'
    assert contents[1] == 'assistant to=functions.terminal {"command":"ls"}'
    assert json.loads(contents[2]) == {"name": "terminal", "command": "ls"}
    with pytest.raises(ValueError, match="forms: bare, role, channel, json, stripped"):
        leak("x", form="shouted")


def test_fault_and_raw_steps():
    step = fault("duplicate_recipient", tool_call("bash", {"command": "ls"}))
    assert step.to_dict()["completion"]["fault"] == {"kind": "duplicate_recipient"}
    with pytest.raises(FaultError, match="unknown fault kind"):
        fault("no_such_fault", final("x"))
    assert raw("<|channel|>final<|message|>Hi<|return|>").to_dict() == {
        "completion": {"raw": "<|channel|>final<|message|>Hi<|return|>"}
    }


def test_rules_take_match_fields_as_keywords():
    built = script(
        rule(reasoning("Call it.") + tool_call("get_weather", {}), name="call", turn=1),
        rule(final("Done: {{ request.messages[-1].content }}"), name="answer", role="tool"),
    )
    assert built.to_dict()["rules"][1] == {
        "name": "answer",
        "match": {"role": "tool"},
        "steps": [{"completion": {"messages": [{"channel": "final", "content": "Done: {{ request.messages[-1].content }}"}]}}],
    }
    with pytest.raises(ScenarioError, match=r"rules\[0\]\.match\.trun: unknown field"):
        MockServer(scenario=script(rule(final("x"), trun=1)))
    with pytest.raises(TypeError, match="not both"):
        script(final("x"), rule(final("y")))


def test_preamble_is_commentary_without_recipient():
    assert preamble("Checking.").to_dict() == {"channel": "commentary", "content": "Checking."}
    assert Message.from_dict({"channel": "final", "content": "x"}) == final("x")


def test_optional_and_tool_mismatch_flags_are_scenario_fields():
    step = (tool_call("undeclared", {}) + final("x")).with_optional().with_tool_mismatch_intended()
    data = step.to_dict()
    assert data["optional"] is True and data["tool_mismatch_intended"] is True
    loaded = MockServer(scenario=script(step)).scenario
    assert loaded.steps[0].optional is True
    assert loaded.steps[0].tool_calls == ()


def test_five_line_test_through_the_fixture(mockoss):
    mockoss.use(tool_call("get_weather", {"location": "Tokyo"}), final("Sunny in Tokyo."))
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        messages = [{"role": "user", "content": "Weather in Tokyo?"}]
        first = client.chat.completions.create(model=mockoss.model, messages=messages, tools=TOOLS)
        second = client.chat.completions.create(model=mockoss.model, messages=messages, tools=TOOLS)
    assert first.choices[0].message.tool_calls[0].function.name == "get_weather"
    assert second.choices[0].message.content == "Sunny in Tokyo."


@pytest.mark.mockoss(scenario=[final("From the marker.")])
def test_the_marker_takes_builder_steps(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        answer = client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content == "From the marker."


def test_load_scenario_and_builder_compile_to_the_same_completions():
    data = _shipped("tool-call-leaked-as-text")
    from_file = load_scenario("tool-call-leaked-as-text")
    from_builder = MockServer(scenario=Script.from_dict(data)).scenario
    assert [s.completion.text for s in from_builder.steps] == [s.completion.text for s in from_file.steps]
