"""A YAML integer past Python's digit limit is a scenario error with file, line and field, not a
ValueError from PyYAML's int() (issue 9 review, finding 10: a 500 for X-Mockoss-Scenario, a
traceback from `mockoss validate` and `mockoss serve --scenario`)."""

import sys

import pytest
from starlette.testclient import TestClient

from mockoss.cli import main
from mockoss.scenario.loader import ScenarioError, load_scenario
from mockoss.scenario.yamlsafe import YamlLimitError, load_plain
from mockoss.server.app import create_app
from mockoss.server.core import MockServer

DIGITS = sys.get_int_max_str_digits() + 700
HUGE_SEED = f"version: 1\nseed: {'9' * DIGITS}\nsteps: [{{completion: {{messages: [{{channel: final, content: x}}]}}}}]\n"
HUGE_TOKEN = f"version: 1\nrules:\n  - steps:\n      - completion: {{tokens: [{'7' * DIGITS}]}}\n"


@pytest.mark.parametrize(
    ("text", "where"),
    [(HUGE_SEED, ":2: seed: an integer of"), (HUGE_TOKEN, ":4: rules[0].steps[0].completion.tokens[0]: an integer of")],
)
def test_a_huge_integer_is_a_scenario_error_with_line_and_field(tmp_path, text, where):
    path = tmp_path / "huge.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    assert str(raised.value).startswith(f"{path}{where}")


def test_validate_and_serve_report_it_and_exit_non_zero(tmp_path, capsys):
    path = tmp_path / "hugeseed.yaml"
    path.write_text(HUGE_SEED)
    assert main(["validate", str(path)]) == 1
    assert f"{path}:2: seed:" in capsys.readouterr().out
    assert main(["serve", "--port", "0", "--scenario", str(path)]) == 2
    assert f"{path}:2: seed:" in capsys.readouterr().err


def test_a_scenario_dir_file_with_one_gets_the_profiles_400_not_a_500(tmp_path):
    (tmp_path / "hugeseed.yaml").write_text(HUGE_SEED)
    client = TestClient(create_app(MockServer(scenario_dirs=(str(tmp_path),))))
    answer = client.post(
        "/v1/chat/completions",
        json={"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]},
        headers={"x-mockoss-scenario": "hugeseed"},
    )
    assert answer.status_code == 400, answer.text
    assert "hugeseed.yaml:2: seed:" in answer.json()["error"]["message"]


def test_a_switch_header_value_with_one_is_refused_with_its_line():
    with pytest.raises(YamlLimitError) as raised:
        load_plain("9" * DIGITS)
    assert raised.value.line == 1


def test_hexadecimal_integers_have_no_digit_limit(tmp_path):
    path = tmp_path / "hex.yaml"
    path.write_text(HUGE_SEED.replace("seed: 9", "seed: 0x9"))
    assert load_scenario(path).seed == int("9" * DIGITS, 16)
