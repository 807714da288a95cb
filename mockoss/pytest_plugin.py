"""pytest plugin: the ``mockoss`` fixture and marker.

One server per test session, on a free loopback port, in a background thread; scripted state (the
scenario cursor, the request log, ids) is reset for every test.

Example::

    def test_agent_reprompts_on_leak(mockoss):
        mockoss.use("tool-call-leaked-as-text")
        client = openai.OpenAI(base_url=mockoss.base_url, api_key="unused")
        run_agent(client)
        assert len(mockoss.requests) == 4
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mockoss.scenario.loader import Scenario
    from mockoss.server.core import MockServer, RecordedRequest
    from mockoss.server.run import ThreadedServer

__all__ = ["MockossFixture"]

_MARKER_DOC = (
    "mockoss(scenario=None, switches=None): use this scenario (shipped name, YAML path, or inline "
    "dict/list of steps) and these profile switches for the test's mockoss fixture."
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _MARKER_DOC)


class MockossFixture:
    """What the ``mockoss`` fixture gives a test (public for type hints).

    Attributes:
        url: ``http://127.0.0.1:PORT``, the server root.
        base_url: ``url + "/v1"``, for ``openai.OpenAI(base_url=…)``.
        server: the underlying :class:`~mockoss.server.core.MockServer`.
    """

    def __init__(self, running: ThreadedServer) -> None:
        self.server: MockServer = running.server
        self.url = running.url
        self.base_url = f"{running.url}/v1"
        self._inline = 0

    @property
    def requests(self) -> list[RecordedRequest]:
        """Requests received during this test, in order (parsed body, scenario step that answered,
        status, raw Harmony completion)."""
        return list(self.server.requests)

    def use(self, scenario: str | Path | Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Scenario:
        """Make ``scenario`` the one that answers, from its first step.

        Accepts a shipped scenario name, a YAML file path, a scenario mapping (``{"steps": […]}``
        or ``{"rules": […]}``, ``version`` optional) or a bare list of steps.

        Raises:
            mockoss.scenario.loader.ScenarioError: the scenario is invalid (file, line and field).
        """
        from mockoss.scenario.loader import scenario_from_data

        if isinstance(scenario, (str, Path)):
            return self.server.use_scenario(str(scenario))
        data = {"steps": list(scenario)} if isinstance(scenario, Sequence) else scenario
        self._inline += 1
        loaded = scenario_from_data(data, name=f"inline-{self._inline}", default_version=True)
        return self.server.use_scenario(loaded)

    @staticmethod
    def session(key: str) -> dict[str, str]:
        """Headers that put requests in conversation ``key``: ``{"X-Mockoss-Session": key}``.

        Requests of one session share rule cursors and a turn counter (turn = earlier requests
        in the session + 1) apart from other sessions, e.g.
        ``openai.OpenAI(base_url=mockoss.base_url, api_key="unused", default_headers=mockoss.session("a"))``.
        """
        return {"X-Mockoss-Session": key}

    def switches(self, **switches: Any) -> None:
        """Set profile switches for the rest of this test, e.g. ``harmony_error_status=400``.

        Raises:
            mockoss.profiles.registry.ProfileError: a switch the profile does not have.
        """
        self.server.set_switches(switches)


@pytest.fixture(scope="session")
def mockoss_server() -> Iterator[ThreadedServer]:
    """The session's mockoss HTTP server, started on a free loopback port."""
    from mockoss.server.core import MockServer
    from mockoss.server.run import ThreadedServer

    running = ThreadedServer(MockServer()).start()
    yield running
    running.stop()


@pytest.fixture
def mockoss(mockoss_server: ThreadedServer, request: pytest.FixtureRequest) -> Iterator[MockossFixture]:
    """A fake gpt-oss server for this test: ``.use(scenario)``, ``.base_url``, ``.requests``."""
    server = mockoss_server.server
    server.reset()
    server.scenario = None
    server.set_switches({})
    server.transport = None
    fixture = MockossFixture(mockoss_server)
    marker = request.node.get_closest_marker("mockoss")
    if marker is not None:
        options = dict(marker.kwargs)
        unknown = set(options) - {"scenario", "switches"}
        if unknown or marker.args:
            raise TypeError(f"mockoss marker takes scenario= and switches= only; got {sorted(unknown) or marker.args}")
        if options.get("scenario") is not None:
            fixture.use(options["scenario"])
        if options.get("switches"):
            fixture.switches(**options["switches"])
    yield fixture
    server.reset()
