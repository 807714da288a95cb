"""An unknown field in a scenario file gets a "did you mean", or where it belongs (newcomer finding,
session 14: ``chanel:`` in a ``messages`` item said "unknown field" with no hint, while switches,
scenario names and fault kinds suggest)."""

from __future__ import annotations

import pytest

from mockoss.scenario.loader import ScenarioError, load_scenario

_MESSAGES = "      messages:\n        - {channel: final, content: hi}\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "steps:\n  - completion:\n      messages:\n        - {chanel: final, content: hi}\n",
            ":5: steps[0].completion.messages[0].chanel: unknown field (did you mean 'channel'?)",
        ),
        (
            "steps:\n  - completion:\n      messages:\n        - {channel: final, content: hi, recipient_postion: channel}\n",
            "messages[0].recipient_postion: unknown field (did you mean 'recipient_position' or 'recipient'?)",
        ),
        (  # `messages:` beside `completion:` instead of under it
            "steps:\n  - completion:\n      raw: '<|channel|>final<|message|>x<|return|>'\n    messages:\n      - {channel: final}\n",
            ":6: steps[0].messages: unknown field ('messages' belongs under steps[0].completion)",
        ),
        (  # a step field written inside the completion
            "steps:\n  - completion:\n" + _MESSAGES + "      time: 2\n",
            ":6: steps[0].completion.time: unknown field (did you mean 'times', in steps[0]?)",
        ),
        (
            "rules:\n  - step:\n      - completion:\n" + _MESSAGES.replace("      ", "          ") + "    steps: []\n",
            ":4: rules[0].step: unknown field (did you mean 'steps'?)",
        ),
        (
            "steps:\n  - completion:\n" + _MESSAGES + "    transport: {ttft: 3}\n",
            "steps[0].transport.ttft: unknown field (did you mean 'ttft_ms'?)",
        ),
    ],
)
def test_unknown_field_gets_a_hint(tmp_path, body, expected):
    path = tmp_path / "x.yaml"
    path.write_text("version: 1\n" + body)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert expected in str(caught.value)


def test_a_name_close_to_nothing_gets_no_hint(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("version: 1\nsteps:\n  - completion:\n" + _MESSAGES + "    zzzz: 1\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value).endswith("steps[0].zzzz: unknown field")
