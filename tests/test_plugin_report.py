"""Request-log assertions, the teardown steps check and the failure report's ``mockoss`` section,
line for line (pytester subprocess runs: openai-harmony cannot be initialised twice in one process)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
RUN = ("-p", "no:cacheprovider")

CHAT = """
CHAT = {
    "model": "openai/gpt-oss-20b",
    "messages": [{"role": "user", "content": "Weather in SF?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather"}}],
}
"""


@pytest.fixture(autouse=True)
def _ini(pytester, monkeypatch):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    monkeypatch.setenv("COLUMNS", "80")  # width of the section's separator line
    monkeypatch.delenv("MOCKOSS_REAL_URL", raising=False)


def _readme_blocks(heading):
    text = README.read_text()
    start = text.index(heading)
    section = text[start : text.index("\n### ", start + 1)]
    return [block.splitlines() for block in re.findall(r"```\n(.*?)```", section, re.DOTALL)]


def test_readme_shows_the_teardown_check_and_the_report_section_as_they_are(pytester):
    pytester.makepyfile(
        test_weather=CHAT
        + """
import httpx
import pytest

@pytest.mark.mockoss(scenario="clean-tool-call", assert_all_steps_used=True)
def test_stops_after_the_tool_call(mockoss):
    reply = httpx.post(mockoss.base_url + "/chat/completions", json=CHAT).json()
    assert reply["choices"][0]["message"]["tool_calls"]

@pytest.mark.mockoss(scenario="clean-tool-call", assert_all_steps_used=True)
def test_expects_an_answer(mockoss):
    reply = httpx.post(mockoss.base_url + "/chat/completions", json=CHAT).json()
    assert reply["choices"][0]["message"]["content"] == "It is sunny."
"""
    )
    result = pytester.runpytest_subprocess(*RUN)
    # The second test fails in its body, so its unused step is not reported again at teardown.
    result.assert_outcomes(passed=1, failed=1, errors=1)
    teardown, section = _readme_blocks("### Assertions and the failure report")
    result.stdout.fnmatch_lines(["_* ERROR at teardown of test_stops_after_the_tool_call _*"])
    result.stdout.fnmatch_lines(teardown, consecutive=True)
    result.stdout.fnmatch_lines(["_* test_expects_an_answer _*"])
    result.stdout.fnmatch_lines(section, consecutive=True)
    assert result.stdout.str().count("scripted step never used") == 1


def test_request_count_failure_and_section_list_every_request(pytester):
    pytester.makepyfile(
        test_log=CHAT
        + """
import httpx

STEPS = {
    "when_exhausted": "error",
    "steps": [
        {"completion": {"messages": [{"channel": "final", "content": "line one\\nline two"}]}, "times": 2},
        {"error": {"status": 429, "message": "slow down"}},
    ],
}

def test_count(mockoss):
    mockoss.use(STEPS)
    for _ in range(3):
        httpx.post(mockoss.base_url + "/chat/completions", json=CHAT)
    httpx.post(mockoss.base_url + "/chat/completions", json={"model": "openai/gpt-oss-20b"})
    httpx.post(mockoss.base_url + "/responses", json={"model": "openai/gpt-oss-20b", "input": "hi"})
    mockoss.assert_request_count(4)

def test_passing_tests_get_no_section(mockoss):
    mockoss.use(STEPS)
    httpx.post(mockoss.base_url + "/chat/completions", json=CHAT)
    mockoss.assert_request_count(1)
"""
    )
    result = pytester.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=1, failed=1)
    entries = [
        "#0 POST /v1/chat/completions -> 200: scenario 'inline-1', rule #1, step 0, turn 1",
        "  completion: <|channel|>final<|message|>line one",
        "              line two<|return|>",
        "#1 POST /v1/chat/completions -> 200: scenario 'inline-1', rule #1, step 0, turn 1",
        "  completion: <|channel|>final<|message|>line one",
        "              line two<|return|>",
        "#2 POST /v1/chat/completions -> 429: scenario 'inline-1', rule #1, step 1, turn 1 (scripted error)",
        "#3 POST /v1/chat/completions -> 400: not scripted: the server's own error reply",
        "#4 POST /v1/responses -> 500: scenario 'inline-1', rule #1: no step (the rule is used up, or its template failed)",
    ]
    result.stdout.fnmatch_lines(
        ["E       AssertionError: mockoss expected 4 requests, received 5 requests (profile 'vllm', seed 0):"]
        + [f"E       {line}" for line in entries],
        consecutive=True,
    )
    result.stdout.fnmatch_lines(
        ["-" * 35 + " mockoss " + "-" * 36, "5 requests (profile 'vllm', seed 0):", *entries], consecutive=True
    )
    assert result.stdout.str().count(" mockoss ---") == 1


def test_last_request_and_the_steps_check_pass_when_they_should(pytester):
    pytester.makepyfile(
        test_pass=CHAT
        + """
