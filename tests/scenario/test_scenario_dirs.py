"""``--scenario-dir`` as an operator uses it (issue 9, eleventh-session breaker, finding 5;
reproducer /tmp/brk11/repro_scendir.sh): the operator's own file wins over a shipped name (a),
a symbolic link in the directory is served (b), and an edited or deleted file is read again (c),
while a name a client sends still cannot leave the directory (issue 9, item 4)."""

from __future__ import annotations

import json
import os

import pytest

from mockoss.scenario.loader import ScenarioError, load_named
from mockoss.server.core import MockServer

HI = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}).encode()


def _file(text: str) -> str:
    return f"version: 1\nsteps:\n  - completion: {{messages: [{{channel: final, content: {json.dumps(text)}}}]}}\n"


def _answer(server: MockServer, name: str) -> tuple[int, str]:
    reply = server.handle("chat", HI, {"x-mockoss-scenario": name})
    body = json.loads(reply.body)
    return reply.status, body["choices"][0]["message"]["content"] if reply.status == 200 else body["error"]["message"]


def test_the_operators_file_wins_over_a_shipped_scenario_of_the_same_name(tmp_path):
    """Finding 5a: DIR/clean-answer.yaml was silently ignored for the shipped clean-answer."""
    (tmp_path / "clean-answer.yaml").write_text(_file("MINE"))
    assert _answer(MockServer(None, scenario_dirs=[tmp_path]), "clean-answer") == (200, "MINE")
    assert load_named("clean-answer", [tmp_path]).origin == str(tmp_path.resolve() / "clean-answer.yaml")
    # Without directories (or with one not holding that name) the shipped scenario answers.
    assert load_named("clean-answer").origin == "mockoss:scenarios/clean-answer.yaml"
    assert load_named("clean-answer", [tmp_path / "x"]).origin == "mockoss:scenarios/clean-answer.yaml"


def test_a_symbolic_link_in_the_directory_is_served(tmp_path):
    """Finding 5b: a link (Bazel runfiles, nix) was refused as 'not in the scenario directories'."""
    target = tmp_path / "store" / "abc-linked.yaml"
    target.parent.mkdir()
    target.write_text(_file("linked"))
    shared = tmp_path / "scenarios"
    shared.mkdir()
    (shared / "link.yaml").symlink_to(target)
    assert _answer(MockServer(None, scenario_dirs=[shared]), "link") == (200, "linked")


@pytest.mark.parametrize("name", ["../store/abc-linked", "..", "/etc/passwd", "store/abc-linked", "..\\x", ".hidden", "link.yaml"])
def test_names_that_leave_the_directory_are_still_refused(tmp_path, name):
    """Issue 9, item 4 holds: only NAME.yaml directly in a named directory, never a path."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "abc-linked.yaml").write_text(_file("SECRET-1"))
    (tmp_path / ".hidden.yaml").write_text(_file("SECRET-2"))
    shared = tmp_path / "scenarios"
    shared.mkdir()
    with pytest.raises(ScenarioError):
        load_named(name, [shared])
    status, message = _answer(MockServer(None, scenario_dirs=[shared]), name)
    assert status == 400 and "SECRET" not in message


def test_an_edited_file_is_read_again_and_a_deleted_one_is_gone(tmp_path):
    """Finding 5c: the file was read once for the server's life, even across reset?all=true."""
    path = tmp_path / "edit.yaml"
    path.write_text(_file("v1"))
    server = MockServer(None, scenario_dirs=[tmp_path])
    assert _answer(server, "edit") == (200, "v1")
    path.write_text(_file("v2 longer"))  # the size changes, whatever the clock's resolution
    assert _answer(server, "edit") == (200, "v2 longer")
    path.unlink()
    status, message = _answer(server, "edit")
    assert status == 400 and "unknown scenario 'edit'" in message
    path.write_text(_file("v3"))
    assert _answer(server, "edit") == (200, "v3")


def test_an_unchanged_file_keeps_its_place_and_a_changed_one_starts_over(tmp_path):
    """Reading again only when the file changed: a touch (same bytes) does not rewind the steps."""
    path = tmp_path / "two.yaml"
    steps = "version: 1\nsteps:\n  - completion: {messages: [{channel: final, content: one}]}\n" \
            "  - completion: {messages: [{channel: final, content: two}]}\nwhen_exhausted: repeat_last\n"
    path.write_text(steps)
    server = MockServer(None, scenario_dirs=[tmp_path])
    assert _answer(server, "two") == (200, "one")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert _answer(server, "two") == (200, "two")
    path.write_text(steps.replace("one", "uno"))
    assert _answer(server, "two") == (200, "uno")
