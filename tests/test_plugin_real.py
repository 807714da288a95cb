"""Real-model mode (``--mockoss-real=URL``), with a second mockoss instance standing in for the real
server. The suites under test run in pytester subprocesses (openai-harmony cannot be initialised
twice in one process); the stand-in runs in this process."""

import re
from pathlib import Path

import pytest

from mockoss.pytest_plugin._options import RealTarget, real_target

# Imported here, not in the fixture: pytester restores sys.modules after each test, and
# openai-harmony (imported by the server) cannot be initialised a second time in this process.
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

README = Path(__file__).resolve().parent.parent / "README.md"
RUN = ("-p", "no:cacheprovider")


@pytest.fixture(autouse=True)
def _ini(pytester, monkeypatch):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    for name in ("MOCKOSS_REAL_URL", "MOCKOSS_REAL_API_KEY", "MOCKOSS_REAL_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def real_server():
    """A second mockoss, answering every request with ``clean-answer`` ("2 + 2 = 4.")."""
    running = ThreadedServer(MockServer(scenario="clean-answer")).start()
    yield running
    running.stop()


def _readme_real_example():
    text = README.read_text()
    section = text[text.index("### Real-model mode") :]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_readme_example_passes_scripted_and_against_a_real_server(pytester, real_server):
    pytester.makepyfile(test_example=_readme_real_example())
    plain = pytester.runpytest_subprocess(*RUN)
    plain.assert_outcomes(passed=2)
    assert list(real_server.server.requests) == []

    real = pytester.runpytest_subprocess(*RUN, "-rs", f"--mockoss-real={real_server.url}")
    real.assert_outcomes(passed=1, skipped=1)
    line = re.escape(f"needs scripted output; running against real server {real_server.url}/v1")
    real.stdout.re_match_lines([rf"SKIPPED \[1\] test_example.py:\d+: {line}$"])
    assert [r.body["messages"] for r in real_server.server.requests] == [
        [{"role": "user", "content": "What is 2 + 2?"}]
    ]


def test_real_mode_fixture(pytester, real_server, monkeypatch):
    monkeypatch.setenv("MOCKOSS_REAL_URL", real_server.url + "/v1/")
    monkeypatch.setenv("MOCKOSS_REAL_API_KEY", "key-1")
    monkeypatch.setenv("OPENAI_API_KEY", "key-2")
    pytester.makepyfile(
        test_real=f"""
        import httpx
        import pytest

        from mockoss.profiles.registry import ProfileError
        from mockoss.pytest_plugin import RealModeError
        from mockoss.scenario.loader import ScenarioError

        URL = {real_server.url!r}

        @pytest.mark.mockoss(scenario="clean-tool-call", profile="ollama", seed=3, switches={{"version": "0.9"}},
                             transport={{"ttft_ms": 5}}, assert_all_steps_used=True)
        def test_fixture_points_at_the_real_server(mockoss):
            assert mockoss.real is True
            assert (mockoss.url, mockoss.base_url) == (URL, URL + "/v1")
            assert (mockoss.api_key, mockoss.model) == ("key-1", "my-model")
            assert (mockoss.server, mockoss.profile, mockoss.seed) == (None, None, None)
            mockoss.use("clean-answer")
            mockoss.switches(version="1")
            mockoss.reset()
            assert mockoss.unapplied == [
                ("profile", "ollama"),
                ("seed", 3),
                ("transport", {{"ttft_ms": 5}}),
                ("switches", {{"version": "0.9"}}),
                ("use", "clean-tool-call"),
                ("use", "clean-answer"),
                ("switches", {{"version": "1"}}),
            ]
            body = {{"model": "openai/gpt-oss-20b", "messages": [{{"role": "user", "content": "hi"}}]}}
            reply = httpx.post(mockoss.base_url + "/chat/completions", json=body)
            assert reply.json()["choices"][0]["message"]["content"] == "2 + 2 = 4."

        def test_request_log_members_raise(mockoss):
            message = (
                "mockoss.requests: requests are not recorded in real mode (running against real server "
                + URL + "/v1); mark the test @pytest.mark.mockoss_scripted, or check mockoss.real first"
            )
            with pytest.raises(RealModeError) as caught:
                mockoss.requests
            assert str(caught.value) == message
            with pytest.raises(RealModeError, match="^mockoss.last_request: "):
                mockoss.last_request
            with pytest.raises(RealModeError, match="^mockoss.assert_request_count: "):
                mockoss.assert_request_count(0)
            with pytest.raises(RealModeError, match="^mockoss.assert_all_steps_used: "):
                mockoss.assert_all_steps_used()

        def test_bad_scripting_fails_in_real_mode_too(mockoss):
            with pytest.raises(ScenarioError, match="chanel"):
                mockoss.use([{{"completion": {{"messages": [{{"chanel": "final", "content": "x"}}]}}}}])
            with pytest.raises(ProfileError, match="has no switch 'nope'"):
                mockoss.switches(nope=1)
            assert mockoss.unapplied == []

        @pytest.mark.mockoss(profiles=["vllm", "ollama"])
        def test_profiles_collapse(mockoss):
            assert mockoss.profile is None
            assert mockoss.unapplied == [("profiles", ["vllm", "ollama"])]

        @pytest.mark.mockoss(scripted_only=True)
        def test_scripted_only_option(mockoss):
            pass

        @pytest.mark.mockoss(scripted_only=True)
        class TestScripted:
            @pytest.mark.mockoss(scripted_only=False)
            def test_closest_marker_decides(self, mockoss):
                pass

        def test_session_fixture_too(mockoss_session):
            assert mockoss_session.real and mockoss_session.base_url == URL + "/v1"

        def test_failure_section(mockoss):
            mockoss.use("clean-answer")
            assert False
        """
    )
    result = pytester.runpytest_subprocess(*RUN, "-v", "-rs", "--mockoss-real-model=my-model")
    result.assert_outcomes(passed=6, skipped=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "test_real.py::test_fixture_points_at_the_real_server PASSED*",
            "test_real.py::test_request_log_members_raise PASSED*",
            "test_real.py::test_bad_scripting_fails_in_real_mode_too PASSED*",
            "test_real.py::test_profiles_collapse[[]real[]] PASSED*",
            "test_real.py::test_scripted_only_option SKIPPED *",
            "test_real.py::TestScripted::test_closest_marker_decides PASSED*",
            "test_real.py::test_session_fixture_too PASSED*",
            "test_real.py::test_failure_section FAILED*",
        ],
        consecutive=True,
    )
    reason = f"needs scripted output; running against real server {real_server.url}/v1"
    result.stdout.re_match_lines([rf"SKIPPED \[1\] test_real.py:\d+: {re.escape(reason)}$"])
    result.stdout.fnmatch_lines(
        [
            "-* mockoss -*",
            f"real mode: requests to {real_server.url}/v1 are not recorded; not applied: use('clean-answer')",
        ],
        consecutive=True,
    )


