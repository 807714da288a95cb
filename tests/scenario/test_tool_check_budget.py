"""The tool check's CPU budget per request (mockoss.scenario.tool_check.REQUEST_BUDGET_S) and the
one-resource Draft 2020-12 meta-schema that keeps typical schemas far inside it.

Issue 9: "no request may delay another beyond its fair share of the CPU"; the check runs under the
server lock, and before this budget a crafted 3 KB schema held every other client 0.5 s per
scripted call (benchmarks/bench_isolation.py, case ``schema``: ~1.06-1.24 s for a step with two
calls, 23-26 ms with the budget). CPU time is measured with time.thread_time and compared with
generous slack (10x), never tightly.
"""

from __future__ import annotations

import gc
import json
import random
import subprocess
import sys
import time
from enum import Enum

import jsonschema
import openai
import pytest
from pydantic import BaseModel

from mockoss.cli import main
from mockoss.cli_parser import _positive_ms
from mockoss.scenario import tool_check
from mockoss.scenario.meta_schema import flat_meta_schema, meta_schema_for
from mockoss.scenario.tool_check import REQUEST_BUDGET_S, tool_call_warnings
from mockoss.server.core import MockServer
from mockoss.steps import script, tool_call


def _crafted(levels: int = 40) -> dict:
    """No cycle, 2**levels evaluations for a non-string ``location``: each level an anyOf of two
    refs to the next (the breaker's exponential schema, tests/scenario/test_tool_check_safety.py)."""
    defs = {f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]} for i in range(levels)}
    defs[f"a{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"location": {"$ref": "#/$defs/a0"}}, "$defs": defs}


def _function(name: str, parameters: dict) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def _ask(server: MockServer, tools: list[dict]) -> tuple[int, tuple[str, ...], float]:
    """POST a chat body with ``tools``: status, the request's warnings, CPU seconds of ``respond``."""
    body = {"model": server.served_model_names[0], "messages": [{"role": "user", "content": "go"}], "tools": tools}
    raw = json.dumps(body).encode()
    started = time.thread_time()
    reply, _ = server.respond("chat", raw, {})
    spent = time.thread_time() - started
    return reply.status, server.requests[-1].warnings, spent


WEATHER = {
    "type": "object",
    "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["location"],
}


def test_a_crafted_schema_is_answered_promptly_with_one_budget_warning():
    calls = tool_call("lookup", {"location": 1}) + tool_call("lookup", {"location": 2})
    server = MockServer(scenario=script(calls))
    _ask(server, [_function("lookup", WEATHER)])  # the process's first check imports jsonschema: not timed
    status, warnings, spent = _ask(server, [_function("lookup", _crafted())])
    assert status == 200
    # Each call had 0.5 s of its own before: ~1 s of CPU for this request, every other client waiting.
    assert spent < 10 * REQUEST_BUDGET_S, f"{spent * 1000:.0f} ms of CPU for a {REQUEST_BUDGET_S * 1000:g} ms budget"
    assert len(warnings) == 1, warnings
    (line,) = warnings
    assert line.startswith("tool call 'lookup' (2 calls): arguments not fully checked against the declared parameters")
    assert f"mockoss's bound of {REQUEST_BUDGET_S * 1000:g} ms per request" in line
    assert "--tool-check-budget-ms" in line and "REQUEST_BUDGET_S" in line


def test_after_the_budget_names_and_json_are_still_checked_and_an_earlier_mismatch_still_warns():
    step = (
        tool_call("get_weather", {"location": "Paris", "days": "two"})
        + tool_call("lookup", {"location": 1})
        + tool_call("search", {"q": "x"})
        + tool_call("lookup", {"location": 2})
    )
    server = MockServer(scenario=script(step))
    status, warnings, _ = _ask(server, [_function("get_weather", WEATHER), _function("lookup", _crafted())])
    assert status == 200
    assert warnings[:2] == (
        "tool call 'get_weather': arguments do not match the declared parameters at $.days: 'two' is not of type 'integer'",
        "tool call 'search': not declared by the request (declared functions: get_weather, lookup)",
    )
    assert len(warnings) == 3 and warnings[2].startswith("tool call 'lookup' (2 calls): arguments not fully checked")


def test_the_first_check_of_a_process_is_not_cut_by_importing_jsonschema():
    """A fresh process's first tool check imports jsonschema (~0.1-0.2 s, 5x the budget): that is
    not charged to the request, or the first test of every session would get a "not fully
    checked" warning instead of its real result."""
    code = (
        "import sys\n"
        "from mockoss.scenario.tool_check import tool_call_warnings\n"
        "assert 'jsonschema' not in sys.modules\n"
        "schema = {'type': 'object', 'properties': {'days': {'type': 'integer'}}}\n"
        "body = {'tools': [{'type': 'function', 'function': {'name': 'f', 'parameters': schema}}]}\n"
        "print(tool_call_warnings([('f', '{\"days\": \"two\"}')], body))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == repr(
        ("tool call 'f': arguments do not match the declared parameters at $.days: 'two' is not of type 'integer'",)
    )


# --- typical schemas: checked whole, well inside the default budget ------------------------------


class Table(str, Enum):
    orders = "orders"
    customers = "customers"
    products = "products"


class Column(str, Enum):
    id = "id"
    status = "status"
    expected_delivery_date = "expected_delivery_date"
    delivered_at = "delivered_at"
    shipped_at = "shipped_at"
    ordered_at = "ordered_at"
    canceled_at = "canceled_at"


class Operator(str, Enum):
    eq = "="
    gt = ">"
    lt = "<"
    le = "<="
    ge = ">="
    ne = "!="


class OrderBy(str, Enum):
    asc = "asc"
    desc = "desc"


class DynamicValue(BaseModel):
    column_name: str


class Condition(BaseModel):
    column: str
    operator: Operator
    value: str | int | DynamicValue


class Query(BaseModel):
    """The OpenAI SDK's function-tool example (openai/openai-python@063375b7a12f3f3a0de10aec829c0416651be8cc:
    helpers.md, "Auto-parsing function tool calls"), sent as openai.pydantic_function_tool makes it."""

    table_name: Table
    columns: list[Column]
    conditions: list[Condition]
    order_by: OrderBy


AGENT_TOOLS = [  # benchmarks/bench_prompt.py's 20-tool agent body
    _function(
        f"tool_{k}",
        {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "a file path"}, "count": {"type": "integer"}},
            "required": ["path"],
        },
    )
    for k in range(20)
]