import httpx
import pytest

def test_last_request(mockoss):
    with pytest.raises(AssertionError, match="^mockoss received no request$"):
        mockoss.last_request
    mockoss.use("clean-tool-call")
    httpx.post(mockoss.base_url + "/chat/completions", json=CHAT, headers={"X-Trace": "1"})
    last = mockoss.last_request
    assert last.messages == [{"role": "user", "content": "Weather in SF?"}]
    assert last.tools == [{"type": "function", "function": {"name": "get_weather"}}]
    assert last.body == CHAT and last.headers["x-trace"] == "1"
    assert (last.scenario, last.rule, last.step, last.status) == ("clean-tool-call", "#1", 0, 200)
    assert last.completion.endswith('{"location":"San Francisco"}<|call|>')

@pytest.mark.mockoss(scenario="clean-tool-call", assert_all_steps_used=True)
def test_all_steps_used(mockoss):
    for _ in range(2):
        httpx.post(mockoss.base_url + "/chat/completions", json=CHAT)
    mockoss.assert_all_steps_used()

@pytest.mark.mockoss(assert_all_steps_used=True)
def test_times_count(mockoss):
    mockoss.use([{"completion": {"messages": [{"channel": "final", "content": "Hi"}]}, "times": 3, "note": "greet"}])
    httpx.post(mockoss.base_url + "/chat/completions", json=CHAT)
    with pytest.raises(AssertionError) as caught:
        mockoss.assert_all_steps_used()
    assert str(caught.value).splitlines()[:2] == [
        "mockoss: 1 scripted step never used:",
        "- scenario inline-1, rule #1, step 0 (greet): answered 1 of its 3 times",
    ]
    for _ in range(2):
        httpx.post(mockoss.base_url + "/chat/completions", json=CHAT)

@pytest.mark.mockoss(scenario="clean-tool-call", assert_all_steps_used=True)
def test_skipped_tests_are_not_checked(mockoss):
    pytest.skip("on purpose")
"""
    )
    result = pytester.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=3, skipped=1)


def test_mockoss_session_gets_its_own_section_and_checks_steps_at_module_teardown(pytester):
    pytester.makepyfile(
        test_session=CHAT
        + """
import httpx
import pytest

pytestmark = pytest.mark.mockoss(scenario="clean-tool-call", assert_all_steps_used=True)

def test_one_turn(mockoss_session):
    httpx.post(mockoss_session.base_url + "/chat/completions", json=CHAT)

def test_fails(mockoss_session):
    assert False
"""
    )
    result = pytester.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=1, failed=1)  # a failed test turns the module's steps check off
    result.stdout.fnmatch_lines(
        [
            "-" * 31 + " mockoss_session " + "-" * 32,
            "1 request (profile 'vllm', seed 0):",
            "#0 POST /v1/chat/completions -> 200: scenario 'clean-tool-call', rule #1, step 0, turn 1",
        ],
        consecutive=True,
    )

    pytester.makepyfile(test_session=CHAT + _SESSION_PASSING)
    result = pytester.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["_* ERROR at teardown of test_two _*"])
    result.stdout.fnmatch_lines(
        [
            "E   AssertionError: mockoss: 1 scripted step never used:",
            "    - scenario mockoss:scenarios/clean-tool-call.yaml:16, rule #1, step 1: never answered",
        ],
        consecutive=True,
    )


_SESSION_PASSING = """
import httpx
import pytest

pytestmark = pytest.mark.mockoss(scenario="clean-tool-call", assert_all_steps_used=True)

def test_one(mockoss_session):
    httpx.post(mockoss_session.base_url + "/chat/completions", json=CHAT)

def test_two(mockoss_session):
    pass
"""


def test_a_request_mockoss_answered_itself_says_why_in_the_report():
    # Newcomer report (second session): "no scenario selected" and mockoss's own failures were
    # shown as "the server's own error reply", without the message.
    from mockoss.pytest_plugin._report import describe_requests
    from mockoss.server.core import MockServer

    server = MockServer()
    server.handle("chat", b'{"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}', {})
    server.handle("chat", b"{}", {})
    lines = describe_requests(list(server.requests), "vllm", 0).splitlines()
    assert lines[1].startswith("#0 POST /v1/chat/completions -> 400: not scripted: mockoss: no scenario selected: call mockoss.use(")
    assert lines[2] == "#1 POST /v1/chat/completions -> 400: not scripted: the server's own error reply"
