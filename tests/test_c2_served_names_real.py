"""README promises about ``@pytest.mark.mockoss(served_model_names=[...])`` beyond the fake server
(tests/test_plugin_served_names.py), each untested until the eighteenth session (task C2 item 3):

* real mode (README "Real-model mode"): the option is validated but not applied; it is listed in
  ``mockoss.unapplied``, and ``mockoss.model`` stays ``--mockoss-real-model``'s;
* cassettes (README "Markers, options and precedence", ``served_model_names``: "a replayed cassette
  answers to the names it recorded instead"): a client that names the model its own way (LiteLLM
  sends ``gpt-oss-20b``) records against a real server serving that name and replays offline.

The "real" server is a second mockoss on loopback that serves ``gpt-oss-20b`` and
``openai/gpt-oss-20b`` (as ``vllm serve --served-model-name gpt-oss-20b openai/gpt-oss-20b``); the
suites under test run in pytester subprocesses (openai-harmony initialises once per process).
"""

from __future__ import annotations

import pytest
from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)

from mockoss.server.core import MockServer  # loaded before pytester snapshots sys.modules (PyO3 loads once)
from mockoss.server.run import ThreadedServer

RUN = ("-p", "no:cacheprovider", "-p", "no:randomly")
NAMES = ["gpt-oss-20b", "openai/gpt-oss-20b"]


@pytest.fixture
def real():
    """The "real" server: every request answered "4" (seed 7), under both names."""
    from mockoss.steps import final, script

    running = ThreadedServer(MockServer(scenario=script(final("4")), seed=7, served_model_names=NAMES)).start()
    yield running
    running.stop()


REAL_MODE = """
import httpx
import pytest


def ask(mockoss, model):
    body = {"model": model, "messages": [{"role": "user", "content": "What is 2 + 2?"}]}
    return httpx.post(mockoss.base_url + "/chat/completions", json=body, timeout=30)


@pytest.mark.mockoss(scenario="clean-answer", served_model_names=["gpt-oss-20b", "openai/gpt-oss-20b"])
def test_names_are_listed_not_applied(mockoss):
    assert mockoss.real and mockoss.server is None
    assert mockoss.model == MODEL  # --mockoss-real-model's (or its default), not served_model_names[0]
    assert ("served_model_names", ["gpt-oss-20b", "openai/gpt-oss-20b"]) in mockoss.unapplied
    assert ask(mockoss, mockoss.model).json()["choices"][0]["message"]["content"] == "4"


@pytest.mark.mockoss(served_model_names=[""])
def test_a_bad_value_fails_at_setup_in_real_mode_too(mockoss):
    pass
"""


@pytest.mark.parametrize(
    ("flags", "model"), [((), "openai/gpt-oss-20b"), (("--mockoss-real-model", "gpt-oss-20b"), "gpt-oss-20b")]
)
def test_real_mode_validates_and_lists_served_model_names(pytester, real, flags, model):
    pytester.makepyfile(test_real=f"MODEL = {model!r}\n" + REAL_MODE)
    result = pytester.runpytest_subprocess(*RUN, "--mockoss-real", real.url, *flags)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*served_model_names= takes a non-empty list of model names*"])
    assert [r.body["model"] for r in real.server.requests] == [model]


CASSETTE = """
import httpx
import pytest


def ask(mockoss, model, question="What is 2 + 2?"):
    body = {"model": model, "messages": [{"role": "user", "content": question}]}
    return httpx.post(mockoss.base_url + "/chat/completions", json=body, timeout=30)


@pytest.mark.mockoss(cassette=True, served_model_names=["gpt-oss-20b"])
def test_litellm_names_the_model_its_own_way(mockoss):
    reply = ask(mockoss, "gpt-oss-20b")  # not mockoss.model: the client's own name
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "4"
"""

OTHER_NAME = """

@pytest.mark.mockoss(cassette="test_litellm_names_the_model_its_own_way", served_model_names=["gpt-oss-20b"])
def test_another_client_names_the_other_model(mockoss):
    reply = ask(mockoss, "openai/gpt-oss-20b", "What is 3 + 3?")
    assert reply.status_code == 200, reply.text
"""


def _first_line(pytester) -> str:
    cassette = pytester.path / "cassettes" / "test_names" / "test_litellm_names_the_model_its_own_way.yaml"
    return cassette.read_text().partition("\n")[0]


def test_a_cassette_replays_the_names_the_client_recorded_with(pytester, real):
    pytester.makepyfile(test_names=CASSETTE)
    recorded = pytester.runpytest_subprocess(*RUN, "--mockoss-record-mode", "once", "--mockoss-real", real.url)
    recorded.assert_outcomes(passed=1)
    assert _first_line(pytester).endswith("--served-model-name gpt-oss-20b")
    pytester.runpytest_subprocess(*RUN).assert_outcomes(passed=1)  # offline
    assert len(real.server.requests) == 1


def test_new_episodes_adds_the_names_of_the_exchanges_it_appends(pytester, real):
    """A request naming a model the cassette was not recorded with is sent on and appended; the
    replay must then answer to that name too, or the appended exchange replays as a 404."""
    pytester.makepyfile(test_names=CASSETTE)
    real_flags = ("--mockoss-real", real.url)
    pytester.runpytest_subprocess(*RUN, "--mockoss-record-mode", "once", *real_flags).assert_outcomes(passed=1)
    pytester.makepyfile(test_names=CASSETTE + OTHER_NAME)
    episodes = pytester.runpytest_subprocess(*RUN, "--mockoss-record-mode", "new_episodes", *real_flags)
    episodes.assert_outcomes(passed=2)
    assert [r.body["model"] for r in real.server.requests] == ["gpt-oss-20b", "openai/gpt-oss-20b"]
    assert _first_line(pytester).endswith("--served-model-name gpt-oss-20b openai/gpt-oss-20b")
    offline = pytester.runpytest_subprocess(*RUN)
    offline.assert_outcomes(passed=2)
    assert len(real.server.requests) == 2
