"""Shared test configuration."""

import pytest


@pytest.fixture(autouse=True)
def _pytester_runs_as_on_a_terminal(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest prints untruncated summary lines when ``CI`` or ``BUILD_NUMBER`` is set; the
    pytester runs below assert exact output, so they run the same in CI as on a laptop."""
    if "pytester" in request.fixturenames:
        for name in ("CI", "BUILD_NUMBER"):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def cassette_upstream():
    """A running mockoss that answers "4" (seed 7): the "real" server cassettes are recorded from
    (tests/test_plugin_cassette*.py)."""
    from mockoss.server.core import MockServer
    from mockoss.server.run import ThreadedServer
    from mockoss.steps import final, script

    running = ThreadedServer(MockServer(scenario=script(final("4")), seed=7)).start()
    yield running
    running.stop()
