"""The tool check on hostile or broken schemas (mockoss.scenario.schema_check): no I/O for ``$ref``,
RE2 for ``pattern``/``patternProperties``, cycles and dangling refs as warnings, a time budget.
Breaker report D1-D3; reproducers /tmp/breaker/repro/r01-r04."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

from mockoss.scenario.schema_check import schema_problems
from mockoss.scenario.tool_check import tool_call_warnings
from mockoss.server.core import MockServer
from mockoss.steps import script, tool_call

MODEL = "openai/gpt-oss-20b"


def _obj(**properties):
    return {"type": "object", "properties": properties}


def _chat(server, parameters):
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": parameters}}]
    body = {"model": server.served_model_names[0], "messages": [{"role": "user", "content": "weather"}], "tools": tools}
    reply = server.handle("chat", json.dumps(body).encode(), {})
    return reply, server.requests[-1].warnings


@pytest.fixture
def no_io(monkeypatch):
    """Every way jsonschema's default registry reaches out (urlopen for http:// and file://, and any
    socket) is recorded instead of done."""
    attempts = []
    monkeypatch.setattr(
        urllib.request, "urlopen", lambda *a, **k: attempts.append(("urlopen", a)) or pytest.fail("urlopen")
    )
    real_connect = socket.socket.connect

    def connect(self, address):
        attempts.append(("connect", address))
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempts


# --- D1: no retrieval of any $ref ---------------------------------------------------------------


def test_remote_ref_is_never_fetched_and_is_a_warning(no_io):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    try:
        for url in (
            f"http://127.0.0.1:{port}/s.json",
            f"http://127.0.0.1:{closed_port}/x.json",
            "https://example.invalid/x.json",
        ):
            started = time.monotonic()
            problems = schema_problems(_obj(location={"$ref": url}), {"location": "Paris"})
            assert time.monotonic() - started < 2
            assert len(problems) == 1 and problems[0].startswith(f"$ref {url!r} is not checked: it does not resolve"), (
                problems
            )
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    finally:
        listener.close()
    assert no_io == []


def test_file_ref_is_never_read(tmp_path, no_io):
    secret = tmp_path / "secret.json"
    secret.write_text('{"properties": {"location": {"const": "TOP-SECRET-VALUE"}}}')
    problems = schema_problems({"$ref": secret.as_uri()}, {"location": "Paris"})
    assert len(problems) == 1 and "is not checked" in problems[0] and "TOP-SECRET" not in problems[0]
    assert no_io == []


def test_file_dev_stdin_ref_does_not_block():
    """stdin an open pipe nobody writes to (as under many CI runners): the old check blocked for good."""
    code = textwrap.dedent(
        """
        from mockoss.scenario.schema_check import schema_problems
        print(schema_problems({"$ref": "file:///dev/stdin"}, {}))
        """
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        out, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("the check read file:///dev/stdin")
    assert "$ref 'file:///dev/stdin' is not checked" in out


def test_unresolvable_ref_is_a_warning_on_the_request_and_the_rest_is_checked(no_io):
    server = MockServer(scenario=script(tool_call("get_weather", {"location": "Paris", "days": "two"})))
    parameters = _obj(location={"$ref": "http://127.0.0.1:1/x.json"}, days={"type": "integer"})
    reply, warnings = _chat(server, parameters)
    assert reply.status == 200
    assert warnings[0].startswith("tool call 'get_weather': $ref 'http://127.0.0.1:1/x.json' is not checked")
    assert (
        warnings[1]
        == "tool call 'get_weather': arguments do not match the declared parameters at $.days: 'two' is not of type 'integer'"
    )
    assert no_io == []


def test_local_refs_still_resolve(no_io):
    defs_2020 = {"type": "object", "properties": {"l": {"$ref": "#/$defs/L"}}, "$defs": {"L": {"type": "string"}}}
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"l": {"$ref": "#/definitions/L"}},
        "definitions": {"L": {"type": "string"}},
    }
    anchor = {"properties": {"l": {"$ref": "#loc"}}, "$defs": {"L": {"$anchor": "loc", "type": "string"}}}
    embedded = {
        "$id": "http://example.com/root.json",
        "$defs": {"b": {"$id": "b.json", "type": "string"}},
        "properties": {"l": {"$ref": "b.json"}},
    }
    for schema in (defs_2020, draft7, anchor, embedded):
        assert schema_problems(schema, {"l": "x"}) == []
        assert schema_problems(schema, {"l": 1}) == [
            "arguments do not match the declared parameters at $.l: 1 is not of type 'string'"
        ]
    assert no_io == []


# --- D3: cycles and dangling refs ----------------------------------------------------------------


@pytest.mark.parametrize(
    "profile", ["vllm", "ollama", "llamacpp", "lmstudio", "sglang", "trtllm", "openai", "vllm-mlx"]
)
def test_self_reference_is_a_warning_not_a_500(profile):
    server = MockServer(scenario=script(tool_call("get_weather", {"location": "Paris"})), profile=profile)
    reply, warnings = _chat(server, {"$ref": "#"})
    assert reply.status == 200
    assert len(warnings) == 1 and "refer to themselves without end" in warnings[0]


def test_mutual_reference_cycle_is_a_warning():
    schema = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}
    problems = schema_problems(schema, {})
    assert len(problems) == 1 and "refer to themselves without end" in problems[0]


def test_dangling_ref_is_a_warning_not_a_500():
    server = MockServer(scenario=script(tool_call("get_weather", {"location": "Paris"})))
    reply, warnings = _chat(server, _obj(location={"$ref": "#/$defs/Missing"}))
    assert reply.status == 200
    assert len(warnings) == 1 and warnings[0].startswith(
        "tool call 'get_weather': $ref '#/$defs/Missing' is not checked"
    )


def test_exponential_schema_stops_at_the_budget():
    """No cycle, 2**40 evaluations: 40 levels of anyOf over two refs to the next level."""
    defs = {f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]} for i in range(40)}
    defs["a40"] = {"type": "string"}
    started = time.monotonic()
    problems = schema_problems({"$defs": defs, "$ref": "#/$defs/a0"}, 1, budget_s=0.05)
    assert time.monotonic() - started < 5
    assert len(problems) == 1 and problems[0].startswith(
        "the arguments were not fully checked: the schema check stopped after"
    )


# --- D2: RE2 for pattern and patternProperties ---------------------------------------------------

CATASTROPHIC = "^" + "(.*)*" * 5 + "X$"  # Python's re: ~3 s on 30 characters; each "(.*)*" x4-5


def test_catastrophic_pattern_is_linear():
    started = time.monotonic()
    problems = schema_problems(_obj(location={"type": "string", "pattern": CATASTROPHIC}), {"location": "a" * 30})
    assert time.monotonic() - started < 1
    assert problems == [
        f"arguments do not match the declared parameters at $.location: {'a' * 30!r} does not match {CATASTROPHIC!r}"
    ]
    assert (
        schema_problems(_obj(location={"type": "string", "pattern": CATASTROPHIC}), {"location": "a" * 30 + "X"}) == []
    )


def test_catastrophic_pattern_properties_are_linear():
    key = "a" * 30
    for schema in (
        {"type": "object", "patternProperties": {CATASTROPHIC: {"type": "integer"}}},
        {"type": "object", "patternProperties": {CATASTROPHIC: {"type": "integer"}}, "additionalProperties": False},
    ):
        started = time.monotonic()
        problems = schema_problems(schema, {key: "v", key + "X": "w"})
        assert time.monotonic() - started < 1
        assert len(problems) == 1, problems


def test_a_subschema_naming_its_draft_keeps_re2():
    """jsonschema's descend switches to the class a subschema's ``$schema`` names (the stock one,
    with Python's re) unless evolve is kept within the safe classes."""
    for draft in ("https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-04/schema#"):
        schema = _obj(location={"$schema": draft, "type": "string", "pattern": CATASTROPHIC})
        started = time.monotonic()
        problems = schema_problems(schema, {"location": "a" * 30})
        assert time.monotonic() - started < 1
        assert len(problems) == 1 and "does not match" in problems[0]


def test_pattern_semantics():
    def check(pattern, text):
        return schema_problems({"type": "string", "pattern": pattern}, text) == []

    assert check("b", "abc")  # a search, not a full match (JSON Schema: not anchored)
    assert not check("^b", "abc")
    assert check("^\\u0041$", "A") and not check("^\\u0041$", "B")  # ECMA-262 \uXXXX
    assert check("^\\u{1F600}$", "\U0001f600")
    assert check("^\\\\u0041$", "\\u0041")  # an escaped backslash before "u" stays as written
    assert not check("^a$", "a\n")  # $ is the end of the text (Python's re would match before "\n")
    assert check("^\\d+$", "123") and not check("^\\d+$", "١٢٣")  # \d is ASCII, as in ECMA-262
    assert check("^x", "x\ud800")  # a lone surrogate in the text
    assert check(5, "x") is False  # not a string: not a valid schema, reported as such
    assert schema_problems({"type": "string", "pattern": 5}, "x")[0].startswith(
        "the declared parameters are not a valid JSON Schema"
    )


def test_patterns_re2_cannot_run_are_not_checked_and_say_so():
    for pattern in ("^(a)\\1$", "^(?=a)", "["):
        problems = schema_problems(_obj(s={"type": "string", "pattern": pattern}), {"s": "zzz"})
        assert len(problems) == 1 and problems[0].startswith(
            f"pattern {pattern!r} is not checked: RE2 cannot run it ("
        ), problems
    # an unknown pattern in patternProperties: no key is called extra on its account
    schema = {"type": "object", "patternProperties": {"^(a)\\1": {}}, "additionalProperties": False}
    problems = schema_problems(schema, {"zz": 1})
    assert len(problems) == 1 and "is not checked: RE2 cannot run it" in problems[0]


def test_pattern_properties_and_additional_properties():
    schema = {
        "type": "object",
        "properties": {"p": {}},
        "patternProperties": {"^x_": {"type": "integer"}},
        "additionalProperties": False,
    }
    assert schema_problems(schema, {"p": "s", "x_a": 1}) == []
    assert schema_problems(schema, {"x_a": "s"}) == [
        "arguments do not match the declared parameters at $.x_a: 's' is not of type 'integer'"
    ]
    assert schema_problems(schema, {"y": 1}) == [
        "arguments do not match the declared parameters at $: 'y' does not match any of the regexes: '^x_'"
    ]
    plain = {"type": "object", "properties": {"p": {}}, "additionalProperties": {"type": "integer"}}
    assert schema_problems(plain, {"p": "s", "q": 1}) == []
    assert schema_problems(plain, {"q": "s"}) == [
        "arguments do not match the declared parameters at $.q: 's' is not of type 'integer'"
    ]
    closed = {"type": "object", "properties": {"p": {}}, "additionalProperties": False}
    assert schema_problems(closed, {"q": 1}) == [
        "arguments do not match the declared parameters at $: Additional properties are not allowed ('q' was unexpected)"
    ]


def test_unevaluated_properties():
    assert schema_problems({"properties": {"a": {}}, "unevaluatedProperties": False}, {"a": 1, "y": 1}) == [
        "arguments do not match the declared parameters at $: Unevaluated properties are not allowed ('y' was unexpected)"
    ]
    problems = schema_problems({"patternProperties": {CATASTROPHIC: {}}, "unevaluatedProperties": False}, {"a" * 30: 1})
    assert problems == [
        "unevaluatedProperties is not checked in a schema with patternProperties (jsonschema would run those patterns with Python's re, not RE2)"
    ]


def test_unique_items_follows_json_equality_in_linear_time():
    def unique(value):
        return schema_problems({"type": "array", "uniqueItems": True}, value) == []

    assert not unique([1, 1.0])
    assert unique([True, 1]) and unique([False, 0, None, ""])
    assert not unique([{"a": 1, "b": [1]}, {"b": [1.0], "a": 1}])
    assert unique([{"a": 1}, {"a": 2}]) and unique([[1], [True]])
    started = time.monotonic()
    assert unique([{"i": i} for i in range(20000)])  # pairwise: 2e8 comparisons
    assert time.monotonic() - started < 5


def test_a_big_legitimate_schema_is_checked_whole():
    properties = {f"p{i}": {"type": "string", "pattern": "^[a-z ]*$", "description": "d" * 50} for i in range(200)}
    schema = {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
    arguments = {key: "a" * 500 for key in properties}
    assert schema_problems(schema, arguments) == []
    arguments["p7"] = "A"
    assert schema_problems(schema, arguments) == [
        "arguments do not match the declared parameters at $.p7: 'A' does not match '^[a-z ]*$'"
    ]


def test_tool_call_warnings_keep_their_shape():
    body = {
        "tools": [{"type": "function", "name": "t", "parameters": _obj(n={"$ref": "#/$defs/N"}, m={"type": "integer"})}]
    }
    assert tool_call_warnings([("t", '{"n": 1, "m": "x"}')], body) == (
        "tool call 't': $ref '#/$defs/N' is not checked: it does not resolve within the schema (mockoss never downloads or reads a referenced file; PointerToNowhere: '/$defs/N' does not exist)",
        "tool call 't': arguments do not match the declared parameters at $.m: 'x' is not of type 'integer'",
    )


def test_a_long_schema_pattern_is_not_kept_in_re2s_own_cache():
    """Patterns over 512 characters are compiled for one check and not cached by mockoss; nor by
    ``re2.compile``, whose 128-entry cache (``re2._Regexp._make``, google-re2 1.1) would keep the
    client's patterns, at any length, for the life of the process."""
    re2 = pytest.importorskip("re2")
    from mockoss.scenario import schema_re2
    from mockoss.scenario.schema_re2 import compile_pattern

    cache, ours = re2._Regexp._make.cache_info, schema_re2._compile_cached.cache_info
    before, before_ours = cache().currsize, ours().currsize
    found = compile_pattern("^" + "q" * 700 + r"\u0041$")
    assert found("q" * 700 + "A") and not found("q" * 700)
    assert cache().currsize == before and ours().currsize == before_ours
