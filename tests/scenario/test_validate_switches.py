"""``mockoss validate`` checks what ``serve`` checks of a file's ``switches:``, and both name the
file, the line and the field (issue 9, eleventh-session breaker, finding 6; reproducer
/tmp/brk11/repro_misc.sh: validate said ok to ``harmony_errors: maybe``, serve refused it with the
one scenario error that had no line)."""

from __future__ import annotations

import pytest

from mockoss.cli import main
from mockoss.scenario.loader import ScenarioError
from mockoss.server.core import MockServer

BAD_VALUE = "version: 1\nswitches: {harmony_errors: maybe}\nsteps:\n  - completion: {messages: [{channel: final, content: hi}]}\n"
#: A switch only llama.cpp has: fine for `serve --profile llamacpp`, refused by `serve` (vLLM).
OTHER_PROFILES = (
    "version: 1\ndescription: x\nswitches:\n  reasoning_format: none\n"
    "steps:\n  - completion: {messages: [{channel: final, content: hi}]}\n"
)


def test_validate_refuses_a_switch_value_no_profile_takes_with_its_line(tmp_path, capsys):
    path = tmp_path / "k_badswitch.yaml"
    path.write_text(BAD_VALUE)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{path}:2: switches.harmony_errors: no profile takes this value (")
    assert "harmony_errors must be 'skip' or 'raise', got 'maybe'" in out


def test_serve_gives_the_same_error_as_validate(tmp_path, capsys):
    path = tmp_path / "k_badswitch.yaml"
    path.write_text(BAD_VALUE)
    main(["validate", str(path)])
    validated = capsys.readouterr().out.splitlines()[0]
    with pytest.raises(ScenarioError) as info:
        MockServer(scenario=str(path))
    assert str(info.value) == validated


def test_validate_profile_checks_the_switches_as_serve_with_that_profile(tmp_path, capsys):
    path = tmp_path / "rf.yaml"
    path.write_text(OTHER_PROFILES)
    assert main(["validate", str(path)]) == 0  # llama.cpp takes it: fine without a profile
    assert main(["validate", "--profile", "llamacpp", str(path)]) == 0
    capsys.readouterr()
    assert main(["validate", "--profile", "vllm", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()[0]
    assert out.startswith(f"{path}:4: switches.reasoning_format: profile 'vllm' has no switch 'reasoning_format'")
    with pytest.raises(ScenarioError) as info:  # what serve --profile vllm says, word for word
        MockServer(scenario=str(path), profile="vllm")
    assert str(info.value) == out
    MockServer(scenario=str(path), profile="llamacpp")


def test_validate_refuses_an_unknown_profile(tmp_path, capsys):
    path = tmp_path / "rf.yaml"
    path.write_text(OTHER_PROFILES)
    assert main(["validate", "--profile", "nope", str(path)]) == 2
    assert "unknown profile 'nope'" in capsys.readouterr().err
