"""A schema nested to Python's recursion limit is a warning, never a failed request.

jsonschema keeps its type checkers in an rpds map (Rust, via pyo3); when the recursion limit is
reached inside that map's lookup, the RecursionError becomes pyo3's PanicException, a
BaseException that ``except RecursionError`` and ``except Exception`` let through. Since the
Draft 2020-12 meta-schema is one resource (mockoss.scenario.meta_schema, 10b9cbb), a check
recurses less per level and reaches the limit in the validation's type checks: 153 of the
nesting depths 100-319 of ``{"not": …}`` made the chat request a 400 "mockoss could not answer
it: PanicException: __eq__ failed!" (and a Rust backtrace on stderr); at c33e240 all were a 200
with the "nest too deep" warning. Reproducer: /tmp/review3/panic_server_scan.py of the review.
Where the limit falls depends on the caller's stack, so every depth of a range is tried.
"""

from __future__ import annotations

import json

from mockoss.scenario.schema_check import check_schema
from mockoss.server.core import MockServer
from mockoss.steps import script, tool_call


def _nested(depth: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(depth):
        schema = {"not": schema}
    return schema


def _from_depth(frames: int, schema: dict):
    """``check_schema`` called ``frames`` Python frames deeper than here."""
    if frames:
        return _from_depth(frames - 1, schema)
    return check_schema(schema, "x", 5.0)


def test_a_schema_past_the_recursion_limit_is_a_warning_whatever_the_callers_stack():
    schema = _nested(400)  # past the limit; where the limit falls in a level's frames varies with the caller
    for frames in range(40):
        found = _from_depth(frames, schema)  # raised PanicException at some of these
        assert found.problem is not None and "nest too deep" in found.problem, (frames, found.problem)


def test_a_request_declaring_a_deeply_nested_schema_is_answered():
    server = MockServer(scenario=script(tool_call("get_weather", {"location": "Paris"})))
    statuses, too_deep = set(), 0
    for depth in range(150, 330, 3):
        parameters = {"type": "object", "properties": {"location": _nested(depth)}}
        body = {
            "model": server.served_model_names[0],
            "messages": [{"role": "user", "content": "go"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": parameters}}],
        }
        reply, _ = server.respond("chat", json.dumps(body).encode(), {})
        statuses.add(reply.status)
        record = server.requests[-1]
        assert record.problem is None, (depth, record.problem)  # was: "mockoss could not answer it: PanicException…"
        too_deep += any("nest too deep" in warning for warning in record.warnings)
    assert statuses == {200}
    assert too_deep > 10
