"""``mockoss.use()`` and ``mockoss_remote.use()`` read odd arguments alike, with errors that say
what ``use()`` takes (mockoss/pytest_plugin/_use_args.py; t18 breaker report, finding 8, its
``proj/test_use.py``): ``use("")`` said "'.': a directory", ``use("x" * 5000)`` raised a bare
``OSError`` (file name too long), ``use(b"...")`` was read as one step per byte, and YAML text
worked with the remote fixture but was an "unknown scenario" locally.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from mockoss.pytest_plugin._fixture import MockossFixture
from mockoss.pytest_plugin._options import MockossOptions
from mockoss.pytest_plugin._remote import RemoteSession
from mockoss.scenario.loader import ScenarioError
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer
from mockoss.steps import final

YAML_TEXT = "version: 1\nsteps:\n  - completion: {raw: '<|channel|>final<|message|>From text<|return|>'}\n"
CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}


@pytest.fixture(scope="module")
def running():
    server = ThreadedServer(MockServer(scenario="clean-answer")).start()
    yield server
    server.stop()


@pytest.fixture
def local(running):
    return MockossFixture.scripted(running, MockossOptions())


@pytest.fixture
def remote(running, request):
    session = RemoteSession(running.url, request.node.nodeid)
    yield session
    session.close()


def _content(base_url: str) -> str:
    return httpx.post(base_url + "/chat/completions", json=CHAT, timeout=30).json()["choices"][0]["message"]["content"]


def test_yaml_text_is_taken_by_both(local, remote):
    local.use(YAML_TEXT)
    assert _content(local.base_url) == "From text"
    remote.use(YAML_TEXT)
    assert _content(remote.base_url) == "From text"


def test_a_mistake_in_yaml_text_names_its_line(local):
    with pytest.raises(ScenarioError, match=r"<inline>:3: "):
        local.use("version: 1\nsteps:\n  - completion: {raw: 5, nope: 1}\n")


def test_a_file_path_without_yaml_suffix_is_read_by_both(local, remote, tmp_path):
    path = tmp_path / "scenario.txt"
    path.write_text(YAML_TEXT)
    local.use(str(path))
    assert _content(local.base_url) == "From text"
    remote.use(str(path))
    assert _content(remote.base_url) == "From text"


@pytest.mark.parametrize(
    ("argument", "error", "says"),
    [
        ("", ScenarioError, r"^'': an empty scenario name: give a shipped scenario's name"),
        ("   ", ScenarioError, "an empty scenario name"),
        ("x" * 5000, ScenarioError, r"\(5,000 characters\)': not a scenario file or shipped scenario name"),
        ("missing.yaml", ScenarioError, "missing.yaml: no such scenario file"),
        (b"version: 1\nsteps: []\n", TypeError, r"mockoss.use\(\) takes .*; got bytes \(.*data.decode\(\)\)"),
        (bytearray(b"x"), TypeError, "got bytearray"),
        (None, TypeError, r"mockoss.use\(\) takes a shipped scenario's name .*; got NoneType$"),
        (42, TypeError, "got int$"),
        ({1}, TypeError, "got set$"),
        ((s for s in ()), TypeError, "got generator$"),
        (final, TypeError, r"got the function final itself \(call it: final\(...\)\)"),
    ],
    ids=[
        "empty",
        "blank",
        "too-long",
        "missing-file",
        "bytes",
        "bytearray",
        "none",
        "int",
        "set",
        "generator",
        "uncalled-builder",
    ],
)
def test_odd_arguments_get_the_same_clear_error_from_both(local, remote, argument, error, says):
    with pytest.raises(error, match=says):
        local.use(argument)
    with pytest.raises(error, match=says):
        remote.use(argument)


def test_real_mode_reads_the_arguments_alike(tmp_path):
    fixture = MockossFixture(server=None, url="http://unused", api_key="k", model="m", profile=None, seed=None)
    with pytest.raises(TypeError, match="got bytes"):
        fixture.use(b"steps")
    fixture.use(YAML_TEXT)
    assert fixture.unapplied == [("use", YAML_TEXT)]


def test_a_path_object_is_a_path(local, tmp_path):
    (tmp_path / "s.yaml").write_text(YAML_TEXT)
    local.use(Path(tmp_path / "s.yaml"))
    assert _content(local.base_url) == "From text"
