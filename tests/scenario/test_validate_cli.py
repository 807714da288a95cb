"""`mockoss validate`, `mockoss schema` and `mockoss scenarios --json` as a user runs them."""

import json
import textwrap

import pytest

from mockoss.cli import main
from mockoss.scenario.json_schema import scenario_json_schema, scenario_json_schema_text, shipped_json_schema_text
from mockoss.scenario.loader import builtin_names

HEAD = "version: 1\nrules:\n  - name: r\n"
GOOD_STEP = "      - completion: {raw: '<|channel|>final<|message|>ok<|return|>'}\n"


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(
    ("body", "line", "field", "problem"),
    [
        (
            "    steps:\n      - completion: {raw: x}\n        colour: red\n",
            6,
            "rules[0].steps[0].colour",
            "unknown field",
        ),
        (
            "    match: {last_tool: '(unclosed'}\n    steps:\n" + GOOD_STEP,
            4,
            "rules[0].match.last_tool",
            "invalid regular expression '(unclosed': missing ): (unclosed",
        ),
        (
            "    steps:\n      - completion:\n          messages:\n            - {channel: final, content: '{{ faker.nope }}'}\n",
            7,
            "rules[0].steps[0].completion.messages[0].content",
            "template '{{ faker.nope }}': unknown Faker provider 'nope'",
        ),
        (
            "    steps:\n      - completion:\n          messages: [{channel: final, content: hi}]\n          fault: {kind: gremlins}\n",
            7,
            "rules[0].steps[0].completion.fault.kind",
            "unknown fault kind 'gremlins'; valid kinds: ",
        ),
        (
            "    steps:\n      - times: 0\n        completion: {raw: x}\n",
            5,
            "rules[0].steps[0].times",
            "Input should be greater than or equal to 1",
        ),
        (
            "    steps:\n      - times: '3'\n        completion: {raw: x}\n",
            5,
            "rules[0].steps[0].times",
            "Input should be a valid integer",
        ),
        (
            "    steps:\n      - error: {status: server-error}\n",
            5,
            "rules[0].steps[0].error.status",
            "Input should be a valid integer, unable to parse string as an integer",
        ),
        (
            "    match: {turn: two}\n    steps:\n" + GOOD_STEP,
            4,
            "rules[0].match.turn",
            "Input should be a valid integer; or Input should be a valid list;",
        ),
    ],
    ids=[
        "unknown-field",
        "bad-regex",
        "bad-template",
        "unknown-fault-kind",
        "times-zero",
        "times-string",
        "bad-type",
        "bad-union",
    ],
)
def test_validate_names_file_line_and_field(tmp_path, capsys, body, line, field, problem):
    path = _write(tmp_path, "bad.yaml", HEAD + body)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{path}:{line}: {field}: {problem}"), out


def test_validate_reports_every_problem_of_every_file_and_exits_1(tmp_path, capsys):
    good = _write(tmp_path, "good.yaml", HEAD + "    steps:\n" + GOOD_STEP)
    bad = _write(
        tmp_path,
        "bad.yaml",
        """\
        version: 1
        steps:
          - times: 0
            completion: {raw: x}
          - completion: {messages: [{channel: final, content: hi}], fault: {kind: truncated, tokens: -1}}
        """,
    )
    faulty = _write(
        tmp_path,
        "faulty.yaml",
        """\
        version: 1
        steps:
          - completion:
              messages: [{channel: final, content: hi}]
              fault: {kind: duplicate_recipient}
        """,
    )
    assert main(["validate", str(good), str(bad), str(faulty), str(tmp_path / "missing.yaml")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{bad}:3: steps[0].times: Input should be greater than or equal to 1"
    assert lines[1] == f"{bad}:5: steps[1].completion.fault.tokens: expected an integer >= 0 or null, got -1"
    assert lines[-2] == (
        f"{faulty}:5: steps[0].completion.fault.message: duplicate_recipient: message 0 (channel 'final') has no "
        "recipient; this fault needs a tool call"
    )
    assert lines[-1] == f"{tmp_path / 'missing.yaml'}: no such file or directory"


def test_validate_ok_counts_scenarios_rules_and_steps(tmp_path, capsys):
    _write(tmp_path, "a.yaml", HEAD + "    steps:\n" + GOOD_STEP + GOOD_STEP + "  - steps:\n" + GOOD_STEP)
    _write(tmp_path, "sub/b.yml", "version: 1\nsteps:\n  - completion: {raw: x}\n")
    assert main(["validate", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "ok: 2 scenarios, 3 rules, 4 steps\n"


def test_validate_the_shipped_library(capsys):
    assert main(["validate", "scenarios"]) == 0
    assert capsys.readouterr().out.startswith(f"ok: {len(builtin_names())} scenarios, ")


def test_validate_an_empty_directory(tmp_path, capsys):
    assert main(["validate", str(tmp_path)]) == 1
    assert capsys.readouterr().out == f"{tmp_path}: no scenario files (*.yaml, *.yml) in this directory\n"


def test_shipped_json_schema_is_current():
    assert shipped_json_schema_text() == scenario_json_schema_text(), (
        "regenerate: mockoss schema > mockoss/scenario/scenario.schema.json"
    )


def test_json_schema_describes_rules_match_times_and_faults():
    schema = scenario_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    definitions = schema["$defs"]
    assert {"rules", "steps", "seed", "when_exhausted"} <= set(schema["properties"])
    assert schema["additionalProperties"] is False
    assert set(definitions["MatchSpec"]["properties"]) == {
        "endpoint",
        "model",
        "tools",
        "stream",
        "tool_names",
        "tool_choice",
        "last_user",
        "last_tool",
        "last_message",
        "role",
        "turn",
        "headers",
    }
    assert definitions["StepSpec"]["properties"]["times"] == {
        "default": 1,
        "description": "consecutive requests this step answers",
        "minimum": 1,
        "title": "Times",
        "type": "integer",
    }
    assert definitions["CompletionSpec"]["properties"]["fault"]["anyOf"][0] == {"$ref": "#/$defs/HarmonyFault"}
    assert "duplicate_recipient" in definitions["HarmonyFault"]["properties"]["kind"]["enum"]
    assert definitions["RuleSpec"]["properties"]["when_exhausted"]["anyOf"][0]["enum"] == [
        "repeat_last",
        "error",
        "next_rule",
    ]


def test_schema_command_prints_the_shipped_schema(capsys):
    assert main(["schema"]) == 0
    out = capsys.readouterr().out
    assert out == shipped_json_schema_text()
    assert json.loads(out)["title"] == "mockoss scenario (version 1)"


def test_scenarios_json(capsys):
    assert main(["scenarios", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(rows) == set(builtin_names())
    assert rows["tool-call-leaked-as-text"] == {
        "name": "tool-call-leaked-as-text",
        "description": "Three tool calls leaked as final text (three forms), then a proper functions.terminal call.",
        "source": ["NousResearch/hermes-agent#84158"],
        "rules": 1,
        "steps": 4,
    }
