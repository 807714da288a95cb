"""pytest plugin: the ``mockoss`` fixtures, markers and options.

``mockoss`` (function scope) shares one fake server per test session and pytest-xdist worker, on
a free loopback port in a background thread, and resets it before every test. ``mockoss_session``
(module scope) has a server of its own whose state carries over from test to test of a module.
Settings resolve as: marker (function > class > module) > ``--mockoss-*`` option >
``mockoss_config`` fixture > default. ``--mockoss-real=URL`` points every fixture at a real
OpenAI-compatible server instead. Example::

    @pytest.mark.mockoss(scenario="tool-call-leaked-as-text", assert_all_steps_used=True)
    def test_agent_reprompts_on_leak(mockoss):
        client = openai.OpenAI(base_url=mockoss.base_url, api_key=mockoss.api_key)
        run_agent(client)
        mockoss.assert_request_count(4)

Loading the plugin imports neither the server stack nor openai-harmony; fixtures do, when used.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from mockoss.pytest_plugin import _engine
from mockoss.pytest_plugin._cassette import RecordMode
from mockoss.pytest_plugin._fixture import MockossFixture, RealModeError
from mockoss.pytest_plugin._leaks import mockoss_leak_score  # noqa: F401  (a fixture)
from mockoss.pytest_plugin._options import MockossOptions, closest, real_target, resolve
from mockoss.pytest_plugin._xdist_split import pytest_configure_node, split_message  # noqa: F401  (a hook)

if TYPE_CHECKING:
    from mockoss.engines.vllm.launcher import VllmEngine
    from mockoss.pytest_plugin._options import RealTarget
    from mockoss.server.run import ThreadedServer

__all__ = ["MockossFixture", "MockossOptions", "RealModeError"]

DOCS = "README.md, section 'Use it from pytest'"
_REAL: pytest.StashKey[RealTarget | None] = pytest.StashKey()

_MARKERS = (
    (
        "mockoss(*, scenario=None, profile=None, profiles=None, seed=None, switches=None, transport=None, "
        "assert_all_steps_used=False, assert_all_requests_were_expected=True, "
        "assert_tool_calls_match_declared_tools=False, auto_session=False, cassette=None, scripted_only=False, max_body_bytes=None, body_budget_bytes=None): configure the mockoss fixture for this test; "
        "module, class and function markers merge, the closest wins; profiles=[...] runs the test once per "
        f"profile. See {DOCS}."
    ),
    f"mockoss_scripted: the test needs mockoss's scripted output; skipped under --mockoss-real. See {DOCS}.",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockoss", "mockoss (fake gpt-oss server)")
    group.addoption(
        "--mockoss-profile",
        metavar="NAME",
        help="profile the mockoss fixtures answer as unless a marker says otherwise (default: vllm).",
    )
    group.addoption(
        "--mockoss-seed",
        metavar="SEED",
        help="seed of the mockoss fixtures unless a marker says otherwise (default: 0).",
    )
    group.addoption(
        "--mockoss-real",
        metavar="URL",
        help="run the mockoss fixtures against the real OpenAI-compatible server at URL "
        "(default: $MOCKOSS_REAL_URL); tests marked mockoss_scripted are skipped.",
    )
    group.addoption(
        "--mockoss-real-model",
        metavar="NAME",
        help="model name mockoss.model gives in real mode (default: $MOCKOSS_REAL_MODEL, else openai/gpt-oss-20b).",
    )
    group.addoption(
        "--mockoss-record-mode",
        choices=[mode.value for mode in RecordMode],
        default=None,
        help="how tests marked mockoss(cassette=...) use their cassette: none (replay only, the default), "
        "once (record if missing), new_episodes (replay what is recorded, record and append the rest), "
        "all/rewrite (record again); recording needs --mockoss-real.",
    )
    _engine.add_options(group)  # --mockoss-engine vllm
    group.addoption(
        "--mockoss-url",
        metavar="URL",
        help="a shared `mockoss serve` for the mockoss_remote fixture, each test in its own session (default: $MOCKOSS_URL).",
    )


def pytest_configure(config: pytest.Config) -> None:
    for line in _MARKERS:
        config.addinivalue_line("markers", line)
    config.stash[_REAL] = real_target(config)
    profile = config.getoption("mockoss_profile", None)
    if profile is not None:
        from mockoss.profiles.registry import PROFILES, unknown_profile_message
        from mockoss.profiles.releases import split_release

        if split_release(profile)[0] not in PROFILES:  # a release (vllm@0.26.0) is checked when used
            raise pytest.UsageError(f"--mockoss-profile: {unknown_profile_message(profile)}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``@pytest.mark.mockoss(profiles=[...])``: one test per profile, ids ``[vllm]``, ``[ollama]`` …
    (one ``[real]`` test in real mode). A malformed value is left to the fixture to report.
    A suite's own ``mockoss`` fixture that replaces the plugin's (not requesting it) does not use
    the profile fixture: its tests are not parametrised (tests/test_plugin_profiles_replaced.py)."""
    if "mockoss" not in metafunc.fixturenames or "_mockoss_profile" not in metafunc.fixturenames:
        return
    found = closest(metafunc.definition, "profile", "profiles")
    if found is None or found[0] != "profiles":
        return
    profiles = found[1]
    if not isinstance(profiles, (list, tuple)) or not profiles or not all(isinstance(p, str) for p in profiles):
        return
    # The profile has a fixture of its own (~0.12 ms a test of pytest's fixture machinery): with
    # ``mockoss`` itself parametrised, a suite's own parametrised override of ``mockoss`` (its
    # ``params``, or ``parametrize("mockoss", ..., indirect=True)``) together with ``profiles=``
    # was a collection error, "duplicate parametrization" (tests/test_plugin_override_params.py).
    if metafunc.config.stash[_REAL] is not None:
        metafunc.parametrize("_mockoss_profile", [None], ids=["real"], indirect=True)
    else:
        metafunc.parametrize("_mockoss_profile", list(profiles), ids=list(profiles), indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    real = config.stash[_REAL]
    if real is None:
        return
    skip = pytest.mark.skip(reason=f"needs scripted output; running against real server {real.base_url}")
    for item in items:
        marked = item.get_closest_marker("mockoss_scripted") is not None
        if marked or closest(item, "scripted_only") == ("scripted_only", True):
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On a failed phase, add a ``mockoss`` section (``mockoss_session`` for that fixture) listing
    every request, the scenario/rule/step that answered it and the raw Harmony completion. A test
    that did not pass turns its fixtures' ``assert_all_steps_used`` teardown check off."""
    report: pytest.TestReport = yield  # type: ignore[misc]
    funcargs: dict[str, Any] = getattr(item, "funcargs", None) or {}
    fixtures = [(name, value) for name, value in funcargs.items() if isinstance(value, MockossFixture)]
    for name, fixture in fixtures:
        if report.when == "call" and not report.passed:
            fixture._test_failed = True
        if report.failed:
            report.sections.append((name, fixture.describe()))
            if fixture.real:  # a 404 for the model: the fix is --mockoss-real-model (_realhint)
                from mockoss.pytest_plugin._realhint import SECTION, real_model_hint

                hint = real_model_hint(fixture, report.longreprtext)
                if hint is not None:
                    report.sections.append((SECTION, hint))
    return report  # type: ignore[return-value]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    from mockoss.pytest_plugin._leaks import terminal_summary

    terminal_summary(terminalreporter, config)


@pytest.fixture(scope="module")
def mockoss_config() -> dict[str, Any]:
    """Defaults for the mockoss fixtures, overridable: a dict of mockoss marker options."""
    return {}


@pytest.fixture(scope="session")
def mockoss_engine(request: pytest.FixtureRequest) -> Iterator[VllmEngine | None]:
    """Real vLLM with the scripted model under ``--mockoss-engine vllm`` (one per session), else ``None``."""
    engine = _engine.start_engine(request.config)
    yield engine
    if engine is not None:
        engine.stop()


@pytest.fixture(scope="session")
def mockoss_server(mockoss_engine: VllmEngine | None) -> Iterator[ThreadedServer]:
    """The fake server the ``mockoss`` fixture resets per test: one per session and xdist worker."""
    from mockoss.server.core import MockServer
    from mockoss.server.run import ThreadedServer

    running = ThreadedServer(MockServer(upstream=_engine.upstream_for(mockoss_engine))).start()
    yield running
    running.stop()


@pytest.fixture
def _mockoss_profile(request: pytest.FixtureRequest) -> str | None:
    """The profile of this ``profiles=`` parametrisation, else ``None``."""
    return getattr(request, "param", None)


@pytest.fixture
def mockoss(
    request: pytest.FixtureRequest, mockoss_config: dict[str, Any], _mockoss_profile: str | None
) -> Iterator[MockossFixture]:
    """A fake gpt-oss server reset for this test: .use(scenario), .base_url, .requests."""
    explicit, options = resolve(request.node, request.config, mockoss_config, _mockoss_profile)
    real = request.config.stash[_REAL]
    if options.cassette is not None:  # recorded once from --mockoss-real, replayed offline
        from mockoss.pytest_plugin._cassette import cassette_fixture

        with cassette_fixture(request, options, real) as fixture:
            yield fixture
            __tracebackhide__ = True
            fixture.check_teardown(options)
        return
    if real is not None:
        fixture = MockossFixture.against(real, explicit, options)
    else:
        _engine.skip_unless_engine_applies(request.getfixturevalue("mockoss_engine"), options)
        fixture = MockossFixture.scripted(request.getfixturevalue("mockoss_server"), options)
    yield fixture
    __tracebackhide__ = True
    fixture.check_teardown(options)


@pytest.fixture(scope="module")
def mockoss_session(request: pytest.FixtureRequest, mockoss_config: dict[str, Any]) -> Iterator[MockossFixture]:
    """A fake gpt-oss server of this module's own whose state carries over from test to test.

    Fails the setup when pytest-xdist's ``--dist`` would send this module's tests that use it to
    different workers (``load``, the ``-n`` default): :mod:`mockoss.pytest_plugin._xdist_split`."""
    explicit, options = resolve(request.node, request.config, mockoss_config, None)
    if options.profiles is not None:
        raise TypeError(
            "mockoss_session: profiles= parametrises the mockoss fixture, one test per profile; "
            "give mockoss_session one profile= (module marker, --mockoss-profile or mockoss_config)"
        )
    if (split := split_message(request)) is not None:  # xdist would split the conversation
        pytest.fail(split, pytrace=False)
    real = request.config.stash[_REAL]
    if real is not None:
        yield MockossFixture.against(real, explicit, options)
        return
    from mockoss.server.core import MockServer
    from mockoss.server.run import ThreadedServer

    engine = request.getfixturevalue("mockoss_engine")
    _engine.skip_unless_engine_applies(engine, options)
    running = ThreadedServer(MockServer(upstream=_engine.upstream_for(engine))).start()
    try:
        fixture = MockossFixture.scripted(running, options)
        yield fixture
        __tracebackhide__ = True
        fixture.check_teardown(options)
    finally:
        running.stop()


@pytest.fixture
def mockoss_remote(request: pytest.FixtureRequest) -> Iterator[Any]:
    """This test's own session on the shared server of --mockoss-url (test id, base_url, use, requests)."""
    import os

    from mockoss.pytest_plugin._remote import remote_session

    url = request.config.getoption("mockoss_url", None) or os.environ.get("MOCKOSS_URL")
    if not url:
        pytest.fail(
            "mockoss_remote needs a shared server: pytest --mockoss-url http://HOST:PORT (or $MOCKOSS_URL)",
            pytrace=False,
        )
    session = remote_session(url, request.node.nodeid)
    try:
        session.reset()
        yield session
    finally:
        session.close()
