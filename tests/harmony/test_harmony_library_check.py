"""mockoss refuses to run on openai-harmony's ``openai_harmony`` module (newcomer report: a project
that already had openai-harmony installed got vLLM 0.30's parse under the name of current vLLM,
and ``pip check`` said nothing)."""

from __future__ import annotations

import importlib.metadata

import pytest

from mockoss.harmony.encoding import HarmonyLibraryError, VocabularyError, check_harmony_library


def _versions(monkeypatch: pytest.MonkeyPatch, installed: dict[str, str]) -> None:
    def version(name: str) -> str:
        if name in installed:
            return installed[name]
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", version)


def test_this_environment_has_the_fork():
    check_harmony_library()  # the test venv installs mockoss's own dependency, oss-harmony


@pytest.mark.parametrize(
    "installed",
    [{"openai-harmony": "0.0.8"}, {"oss-harmony": "0.0.11", "openai-harmony": "0.0.8"}, {}],
    ids=["openai-harmony alone", "both", "neither"],
)
def test_other_library_is_refused_with_the_repair(monkeypatch, installed):
    _versions(monkeypatch, installed)
    with pytest.raises(HarmonyLibraryError, match=r"pip uninstall -y openai-harmony oss-harmony && pip install 'oss-harmony>=0.0.11'") as caught:
        check_harmony_library()
    assert isinstance(caught.value, VocabularyError)  # the CLI reports it in one line, as a vocabulary fault
    for name, version in installed.items():
        assert f"{name} {version}" in str(caught.value)


def test_cli_reports_it_in_one_line(monkeypatch, capsys):
    from mockoss import cli

    _versions(monkeypatch, {"openai-harmony": "0.0.8"})
    assert cli.main(["explain", "clean-answer"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mockoss: error: mockoss needs oss-harmony") and "Traceback" not in err
    assert err.count("\n") == 1


def test_a_server_refuses_to_start(monkeypatch):
    from mockoss.server.core import MockServer

    _versions(monkeypatch, {"openai-harmony": "0.0.8"})
    with pytest.raises(HarmonyLibraryError):
        MockServer(scenario="clean-answer")
