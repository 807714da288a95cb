"""A relative scenario path that names no file says where it looked (issue 9, eleventh-session
breaker, finding 7; reproducer /tmp/brk11/proj6: ``mockoss.use("my.yaml")`` next to the test failed
from any other directory with ``my.yaml: no such scenario file``, which did not say where).

Decision (see ``mockoss.scenario.loader._no_such_file``): a relative path is read from the working
directory everywhere, the fixture included; it is not also looked for next to the test (a cassette
is, being named after its test), so one string names one file. The message names the absolute path
tried, the working directory, and the way to name the file next to the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockoss.scenario.loader import ScenarioError, load_scenario
from mockoss.server.core import MockServer

FILE = "version: 1\nsteps:\n  - completion: {messages: [{channel: final, content: here}]}\n"


def test_a_missing_relative_path_names_the_absolute_path_and_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "my.yaml").write_text(FILE)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as info:
        load_scenario("my.yaml")
    message = str(info.value)
    assert message.startswith("my.yaml: no such scenario file: looked for ")
    assert f"looked for {tmp_path / 'my.yaml'} " in message
    assert f"working directory, {tmp_path};" in message
    assert "Path(__file__).parent / 'my.yaml'" in message
    with pytest.raises(ScenarioError) as served:  # serve --scenario and MockServer say the same
        MockServer(scenario="my.yaml")
    assert str(served.value) == message


def test_the_path_is_read_from_the_working_directory_and_not_next_to_anything_else(tmp_path, monkeypatch):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "my.yaml").write_text(FILE)
    monkeypatch.chdir(tmp_path)
    assert load_scenario("tests/my.yaml").origin == "tests/my.yaml"
    assert load_scenario(Path(tmp_path / "tests") / "my.yaml").name == "my"  # as the message advises
    monkeypatch.chdir(tmp_path / "tests")
    assert load_scenario("my.yaml").name == "my"


def test_an_absolute_path_keeps_the_short_message(tmp_path):
    with pytest.raises(ScenarioError) as info:
        load_scenario(tmp_path / "nope.yaml")
    assert str(info.value) == f"{tmp_path / 'nope.yaml'}: no such scenario file"


def test_the_fixture_says_where_it_looked(pytester):
    """The reproducer's case: the file next to the test, pytest run from the project directory."""
    tests = pytester.mkdir("tests")
    (tests / "my.yaml").write_text(FILE)
    (tests / "test_rel.py").write_text(
        "from pathlib import Path\n"
        "def test_rel(mockoss):\n    mockoss.use('my.yaml')\n"
        "def test_next_to_it(mockoss):\n    mockoss.use(Path(__file__).parent / 'my.yaml')\n"
    )
    result = pytester.runpytest("tests", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*my.yaml: no such scenario file: looked for {pytester.path / 'my.yaml'} (*"])