def test_the_sdk_example_and_a_20_tool_agent_request_are_checked_whole_under_the_default_budget():
    """21 calls in one request (the SDK's Query tool, then each of the agent's 20 tools), the last
    of each kind wrong: both mismatches found, nothing cut. ~7 ms of CPU on a loaded 2-core machine;
    against the bundled Draft 2020-12 meta-schema (before mockoss.scenario.meta_schema) ~28 ms, and
    the last two or three calls went unchecked. The cyclic garbage collector is paused for the
    measured call: a full pass walks the whole test process (tens of ms) whenever it falls due."""
    query = openai.pydantic_function_tool(Query)
    conditions = [
        {"column": "ordered_at", "operator": ">=", "value": "2023-05-01"},
        {"column": "x", "operator": "~", "value": 1},
    ]
    arguments = {"table_name": "orders", "columns": ["id", "status"], "conditions": conditions, "order_by": "asc"}
    calls = [("Query", json.dumps(arguments))] + [(f"tool_{k}", '{"path": "src/a.py", "count": 2}') for k in range(19)]
    calls.append(("tool_19", '{"path": "src/a.py", "count": "two"}'))
    body = {"tools": [query, *AGENT_TOOLS]}
    tool_call_warnings(calls, body)  # the process's first check imports jsonschema (outside any budget anyway)
    gc.disable()
    try:
        warnings = tool_call_warnings(calls, body, budget_s=REQUEST_BUDGET_S)
    finally:
        gc.enable()
    assert warnings == (
        (
            "tool call 'Query': arguments do not match the declared parameters at $.conditions[1].operator: "
            "'~' is not one of ['=', '>', '<', '<=', '>=', '!=']"
        ),
        "tool call 'tool_19': arguments do not match the declared parameters at $.count: 'two' is not of type 'integer'",
    )


