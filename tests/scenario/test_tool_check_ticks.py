"""The tool check's CPU budget holds when one keyword evaluation does work in proportion to the
client's schema: the clock is read every 64 budget ticks, and a tick was one keyword evaluation,
so 64 evaluations of a ``required`` list of 3,000 names (3,000 errors each) under an ``anyOf``
of 64 ``$ref``s ran 0.85 s on a 29 KB body, 34x the 25 ms budget, while every other client
waited; an ``enum`` of 50,000 members (its members are never ticked by the meta-schema check,
``items: true``) the same. Now each error a keyword yields, each enum member compared and each
pattern compiled counts (the error by its message's length: an ``enum``'s or ``const``'s message
holds the repr of the whole value). Reproducer: /tmp/review3/budget_escape3.py of the review.

CPU time is compared with generous slack (10x the budget), as in test_tool_check_budget.py; each
case is tried at four alignments with the 64-tick clock (cheap properties before it).
"""

from __future__ import annotations

import json
import time

import pytest

from mockoss.scenario.schema_check import prepare
from mockoss.scenario.tool_check import REQUEST_BUDGET_S, tool_call_warnings


def _spent(inner: dict, value: object, pad: int) -> tuple[float, tuple[str, ...]]:
    """CPU seconds of one call's check against ``{"location": anyOf of 64 refs to inner}``."""
    schema = {
        "type": "object",
        "properties": {**{f"p{i}": {"type": "string"} for i in range(pad)}, "location": {"anyOf": [{"$ref": "#/$defs/e"}] * 64}},
        "$defs": {"e": inner},
    }
    arguments = json.dumps({**{f"p{i}": "x" for i in range(pad)}, "location": value})
    body = {"tools": [{"type": "function", "function": {"name": "f", "parameters": schema}}]}
    started = time.thread_time()
    warnings = tool_call_warnings([("f", arguments)], body)
    return time.thread_time() - started, warnings


def _members() -> list[str]:
    return [f"v{i:06d}" for i in range(50_000)]


