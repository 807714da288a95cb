"""CLI flags and commands that refuse a bad value say what the value is and what it would do (the
sixteenth session's breaker, items 11 and 12)."""

from __future__ import annotations

import io
import json
import sys

import pytest

from mockoss.cli import main
from mockoss.cli_parser import build_parser


def _parse_error(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        build_parser("serve").parse_args(["serve", *argv])
    assert exit_.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf", "soon"])
def test_request_timeout_must_be_a_finite_number_of_seconds_above_0(capsys, value):
    """``--request-timeout 0`` closed every connection without a reply; ``-1`` every request head
    not sent in one packet; ``nan`` never timed out."""
    err = _parse_error(capsys, f"--request-timeout={value}")
    assert "argument --request-timeout: expected" in err and "seconds" in err


def test_request_timeout_takes_a_fraction():
    assert build_parser("serve").parse_args(["serve", "--request-timeout", "0.5"]).request_timeout == 0.5


def test_max_template_chars_counts_characters_and_a_longer_render_is_a_400(capsys):
    err = _parse_error(capsys, "--max-template-chars", "-1").splitlines()[-1]
    assert err.endswith(
        "--max-template-chars: expected at least 1 character, got -1 (every templated reply would be a 400)"
    )


@pytest.mark.parametrize(
    ("flag", "outcome"),
    [
        ("--max-body-bytes", "every request would get 413"),
        ("--body-budget-bytes", "every request with a body would get 503"),
        ("--max-reply-bytes", "every /v1/completions reply would be a 400"),
        ("--max-scenario-bytes", "every scenario upload would get 413"),
    ],
)
def test_byte_limits_say_what_0_would_do(capsys, flag, outcome):
    assert f"expected at least 1 byte, got 0 ({outcome})" in _parse_error(capsys, flag, "0")


@pytest.mark.parametrize("command", ["show", "explain"])
def test_show_and_explain_of_a_directory_say_it_is_one(capsys, tmp_path, command):
    assert main([command, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: a directory, not a scenario file" in err and "no such" not in err


def test_validate_reads_standard_input_for_a_dash(capsys, monkeypatch):
    text = "version: 1\nsteps:\n  - completion: {raw: ''}\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert main(["validate", "-"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("<stdin>:3: steps[0].completion.raw: String should have at least 1 character, not 0")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"version: 1\nsteps:\n  - completion: {raw: x}\n")))
    assert main(["validate", "-"]) == 0
    assert capsys.readouterr().out == "ok: 1 scenario, 1 rule, 1 step\n"


def test_an_empty_raw_completion_is_an_empty_text_not_an_empty_list(tmp_path, capsys):
    """pydantic checks ``min_length`` of a validated ``str`` as a length of any value: "Value
    should have at least 1 item after validation, not 0"."""
    path = tmp_path / "raw.yaml"
    path.write_text("version: 1\nsteps:\n  - completion: {raw: ''}\n")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:3: steps[0].completion.raw: String should have at least 1 character, not 0" in out
    assert "item" not in out


def test_eval_save_to_a_directory_fails_before_any_request(tmp_path, capsys, monkeypatch):
    """``--save DIR`` sent all N requests and then said it could not write."""
    from mockoss.eval import run

    def no_requests(*args, **kwargs):
        raise AssertionError("a request was sent")

    monkeypatch.setattr(run, "run_requests", no_requests)
    request = tmp_path / "req.json"
    request.write_text(json.dumps({"endpoint": "chat", "body": {"messages": [{"role": "user", "content": "hi"}]}}))
    argv = ["eval", "--url", "http://127.0.0.1:9/v1", "--request", str(request), "-n", "3"]
    assert main([*argv, "--save", str(tmp_path)]) == 2
    assert f"--save: {tmp_path}: cannot write: a directory" in capsys.readouterr().err
    assert main([*argv, "--save", str(tmp_path / "nowhere" / "out.json")]) == 2
    assert "cannot write: no such directory" in capsys.readouterr().err
