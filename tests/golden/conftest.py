"""Print, per golden directory (vllm-*, and any other test that records the same property), how
many exchanges mockoss answers byte-identically (issue 8).

Reads the ``golden`` user property each ``test_emulated_vllm_matches_the_golden`` report
carries, so the tally is right under pytest-xdist too (reports travel to the controller with
their user properties). Prints nothing when no golden test ran.
"""

from __future__ import annotations

from typing import Any

import pytest


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    totals: dict[str, dict[str, int]] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for name, value in getattr(report, "user_properties", ()):
                if name != "golden" or not isinstance(value, dict):
                    continue
                total = totals.setdefault(value["directory"], {"identical": 0, "known": 0, "different": 0})
                for key in total:
                    total[key] += int(value.get(key, 0))
    if not totals:
        return
    terminalreporter.section("Goldens")
    for directory in sorted(totals):
        t = totals[directory]
        count = sum(t.values())
        share = 100.0 * t["identical"] / count if count else 0.0
        terminalreporter.write_line(
            f"{directory}: {t['identical']}/{count} exchanges identical after normalisation ({share:.1f}%); "
            f"{t['known']} known differences (known_differences.yaml), {t['different']} unexplained"
        )
