"""The body limit set from the pytest fixture, as its other options are (marker, ``mockoss_config``):
``@pytest.mark.mockoss(max_body_bytes=N)`` makes the fake answer a larger body with 413 in the
profile's error shape, and the next test has the default again (issue 9 item 3: "configurable on
serve and the fixture"; eleventh-session breaker, finding 9: the marker option was a TypeError).

A pytester subprocess, as tests/test_plugin_options.py: openai-harmony cannot be initialised twice
in one process."""


RUN = ("-p", "no:cacheprovider")


from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)


def test_max_body_bytes_from_the_marker_and_mockoss_config(pytester):
    pytester.makepyfile(
        test_limit="""
        import httpx
        import pytest

        def _post(mockoss, words):
            body = {"model": mockoss.model, "messages": [{"role": "user", "content": "word " * words}]}
            return httpx.post(mockoss.base_url + "/chat/completions", json=body, timeout=30)

        @pytest.mark.mockoss(scenario="clean-answer", max_body_bytes=2000)
        def test_marker_sets_the_limit(mockoss):
            assert mockoss.server.max_body_bytes == 2000
            assert _post(mockoss, 100).status_code == 200
            refused = _post(mockoss, 1000)
            assert refused.status_code == 413, refused.text
            assert "limit of 2,000 bytes" in refused.text

        @pytest.mark.mockoss(scenario="clean-answer")
        def test_the_next_test_has_the_default_again(mockoss):
            assert mockoss.server.max_body_bytes == 32 * 1024 * 1024
            assert _post(mockoss, 1000).status_code == 200

        @pytest.mark.mockoss(max_body_bytes=0)
        def test_a_bad_value_fails_at_setup(mockoss):
            pass
        """,
        test_config="""
        import pytest

        @pytest.fixture
        def mockoss_config():
            return {"max_body_bytes": 3000}

        def test_config_sets_it(mockoss):
            assert mockoss.server.max_body_bytes == 3000

        @pytest.mark.mockoss(max_body_bytes=4000)
        def test_marker_beats_config(mockoss):
            assert mockoss.server.max_body_bytes == 4000
        """,
    )
    result = pytester.runpytest_subprocess(*RUN, "-p", "no:randomly")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(["*TypeError: @pytest.mark.mockoss: max_body_bytes= takes a number of bytes, at least 1*"])
