"""The tool check's collector pause (``mockoss.collector.CollectorPause``) leaves the user's own
``gc.disable()`` / ``gc.enable()`` alone, even when it comes while a check runs on another thread.

A review found that a check running on a server thread turned the collector back on when it ended,
although the test's own thread had called ``gc.disable()`` meanwhile (``timeit`` and benchmark
plugins do, around what they time); and that a check started while the user had the collector off
ran with automatic collections once the user turned it back on.
"""

from __future__ import annotations

import gc
import json
import threading

import pytest

from mockoss.scenario import schema_check, tool_check

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
BODY = {"tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]}
CALL = [("get_weather", json.dumps({"city": "Paris"}))]


@pytest.fixture
def held_check(monkeypatch):
    """Runs one tool check on a thread, held inside its schema check until released."""
    inside, release = threading.Event(), threading.Event()
    real = schema_check.check_schema

    def held(*args, **kwargs):
        inside.set()
        assert release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(schema_check, "check_schema", held)
    thread = threading.Thread(target=tool_check.tool_call_warnings, args=(CALL, BODY))
    enabled = gc.isenabled()
    try:
        yield thread, inside, release
    finally:
        release.set()
        thread.join(30)
        gc.enable() if enabled else gc.disable()


def test_a_gc_disable_during_a_check_on_another_thread_is_kept(held_check):
    thread, inside, release = held_check
    assert gc.isenabled()
    thread.start()
    assert inside.wait(30)
    gc.disable()  # the user's own, e.g. timeit around what it times
    release.set()
    thread.join(30)
    assert not gc.isenabled()


def test_a_check_started_with_the_collector_off_stays_paused_when_the_user_turns_it_on(held_check, monkeypatch):
    thread, inside, release = held_check
    threshold = gc.get_threshold()
    gc.disable()
    thread.start()
    assert inside.wait(30)
    gc.enable()  # the user's, while the check runs
    during: list[int] = []

    def callback(phase, info):
        if phase == "start":
            during.append(info["generation"])

    gc.callbacks.append(callback)
    try:
        junk = [[i] for i in range(50_000)]  # far past generation 0's threshold
        del junk
    finally:
        gc.callbacks.remove(callback)
    release.set()
    thread.join(30)
    assert during == []
    assert gc.isenabled() and gc.get_threshold() == threshold


def test_thresholds_the_user_sets_during_a_check_are_kept(held_check):
    """The pause puts the thresholds back only if nobody changed them meanwhile."""
    thread, inside, release = held_check
    threshold = gc.get_threshold()
    try:
        thread.start()
        assert inside.wait(30)
        gc.set_threshold(500, 5, 5)  # the user's, while the check runs
        release.set()
        thread.join(30)
        assert gc.get_threshold() == (500, 5, 5)
    finally:
        gc.set_threshold(*threshold)


def test_checks_on_two_threads_keep_the_collector_paused_until_the_last_one_ends(monkeypatch):
    """Counted: one server per pytest test id may check on its own thread; the first check to end
    does not turn automatic collection back on under the other."""
    threshold = gc.get_threshold()
    inside = {name: threading.Event() for name in ("a", "b")}
    release = {name: threading.Event() for name in ("a", "b")}
    real = schema_check.check_schema

    def held(*args, **kwargs):
        name = threading.current_thread().name
        inside[name].set()
        assert release[name].wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(schema_check, "check_schema", held)
    threads = {name: threading.Thread(target=tool_check.tool_call_warnings, args=(CALL, BODY), name=name) for name in ("a", "b")}
    try:
        for name, thread in threads.items():
            thread.start()
            assert inside[name].wait(30)
        assert gc.get_threshold()[0] == 0
        release["a"].set()
        threads["a"].join(30)
        assert gc.get_threshold()[0] == 0  # b's check still runs
        release["b"].set()
        threads["b"].join(30)
        assert gc.get_threshold() == threshold
    finally:
        for name, thread in threads.items():
            release[name].set()
            if thread.ident is not None:  # started
                thread.join(30)
        gc.set_threshold(*threshold)
