"""Tally, per emulated server, how many converted upstream test cases mockoss reproduces.

Every test here carries ``@pytest.mark.upstream(server, "owner/repo@commit:path::Test")``
(:func:`upstream_support.case`); the marker's values travel to the report as user properties, so
the count is right under pytest-xdist too. A case counts as reproduced when its call passed;
strict xfails, failures and setup errors count as not reproduced. The summary lists each
unreproduced case with its upstream name (``-v``: every case).
"""

from __future__ import annotations

from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "upstream(server, name): a case converted from a server's own test suite")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("upstream")
        if marker is not None:
            item.user_properties.append(("upstream", {"server": marker.args[0], "name": marker.args[1]}))


def _upstream(report: Any) -> dict[str, str] | None:
    for name, value in getattr(report, "user_properties", ()):
        if name == "upstream" and isinstance(value, dict):
            return value
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    outcome: dict[str, tuple[str, str, bool]] = {}  # nodeid -> (server, name, reproduced)
    for reports in terminalreporter.stats.values():
        for report in reports:
            info = _upstream(report)
            if info is None or getattr(report, "when", None) not in ("setup", "call"):
                continue
            ok = report.when == "call" and report.passed and not hasattr(report, "wasxfail")
            failed_setup = report.when == "setup" and not report.passed
            if report.when == "call" or failed_setup:
                outcome[report.nodeid] = (info["server"], info["name"], ok)
    if not outcome:
        return
    terminalreporter.section("upstream test suites")
    servers = sorted({server for server, _, _ in outcome.values()})
    for server in servers:
        rows = [(name, ok) for s, name, ok in outcome.values() if s == server]
        done = sum(ok for _, ok in rows)
        share = 100.0 * done / len(rows)
        terminalreporter.write_line(f"{server}: {done}/{len(rows)} upstream cases reproduced ({share:.1f}%)")
    verbose = config.getoption("verbose") > 0
    for nodeid in sorted(outcome):
        server, name, ok = outcome[nodeid]
        if not ok:
            terminalreporter.write_line(f"  not reproduced: {name}")
        elif verbose:
            terminalreporter.write_line(f"  reproduced: {name}")
