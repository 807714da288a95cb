"""A suite's own ``mockoss`` fixture with ``params`` that overrides the plugin's (the usual pytest
way to run each test once per value: ``@pytest.fixture(params=[...]) def mockoss(mockoss, request)``).

``profiles=`` parametrises the plugin's ``mockoss`` fixture itself (f582eaa); the plugin's fixture
then sees ``request.param`` of the overriding fixture too (pytest gives both the one argname's
param). Only a profile that ``profiles=`` put there may be read as one: a suite's own params were
ignored by the plugin before f582eaa and must stay so, not become "unknown profile 'clean-answer'".
Run through pytester (openai-harmony cannot be initialised twice in one process).
"""


RUN = ("-p", "no:cacheprovider")


from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)


def test_a_parametrised_override_of_mockoss_keeps_its_params_as_its_own(pytester):
    pytester.makepyfile(
        test_override="""
        import httpx
        import pytest

        @pytest.fixture(params=["clean-answer", "clean-tool-call"])
        def mockoss(mockoss, request):
            mockoss.use(request.param)
            return mockoss

        def test_each_scenario(mockoss):
            assert mockoss.profile is None or mockoss.profile == "vllm"
            assert mockoss.server.profile == "vllm"

        @pytest.mark.parametrize("mockoss", ["clean-answer"], indirect=True)
        def test_indirect(mockoss):
            body = {"model": mockoss.model, "messages": [{"role": "user", "content": "What is 2 + 2?"}]}
            reply = httpx.post(mockoss.base_url + "/chat/completions", json=body)
            assert reply.status_code == 200, reply.text
        """,
    )
    result = pytester.runpytest_subprocess(*RUN, "-v")
    result.stdout.fnmatch_lines(
        [
            "test_override.py::test_each_scenario[[]clean-answer[]] PASSED*",
            "test_override.py::test_each_scenario[[]clean-tool-call[]] PASSED*",
            "test_override.py::test_indirect[[]clean-answer[]] PASSED*",
        ],
        consecutive=True,
    )
    result.assert_outcomes(passed=3)


def test_a_parametrised_override_and_profiles_run_every_combination(pytester):
    """A suite's parametrised override together with ``profiles=``: one test per (param, profile),
    as at c33e240. With the profile read from ``mockoss``'s own ``request.param`` (f582eaa) this
    was a collection error, "duplicate parametrization of 'mockoss'"; the profile has its own
    fixture again."""
    pytester.makepyfile(
        test_cross="""
        import pytest

        @pytest.fixture(params=["clean-answer", "clean-tool-call"])
        def mockoss(mockoss, request):
            mockoss.use(request.param)
            return mockoss

        @pytest.mark.mockoss(profiles=["vllm", "ollama"])
        def test_each(mockoss):
            assert mockoss.server.profile in ("vllm", "ollama")
            assert mockoss.profile == mockoss.server.profile
        """,
    )
    result = pytester.runpytest_subprocess(*RUN, "-v")
    result.assert_outcomes(passed=4)
    ids = sorted(line.split("::", 1)[1].split(" ", 1)[0] for line in result.stdout.lines if "::test_each[" in line and "PASSED" in line)
    assert len(ids) == 4 and {i.count("-") >= 1 for i in ids} == {True}
    assert sum("ollama" in i for i in ids) == 2 and sum("clean-tool-call" in i for i in ids) == 2
