"""Loud misses (pytest-httpx style): unanswered requests fail at teardown by default; unused steps
and tool-check warnings when asked; optional steps. Run through pytester, exact lines."""

import pytest


@pytest.fixture(autouse=True)
def _ini(pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


HEAD = """
import httpx
import pytest
from mockoss.steps import error, final, rule, tool_call

def chat(mockoss, content="hi", **extra):
    body = {"model": mockoss.model, "messages": [{"role": "user", "content": content}], **extra}
    return httpx.post(mockoss.base_url + "/chat/completions", json=body)
"""


def test_a_request_no_rule_answers_fails_the_test_at_teardown(pytester):
    pytester.makepyfile(
        HEAD
        + """
def test_miss(mockoss):
    mockoss.use(rule(final("Hello."), name="greet", last_user="(?i)hello"))
    assert chat(mockoss, "bye").status_code == 400   # the client swallows the error
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "E   AssertionError: mockoss: 1 request the scenario did not answer:",
            "    - POST /v1/chat/completions -> 400: scenario 'inline-1': no rule answered (request #0)",
            "        mockoss: no rule of scenario 'inline-1' answers this chat request (model 'openai/gpt-oss-20b', turn 1):",
            "        rule 'greet' (scenario inline-1): last user message 'bye' does not match /(?i)hello/",
            (
                "    If this is on purpose, pass assert_all_requests_were_expected=False (marker or mockoss_config); "
                "see README.md, section 'Use it from pytest' (assert_all_requests_were_expected)."
            ),
        ],
        consecutive=True,
    )


def test_an_exhausted_error_rule_fails_the_test_and_the_opt_out_works(pytester):
    pytester.makepyfile(
        HEAD
        + """
SCENARIO = {"when_exhausted": "error", "steps": [{"completion": {"messages": [{"channel": "final", "content": "once"}]}}]}

def test_exhausted(mockoss):
    mockoss.use(SCENARIO)
    assert chat(mockoss).status_code == 200
    assert chat(mockoss).status_code == 500

@pytest.mark.mockoss(assert_all_requests_were_expected=False)
def test_exhausted_on_purpose(mockoss):
    mockoss.use(SCENARIO)
    chat(mockoss)
    assert chat(mockoss).status_code == 500
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            (
                "    - POST /v1/chat/completions -> 500: scenario 'inline-1', rule #1: no step (the rule is used up, "
                "or its template failed) (request #1)"
            ),
            "        rule #1 is used up (when_exhausted: error) and answered its exhausted_error",
        ],
        consecutive=True,
    )


def test_optional_steps_do_not_fail_assert_all_steps_used(pytester):
    pytester.makepyfile(
        HEAD
        + """
@pytest.mark.mockoss(assert_all_steps_used=True)
def test_optional(mockoss):
    mockoss.use(final("first"), error(500, "maybe a retry").with_optional(), final("never").with_note("needed"))
    assert chat(mockoss).json()["choices"][0]["message"]["content"] == "first"
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "E   AssertionError: mockoss: 1 scripted step never used:",
            "    - scenario inline-1, rule #1, step 2 (needed): never answered",
        ],
        consecutive=True,
    )


TOOLS = """
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
"""


def test_tool_check_warnings_show_in_the_report_and_can_fail(pytester):
    pytester.makepyfile(
        HEAD
        + TOOLS
        + """
def test_warns_only(mockoss):
    mockoss.use(tool_call("get_weather", {"town": "Oslo"}))
    chat(mockoss, tools=WEATHER)
    assert mockoss.last_request.warnings == (
        "tool call 'get_weather': arguments do not match the declared parameters at $: "
        "'city' is a required property",
    )

@pytest.mark.mockoss(assert_tool_calls_match_declared_tools=True)
def test_fails(mockoss):
    mockoss.use(tool_call("search", {"q": "x"}))
    chat(mockoss, tools=WEATHER)

@pytest.mark.mockoss(assert_tool_calls_match_declared_tools=True)
def test_intended(mockoss):
    mockoss.use(tool_call("search", {"q": "x"}).with_tool_mismatch_intended())
    chat(mockoss, tools=WEATHER)

def test_report_section(mockoss):
    mockoss.use(tool_call("search", {"q": "x"}))
    chat(mockoss, tools=WEATHER)
    assert False
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "E   AssertionError: mockoss: 1 tool-check warning:",
            (
                "    - request #0 (rule #1, step 0): tool call 'search': not declared by the request "
                "(declared functions: get_weather)"
            ),
            (
                "    If this is on purpose, mark the step tool_mismatch_intended: true (.with_tool_mismatch_intended()); "
                "see README.md, section 'Tool checks'."
            ),
        ],
        consecutive=True,
    )
    result.stdout.fnmatch_lines(
        [
            "#0 POST /v1/chat/completions -> 200: scenario 'inline-1', rule #1, step 0, turn 1",
            "  warning: tool call 'search': not declared by the request (declared functions: get_weather)",
        ],
        consecutive=True,
    )


def test_switches_takes_a_dict(pytester):
    pytester.makepyfile(
        HEAD
        + """
def test_dict(mockoss):
    mockoss.switches({"harmony_error_status": 400})
    assert mockoss.server.switches == {"harmony_error_status": 400}
    mockoss.switches({"harmony_error_status": 500}, strict=True)
    assert mockoss.server.switches == {"harmony_error_status": 500, "strict": True}
    with pytest.raises(TypeError, match="takes a dict"):
        mockoss.switches(["harmony_error_status"])
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
