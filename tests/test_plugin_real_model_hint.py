"""Real mode: a 404 for the model the tests use names the test run's flag, ``--mockoss-real-model``.

The sixteenth session's newcomer (/tmp/new16/REPORT.md, item 3) ran the README's real-mode file
against a server serving ``gpt-oss:20b`` and read ``404 model 'openai/gpt-oss-20b' not found``,
with the server's own hint to restart *it*; the fix was ``--mockoss-real-model gpt-oss:20b``. The
suites run in pytester subprocesses; the stand-in "real" server (a second mockoss, Ollama's
profile, answering ``gpt-oss:20b`` only: Ollama's 404 ``model "X" not found``) runs here."""

import pytest
from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)

from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

RUN = ("-p", "no:cacheprovider")
SUITE = """
import httpx

def test_chat(mockoss):
    body = {"model": mockoss.model, "messages": [{"role": "user", "content": "What is 2 + 2?"}]}
    reply = httpx.post(mockoss.base_url + "/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
"""


@pytest.fixture
def ollama_server():
    running = ThreadedServer(
        MockServer(scenario="clean-answer", profile="ollama", served_model_names=["gpt-oss:20b"])
    ).start()
    yield running
    running.stop()


def test_a_404_for_the_default_model_names_mockoss_real_model(pytester, ollama_server):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_subprocess(*RUN, f"--mockoss-real={ollama_server.url}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*- mockoss real model -*",
        (
            f"*the real server {ollama_server.url}/v1 answered 404 to a test using model 'openai/gpt-oss-20b'; "
            "it lists 'gpt-oss:20b' (GET /v1/models)*pytest --mockoss-real-model gpt-oss:20b (or MOCKOSS_REAL_MODEL=gpt-oss:20b)."
        ),
    ])  # fmt: skip
    fixed = pytester.runpytest_subprocess(
        *RUN, f"--mockoss-real={ollama_server.url}", "--mockoss-real-model", "gpt-oss:20b"
    )
    fixed.assert_outcomes(passed=1)


def test_a_failure_without_a_404_for_the_model_gets_no_hint(pytester, ollama_server):
    pytester.makepyfile(test_suite="def test_other(mockoss):\n    assert mockoss.model == 'nope'\n")
    result = pytester.runpytest_subprocess(
        *RUN, f"--mockoss-real={ollama_server.url}", "--mockoss-real-model", "gpt-oss:20b"
    )
    result.assert_outcomes(failed=1)
    assert "mockoss real model" not in result.stdout.str()