class _Config:
    def __init__(self, **options):
        self.options = options

    def getoption(self, name):
        return self.options.get(name)


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000"),
        ("https://host.example/api/v1/", "https://host.example/api"),
    ],
)
def test_real_url_is_normalised_to_end_in_v1(given, url):
    target = real_target(_Config(mockoss_real=given))
    assert target == RealTarget(url=url, base_url=url + "/v1", api_key="unused", model="openai/gpt-oss-20b")


def test_real_settings_come_from_the_command_line_then_the_environment(monkeypatch):
    monkeypatch.setenv("MOCKOSS_REAL_URL", "http://env:1")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    monkeypatch.setenv("MOCKOSS_REAL_MODEL", "env-model")
    assert real_target(_Config()) == RealTarget("http://env:1", "http://env:1/v1", "openai-key", "env-model")
    monkeypatch.setenv("MOCKOSS_REAL_API_KEY", "mockoss-key")
    target = real_target(_Config(mockoss_real="http://cli:2", mockoss_real_model="cli-model"))
    assert target == RealTarget("http://cli:2", "http://cli:2/v1", "mockoss-key", "cli-model")
    monkeypatch.delenv("MOCKOSS_REAL_URL")
    assert real_target(_Config()) is None


def test_a_real_url_without_scheme_is_a_usage_error():
    with pytest.raises(pytest.UsageError) as caught:
        real_target(_Config(mockoss_real="localhost:8000"))
    assert str(caught.value) == (
        "--mockoss-real (or MOCKOSS_REAL_URL): expected an http(s) URL such as http://127.0.0.1:8000, "
        "got 'localhost:8000'"
    )
