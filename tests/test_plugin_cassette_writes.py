"""Writing cassettes (sixteenth-session breaker, /tmp/brk16/REPORT.md):

* finding 2: tests sharing ``cassette="conc"`` recorded it over each other, and under ``-n 2``
  interleaved two recordings into one invalid file ("6 passed", then ``conc.yaml:12:1: invalid
  YAML``). Now one test per run records a cassette; another one that would fails naming both.
* finding 6: a dead ``--mockoss-real`` wrote a cassette of mockoss's own 502, replayed for ever.
  Now nothing is written and the test fails saying so (vcrpy writes nothing without a response).
"""

from __future__ import annotations

from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)

import mockoss.server.core  # noqa: F401 (loads openai_harmony before pytester snapshots sys.modules: PyO3 loads once)

SHARED = """
import openai
import pytest


@pytest.mark.parametrize("i", range(3))
@pytest.mark.mockoss(cassette="conc")
def test_w(mockoss, i):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        for j in range(3):
            client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": f"Q{i}-{j}"}])
"""

ONE = """
import openai
import pytest


@pytest.mark.mockoss(cassette=True)
def test_dead(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        try:
            client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "What is 2 + 2?"}])
        except openai.APIStatusError:
            pass  # a test that tolerates the error still must not leave a cassette of it
"""


def _load(path):
    from mockoss.scenario.loader import load_scenario

    return load_scenario(str(path))


def test_two_tests_recording_one_cassette_in_one_run_fail_naming_both(pytester, cassette_upstream):
    pytester.makepyfile(test_conc=SHARED)
    real = ("--mockoss-real", cassette_upstream.url, "--mockoss-record-mode", "all")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *real)
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*cassette *conc.yaml is recorded in this run by test_conc.py::test_w[[]0[]]; test_conc.py::test_w[[]1[]] would record it too*"
        ]
    )
    cassette = pytester.path / "cassettes" / "test_conc" / "conc.yaml"
    assert len(_load(cassette).rules) == 3  # test_w[0]'s three exchanges, whole
    assert len(cassette_upstream.server.requests) == 3  # the others never reached the real server
    # the next run may record it again (a claim lasts one run)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", *real, "-k", "test_w and 2").assert_outcomes(passed=1)
    assert "Q2-0" in cassette.read_text() and "Q0-0" not in cassette.read_text()


def test_two_xdist_workers_never_write_one_cassette(pytester, cassette_upstream):
    pytester.makepyfile(test_conc=SHARED)
    real = ("--mockoss-real", cassette_upstream.url, "--mockoss-record-mode", "all")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", *real)
    result.assert_outcomes(passed=1, errors=2)
    folder = pytester.path / "cassettes" / "test_conc"
    assert sorted(p.name for p in folder.iterdir()) == ["conc.yaml"]  # no partial recording left
    assert len(_load(folder / "conc.yaml").rules) == 3


def test_an_unreachable_real_server_leaves_no_cassette(pytester):
    pytester.makepyfile(test_dead=ONE)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mockoss-record-mode", "once", "--mockoss-real", "http://127.0.0.1:1"
    )
    result.assert_outcomes(passed=1, errors=1)
    said = (
        "*the real server http://127.0.0.1:1 did not answer 1 request(s) (mockoss: upstream http://127.0.0.1:1 "
        "is unreachable*nothing was written to cassette *test_dead.yaml (it would replay the outage)*"
    )
    result.stdout.fnmatch_lines([said])
    folder = pytester.path / "cassettes" / "test_dead"
    assert not folder.exists() or list(folder.iterdir()) == []


def test_an_outage_while_recording_again_keeps_the_old_cassette(pytester, cassette_upstream):
    pytester.makepyfile(test_dead=ONE)
    recorded = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mockoss-record-mode", "once", "--mockoss-real", cassette_upstream.url
    )
    recorded.assert_outcomes(passed=1)
    cassette = pytester.path / "cassettes" / "test_dead" / "test_dead.yaml"
    before = cassette.read_bytes()
    again = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--mockoss-record-mode", "rewrite", "--mockoss-real", "http://127.0.0.1:1"
    )
    again.assert_outcomes(passed=1, errors=1)
    assert cassette.read_bytes() == before
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)  # it still replays


def test_commit_names_the_cassette_quoted_in_the_replay_command(tmp_path):
    """The replay command on a cassette's first line names the cassette shell-quoted, as the
    recorder quoted the scratch file it replaces (a name with a space: ``cassette="my run.yaml"``)."""
    import shlex

    from mockoss.pytest_plugin._cassette_write import commit

    recorded, path = tmp_path / "mockoss-partial-0a1b2c3d.yaml", tmp_path / "my run.yaml"
    recorded.write_text(
        "# Replay it: mockoss serve --scenario data/mockoss-partial-0a1b2c3d.yaml --profile vllm\nrules: []\n"
    )
    commit(recorded, path)
    first = path.read_text().partition("\n")[0]
    assert first == "# Replay it: mockoss serve --scenario 'data/my run.yaml' --profile vllm"
    assert shlex.split(first.partition(": ")[2])[3] == "data/my run.yaml" and not recorded.exists()
