"""Scenario files load into compiled steps; bad files name the file, the line and the field."""

import textwrap

import pytest

from mockoss.scenario.loader import ScenarioError, builtin_names, load_scenario, scenario_from_data


def _write(tmp_path, text):
    path = tmp_path / "scenario.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_every_shipped_scenario_loads_and_has_a_source():
    names = builtin_names()
    assert {
        "leaked-recipient-no-tools",
        "tool-call-leaked-as-text",
        "clean-answer",
        "clean-tool-call",
        "malformed-header-duplicate-recipient",
    } <= set(names)
    for name in names:
        scenario = load_scenario(name)
        assert scenario.description
        assert scenario.steps


def test_unknown_field_names_file_line_and_field(tmp_path):
    path = _write(
        tmp_path,
        """\
        version: 1
        steps:
          - completion:
              messages:
                - chanel: final
                  content: hi
        """,
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}:5: steps[0].completion.messages[0].chanel: unknown field (did you mean 'channel'?)"


def test_wrong_type_names_the_line_of_the_value(tmp_path):
    path = _write(
        tmp_path,
        """\
        version: 1
        steps:
          - error:
              status: 200
        """,
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:4: steps[0].error.status: Input should be greater than or equal to 400")


def test_step_with_both_answers_is_rejected_at_its_line(tmp_path):
    path = _write(
        tmp_path,
        """\
        version: 1
        steps:
          - completion: {raw: "<|channel|>final<|message|>a<|return|>"}
          - completion: {raw: "<|channel|>final<|message|>a<|return|>"}
            error: {status: 500}
        """,
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}:4: steps[1]: Value error, give exactly one of 'completion', 'error', 'pick' or 'replay'"


def test_missing_version_and_wrong_version(tmp_path):
    path = _write(tmp_path, "steps: [{completion: {raw: x}}]\n")
    with pytest.raises(ScenarioError, match=r":1: version: Field required"):
        load_scenario(path)
    path = _write(tmp_path, "version: 2\nsteps: [{completion: {raw: x}}]\n")
    with pytest.raises(ScenarioError, match=r":1: version: Input should be 1"):
        load_scenario(path)


@pytest.mark.parametrize("version", ["true", "1.0", "'1'"])
def test_a_version_that_only_equals_1_is_refused(tmp_path, version):
    # pydantic's lax Literal[1] loaded `true` and `1.0` as version 1 (a breaker, issue 9's 15th session)
    path = _write(tmp_path, f"version: {version}\nsteps: [{{completion: {{raw: x}}}}]\n")
    with pytest.raises(ScenarioError, match=r":1: version: Input should be 1$"):
        load_scenario(path)


def test_yaml_syntax_error_has_line_and_column(tmp_path):
    path = _write(tmp_path, "version: 1\nsteps: [\n")
    with pytest.raises(ScenarioError, match=rf"^{path}:3:1: invalid YAML"):
        load_scenario(path)


def test_top_level_must_be_a_mapping(tmp_path):
    path = _write(tmp_path, "- just a list\n")
    with pytest.raises(ScenarioError, match="a scenario file is a mapping"):
        load_scenario(path)


def test_unknown_name_suggests_the_closest_shipped_scenarios():
    with pytest.raises(ScenarioError) as info:
        load_scenario("clean-answr")
    assert str(info.value) == (
        "unknown scenario 'clean-answr': not a file, and not a shipped scenario; did you mean 'clean-answer'? "
        f"(`mockoss scenarios` lists all {len(builtin_names())})"
    )


def test_missing_file_path():
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario("missing.yaml")


def test_inline_scenario_may_omit_version_and_compiles_messages():
    scenario = scenario_from_data(
        {"steps": [{"completion": {"messages": [{"channel": "final", "content": "Hi"}]}}]}, name="t", default_version=True
    )
    assert scenario.steps[0].completion.text == "<|channel|>final<|message|>Hi<|return|>"
    assert scenario.when_exhausted == "repeat_last"


def test_non_utf8_file_names_file_and_line(tmp_path):
    path = tmp_path / "latin1.yaml"
    data = "version: 1\nsteps:\n  - completion: {raw: 'caf\xe9'}\n".encode("latin-1")
    path.write_bytes(data)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    offset = data.index(b"\xe9")
    assert str(info.value) == f"{path}:3: not UTF-8 text (byte 0xe9 at offset {offset}); save the file as UTF-8"


def test_duplicate_keys_are_rejected_with_both_lines(tmp_path):
    path = _write(
        tmp_path,
        """\
        version: 1
        steps:
          - completion:
              messages:
                - {channel: final, content: a, content: b}
        """,
    )
    with pytest.raises(ScenarioError, match=rf"^{path}:5: duplicate key 'content' \(first at line 5\)$"):
        load_scenario(path)


def test_unknown_switch_in_a_file_names_its_line(tmp_path):
    path = _write(
        tmp_path,
        """\
        version: 1
        switches:
          stritc: true
        steps:
          - completion: {raw: "<|channel|>final<|message|>a<|return|>"}
        """,
    )
    with pytest.raises(ScenarioError, match=rf"^{path}:3: switches.stritc: no profile has this switch"):
        load_scenario(path)


def test_bad_switch_value_is_rejected_when_the_scenario_is_selected(tmp_path):
    from mockoss.server.core import MockServer

    path = _write(
        tmp_path,
        """\
        version: 1
        switches: {harmony_error_status: 418}
        steps:
          - completion: {raw: "<|channel|>final<|message|>a<|return|>"}
        """,
    )
    with pytest.raises(ScenarioError) as info:
        MockServer(scenario=str(path))
    # A value no profile takes is the file's error, with its line and field (eleventh-session
    # breaker, finding 6), as `mockoss validate` reports it too.
    assert str(info.value) == (f"{path}:2: switches.harmony_error_status: no profile takes this value "
                               "(profile 'vllm': harmony_error_status must be 400 or 500, got 418)")


def test_a_file_that_fails_to_compile_frees_its_yaml_tree_node_by_node(tmp_path, monkeypatch):
    """A scenario-dir file with a mistake in its last rule freed its whole composed tree at once with
    the exception (~85,000 nodes for 5,001 rules): every other client waited ~200 ms, where the
    same file without the mistake, freed node by node, held them 35-50 ms (a reviewer of 4736006,
    issue 9's 15th session). Both paths now hand the tree to the gradual free."""
    from mockoss.scenario import loader

    freed = []
    real = loader._drop_gradually
    monkeypatch.setattr(loader, "_drop_gradually", lambda root: freed.append(root) or real(root))
    path = _write(tmp_path, "version: 1\nsteps: [{completion: {raw: x}}]\nwhen_exhausted: repeat_lastt\n")
    with pytest.raises(ScenarioError, match="when_exhausted"):
        load_scenario(path)
    assert len(freed) == 1 and freed[0] is not None
