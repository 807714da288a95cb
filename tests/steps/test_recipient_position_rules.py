"""One set of ``recipient_position`` rules for Python builders and YAML files (:mod:`mockoss.recipient_position`).

Review of 258b252 (session 14): under a fault, YAML refused ``recipient_position: role`` (the fault
renders ``channel``) while ``tool_call(…, recipient_position="role").with_fault(…)`` was accepted and
rendered the channel form; and ``recipient_position: channel`` on a message without a recipient or
a channel was ignored in both. Now a message's position is unset by default (``None``: the role form
without a fault, the fault's own with one), an explicit one must agree with the fault, and
``channel`` needs a channel and a recipient: the same refusals, in the same words, both ways. The
layouts themselves: openai/harmony@ec7606d:docs/format.md ("Receiving tool calls": "The recipient
might be defined in the role or channel section of the header").
"""

from __future__ import annotations

import pytest
import yaml

from mockoss.cli import main
from mockoss.scenario.loader import ScenarioError, load_scenario
from mockoss.server.core import MockServer
from mockoss.steps import Message, Script, Step, fault, final, reasoning, script, tool_call

ARGS = {"city": "Oslo"}
ROLE_FORM = "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
CHANNEL_FORM = "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"

FAULT_YAML = """\
version: 1
steps:
  - completion:
      fault: %(fault)s
      messages:
        - {channel: analysis, content: Need the weather.}
        - channel: commentary
          recipient: functions.get_weather
          content_type: <|constrain|>json
          content: '{"city":"Oslo"}'
%(position)s"""


def _yaml_completion(tmp_path, position: str | None, fault_params: dict) -> str:
    """The loaded YAML step's completion text, or ``ScenarioError: …`` as text."""
    path = tmp_path / "step.yaml"
    line = "" if position is None else f"          recipient_position: {position}\n"
    spec = {"kind": "return_instead_of_call", **fault_params}
    path.write_text(
        FAULT_YAML % {"fault": yaml.safe_dump(spec, default_flow_style=True, width=1000).strip(), "position": line}
    )
    try:
        return load_scenario(path).steps[0].completion.text
    except ScenarioError as exc:
        return f"ScenarioError: {str(exc).removeprefix(f'{path}:4: steps[0].completion: ')}"


def _python_completion(position: str | None, fault_params: dict) -> str:
    try:
        step = (
            reasoning("Need the weather.") + tool_call("get_weather", ARGS, recipient_position=position)
        ).with_fault("return_instead_of_call", **fault_params)
    except ValueError as exc:
        return f"ScenarioError: {exc}"
    return MockServer(scenario=script(step)).scenario.steps[0].completion.text


@pytest.mark.parametrize(
    ("position", "fault_params", "form"),
    [
        (None, {}, CHANNEL_FORM),  # unset follows the fault (default channel), as the unset YAML did
        ("channel", {}, CHANNEL_FORM),
        ("role", {}, None),  # refused: was accepted in Python and rendered as channel
        (None, {"recipient_position": "role"}, ROLE_FORM),
        ("role", {"recipient_position": "role"}, ROLE_FORM),
        ("channel", {"recipient_position": "role"}, None),
    ],
)
def test_under_a_fault_python_and_yaml_accept_and_refuse_alike(tmp_path, position, fault_params, form):
    from_yaml = _yaml_completion(tmp_path, position, fault_params)
    from_python = _python_completion(position, fault_params)
    assert from_python == from_yaml  # the same text, or the same refusal in the same words
    if form is None:
        wanted = fault_params.get("recipient_position", "channel")
        assert from_python == (
            f"ScenarioError: messages[1].recipient_position: {position!r}, but the fault renders every header "
            f"with its recipient_position {wanted!r}: leave it unset here, or set the fault's recipient_position "
            f"to {position!r}"
        )
    else:
        assert form in "<|start|>assistant" + from_python  # the fault leaves the header alone


def test_every_python_way_to_a_faulted_step_refuses_a_contradicting_position():
    role = tool_call("get_weather", ARGS, recipient_position="role")
    words = r"messages\[0\]\.recipient_position: 'role', but the fault renders every header with its recipient_position 'channel'"
    for build in (
        lambda: role.with_fault("return_instead_of_call"),
        lambda: Step(messages=(role,)).with_fault("return_instead_of_call"),
        lambda: fault("return_instead_of_call", role),
        lambda: Step(messages=(role,), fault={"kind": "return_instead_of_call"}),
        lambda: Step.from_dict(
            {"completion": {"messages": [role.to_dict()], "fault": {"kind": "return_instead_of_call"}}}
        ),
    ):
        with pytest.raises(ValueError, match=words):
            build()
    with pytest.raises(ValueError, match=words.replace("0", "1")):
        fault("return_instead_of_call", final("Checking.")) + role  # a message added after the fault


