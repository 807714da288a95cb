"""Cassette names and paths a suite can rely on (sixteenth-session breaker, /tmp/brk16/REPORT.md):

* finding 3: ``cassette=True`` names collided (params ``"What is 2 + 2?"``/``"What is 2 * 2?"``,
  ``TestA::test_x``/``TestB::test_x``); the second test replayed the first one's cassette;
* finding 5a: ``profiles=[...]`` recorded ``test_prof-real.yaml`` and looked for ``test_prof-vllm.yaml``;
* finding 5b: ``cassette="data/my.yml"`` recorded ``data/my.yaml`` and looked for ``my.yml``;
* finding 9: ``cassette=False`` under a module-wide ``cassette=True`` was a ``TypeError``.

Names follow pytest-recording's ``get_default_cassette_name`` (kiwicom/pytest-recording 0.15.0,
``src/pytest_recording/plugin.py``: ``Class.test``), plus a hash where the file name lost characters.
"""

from __future__ import annotations

from types import SimpleNamespace

from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)

import mockoss.server.core  # noqa: F401 (loads openai_harmony before pytester snapshots sys.modules: PyO3 loads once)

COLLIDING = """
import openai
import pytest


def ask(mockoss, question):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        reply = client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": question}])
    assert reply.choices[0].message.content == "4"


@pytest.mark.mockoss(cassette=True)
@pytest.mark.parametrize("question", ["What is 2 + 2?", "What is 2 * 2?"])
def test_coll(mockoss, question):
    ask(mockoss, question)


class TestA:
    @pytest.mark.mockoss(cassette=True)
    def test_x(self, mockoss):
        ask(mockoss, "from A")


class TestB:
    @pytest.mark.mockoss(cassette=True)
    def test_x(self, mockoss):
        ask(mockoss, "from B")
"""

REPLAYABLE = """
import openai
import pytest


def ask(mockoss, question):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        reply = client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": question}])
    assert reply.choices[0].message.content == "4"


@pytest.mark.mockoss(cassette=True, profiles=["vllm", "ollama"])
def test_prof(mockoss):
    ask(mockoss, "any profile")


@pytest.mark.mockoss(cassette="data/my.yml")
def test_yml(mockoss):
    ask(mockoss, "a .yml cassette")
"""

OPT_OUT = """
import openai
import pytest
from mockoss.steps import final

pytestmark = pytest.mark.mockoss(cassette=True)


@pytest.mark.mockoss(cassette=False)
def test_scripted_here(mockoss):
    mockoss.use(final("scripted"))
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        reply = client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "scripted"
    assert mockoss.cassette is None
"""


def _files(folder):
    return sorted(p.name for p in folder.iterdir())


def test_colliding_tests_record_and_replay_a_cassette_each(pytester, cassette_upstream):
    pytester.makepyfile(test_names=COLLIDING)
    real = ("--mockoss-real", cassette_upstream.url)
    recorded = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockoss-record-mode", "once", *real)
    recorded.assert_outcomes(passed=4)
    files = _files(pytester.path / "cassettes" / "test_names")
    assert [f for f in files if not f.startswith("test_coll-What-is-2-2-")] == [
        "TestA.test_x.yaml",
        "TestB.test_x.yaml",
    ]
    assert len(files) == 4  # and two test_coll-What-is-2-2-<hash>.yaml
    assert "from A" in (pytester.path / "cassettes" / "test_names" / "TestA.test_x.yaml").read_text()
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=4)
    assert len(cassette_upstream.server.requests) == 4


def test_profiles_and_yml_cassettes_replay_what_was_recorded(pytester, cassette_upstream):
    pytester.makepyfile(test_names=REPLAYABLE)
    real = ("--mockoss-real", cassette_upstream.url)
    recorded = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockoss-record-mode", "once", *real)
    recorded.assert_outcomes(passed=2)  # test_prof runs once, as [real]
    assert _files(pytester.path / "cassettes" / "test_names") == ["test_prof.yaml"]
    assert _files(pytester.path / "data") == ["my.yml"]  # the name given, not my.yaml
    first = (pytester.path / "data" / "my.yml").read_text().partition("\n")[0]
    assert "mockoss-partial" not in first and "--scenario data/my.yml " in first
    offline = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    offline.assert_outcomes(passed=3)  # test_prof[vllm] and [ollama] both replay test_prof.yaml
    assert len(cassette_upstream.server.requests) == 2


