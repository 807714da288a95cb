"""The pytest plugin as a user's test suite sees it (run through pytester)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _readme_pytest_example():
    text = README.read_text()
    section = text[text.index("## Use it from pytest") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_passes(pytester):
    pytester.makepyfile(test_readme=_readme_pytest_example())
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_state_is_reset_between_tests_and_marker_selects_a_scenario(pytester):
    pytester.makepyfile(
        """
        import httpx
        import pytest

        CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}

        @pytest.mark.mockoss(scenario="clean-tool-call")
        def test_first(mockoss):
            reply = httpx.post(mockoss.base_url + "/chat/completions", json=CHAT).json()
            assert reply["choices"][0]["message"]["tool_calls"]
            assert len(mockoss.requests) == 1

        @pytest.mark.mockoss(scenario="clean-tool-call")
        def test_second_starts_from_step_zero(mockoss):
            reply = httpx.post(mockoss.base_url + "/chat/completions", json=CHAT).json()
            assert reply["choices"][0]["message"]["tool_calls"]
            assert [r.step for r in mockoss.requests] == [0]

        def test_no_scenario_left_over(mockoss):
            assert mockoss.server.scenario is None
            assert httpx.post(mockoss.base_url + "/chat/completions", json=CHAT).status_code == 400
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_marker_with_an_unknown_option_fails_the_test_clearly(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.mockoss(scenaro="clean-answer")
        def test_typo(mockoss):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*TypeError: mockoss marker takes scenario= and switches= only; got ['scenaro']*"])


def test_marker_is_registered_for_strict_markers(pytester):
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.mockoss(scenario=None, switches=None)*"])