NO_CHANNEL_YAML = """\
version: 1
steps:
  - completion:
      messages:
        - %s
"""


@pytest.mark.parametrize(
    ("message", "why"),
    [
        (final("Hi"), "has no recipient: give it one (a tool call's, e.g. functions.get_weather)"),
        (
            Message(channel="commentary", recipient="all", content="{}"),
            "is addressed to 'all', which Harmony does not write in the header: give it a recipient",
        ),
        (
            Message(recipient="functions.get_weather", content_type="<|constrain|>json", content="{}"),
            "has no channel: give it one (a tool call is on 'commentary')",
        ),
    ],
    ids=["no-recipient", "recipient-all", "no-channel"],
)
def test_channel_position_without_both_is_refused_not_ignored(tmp_path, message, why):
    # Before: layout.render_assistant_message kept the role form and the option changed nothing.
    problem = f"recipient_position: 'channel' puts ' to={{recipient}}' after the channel, and this message {why}, or leave recipient_position unset"
    with pytest.raises(ValueError) as python:
        message.with_recipient_position("channel")
    assert str(python.value) == problem
    data = {**message.to_dict(), "recipient_position": "channel"}
    path = tmp_path / "bad.yaml"
    path.write_text(NO_CHANNEL_YAML % yaml.safe_dump(data, default_flow_style=True, width=1000).strip())
    with pytest.raises(ScenarioError) as loaded:
        load_scenario(path)
    assert str(loaded.value) == f"{path}:5: steps[0].completion.messages[0].{problem}"  # file, line, field


def test_unset_is_the_default_and_renders_the_role_form():
    call = tool_call("get_weather", ARGS)
    assert call.recipient_position is None and Message().recipient_position is None
    assert "recipient_position" not in call.to_dict()
    explicit = call.with_recipient_position("role")
    assert explicit.to_dict()["recipient_position"] == "role"  # kept: it matters under a fault
    unset, role = (
        MockServer(scenario=script(reasoning("x") + m)).scenario.steps[0].completion for m in (call, explicit)
    )
    assert unset.text == role.text and unset.tokens == role.tokens
    assert ROLE_FORM in unset.text


SHOW_YAML = """\
version: 1
steps:
  - completion:
      messages:
        - {channel: analysis, content: Need the weather.}
        - {channel: commentary, recipient: functions.get_weather, content_type: <|constrain|>json, content: '{"city":"Oslo"}'}
  - completion:
      messages:
        - {channel: commentary, recipient: functions.get_weather, content_type: <|constrain|>json, content: '{}', recipient_position: role}
  - completion:
      messages:
        - {channel: commentary, recipient: functions.get_weather, content_type: <|constrain|>json, content: '{}', recipient_position: channel}
  - completion:
      messages:
        - {channel: final, content: Done., recipient_position: role}
        - {channel: commentary, recipient: browser.search, content: '{}', recipient_position: channel}
  - completion:
      fault: {kind: duplicate_recipient}
      messages:
        - {channel: analysis, content: Again.}
        - {channel: commentary, recipient: functions.get_weather, content_type: <|constrain|>json, content: '{}', recipient_position: channel}
"""


def test_show_python_round_trips_unset_and_explicit_positions(tmp_path, capsys):
    path = tmp_path / "positions.yaml"
    path.write_text(SHOW_YAML)
    assert main(["show", str(path), "--python"]) == 0
    code = capsys.readouterr().out
    assert "tool_call('get_weather', {'city': 'Oslo'})," in code  # unset: no keyword
    assert "recipient_position='role'" in code and "recipient_position='channel'" in code
    assert "final('Done.')" not in code  # the helper would drop the explicit 'role'
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102  # our own generated code
    built = namespace["scenario"]
    assert built == Script.from_yaml(SHOW_YAML)
    assert [s["completion"] for s in built.to_dict()["steps"]] == [
        s["completion"] for s in yaml.safe_load(SHOW_YAML)["steps"]
    ]
    served = MockServer(scenario=built).scenario.steps
    loaded = load_scenario(path).steps
    assert [s.completion.text for s in served] == [s.completion.text for s in loaded]
