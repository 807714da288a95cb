"""A suite that replaces the ``mockoss`` fixture with one of its own (not requesting the plugin's)
still collects a test marked ``@pytest.mark.mockoss(profiles=[...])``.

aab9cbb gave the ``profiles=`` profile a fixture of its own again (``_mockoss_profile``, requested
by the plugin's ``mockoss``); such a suite's test does not use it, and parametrising it indirectly
was a collection error for the whole module ("function uses no fixture '_mockoss_profile'"), found
by a review. The marker has no fixture to go to there, so the test runs once, as any unmarked test.
Run through pytester (openai-harmony cannot be initialised twice in one process).
"""

RUN = ("-p", "no:cacheprovider")


def test_a_replaced_mockoss_fixture_with_profiles_still_collects(pytester, monkeypatch):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    for name in ("MOCKOSS_REAL_URL", "MOCKOSS_REAL_API_KEY", "MOCKOSS_REAL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(
        test_replaced="""
        import pytest

        @pytest.fixture
        def mockoss():
            return "mine"

        @pytest.mark.mockoss(profiles=["vllm", "ollama"])
        def test_replaced(mockoss):
            assert mockoss == "mine"

        @pytest.mark.mockoss(profiles=["vllm", "ollama"])
        def test_other(mockoss):
            assert mockoss == "mine"
        """
    )
    result = pytester.runpytest(*RUN)
    result.assert_outcomes(passed=2)
