"""Shared test configuration."""

import pytest


@pytest.fixture(autouse=True)
def _pytester_runs_as_on_a_terminal(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest prints untruncated summary lines when ``CI`` or ``BUILD_NUMBER`` is set; the
    pytester runs below assert exact output, so they run the same in CI as on a laptop."""
    if "pytester" in request.fixturenames:
        for name in ("CI", "BUILD_NUMBER"):
            monkeypatch.delenv(name, raising=False)
