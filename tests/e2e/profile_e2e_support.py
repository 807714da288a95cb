"""Scenarios of raw completions for the per-profile end-to-end modules (their fixtures are in
``conftest.py``)."""

from __future__ import annotations

from mockoss.scenario.loader import scenario_from_data


def use_raw(server, *raw: str, name: str) -> None:
    """Serve one step per raw Harmony completion in ``raw``, in order."""
    steps = [{"completion": {"raw": text}} for text in raw]
    server.server.use_scenario(scenario_from_data({"steps": steps}, name=name, default_version=True))
