"""The plugin's settings as a user's suite sees them: precedence, profiles, fixtures, xdist, async.

Every run is a pytester subprocess: openai-harmony cannot be initialised twice in one process.
"""

import json

import pytest

RUN = ("-p", "no:cacheprovider")


from plugin_support import plugin_pytester  # noqa: F401 (autouse: the pytester project and environment)


def test_marker_beats_command_line_beats_mockoss_config_and_config_is_lazy(pytester):
    pytester.makeconftest(
        """
        import pytest

        EVALUATED = []

        @pytest.fixture(scope="module")
        def mockoss_config(request):
            EVALUATED.append(request.module.__name__)
            return {"profile": "lmstudio", "seed": 5, "switches": {"strict": True}}
        """
    )
    pytester.makepyfile(
        test_a="""
        def test_config_fills_what_the_command_line_leaves(mockoss):
            assert (mockoss.profile, mockoss.seed) == ("lmstudio", 7)
            assert (mockoss.server.profile, mockoss.server.seed, mockoss.server.switches) == ("lmstudio", 7, {"strict": True})
        """,
        test_b="""
        import pytest

        pytestmark = pytest.mark.mockoss(profile="ollama", switches={"version": "0.12.0"}, scenario="clean-answer")

        def test_module_marker_beats_command_line_and_config(mockoss):
            assert (mockoss.profile, mockoss.seed, mockoss.server.switches) == ("ollama", 7, {"version": "0.12.0"})
            assert mockoss.server.scenario.name == "clean-answer"

        @pytest.mark.mockoss(seed=2)
        class TestClass:
            def test_class_marker_beats_module_and_command_line(self, mockoss):
                assert (mockoss.profile, mockoss.seed) == ("ollama", 2)

            @pytest.mark.mockoss(seed="s", switches={}, scenario=None)
            def test_function_marker_is_closest_and_replaces_values_whole(self, mockoss):
                assert (mockoss.profile, mockoss.seed, mockoss.server.switches) == ("ollama", "s", {})
                assert mockoss.server.scenario.name == "clean-answer"  # None means "not set here"
        """,
        test_c="""
        import conftest

        def test_mockoss_config_was_evaluated_only_where_mockoss_is_used():
            assert conftest.EVALUATED == ["test_a", "test_b"]
        """,
    )
    result = pytester.runpytest_subprocess(*RUN, "--mockoss-seed=7")
    result.assert_outcomes(passed=5)


def test_profiles_parametrise_the_test_and_the_closest_marker_decides(pytester):
    pytester.makepyfile(
        test_profiles="""
        import httpx
        import pytest

        pytestmark = pytest.mark.mockoss(profiles=["vllm", "lmstudio"])

        @pytest.mark.mockoss(profiles=["vllm", "ollama", "llamacpp"], scenario="clean-answer")
        def test_each(mockoss):
            assert mockoss.server.profile == mockoss.profile
            assert mockoss.model == mockoss.server.served_model_names[0]
            body = {"model": mockoss.model, "messages": [{"role": "user", "content": "What is 2 + 2?"}]}
            reply = httpx.post(mockoss.base_url + "/chat/completions", json=body)
            assert reply.status_code == 200, reply.text
            assert reply.json()["choices"][0]["message"]["content"] == "2 + 2 = 4."

        @pytest.mark.mockoss(profile="ollama")
        def test_closer_profile_beats_module_profiles(mockoss):
            assert mockoss.profile == "ollama"

        def test_module_profiles(mockoss):
            assert mockoss.profile in ("vllm", "lmstudio")

        def test_without_mockoss():
            pass
        """,
        test_cli="""
        def test_command_line_profile(mockoss):
            assert (mockoss.profile, mockoss.server.profile) == ("llamacpp", "llamacpp")
        """,
    )
    result = pytester.runpytest_subprocess(*RUN, "-v", "--mockoss-profile=llamacpp")
    result.stdout.fnmatch_lines(
        [
            "test_cli.py::test_command_line_profile PASSED*",
            "test_profiles.py::test_each[[]vllm[]] PASSED*",
            "test_profiles.py::test_each[[]ollama[]] PASSED*",
            "test_profiles.py::test_each[[]llamacpp[]] PASSED*",
            "test_profiles.py::test_closer_profile_beats_module_profiles PASSED*",
            "test_profiles.py::test_module_profiles[[]vllm[]] PASSED*",
            "test_profiles.py::test_module_profiles[[]lmstudio[]] PASSED*",
            "test_profiles.py::test_without_mockoss PASSED*",
        ],
        consecutive=True,
    )
    result.assert_outcomes(passed=8)


