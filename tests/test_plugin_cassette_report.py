"""A request the cassette does not hold: the failure report's ``mockoss`` section names the nearest
recorded request with a word diff whether or not the test failed first (session 15's newcomer,
finding 6: the openai SDK raises BadRequestError on the 400, the test fails, the teardown check
that gives the diff is skipped, and the section said only "no rule answered")."""

import json

from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)

from mockoss.server.core import MockServer

RECORD = """
import openai
import pytest

@pytest.mark.mockoss(cassette="calc")
def test_answer(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        reply = client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "What is 2 + 2?"}])
    assert reply.choices[0].message.content == "4"
"""

RAISES = """

@pytest.mark.mockoss(cassette="calc")
def test_other_question(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
        client.chat.completions.create(model=mockoss.model, messages=[{"role": "user", "content": "What is 3 + 3?"}])
"""


def test_the_section_of_a_test_whose_client_raised_names_the_nearest_recorded_request(pytester, cassette_upstream):
    pytester.makepyfile(test_calc=RECORD)
    real = ("--mockoss-record-mode", "once", "--mockoss-real", cassette_upstream.url)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", *real).assert_outcomes(passed=1)
    pytester.makepyfile(test_calc=RECORD + RAISES)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "other")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "*- mockoss -*",
            "1 request (profile 'vllm', seed *):",
            "#0 POST /v1/chat/completions -> 400: scenario 'calc': no rule answered",
            "  mockoss: no rule of scenario 'calc' answers this chat request (model 'openai/gpt-oss-20b', turn 1):",
            "  rule #1 (scenario *cassettes/test_calc/calc.yaml:6): last user message 'What is 3 + 3?' does not match *",
            "  nearest recorded request: rule #1 (scenario *cassettes/test_calc/calc.yaml:6)",
            "    last user message: What is [-2-]{+3+} + [-2-]{+3+}?",
        ],
        consecutive=True,
    )


def test_an_unanswered_request_lists_each_rules_reasons_in_the_section():
    """Without a cassette: the section gives the rules' reasons (as the teardown check does), and
    nothing for the requests a rule answered."""
    from mockoss.pytest_plugin._report import describe_requests
    from mockoss.steps import final, rule, script

    server = MockServer(scenario=script(rule(final("Hi."), last_user="hello", name="greet")))
    for text in ("hello", "bye"):
        body = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": text}]}
        server.handle("chat", json.dumps(body).encode(), {})
    lines = describe_requests(list(server.requests), "vllm", 0).splitlines()
    start = lines.index(next(line for line in lines if line.startswith("#1 ")))
    assert lines[start].endswith(": no rule answered")
    assert lines[start + 1].startswith("  mockoss: no rule of scenario ")
    assert (
        lines[start + 2].startswith("  rule 'greet' (scenario ")
        and "last user message 'bye' does not match" in lines[start + 2]
    )
    assert not any("no rule of scenario" in line for line in lines[:start])
