"""The numbers ``mockoss serve`` and ``mockoss eval`` take are checked by one helper
(:mod:`mockoss.cli_numbers`), with the stricter of the two old behaviours: ``eval --timeout inf``
was accepted (``float("inf") > 0``) and never timed out, where ``serve --request-timeout inf`` was
refused. Both commands now refuse ``inf`` (and ``nan``) with the same words (eighteenth session,
task C2 item 1)."""

from __future__ import annotations

import argparse
import json

import pytest

from mockoss.cli import main
from mockoss.cli_numbers import at_least_one, more_than_zero

#: Nothing listens on port 1: an eval that got past its arguments ends in a connection error (3).
DEAD = "http://127.0.0.1:1/v1"


@pytest.fixture
def request_file(tmp_path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"model": "openai/gpt-oss-20b", "input": "hi"}))
    return str(path)


def _usage_error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


@pytest.mark.parametrize("value", ["inf", "Infinity", "+inf", "nan"])
def test_eval_refuses_an_infinite_timeout(capsys, request_file, value):
    """Before: parsed, and a server that never answered held the run for ever (here: port 1
    refused the connection, exit 3)."""
    err = _usage_error(capsys, ["eval", "--url", DEAD, "--request", request_file, "--timeout", value])
    assert err.endswith(f"argument --timeout: expected more than 0 seconds and finite, got {value!r}")


@pytest.mark.parametrize(("flag", "units"), [("--request-timeout", "seconds"), ("--tool-check-budget-ms", "ms")])
def test_serve_refuses_inf_in_the_same_words(capsys, flag, units):
    err = _usage_error(capsys, ["serve", "--scenario", "clean-answer", "--port", "0", flag, "inf"])
    assert err.endswith(f"argument {flag}: expected more than 0 {units} and finite, got 'inf'")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--timeout", "0"], "argument --timeout: expected more than 0 seconds, got '0'"),
        (["--timeout=-inf"], "argument --timeout: expected more than 0 seconds, got '-inf'"),
        (["--timeout", "soon"], "argument --timeout: expected a number of seconds, got 'soon'"),
        (["-n", "0"], "argument -n: expected at least 1 request, got 0"),
        (["-n", "1.5"], "argument -n: expected a whole number of requests, got '1.5'"),
        (["--concurrency", "x"], "argument --concurrency: expected a whole number of requests, got 'x'"),
    ],
)
def test_eval_says_what_it_expected(capsys, request_file, argv, message):
    assert _usage_error(capsys, ["eval", "--url", DEAD, "--request", request_file, *argv]).endswith(message)


def test_the_helpers_take_what_is_finite_and_above_0():
    assert more_than_zero("seconds")("0.25") == 0.25
    assert more_than_zero("seconds")("1e9") == 1e9  # no bound: a large number, which still prints
    assert at_least_one("byte")("7") == 7
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected at least 1 byte, got 0 \(all 413\)$"):
        at_least_one("byte", "all 413")("0")
