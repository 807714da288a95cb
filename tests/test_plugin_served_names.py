"""``@pytest.mark.mockoss(served_model_names=[...])``: the names the fake answers to, as
``serve --served-model-name`` and ``MockServer(served_model_names=…)`` set them. The seventeenth
session's newcomer pointed LiteLLM at the fixture: LiteLLM reads the ``openai/`` of
``openai/gpt-oss-20b`` as its provider and sends ``gpt-oss-20b``, which vLLM (and so the ``vllm``
profile) answers 404; the 404's mockoss hint named the CLI flag and the class, and the fixture had
no option for it. The next test has the profile's name again; a bad value fails at setup.

A pytester subprocess, as tests/test_plugin_options.py: openai-harmony cannot be initialised twice
in one process."""

from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)

RUN = ("-p", "no:cacheprovider", "-p", "no:randomly")


def test_served_model_names_from_the_marker(pytester):
    pytester.makepyfile(
        test_names="""
        import httpx
        import pytest

        def _post(mockoss, model):
            body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
            return httpx.post(mockoss.base_url + "/chat/completions", json=body, timeout=30)

        @pytest.mark.mockoss(scenario="clean-answer", served_model_names=["gpt-oss-20b", "openai/gpt-oss-20b"])
        def test_both_names_answer(mockoss):
            assert mockoss.model == "gpt-oss-20b"
            assert _post(mockoss, "gpt-oss-20b").status_code == 200
            assert _post(mockoss, "openai/gpt-oss-20b").status_code == 200
            listed = httpx.get(mockoss.base_url + "/models", timeout=30).json()
            assert [m["id"] for m in listed["data"]] == ["gpt-oss-20b", "openai/gpt-oss-20b"]

        @pytest.mark.mockoss(scenario="clean-answer")
        def test_the_next_test_has_the_profile_name_again(mockoss):
            assert mockoss.model == "openai/gpt-oss-20b"
            refused = _post(mockoss, "gpt-oss-20b")
            assert refused.status_code == 404
            assert "@pytest.mark.mockoss(served_model_names=[...])" in refused.json()["error"]["message"]

        @pytest.mark.mockoss(profile="ollama", scenario="clean-answer")
        def test_another_profile_has_its_own_name(mockoss):
            assert mockoss.model == "gpt-oss:20b"

        @pytest.mark.mockoss(served_model_names="gpt-oss-20b")
        def test_a_bare_string_fails_at_setup(mockoss):
            pass
        """,
    )
    result = pytester.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        ["*TypeError: @pytest.mark.mockoss: served_model_names= takes a non-empty list of model names*"]
    )
