"""`mockoss serve` flags of issue 10: `--profile NAME@RELEASE` and `--stream-interval`."""

from __future__ import annotations

import pytest

from mockoss.cli import main


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profile", "vllm@0.9.0"], "the vllm timeline starts at 0.10.1+gptoss"),
        (["--profile", "ollama", "--stream-interval", "2"], "profile 'ollama' has no switch 'stream_interval'"),
        (["--stream-interval", "0"], "stream_interval must be a positive integer"),
    ],
)
def test_serve_refuses_a_bad_release_or_interval_before_listening(args, message, capsys):
    assert main(["serve", "--port", "0", *args]) == 2
    assert message in capsys.readouterr().err


def test_serve_refuses_an_unknown_profile_name(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--profile", "tgi@3.0"])
    assert exited.value.code == 2
    assert "unknown profile 'tgi@3.0'" in capsys.readouterr().err
