"""The project's record of sources (``tests/sources.yaml``) and how citations resolve to it.

Used by ``tests/test_sources.py`` (every citation is indexed) and ``tests/scenarios/test_library.py``
(library-table rows whose profile no source of the scenario involves are marked ``unsourced``).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from mockoss.scenario.loader import load_scenario

ROOT = Path(__file__).resolve().parent.parent
INDEX_FILE = ROOT / "tests" / "sources.yaml"
KINDS = {"issue", "pr", "doc", "commit"}
CHECKED = {"search", "not-found", "notes"}
SERVERS = {"vllm", "ollama", "llamacpp", "lmstudio", "openai", "sglang", "gptoss-reference", "harmony", "trtllm", "vllm-mlx"}

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
        [
            *(ROOT / "scenarios").glob("*.yaml"),
            *(ROOT / "tests" / "scenarios").glob("library_table_*.py"),
            *(ROOT / "tests" / "conformance").glob("*.py"),
        ]
    )


def servers_of(scenario: str) -> set[str]:
    """The servers the sources of a shipped scenario involve (``harmony`` included as such)."""
    reports = index()["reports"]
    return {server for source in load_scenario(scenario).source for server in reports[resolve(source)]["servers"]}


def row_is_sourced(scenario: str, target: str) -> bool:
    """Whether a source of ``scenario`` involves the server of a library-table target
    (``"vllm-2025 chat"`` → ``vllm``; a report on the harmony library alone covers no server row)."""
    profile = target.split()[0].split("@", 1)[0]
    server = profile if profile in SERVERS else profile.split("-", 1)[0]
    return server in servers_of(scenario)
