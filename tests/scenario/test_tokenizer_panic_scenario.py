"""A scenario text openai-harmony's tokenizer panics on is a scenario error, with file, line and field.

openai-harmony's encode panics on a word of a million characters (its pre-tokenizer regex
overflows its stack, ``RuntimeError(StackOverflow)``; pyo3 raises ``PanicException``, a
``BaseException``). The loader caught ``Exception`` only, so before this the panic escaped:
``mockoss validate`` printed a traceback, and ``POST /mockoss/scenario`` answered an unscripted 500
(issue 9 review of the seventh session, found by the side-routes engineer).
"""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from mockoss.cli import main
from mockoss.scenario.loader import ScenarioError, load_scenario
from mockoss.server.app import create_app
from mockoss.server.control import ControlOptions
from mockoss.server.core import MockServer

WORD = "a" * 1_000_000
TEXT = f'version: 1\nsteps:\n  - completion: {{messages: [{{channel: final, content: "{WORD}"}}]}}\n'


def test_a_panicking_text_is_a_scenario_error_naming_file_line_and_field(tmp_path):
    path = tmp_path / "panic.yaml"
    path.write_text(TEXT)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert f"{path}:3: steps[0].completion: openai-harmony cannot tokenize this content" in message
    assert "StackOverflow" in message and "shorten its longest word" in message


def test_validate_reports_it_and_exits_non_zero(tmp_path, capsys):
    path = tmp_path / "panic.yaml"
    path.write_text(TEXT)
    assert main(["validate", str(path)]) == 1
    assert "openai-harmony cannot tokenize this content" in capsys.readouterr().out


def test_an_upload_with_it_gets_a_400_naming_the_upload():
    app = create_app(MockServer(scenario="clean-answer"), control=ControlOptions(allowed_hosts=("testserver",)))
    with TestClient(app) as client:
        answer = client.post("/mockoss/scenario?name=big", content=TEXT.encode(), headers={"content-type": "application/yaml"})
        assert answer.status_code == 400
        assert answer.json()["error"]["message"].startswith("upload:big.yaml:3: steps[0].completion: openai-harmony cannot tokenize")
        # The server still answers with its scenario.
        reply = client.post("/v1/chat/completions", json={"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]})
        assert reply.status_code == 200
