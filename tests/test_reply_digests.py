"""tools/reply_digests.py (and its grid, tools/reply_digest_cases.py), the team's byte-compare
check: its quick grid gives the same digests run after run (in this process, and in another with
another ``PYTHONHASHSEED`` when the tree is clean), on the short path
and the layered one (``mockoss/server/fastpath.py``: "the same, byte for byte"), and it sees a
change: another seed (ids), another ``created``. ``--compare`` prints ``N replies compared, K
differ`` and exits 1 when K > 0; ``--at REV`` runs on a ``git archive`` of that commit.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "tools" / "reply_digests.py"
_spec = importlib.util.spec_from_file_location("reply_digests", _PATH)
assert _spec is not None and _spec.loader is not None
digests_tool = importlib.util.module_from_spec(_spec)
sys.modules["reply_digests"] = digests_tool
_spec.loader.exec_module(digests_tool)
cases_tool = sys.modules["reply_digest_cases"]  # the grid's bodies (imported by the tool from tools/)

PROFILES = ["vllm", "ollama"]


@pytest.fixture(scope="module")
def base() -> dict:
    return digests_tool.digests(PROFILES, quick=True)


def test_the_quick_grid_covers_every_endpoint_stream_limit_and_both_sends(base):
    replies = base["replies"]
    # vllm: chat, completions, responses; ollama: chat, ollama.chat, ollama.generate, responses.
    endpoints = {key.split("|")[2] for key in replies}
    assert endpoints == {"chat", "completions", "responses", "ollama.chat", "ollama.generate"}
    for part in ("stream=0", "stream=1", "max_tokens=none", "max_tokens=7", "send=1", "send=2", "tools=0", "tools=1"):
        assert any(f"|{part}" in key for key in replies), part
    assert {key.split("|")[0] for key in replies} == set(cases_tool.QUICK_SCENARIOS) | {"long-answer"}
    assert base["counts"]["replies"] == len(replies) > 300
    assert base["counts"]["statuses"]["200"] > 0.8 * len(replies)  # valid requests: mostly answered


def test_a_second_run_gives_the_same_digests(base):
    again = digests_tool.digests(PROFILES, quick=True)
    assert digests_tool.compare(base, again) == (len(base["replies"]), [])


def test_at_runs_on_a_git_archive_of_the_commit_in_another_process_with_the_same_digests(base, tmp_path):
    """``--at HEAD`` in a child process with another ``PYTHONHASHSEED``: it reports the commit and
    imports mockoss from its archive; when the working tree's mockoss/ and scenarios/ are HEAD's,
    its digests are this process's."""
    repo = _PATH.parents[1]
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=False, capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    out = tmp_path / "at.json"
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    cmd = [sys.executable, str(_PATH), "--at", "HEAD", "--quick", "--profiles", "vllm", "-o", str(out)]
    subprocess.run(cmd, check=True, env=env, capture_output=True, timeout=120)
    result = json.loads(out.read_text())
    assert result["commit"] == head.stdout.strip()
    assert result["mockoss"] == f"git archive {result['commit']}"  # checked against where mockoss was imported from
    assert result["profiles"] == ["vllm"] and result["quick"] and result["counts"]["replies"] > 100
    status = ["git", "-C", str(repo), "status", "--porcelain", "--", "mockoss", "scenarios"]
    if not subprocess.run(status, check=True, capture_output=True).stdout:
        compared, differ = digests_tool.compare(base, result, common=True)
        assert compared == len(result["replies"]) and differ == []


def test_the_layered_path_gives_the_same_digests_as_the_short_path(base):
    layered = digests_tool.digests(PROFILES, quick=True, layered=True)
    assert digests_tool.compare(base, layered) == (len(base["replies"]), [])


def test_another_seed_changes_the_digests_of_replies_with_ids(base):
    other = digests_tool.digests(["vllm"], quick=True, seed=1)
    compared, differ = digests_tool.compare(base, other, common=True)
    assert len(differ) > 0.8 * compared


def test_another_created_stamp_changes_the_digests(base, monkeypatch):
    from mockoss.server import core

    monkeypatch.setattr(core, "DEFAULT_CREATED", core.DEFAULT_CREATED + 1)
    other = digests_tool.digests(["vllm"], quick=True)
    compared, differ = digests_tool.compare(base, other, common=True)
    assert len(differ) > 0.5 * compared


def test_compare_prints_the_count_and_the_first_differing_keys_and_exits_1(base, tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(base))
    changed = json.loads(json.dumps(base))
    first = sorted(changed["replies"])[3]
    changed["replies"][first] = "0" * 64
    b.write_text(json.dumps(changed))
    assert digests_tool.main(["--compare", str(a), str(a)]) == 0
    assert capsys.readouterr().out == f"{len(base['replies'])} replies compared, 0 differ\n"
    assert digests_tool.main(["--compare", str(a), str(b)]) == 1
    assert capsys.readouterr().out == f"{len(base['replies'])} replies compared, 1 differ\n  {first}\n"


def test_a_key_in_one_file_only_differs_unless_common(base):
    fewer = {**base, "replies": dict(list(base["replies"].items())[:10])}
    assert len(digests_tool.compare(base, fewer)[1]) == len(base["replies"]) - 10
    assert digests_tool.compare(base, fewer, common=True) == (10, [])


def test_the_long_answer_is_about_2000_tokens():
    from mockoss.harmony.encoding import encode_text

    assert len(encode_text(cases_tool.long_text(), special=False)) == 1999
