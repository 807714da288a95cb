"""Tool checks: does a scripted tool call fit the tools the request declares?

A step whose completion calls ``functions.NAME`` is checked against the request's ``tools``: the
name must be declared, and the arguments must be JSON that validates against the declared
``parameters`` JSON Schema (checked with the ``jsonschema`` library, the schema's own draft, or
Draft 2020-12 when it names none; without I/O, with RE2 for regexes and within a time budget: see
:mod:`mockoss.scenario.schema_check`). Servers disagree on what happens otherwise (llama.cpp drops an
undeclared call, vLLM passes it through, Ollama parses any name; see ``mockoss explain``), so a
test that scripts such a call by accident gets a per-profile result it did not ask for. Each
problem is one warning line in the request log (:attr:`RecordedRequest.warnings`) and the pytest
failure report; ``assert_tool_calls_match_declared_tools=True`` makes them fail the test. Steps
with a ``fault``, ``raw`` text or ``tool_mismatch_intended: true`` are not checked.

Declared tools are read by body shape: Chat Completions and Ollama
``{"type": "function", "function": {"name", "parameters"}}``, Responses
``{"type": "function", "name", "parameters"}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mockoss.scenario.schema_check import schema_problems
from mockoss.scenario.schema_check import short as _short

__all__ = ["declared_functions", "tool_call_warnings"]


def declared_functions(body: Mapping[str, Any]) -> dict[str, Any]:
    """Declared function tools: name → ``parameters`` schema (``None`` when not given)."""
    found: dict[str, Any] = {}
    for tool in body.get("tools") or ():
        if not isinstance(tool, dict):
            continue
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = function.get("name")
        if isinstance(name, str) and tool.get("type", "function") == "function":
            found[name] = function.get("parameters")
    return found


def tool_call_warnings(calls: Sequence[tuple[str, str | None]], body: Mapping[str, Any]) -> tuple[str, ...]:
    """One line per problem of ``calls`` (``(name, arguments JSON text or None)``) against ``body``'s tools,
    e.g. ``tool call 'get_weather': not declared (declared: search)``."""
    if not calls:
        return ()
    declared = declared_functions(body)
    warnings = []
    for name, arguments in calls:
        if name not in declared:
            shown = ", ".join(sorted(declared)) or "none"
            warnings.append(f"tool call {name!r}: not declared by the request (declared functions: {shown})")
            continue
        if arguments is None:
            continue
        try:
            value = json.loads(arguments)
        except ValueError as exc:
            warnings.append(f"tool call {name!r}: arguments are not JSON ({exc.msg} at {exc.pos}): {_short(arguments)}")
            continue
        schema = declared[name]
        if isinstance(schema, (dict, bool)):
            warnings.extend(f"tool call {name!r}: {problem}" for problem in schema_problems(schema, value))
    return tuple(warnings)
