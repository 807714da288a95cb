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

import pytest
import yaml
from sources_index import _BARE_PR, CHECKED, INDEX_FILE, KINDS, SERVERS, cited_in_text, citing_files, index, resolve

from mockoss.scenario.loader import builtin_names, load_scenario

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
