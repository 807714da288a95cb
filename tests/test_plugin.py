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
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


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
    message = (
        "TypeError: @pytest.mark.mockoss has no option 'scenaro' (did you mean 'scenario'?); options: scenario, "
        "profile, profiles, seed, switches, transport, assert_all_steps_used, assert_all_requests_were_expected, "
        "assert_tool_calls_match_declared_tools, auto_session, cassette, scripted_only, max_body_bytes, body_budget_bytes"
    )
    result.stdout.re_match_lines([r"E\s+" + re.escape(message)])


def test_markers_are_registered_with_their_signature(pytester):
    result = pytester.runpytest_subprocess("--markers")
    result.stdout.fnmatch_lines(
        [
            (
                "@pytest.mark.mockoss(*, scenario=None, profile=None, profiles=None, seed=None, switches=None, "
                "transport=None, assert_all_steps_used=False, assert_all_requests_were_expected=True, "
                "assert_tool_calls_match_declared_tools=False, auto_session=False, cassette=None, scripted_only=False, max_body_bytes=None, "
                "body_budget_bytes=None): "
                "configure the "
                "mockoss fixture for "
                "this test; module, class and function markers merge, the closest wins; profiles=[...] runs the test "
                "once per profile. See README.md, section 'Use it from pytest'."
            ),
            (
                "@pytest.mark.mockoss_scripted: the test needs mockoss's scripted output; skipped under --mockoss-real. "
                "See README.md, section 'Use it from pytest'."
            ),
        ]
    )


def test_help_lists_the_mockoss_option_group(pytester, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps help to the terminal width
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(
        [
            "mockoss (fake gpt-oss server):",
            "  --mockoss-profile=NAME",
            "                        profile the mockoss fixtures answer as unless a marker",
            "                        says otherwise (default: vllm).",
            "  --mockoss-seed=SEED   seed of the mockoss fixtures unless a marker says",
            "                        otherwise (default: 0).",
            "  --mockoss-real=URL    run the mockoss fixtures against the real",
            "                        OpenAI-compatible server at URL (default:",
            "                        $MOCKOSS_REAL_URL); tests marked mockoss_scripted are",
            "                        skipped.",
            "  --mockoss-real-model=NAME",
            "                        model name mockoss.model gives in real mode (default:",
            "                        $MOCKOSS_REAL_MODEL, else openai/gpt-oss-20b).",
        ],
        consecutive=True,
    )


def test_fixtures_have_one_line_docstrings(pytester):
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess("--fixtures")
    result.stdout.fnmatch_lines(
        [
            "mockoss_config [[]module scope[]] -- *",
            "    Defaults for the mockoss fixtures, overridable: a dict of mockoss marker options.",
            "mockoss_server [[]session scope[]] -- *",
            "    The fake server the ``mockoss`` fixture resets per test: one per session and xdist worker.",
            "mockoss -- *",
            "    A fake gpt-oss server reset for this test: .use(scenario), .base_url, .requests.",
            "mockoss_session [[]module scope[]] -- *",
            "    A fake gpt-oss server of this module's own whose state carries over from test to test.",
        ]
    )
