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

**A CPU budget per request.** The check runs while the server holds its lock (every other client
waits), and the schema is the client's: a 3 KB body with nested ``anyOf``/``$ref`` asks for
exponential work. So all schema checks of one request together get :data:`REQUEST_BUDGET_S` of
CPU; once it is spent the rest are skipped, and the request log gets one warning line naming the
calls not (fully) checked, why, and how to raise the bound (``mockoss serve
--tool-check-budget-ms N``; in a test ``monkeypatch.setattr(tool_check, "REQUEST_BUDGET_S", s)``).
Names and JSON are still checked for every call (cheap, and the arguments are the scenario's).
Issue 9: "no request may delay another beyond its fair share of the CPU"; before this bound each
call had :data:`mockoss.scenario.schema_check.BUDGET_S` (0.5 s) of its own, and
``benchmarks/bench_isolation.py``'s ``schema`` case (one request, two calls) held every other
client 1.07-1.24 s; now 23-26 ms.
"""

from __future__ import annotations

import heapq
import json
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from mockoss.collector import COLLECTOR

__all__ = ["DECLARED", "REQUEST_BUDGET_S", "declared_functions", "tool_call_warnings"]

#: CPU budget (seconds of this thread's :func:`time.thread_time`) for all the schema checks of one
#: request together (mockoss's own bound, issue 9's isolation target: another client waits at most
#: ~50 ms more while a request is handled). What typical schemas cost, whole checks (meta-schema
#: check plus validation), median of 50 runs on a 2-core machine shared with other work,
#: jsonschema 4.26, then in brackets against the bundled Draft 2020-12 meta-schema (before
#: :mod:`mockoss.scenario.meta_schema`): the OpenAI SDK's ``Query`` example tool
#: (openai/openai-python@063375b7a12f3f3a0de10aec829c0416651be8cc:helpers.md, "Auto-parsing function
#: tool calls": ``$defs``, four enums, an ``anyOf``; 1.4 KB) with four conditions 2.0 ms (7.5 ms);
#: a one-string ``get_weather`` of the OpenAI function-calling guide's shape 0.2 ms (0.9 ms); one
#: call to a tool of ``benchmarks/bench_prompt.py``'s 20-tool agent body 0.25 ms (1.0 ms), a call
#: to each of the 20 in one request 3.6 ms (19-21 ms), and with ``Query`` besides ~7 ms (~28 ms:
#: over this budget). So the default leaves 12x over ``Query`` and 7x over 20 calls at once. A
#: big schema, 200 patterned string properties against 100 KB of arguments, takes 11-18 ms (61 ms):
#: near the bound, so such a suite may want it raised. Past the budget a schema of nested
#: ``anyOf``/``$ref`` costs ~26 ms a request, not 0.5 s a call (a full pass of the garbage
#: collector falling inside adds its own time, tens of ms, once in a while). ``mockoss serve
#: --tool-check-budget-ms N`` sets it.
REQUEST_BUDGET_S = 0.025

#: Declared function names a "not declared" warning lists, the first by name; the rest are
#: counted (a body may declare 100,000 tools: listing them made a 1.3 MB warning line per call).
SHOWN_DECLARED = 20


#: ``(body, declared_functions(body))`` found before the server lock for a big body
#: (:meth:`mockoss.server.core.MockServer.respond`): walking 100,000 declared tools took 58-98 ms,
#: which every other request waited for when the step called a tool (a review's finding).
DECLARED: ContextVar[tuple[Any, dict[str, Any]] | None] = ContextVar("mockoss_declared_functions", default=None)


def declared_functions(body: Mapping[str, Any]) -> dict[str, Any]:
    """Declared function tools: name → ``parameters`` schema (``None`` when not given).
    The same dict as :data:`DECLARED` holds when that was found for this very ``body``; do not
    change it."""
    known = DECLARED.get()
    if known is not None and known[0] is body:
        return known[1]
    return _walk(body)


def _walk(body: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for tool in body.get("tools") or ():
        if not isinstance(tool, dict):
            continue
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = function.get("name")
        if isinstance(name, str) and tool.get("type", "function") == "function":
            found[name] = function.get("parameters")
    return found


def tool_call_warnings(
    calls: Sequence[tuple[str, str | None]], body: Mapping[str, Any], budget_s: float | None = None
) -> tuple[str, ...]:
    """One line per problem of ``calls`` (``(name, arguments JSON text or None)``) against ``body``'s tools,
    e.g. ``tool call 'get_weather': not declared (declared: search)``.

    The schema checks share ``budget_s`` seconds of CPU (default :data:`REQUEST_BUDGET_S`, read at
    each call so that a test can monkeypatch it); past it, the remaining checks are skipped and one
    last line names the calls not (fully) checked. Never raises for any body a client can send."""
    if not calls:
        return ()
    # Here, not at the top: a scenario without tool calls never needs the schema checker and its
    # meta-schema, RE2 and budget modules (~0.7 ms of a plain serve's start, issue 9).
    from mockoss.scenario.schema_check import check_schema, prepare
    from mockoss.scenario.schema_check import short as _short

    budget = REQUEST_BUDGET_S if budget_s is None else budget_s
    started: float | None = None  # the budget's clock starts at the first schema check
    declared = declared_functions(body)
    warnings = []
    unchecked: list[str] = []  # names of the calls whose schema check stopped or never ran
    listed: str | None = None  # the declared names a "not declared" line shows, found once
    paused = False  # the collector, from the first schema check on (see mockoss.collector.CollectorPause)
    try:
        for name, arguments in calls:
            if name not in declared:
                if listed is None:
                    listed = _declared_list(declared)
                warnings.append(f"tool call {name!r}: not declared by the request (declared functions: {listed})")
                continue
            if arguments is None:
                continue
            try:
                value = json.loads(arguments)
            except ValueError as exc:
                warnings.append(f"tool call {name!r}: arguments are not JSON ({exc.msg} at {exc.pos}): {_short(arguments)}")
                continue
            schema = declared[name]
            if not isinstance(schema, (dict, bool)):
                continue
            if started is None:
                prepare()  # a process's first check imports jsonschema (~0.13 s, once): not on this request's budget
                COLLECTOR.pause()  # a full collection is not the schema's work (see mockoss.collector.CollectorPause)
                paused = True
                started = time.thread_time()
            left = budget - (time.thread_time() - started)
            if left <= 0:
                unchecked.append(name)
                continue
            found = check_schema(schema, value, left)
            warnings.extend(f"tool call {name!r}: {note}" for note in found.notes)
            if found.over_budget:
                unchecked.append(name)
            elif found.problem is not None:
                warnings.append(f"tool call {name!r}: {found.problem}")
        if unchecked and started is not None:
            warnings.append(_over_budget(unchecked, time.thread_time() - started, budget))
    finally:
        if paused:
            COLLECTOR.resume()
    return tuple(warnings)


def _declared_list(declared: Mapping[str, Any]) -> str:
    """The first :data:`SHOWN_DECLARED` declared names by name, then how many there are in all."""
    if len(declared) <= SHOWN_DECLARED:
        return ", ".join(sorted(declared)) or "none"
    first = ", ".join(heapq.nsmallest(SHOWN_DECLARED, declared))
    return f"{first}, … {len(declared):,} in all"


def _ms(seconds: float) -> str:
    """Milliseconds as a warning shows them: whole from 10 ms, else two significant digits
    (a sub-millisecond budget read "stopped after 0 ms")."""
    ms = seconds * 1000
    return f"{ms:.0f}" if ms >= 10 else f"{ms:.2g}"


def _over_budget(names: list[str], spent_s: float, budget_s: float) -> str:
    """The one warning line of a request whose tool checks ran out of budget."""
    shown = ", ".join(repr(name) for name in dict.fromkeys(names))
    calls = f"{len(names)} call{'s' if len(names) > 1 else ''}"
    return (
        f"tool call {shown} ({calls}): arguments not fully checked against the declared parameters: "
        f"the request's schema checks stopped after {_ms(spent_s)} ms of CPU, mockoss's bound of "
        f"{budget_s * 1000:g} ms per request (the check runs while other clients wait); raise it with "
        f"`mockoss serve --tool-check-budget-ms N`, or in a test "
        f"monkeypatch.setattr(mockoss.scenario.tool_check, 'REQUEST_BUDGET_S', seconds)"
    )
