"""The garbage collector is paused while a request's schema checks run (``mockoss.collector.CollectorPause``).

A review found a full collection (a test process with a big heap: ~40 ms) falling inside a check
charged to the 25 ms budget: a legitimate schema reported "not fully checked", which fails a test
under ``assert_tool_calls_match_declared_tools=True``.
"""

from __future__ import annotations

import gc
import json

import pytest

from mockoss.scenario import schema_check, tool_check

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
BODY = {"tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]}


@pytest.fixture
def collections(monkeypatch):
    """Collections that start while a schema check runs, with every allocation a collection."""
    during: list[int] = []
    inside = [False]
    real = schema_check.check_schema

    def watched(*args, **kwargs):
        inside[0] = True
        try:
            junk = [[i] for i in range(2_000)]  # allocations: a collection is due at once
            del junk
            return real(*args, **kwargs)
        finally:
            inside[0] = False

    def callback(phase, info):
        if phase == "start" and inside[0]:
            during.append(info["generation"])

    monkeypatch.setattr(schema_check, "check_schema", watched)
    threshold = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    gc.callbacks.append(callback)
    try:
        yield during
    finally:
        gc.callbacks.remove(callback)
        gc.set_threshold(*threshold)


def test_no_collection_runs_inside_the_checks_and_the_collector_is_back_on(collections):
    assert gc.isenabled()
    calls = [("get_weather", json.dumps({"city": "Paris"})), ("get_weather", json.dumps({"city": 3}))]
    warnings = tool_check.tool_call_warnings(calls, BODY)
    assert collections == []
    assert gc.isenabled()
    assert gc.get_threshold() == (1, 1, 1)  # the fixture's, put back (the pause sets generation 0's to 0)
    assert len(warnings) == 1 and "city" in warnings[0]  # the second call is still checked


def test_a_collector_turned_off_before_stays_off(collections):
    gc.disable()
    try:
        tool_check.tool_call_warnings([("get_weather", json.dumps({"city": "Paris"}))], BODY)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_is_back_on_when_a_check_raises(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(schema_check, "check_schema", broken)
    threshold = gc.get_threshold()
    with pytest.raises(RuntimeError):
        tool_check.tool_call_warnings([("get_weather", json.dumps({"city": "Paris"}))], BODY)
    assert gc.isenabled()
    assert gc.get_threshold() == threshold  # the pause is by threshold: isenabled() alone cannot tell


def test_a_sub_millisecond_budget_warning_says_how_long_it_ran():
    line = tool_check._over_budget(["get_weather"], 0.00042, 0.0003)
    assert "stopped after 0.42 ms of CPU" in line and "bound of 0.3 ms" in line
    assert "stopped after 26 ms" in tool_check._over_budget(["get_weather"], 0.0261, 0.025)