def test_cassette_false_turns_a_module_cassette_off(pytester):
    pytester.makepyfile(test_optout=OPT_OUT)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_old_names_replay_while_unambiguous(pytester, cassette_upstream):
    """A cassette recorded under the name older versions gave keeps replaying when no other test
    of its file had that name; a shared old name is not used, and the error says why."""
    pytester.makepyfile(test_names=COLLIDING + REPLAYABLE.split("\n\n\n", 2)[2])
    real = ("--mockoss-real", cassette_upstream.url)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--mockoss-record-mode", "once", *real).assert_outcomes(
        passed=6
    )
    folder = pytester.path / "cassettes" / "test_names"
    (folder / "test_prof.yaml").rename(folder / "test_prof-real.yaml")  # where 5a's versions recorded it
    (folder / "TestA.test_x.yaml").rename(folder / "test_x.yaml")  # TestA and TestB both had this name
    (folder / "TestB.test_x.yaml").unlink()

    offline = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_names.py")
    offline.assert_outcomes(passed=5, errors=2)
    offline.stdout.fnmatch_lines(
        ["*cassette *TestA.test_x.yaml does not exist (test_x.yaml, its name before * may be another test's*"]
    )
    # Judged from the module, not the run's selection: with -k TestB alone, TestB must not replay
    # TestA's recording (a review found the first version did).
    selected = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_names.py", "-k", "TestB")
    selected.assert_outcomes(errors=1)
    assert (folder / "test_x.yaml").exists()

    again = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mockoss-record-mode", "all", "-k", "test_prof", *real
    )
    again.assert_outcomes(passed=1)
    assert (folder / "test_prof.yaml").exists() and not (folder / "test_prof-real.yaml").exists()


def _node(name, cls=None, params=None, ident=None):
    """A stand-in for a pytest Function: what the naming reads of it."""
    callspec = SimpleNamespace(id=ident, params=params) if ident is not None else None
    return SimpleNamespace(cls=cls, originalname=name.split("[")[0], name=name, callspec=callspec)


def test_names_are_pytest_recordings_with_a_hash_where_characters_were_lost():
    from mockoss.pytest_plugin._cassette_names import default_name, legacy_names

    class TestA:
        pass

    assert default_name(_node("test_answer")) == "test_answer"
    assert default_name(_node("test_x", cls=TestA)) == "TestA.test_x"
    assert default_name(_node("test_sum[2-3]", params={"a": 2, "b": 3}, ident="2-3")) == "test_sum-2-3"
    plus = default_name(_node("t[What is 2 + 2?]", params={"q": 0}, ident="What is 2 + 2?"))
    times = default_name(_node("t[What is 2 * 2?]", params={"q": 1}, ident="What is 2 * 2?"))
    assert plus.startswith("t-What-is-2-2-") and times.startswith("t-What-is-2-2-") and plus != times
    upper, lower = (default_name(_node(f"t[{i}]", params={"i": i}, ident=i)) for i in ("Ab", "ab"))
    assert lower == "t-ab" and upper.lower() != lower  # one file on a case-insensitive file system otherwise
    # profiles= is not part of the name; the old name of a profiles= test includes [real] too
    prof = _node("test_p[x-vllm]", params={"n": 1, "_mockoss_profile": "vllm"}, ident="x-vllm")
    assert default_name(prof) == "test_p-x"
    assert legacy_names(prof) == ["test_p-x-vllm", "test_p-x-real"]
    real = _node("test_p[real]", params={"_mockoss_profile": None}, ident="real")
    assert default_name(real) == "test_p" and legacy_names(real) == ["test_p-real"]