# --- the one-resource meta-schema ----------------------------------------------------------------


def test_the_flat_meta_schema_finds_what_the_bundled_one_finds():
    """Same first error (the one a warning shows) and the same set of errors as the bundled Draft
    2020-12 meta-schema, on schemas with random keywords set to random values (module docstring:
    6,000 such schemas agreed; this keeps a sample that runs in ~1 s)."""
    cls = jsonschema.Draft202012Validator
    flat = flat_meta_schema()
    assert flat is not None and meta_schema_for(cls) is flat
    assert meta_schema_for(jsonschema.Draft7Validator) is jsonschema.Draft7Validator.META_SCHEMA
    bundled, single = cls(cls.META_SCHEMA, format_checker=None), cls(flat, format_checker=None)
    rnd = random.Random(9)
    values = [
        5,
        "x",
        -1,
        1.5,
        [],
        [1],
        {},
        {"a": 1},
        True,
        None,
        "string",
        ["string", "x"],
        {"type": "x"},
        [{}],
        "#/x",
        "",
        {"$ref": 3},
    ]
    keywords = [*flat["properties"], "unknown"]
    base = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "enum": ["x"]},
            "b": {"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/d"}]},
        },
        "required": ["a"],
        "$defs": {"d": {"type": "array", "items": {"type": "number"}}},
    }
    invalid = 0
    for _ in range(300):
        schema = json.loads(json.dumps(base))
        nodes, todo = [], [schema]
        while todo:
            node = todo.pop()
            if isinstance(node, dict):
                nodes.append(node)
                todo.extend(node.values())
            elif isinstance(node, list):
                todo.extend(node)
        for _ in range(rnd.randint(1, 3)):
            rnd.choice(nodes)[rnd.choice(keywords)] = rnd.choice(values)
        expected = [error.message for error in bundled.iter_errors(schema)]
        found = [error.message for error in single.iter_errors(schema)]
        assert found[:1] == expected[:1], schema
        assert set(found) == set(expected), schema  # the bundled one repeats the type error per vocabulary
        invalid += bool(expected)
    assert invalid > 150  # the sample does exercise errors


# --- mockoss serve --tool-check-budget-ms -------------------------------------------------------


def test_serve_tool_check_budget_ms_sets_the_bound(monkeypatch, tmp_path):
    import mockoss.server.run

    monkeypatch.setattr(tool_check, "REQUEST_BUDGET_S", tool_check.REQUEST_BUDGET_S)  # restored after the test
    started = []

    def serve_forever(server, sock, **kwargs):
        sock.close()
        started.append(server)

    monkeypatch.setattr(mockoss.server.run, "serve_forever", serve_forever)
    scenario = tmp_path / "tool.yaml"
    scenario.write_text(
        "version: 1\nsteps:\n  - completion:\n      messages:\n"
        "        - {channel: commentary, recipient: functions.lookup, content_type: <|constrain|>json, "
        "content: '{\"location\": 1}'}\n"
    )
    assert main(["serve", "--port", "0", "--scenario", str(scenario), "--tool-check-budget-ms", "120"]) == 0
    assert tool_check.REQUEST_BUDGET_S == pytest.approx(0.12)
    (server,) = started
    status, warnings, spent = _ask(server, [_function("lookup", _crafted())])
    assert status == 200 and spent >= 0.12  # the check stops only once its budget is spent
    assert len(warnings) == 1 and "mockoss's bound of 120 ms per request" in warnings[0]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("0", "expected more than 0 ms"),
        ("-5", "expected more than 0 ms"),
        ("nan", "expected more than 0 ms"),
        ("inf", "expected more than 0 ms"),
        ("ten", "expected a number of milliseconds, got 'ten'"),
    ],
)
def test_serve_tool_check_budget_ms_rejects_what_is_not_a_positive_number(text, reason, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--tool-check-budget-ms", text])
    assert exit_info.value.code == 2
    assert f"argument --tool-check-budget-ms: {reason}" in capsys.readouterr().err
    assert _positive_ms("2.5") == 2.5
