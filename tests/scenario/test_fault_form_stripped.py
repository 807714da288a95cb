"""YAML ``fault: {kind: tool_call_as_text, form: stripped}``: refused, naming the spelling that
works (t18 breaker report, finding 9). README.md's builder table lists ``stripped`` among
``leak()``'s forms beside ``fault: {kind: tool_call_as_text, form: …}``, but
``leak(form="stripped")`` writes ``kind: special_tokens_stripped`` (mockoss/_steps_builders.py
``LEAK_FORMS``, after oobabooga/textgen#7374); the error said only "expected one of 'bare',
'role', 'channel', 'json'" (mockoss/scenario/schema.py ``_stripped_hint``).
"""

from __future__ import annotations

import pytest

from mockoss.scenario.loader import ScenarioError, scenario_from_bytes
from mockoss.steps import leak

MESSAGE = '{channel: commentary, recipient: functions.get_weather, content_type: json, content: \'{"city": "Oslo"}\'}'


def _yaml(fault: str) -> bytes:
    return f"version: 1\nsteps:\n  - completion:\n      messages:\n        - {MESSAGE}\n      fault: {fault}\n".encode()


def test_form_stripped_names_special_tokens_stripped_with_file_line_and_field():
    with pytest.raises(ScenarioError) as caught:
        scenario_from_bytes(_yaml("{kind: tool_call_as_text, form: stripped}"), name="s", origin="s.yaml")
    message = str(caught.value)
    assert message.startswith(
        "s.yaml:6: steps[0].completion.fault.form: expected one of 'bare', 'role', 'channel', 'json'"
    )
    assert "fault: {kind: special_tokens_stripped}" in message


def test_the_named_spelling_loads_and_is_what_leak_stripped_writes():
    scenario_from_bytes(_yaml("{kind: special_tokens_stripped}"), name="s", origin="s.yaml")
    assert leak("get_weather", {"city": "Oslo"}, form="stripped").to_dict()["completion"]["fault"] == {
        "kind": "special_tokens_stripped"
    }


def test_other_bad_forms_keep_the_plain_message():
    with pytest.raises(ScenarioError) as caught:
        scenario_from_bytes(_yaml("{kind: tool_call_as_text, form: nope}"), name="s", origin="s.yaml")
    assert str(caught.value).endswith("expected one of 'bare', 'role', 'channel', 'json', got 'nope'")
