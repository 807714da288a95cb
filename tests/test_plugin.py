"""The pytest plugin as a user's test suite sees it (run through pytester)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.fixture(autouse=True)
def _ini(pytester):
    # openai-harmony is a PyO3 module that cannot be initialised twice in one process, so every
    # run below is a subprocess; this ini keeps pytest-asyncio quiet in it, as a user's would be.
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def _readme_pytest_example():
    text = README.read_text()
    section = text[text.index("## Use it from pytest") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_passes(pytester):
    pytester.makepyfile(test_readme=_readme_pytest_example())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_state_is_reset_between_tests_and_marker_selects_a_scenario(pytester):
    pytester.makepyfile(
        """
        import httpx
        import pytest

        CHAT = {
            "model": "openai/gpt-oss-20b",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "get_weather"}}],
        }

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
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
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
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    message = "TypeError: mockoss marker takes scenario= and switches= only; got ['scenaro']"
    result.stdout.re_match_lines([r"E\s+" + re.escape(message)])


def test_marker_is_registered_for_strict_markers(pytester):
    result = pytester.runpytest_subprocess("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.mockoss(scenario=None, switches=None)*"])
