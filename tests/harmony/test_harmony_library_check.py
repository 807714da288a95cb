"""mockoss refuses to run on openai-harmony's ``openai_harmony`` module (newcomer report: a project
that already had openai-harmony installed got vLLM 0.30's parse under the name of current vLLM,
and ``pip check`` said nothing)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator

import pytest

from mockoss.harmony.encoding import HarmonyLibraryError, VocabularyError, check_harmony_library


class _Installed:
    def __init__(self, version: str) -> None:
        self.version = version


def _versions(monkeypatch: pytest.MonkeyPatch, installed: dict[str, str]) -> None:
    """The distributions importlib.metadata finds (check_harmony_library looks them up as
    ``version()`` does, through ``Distribution.discover(name=...)``)."""

    def discover(name: str | None = None, **_: object) -> Iterator[_Installed]:
        return iter([_Installed(installed[name])] if name in installed else [])

    monkeypatch.setattr(importlib.metadata.Distribution, "discover", staticmethod(discover))


def test_presence_is_found_as_importlib_metadata_version_finds_it():
    # the same distribution version() reads, found without parsing its METADATA (issue 9, start-up)
    found = next(iter(importlib.metadata.Distribution.discover(name="oss-harmony")))
    assert found.version == importlib.metadata.version("oss-harmony")
    assert next(iter(importlib.metadata.Distribution.discover(name="openai-harmony")), None) is None


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


def test_a_good_environment_is_checked_without_reading_any_metadata_file(monkeypatch):
    # ~1 ms of every start went to parsing oss-harmony's METADATA for a version nobody printed
    read = []
    original = importlib.metadata.PathDistribution.read_text
    monkeypatch.setattr(importlib.metadata.PathDistribution, "read_text", lambda self, name: read.append(name) or original(self, name))
    check_harmony_library()
    assert read == []
