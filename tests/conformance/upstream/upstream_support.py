"""Helpers for the conversions of the servers' own test suites (issue 10, item 6).

Each converted case is a ``pytest.param`` built by :func:`case`: its id is the upstream test's
name (with the row index when the upstream test is table-driven), and it carries the marker
``upstream(server, "owner/repo@commit:path::Test")`` that the terminal summary in ``conftest.py``
counts. A case the emulation does not reproduce is ``xfail(strict=True)`` with the reason, so the
day the profile is fixed the test turns red until the mark goes.
"""

from __future__ import annotations

from typing import Any

import pytest


def case(server: str, source: str, test: str, *values: Any, xfail: str | None = None) -> Any:
    """One upstream case as a parameter set.

    Args:
        server: the emulated server the tally counts it under (``"ollama"``, ``"llamacpp"``, ``"vllm"``).
        source: ``owner/repo@commit:path`` of the upstream test file.
        test: the upstream test (``TestHeaderParsing[3]``, ``test_x``); joined to ``source`` with ``::``.
        values: the parameter values.
        xfail: why mockoss does not reproduce the case (a strict xfail), or ``None``.
    """
    marks = [pytest.mark.upstream(server, f"{source}::{test}")]
    if xfail is not None:
        marks.append(pytest.mark.xfail(strict=True, reason=xfail))
    return pytest.param(*values, id=test, marks=marks)
