"""`mockoss serve --upstream … --record …` as a user runs it, and its flag checks."""

import os
import subprocess
import sys

import httpx
import pytest
import yaml
from upstream_helpers import CHAT, completion_step, scenario

from mockoss.cli import main
from mockoss.server.core import MockServer
from mockoss.upstream.redact import Redactor


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--upstream-mode", "raw"], "mockoss: error: --upstream-mode needs --upstream URL\n"),
        (["--upstream-api-key-env", "X", "--upstream-model", "m"], "mockoss: error: --upstream-api-key-env, --upstream-model needs --upstream URL\n"),
        (["--redact"], "mockoss: error: --redact needs --record DIR\n"),
        (["--record-match", "--record-name", "x"], "mockoss: error: --record-name, --record-match needs --record DIR\n"),
        (["--upstream", "localhost:8000"], "mockoss: error: upstream URL must be http(s)://HOST[:PORT], got 'localhost:8000'\n"),
        (["--upstream", "http://h", "--upstream-api-key-env", "MOCKOSS_TEST_UNSET_VAR"],
         "mockoss: error: --upstream-api-key-env: environment variable MOCKOSS_TEST_UNSET_VAR is not set\n"),
        (["--record", "/tmp/x", "--record-name", "a/b"],
         "mockoss: error: --record: recording name must be a plain file name (letters, digits, . _ -), got 'a/b'\n"),
    ],
)
def test_flag_mistakes_exit_2_with_the_fix(capsys, monkeypatch, args, message):
    monkeypatch.delenv("MOCKOSS_TEST_UNSET_VAR", raising=False)
    assert main(["serve", "--port", "0", *args]) == 2
    assert capsys.readouterr().err == message


def test_serve_passes_through_and_records(serve, tmp_path):
    upstream = serve(MockServer(scenario=scenario(completion_step())))
    env = {**os.environ, "MY_KEY": "sk-cli-upstream-31415926"}
    command = [sys.executable, "-m", "mockoss", "serve", "--port", "0", "--upstream", upstream.url, "--upstream-api-key-env", "MY_KEY",
               "--record", str(tmp_path), "--record-name", "cli"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        lines = [process.stdout.readline() for _ in range(4)]
        assert lines[3] == f"real backends: upstream {upstream.url} (pass-through mode), recording to {tmp_path / 'cli.yaml'}\n", lines
        base = lines[1].removeprefix("base URL: ").strip()
        with httpx.Client(timeout=30) as http:
            answer = http.post(base + "/chat/completions", json=CHAT, headers={"authorization": "Bearer sk-cli-client-27182818"})
    finally:
        process.terminate()
        process.wait(timeout=20)
        process.stdout.close()
        process.stderr.close()
    assert answer.status_code == 200
    assert upstream.server.requests[0].headers["authorization"] == "Bearer sk-cli-upstream-31415926"
    text = (tmp_path / "cli.yaml").read_text()
    assert "sk-cli" not in text
    assert yaml.safe_load(text)["steps"][0]["replay"]["body"] == answer.text


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("Mail me: jane.smith@corp.example.", ["email"]),
        ("Call +44 20 7946 0958 or (415) 555-0132 today.", ["phone", "phone"]),
        ("Dr. Grace Hopper and Mrs Smith, then I am Kevin.", ["name", "name", "name"]),
        ("My name is Ana Lima; Michael Jordan too.", ["name", "name"]),
        ("Released 2026-01-01, version 1.2.3, 3.14159 2.71828, 42 apples, in May Paris.", []),
    ],
)
def test_redaction_detectors(text, kinds):
    assert [kind for _, _, kind in Redactor().find(text)] == kinds


def test_redaction_is_seeded_and_consistent():
    text = "jane.smith@corp.example wrote to jane.smith@corp.example"
    once, twice = Redactor(1).redact(text).text, Redactor(1).redact(text).text
    assert once == twice and "jane.smith" not in once
    first, _, second = once.partition(" wrote to ")
    assert first == second and "@example." in first
    assert Redactor(2).redact(text).text != once


@pytest.mark.parametrize(
    ("args", "name"),
    [(["--scenario", "clean-answer"], "clean-answer.yaml"), (["--scenario", "clean-answer", "--upstream", "http://h"], "recording.yaml"),
     (["--record-name", "mine"], "mine.yaml")],
)
def test_the_recording_is_named_after_the_scenario_it_records(tmp_path, args, name):
    from mockoss.cli_parser import build_parser
    from mockoss.upstream.cli import from_args

    _, recorder = from_args(build_parser().parse_args(["serve", "--record", str(tmp_path), *args]))
    assert recorder.path == tmp_path / name
