"""Every public report the scenarios and conformance tables cite is in the project's record of
sources, ``tests/sources.yaml``, with what it shows and how that was checked (issue 10, item 7).

The format of a scenario's ``source`` is checked in ``tests/scenarios/test_library.py``; here, its
existence in the index. Citations are read from the shipped scenarios (``source`` and comments),
the library tables (``tests/scenarios/library_table_*.py``) and the conformance tests
(``tests/conformance/*.py``): ``owner/repo#N``, ``owner/repo PR #N``, a short name from the
index's ``short_names`` (``vllm#51977``), and a bare ``PR #N`` (some indexed pull request N).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockoss.scenario.loader import builtin_names, load_scenario

ROOT = Path(__file__).resolve().parent.parent
INDEX_FILE = ROOT / "tests" / "sources.yaml"
KINDS = {"issue", "pr", "doc", "commit"}
CHECKED = {"search", "not-found", "notes"}
SERVERS = {"vllm", "ollama", "llamacpp", "lmstudio", "openai", "harmony"}

_NUMBERED = re.compile(r"^([\w.-]+/[\w.-]+)(?: PR)? ?#(\d+)$")
#: ``owner/repo#N``, ``short#N`` and ``owner/repo PR #N`` inside free text.
_IN_TEXT = re.compile(r"(?<![\w./-])(?:([\w-]+)/([\w.-]+)(?: PR #|#)|([A-Za-z][\w.-]*)#)(\d+)")
_BARE_PR = re.compile(r"(?<![\w/.-])PR #(\d+)")


@cache
def index() -> dict[str, Any]:
    return yaml.safe_load(INDEX_FILE.read_text(encoding="utf-8"))


def resolve(citation: str) -> str:
    """The index key a scenario ``source`` entry names (``KeyError`` if it names none)."""
    reports = index()["reports"]
    match = _NUMBERED.match(citation.strip())
    key = f"{match.group(1)}#{match.group(2)}" if match else re.sub(r" \(.*\)$", "", citation.strip())
    if key not in reports:
        raise KeyError(key)
    return key


def cited_in_text(text: str) -> set[str]:
    """The index keys the numbered citations in ``text`` stand for (unresolvable ones as written)."""
    shorts = index()["short_names"]
    found = set()
    for owner, repo, name, number in _IN_TEXT.findall(text):
        if owner:
            found.add(f"{owner}/{repo}#{number}")
        elif name in shorts:
            found.add(f"{shorts[name]}#{number}")
        elif name[0].islower() and re.fullmatch(r"[a-z][\w.-]*", name) and name not in {"row", "id", "step"}:
            found.add(f"{name}#{number}")  # an unknown short name: must be added to short_names
    return found


def citing_files() -> list[Path]:
    return sorted(
        [*(ROOT / "scenarios").glob("*.yaml"), *(ROOT / "tests" / "scenarios").glob("library_table_*.py"), *(ROOT / "tests" / "conformance").glob("*.py")]
    )


def servers_of(scenario: str) -> set[str]:
    """The servers the sources of a shipped scenario involve (``harmony`` included as such)."""
    reports = index()["reports"]
    return {server for source in load_scenario(scenario).source for server in reports[resolve(source)]["servers"]}


# --------------------------------------------------------------------------- the index itself


@pytest.mark.parametrize("key", sorted(yaml.safe_load(INDEX_FILE.read_text(encoding="utf-8"))["reports"]))
def test_each_entry_says_what_it_shows_and_how_it_was_checked(key):
    entry = index()["reports"][key]
    assert entry["kind"] in KINDS
    assert entry["servers"] and set(entry["servers"]) <= SERVERS
    assert isinstance(entry["shows"], str) and len(entry["shows"]) > 20
    assert entry["checked"] in CHECKED
    assert ("title" in entry) == (entry["checked"] == "search"), "a title exactly when the search found it"


def test_short_names_point_at_repositories():
    assert all(re.fullmatch(r"[\w.-]+/[\w.-]+", repo) for repo in index()["short_names"].values())


# --------------------------------------------------------------------------- citations


@pytest.mark.parametrize("name", builtin_names())
def test_every_scenario_source_is_in_the_index(name):
    for source in load_scenario(name).source:
        resolve(source)


@pytest.mark.parametrize("path", citing_files(), ids=lambda p: p.name)
def test_every_report_cited_in_tables_and_scenarios_is_in_the_index(path):
    text = path.read_text(encoding="utf-8")
    reports = index()["reports"]
    missing = sorted(key for key in cited_in_text(text) if key not in reports)
    assert missing == [], f"{path.name} cites reports the index does not list"
    pr_numbers = {key.rsplit("#", 1)[1] for key, entry in reports.items() if entry["kind"] == "pr" and "#" in key}
    assert sorted(set(_BARE_PR.findall(text)) - pr_numbers) == []


def test_the_check_catches_an_unindexed_report():
    assert "vllm-project/vllm#99999999" in cited_in_text("see vllm#99999999")
    assert "vllm-project/vllm#99999999" not in index()["reports"]
    with pytest.raises(KeyError):
        resolve("vllm-project/vllm PR #99999999")


def test_the_three_loose_citations_carry_their_caveat():
    reports = index()["reports"]
    for key in ("ggml-org/llama.cpp#15789", "sgl-project/sglang#8914", "vllm-project/vllm#27385"):
        assert reports[key].get("caveat")
