"""A lone UTF-16 surrogate in a scenario is a load error naming file, line and field
(mockoss/scenario/surrogates.py; t18 breaker report, finding 11: ``raw: "\\ud800"`` passed
``mockoss validate`` and was served as U+FFFD, or a 500 by gptoss-reference). PyYAML reads the
escape unchecked (yaml/pyyaml@6.0.2 ``lib/yaml/scanner.py`` ``scan_flow_scalar_non_spaces``); a JSON
surrogate pair, which JSON joins (RFC 8259 section 7), reaches YAML as two lone halves.
"""

from __future__ import annotations

import pytest

from mockoss.cli import main
from mockoss.scenario.loader import ScenarioError, scenario_from_bytes, scenario_from_data
from mockoss.scenario.surrogates import find_surrogate, may_hold_surrogates
from mockoss.steps import as_scenario_data, final


def _load(text: str):
    return scenario_from_bytes(text.encode(), name="s", origin="s.yaml")


def test_a_lone_surrogate_in_raw_names_file_line_and_field():
    with pytest.raises(
        ScenarioError, match=r"^s\.yaml:4: steps\[1\]\.completion\.raw: a lone UTF-16 surrogate U\+D800"
    ):
        _load('version: 1\nsteps:\n  - completion: {raw: "ok"}\n  - completion: {raw: "a\\ud800"}\n')


def test_a_json_surrogate_pair_is_the_character_json_means():
    """A JSON scenario written by ``json.dumps`` (a character outside the BMP as a pair) loads as
    that character, keys too (tests/profiles/test_memo_equals_direct.py's U+F0000 case failed
    with 775b9ca, which refused the pair)."""
    text = (
        '{"version": 1, "steps": [{"note": "x", "completion": {"messages": [\n'
        '  {"channel": "final", "content": "hi \\ud83d\\ude00"}]}}]}\n'
    )
    scenario = _load(text)
    assert "<|message|>hi \U0001f600<|return|>" in scenario.steps[0].completion.text
    lone = text.replace("\\ude00", "")
    with pytest.raises(
        ScenarioError,
        match=r"^s\.yaml:2: steps\[0\]\.completion\.messages\[0\]\.content: a lone UTF-16 surrogate U\+D83D",
    ):
        _load(lone)


def test_the_8_digit_escape_and_keys_are_checked_too():
    with pytest.raises(ScenarioError, match=r"^s\.yaml:3: steps\[0\]\.note: a lone UTF-16 surrogate U\+DC00"):
        _load('version: 1\nsteps:\n  - note: "\\U0000DC00"\n    completion: {raw: "x"}\n')
    with pytest.raises(ScenarioError, match=r"^s\.yaml:5: rules\[0\]\.match\.body\.\S+: a lone UTF-16 surrogate"):
        _load('version: 1\nrules:\n  - steps: [{completion: {raw: "x"}}]\n    match:\n      body: {"k\\udfff": 1}\n')


def test_characters_written_as_escapes_still_load():
    scenario = _load('version: 1\nsteps:\n  - completion: {raw: "caf\\u00e9 \\U0001F600 \\\\ud800"}\n')
    assert scenario.steps[0].completion is not None


def test_inline_data_and_builders_are_checked():
    with pytest.raises(ScenarioError, match=r"^<inline>: steps\[0\]\.completion\.messages\[0\]\.content: a lone"):
        scenario_from_data(as_scenario_data(final("x\udfffy")), name="x")


def test_validate_exits_1_naming_the_line(tmp_path, capsys):
    path = tmp_path / "m48.yaml"
    path.write_text('version: 1\nsteps:\n  - completion: {raw: "\\ud800"}\n')
    assert main(["validate", str(path)]) == 1
    assert f"{path}:3: steps[0].completion.raw: a lone UTF-16 surrogate U+D800" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "gate"),
    [
        ("plain", False),
        ("caf\\u00e9", False),
        ("\\ud800", True),
        ("\\uDBFF", True),
        ("\\U0000dc00", True),
        ("\\ue000", False),
    ],
)
def test_the_gate_only_walks_files_with_a_surrogate_escape(text, gate):
    assert may_hold_surrogates(text) is gate


def test_find_surrogate_walks_aliases_once():
    shared = ["a", "b"]
    data = {"x": shared, "y": shared, "z": [shared, "\ud800"]}
    assert find_surrogate(data) == (("z", 1), "\ud800")


def test_a_recording_keeps_what_was_exchanged():
    # A client may send a lone surrogate (JSON allows it); --record keeps it, and the replay
    # answers the same (tests/upstream/test_record_surrogates.py): recordings are not refused.
    from mockoss.scenario.surrogates import RECORDING_PREFIX
    from mockoss.upstream.replay_command import COMMAND_PREFIX

    assert RECORDING_PREFIX == COMMAND_PREFIX
    _load(
        COMMAND_PREFIX
        + 'mockoss serve --scenario s.yaml\nversion: 1\nsteps:\n  - note: "a\\ud800b"\n    completion: {raw: "x"}\n'
    )