def test_bad_options_fail_the_test_at_setup_naming_the_fix(pytester):
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.mockoss(profile="vllmm")
        def test_unknown_profile(mockoss):
            pass

        @pytest.mark.mockoss(profile="vllm", profiles=["ollama"])
        def test_profile_and_profiles(mockoss):
            pass

        @pytest.mark.mockoss(profiles="vllm")
        def test_profiles_not_a_list(mockoss):
            pass

        @pytest.mark.mockoss(switches={"nope": 1})
        def test_unknown_switch(mockoss):
            pass

        @pytest.mark.mockoss(transport={"ttft": 1})
        def test_unknown_transport_field(mockoss):
            pass

        @pytest.mark.mockoss("clean-answer")
        def test_positional(mockoss):
            pass
        """,
        test_config="""
        import pytest

        @pytest.fixture(scope="module")
        def mockoss_config():
            return {"sead": 1}

        def test_typo_in_mockoss_config(mockoss):
            pass
        """,
        test_session="""
        import pytest

        pytestmark = pytest.mark.mockoss(profiles=["vllm", "ollama"])

        def test_session_with_profiles(mockoss_session):
            pass
        """,
    )
    result = pytester.runpytest_subprocess(*RUN, "-vv", "--tb=no")  # -vv: summary lines in full
    result.assert_outcomes(errors=8)
    result.stdout.fnmatch_lines(
        [
            (
                "ERROR test_bad.py::test_unknown_profile - mockoss.profiles.registry.ProfileError: "
                "unknown profile 'vllmm' (did you mean 'vllm'?); profiles: vllm, *"
            ),
            (
                "ERROR test_bad.py::test_profile_and_profiles - TypeError: @pytest.mark.mockoss: mockoss: "
                "give profile= (one profile) or profiles= (one run per profile), not both"
            ),
            (
                "ERROR test_bad.py::test_profiles_not_a_list - TypeError: @pytest.mark.mockoss: profiles= takes "
                "a non-empty list of profile names, e.g. ['vllm', 'ollama']"
            ),
            (
                "ERROR test_bad.py::test_unknown_switch - mockoss.profiles.registry.ProfileError: "
                "profile 'vllm' has no switch 'nope'; switches: strict, *"
            ),
            (
                "ERROR test_bad.py::test_unknown_transport_field - mockoss.scenario.transport.TransportError: "
                "mockoss transport=: *ttft*"
            ),
            (
                "ERROR test_bad.py::test_positional - TypeError: @pytest.mark.mockoss takes keyword options only "
                "(scenario, profile, profiles, seed, switches, transport, assert_all_steps_used, "
                "assert_all_requests_were_expected, assert_tool_calls_match_declared_tools, auto_session, cassette, "
                "scripted_only, max_body_bytes, body_budget_bytes, served_model_names); "
                "got ('clean-answer',)"
            ),
            (
                "ERROR test_config.py::test_typo_in_mockoss_config - TypeError: mockoss_config has no option 'sead' "
                "(did you mean 'seed'?); options: scenario, *"
            ),
            (
                "ERROR test_session.py::test_session_with_profiles - TypeError: mockoss_session: profiles= "
                "parametrises the mockoss fixture, one test per profile; give mockoss_session one profile= "
                "(module marker, --mockoss-profile or mockoss_config)"
            ),
        ],
        consecutive=True,
    )


def test_unknown_command_line_profile_is_a_usage_error(pytester):
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess(*RUN, "--mockoss-profile=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --mockoss-profile: unknown profile 'nope'*; profiles: vllm, *"])


def test_mockoss_session_keeps_state_across_the_tests_of_a_module(pytester):
    pytester.makepyfile(
        test_conversation="""
        import httpx
        import pytest

        pytestmark = pytest.mark.mockoss(scenario="clean-tool-call", seed=3)
        CHAT = {
            "model": "openai/gpt-oss-20b",
            "messages": [{"role": "user", "content": "Weather in SF?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather"}}],
        }

        def test_first_turn_calls_the_tool(mockoss_session):
            reply = httpx.post(mockoss_session.base_url + "/chat/completions", json=CHAT).json()
            assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"

        def test_second_turn_continues_the_scenario(mockoss_session):
            reply = httpx.post(mockoss_session.base_url + "/chat/completions", json=CHAT).json()
            assert reply["choices"][0]["message"]["content"] == "It is sunny in San Francisco at 20 °C."
            assert [(r.index, r.step) for r in mockoss_session.requests] == [(0, 0), (1, 1)]
            assert (mockoss_session.profile, mockoss_session.seed) == ("vllm", 3)

        def test_function_fixture_is_a_separate_fresh_server(mockoss, mockoss_session):
            assert mockoss.url != mockoss_session.url
            assert mockoss.requests == [] and mockoss.server.scenario.name == "clean-tool-call"
            assert len(mockoss_session.requests) == 2

        def test_reset_starts_over(mockoss_session):
            mockoss_session.reset()
            reply = httpx.post(mockoss_session.base_url + "/chat/completions", json=CHAT).json()
            assert reply["choices"][0]["message"]["tool_calls"]
            mockoss_session.assert_request_count(1)
        """,
        test_other_module="""
        def test_another_module_gets_a_fresh_server(mockoss_session):
            assert mockoss_session.requests == [] and mockoss_session.server.scenario is None
        """,
    )
    result = pytester.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=5)


def test_async_tests_use_the_async_client(pytester):
    pytester.makepyfile(
        """
        import openai
        import pytest

        @pytest.mark.asyncio
        @pytest.mark.mockoss(scenario="clean-answer")
        async def test_async_client(mockoss):
            messages = [{"role": "user", "content": "What is 2 + 2?"}]
            async with openai.AsyncOpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key, max_retries=0) as client:
                reply = await client.chat.completions.create(model=mockoss.model, messages=messages)
                stream = await client.chat.completions.create(model=mockoss.model, messages=messages, stream=True)
                text = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
            assert reply.choices[0].message.content == "2 + 2 = 4."
            assert text == "2 + 2 = 4."
            mockoss.assert_request_count(2)
            assert mockoss.last_request.body["stream"] is True
        """
    )
    result = pytester.runpytest_subprocess(*RUN)
    result.assert_outcomes(passed=1)


def test_each_xdist_worker_has_its_own_server(pytester):
    out = pytester.path / "workers.jsonl"
    pytester.makepyfile(
        f"""
        import json
        import os

        import httpx
        import pytest

        CHAT = {{"model": "openai/gpt-oss-20b", "messages": [{{"role": "user", "content": "hi"}}]}}

        @pytest.mark.parametrize("n", range(8))
        @pytest.mark.mockoss(scenario="clean-answer")
        def test_worker(mockoss, n):
            assert httpx.post(mockoss.base_url + "/chat/completions", json=CHAT).status_code == 200
            mockoss.assert_request_count(1)
            assert mockoss.last_request.index == 0
            with open({str(out)!r}, "a") as f:
                f.write(json.dumps([os.environ["PYTEST_XDIST_WORKER"], mockoss.url, os.getpid()]) + "\\n")
        """
    )
    result = pytester.runpytest_subprocess(*RUN, "-n", "2")
    result.assert_outcomes(passed=8)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_worker = {}
    for worker, url, pid in rows:
        by_worker.setdefault(worker, set()).add((url, pid))
    assert sorted(by_worker) == ["gw0", "gw1"]
    assert all(len(seen) == 1 for seen in by_worker.values())  # one server per worker, kept all session
    (url0, pid0), (url1, pid1) = by_worker["gw0"].pop(), by_worker["gw1"].pop()
    assert url0 != url1 and pid0 != pid1


def test_a_misspelt_command_line_profile_gets_a_did_you_mean(pytester):
    """A newcomer's ``--mockoss-profile olama`` listed the profiles without the hint the marker
    and ``mockoss serve`` give (one wording: ``registry.unknown_profile_message``)."""
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess(*RUN, "--mockoss-profile=olama")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --mockoss-profile: unknown profile 'olama' (did you mean 'ollama'?); profiles: vllm, *"])