#: Built per test, not at import: a big heap kept for the whole session makes the collector's full
#: passes longer, and one falling inside another test's check counts against that check's budget.
CASES = {
    "required": lambda: ({"type": "object", "required": [f"r{i}" for i in range(3000)]}, {"x": 1}),
    "dependentRequired": lambda: ({"type": "object", "dependentRequired": {"x": [f"r{i}" for i in range(3000)]}}, {"x": 1}),
    "enum, not found": lambda: ({"enum": _members()}, "Paris"),
    # found last by both enums, then not an integer: a mismatch whenever the check completes
    "enum, found last": lambda: ({"allOf": [{"enum": _members()}] * 2, "type": "integer"}, _members()[-1]),
    "const": lambda: ({"const": {f"k{i}": i for i in range(30_000)}}, "Paris"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_keyword_doing_schema_sized_work_stays_within_the_budget(case):
    prepare()
    inner, value = CASES[case]()
    for pad in (0, 16, 32, 48):
        spent, warnings = _spent(inner, value, pad)
        assert spent < 10 * REQUEST_BUDGET_S, f"pad {pad}: {spent * 1000:.0f} ms of CPU for a {REQUEST_BUDGET_S * 1000:g} ms budget"
        assert warnings, "the check did not run"


def test_enum_and_const_still_decide_and_word_as_jsonschema():
    """The replaced ``enum`` compares as jsonschema does (1 == 1.0, true != 1) and keeps its message."""
    body = {"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"a": {"enum": [1, "x", [True]]}, "b": {"const": {"k": [1]}}}}}}]}
    assert tool_call_warnings([("f", '{"a": 1.0, "b": {"k": [1.0]}}')], body) == ()
    assert tool_call_warnings([("f", '{"a": [1]}')], body) == (
        "tool call 'f': arguments do not match the declared parameters at $.a: [1] is not one of [1, 'x', [True]]",
    )
    assert tool_call_warnings([("f", '{"a": true}')], body)[0].endswith("True is not one of [1, 'x', [True]]")
    assert tool_call_warnings([("f", '{"b": {"k": [true]}}')], body)[0].endswith("$.b: {'k': [1]} was expected")


def test_an_undeclared_call_lists_a_few_declared_names_not_every_one():
    """The client's body may declare thousands of tools; the warning of each undeclared call named
    every one, sorted anew per call (100,000 tools: 1.3 MB per warning line, kept in the log, and a
    sort of 100,000 names per call while every other client waits). Now the first 20 by name and
    the count."""
    body = {"tools": [{"type": "function", "function": {"name": f"tool_{i:05d}"}} for i in range(5000)]}
    warnings = tool_call_warnings([("nope", "{}"), ("other", "{}")], body)
    names = ", ".join(f"tool_{i:05d}" for i in range(20))
    assert warnings == (
        f"tool call 'nope': not declared by the request (declared functions: {names}, … 5,000 in all)",
        f"tool call 'other': not declared by the request (declared functions: {names}, … 5,000 in all)",
    )
    few = {"tools": [{"type": "function", "function": {"name": name}} for name in ("b", "a")]}
    assert tool_call_warnings([("c", None)], few) == ("tool call 'c': not declared by the request (declared functions: a, b)",)
    assert tool_call_warnings([("c", None)], {}) == ("tool call 'c': not declared by the request (declared functions: none)",)


def test_the_walk_for_pattern_properties_counts_against_the_budget():
    """``unevaluatedProperties`` first looks for ``patternProperties`` anywhere in the schema, a
    walk of every value, annotations included (the meta-schema check never ticks over a
    ``default``): 1,000,000 small lists in a ``default`` held the check 0.49 s."""
    prepare()
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "unevaluatedProperties": False,
              "default": [[i] for i in range(1_000_000)]}
    body = {"tools": [{"type": "function", "function": {"name": "f", "parameters": schema}}]}
    started = time.thread_time()
    warnings = tool_call_warnings([("f", '{"a": 1, "b": 2}')], body)
    spent = time.thread_time() - started
    assert spent < 10 * REQUEST_BUDGET_S, f"{spent * 1000:.0f} ms of CPU for a {REQUEST_BUDGET_S * 1000:g} ms budget"
    assert len(warnings) == 1 and "not fully checked" in warnings[0]


@pytest.fixture
def steps(monkeypatch):
    """The budget steps (``CheckState.steps``) of the last schema check run while the fixture is active.

    The timing test above cannot tell these ticks are missing on a quick machine: without them
    its cases took 30-290 ms of CPU here, mostly under its 10x slack (250 ms). Counting the steps
    is deterministic."""
    from mockoss.scenario import schema_budget

    counted = [0]
    real = schema_budget.CheckState.tick

    def tick(self, weight=1):
        real(self, weight)
        counted[0] = self.steps  # the check's own count, so far

    monkeypatch.setattr(schema_budget.CheckState, "tick", tick)
    return counted


def _steps_of(counted: list[int], schema: object, value: object) -> int:
    from mockoss.scenario.schema_check import check_schema

    counted[0] = 0
    found = check_schema(schema, value, 60.0)
    assert not found.over_budget
    return counted[0]


def test_each_enum_member_compared_and_the_messages_length_are_steps(steps):
    members = _members()[:5000]
    message = f"'Paris' is not one of {members!r}"
    assert _steps_of(steps, {"enum": members}, "Paris") >= len(members) + len(message) // 64


def test_each_error_a_keyword_yields_is_a_step(steps):
    names = [f"r{i}" for i in range(3000)]
    schema = {"type": "object", "required": names}
    missing, present = _steps_of(steps, schema, {}), _steps_of(steps, schema, dict.fromkeys(names, 1))
    assert missing - present >= len(names)


def test_a_pattern_compiled_weighs_by_its_length(steps):
    pattern = "b|" + "a" * 64_000
    assert _steps_of(steps, {"type": "string", "pattern": pattern}, "b") >= len(pattern) // 64  # "b" matches: no error


def test_each_descent_into_a_subschema_is_a_step(steps):
    """A descent into an empty subschema runs no keyword (an ``allOf`` of 1,000 ``{}``), so the
    descent itself counts."""
    schema = {"type": "array", "items": {}}
    assert _steps_of(steps, schema, [0] * 1000) - _steps_of(steps, schema, []) >= 1000
