"""The JSON Schema side of the tool check: validate scripted arguments against a request's schema
without I/O, without a backtracking regex engine, and within a time budget.

The schema comes from the client's request and the check runs on the server's event loop, so
jsonschema's defaults are not safe there (mockoss breaker report D1-D3, reproducers r01-r04):

- **No I/O, ever.** jsonschema's default registry downloads remote ``$ref`` targets and reads
  ``file://`` ones (no timeout; ``file:///dev/stdin`` blocks for good). Here the validator gets an
  empty ``referencing.Registry()``, whose ``retrieve`` fails at once. What still resolves: refs
  within the schema itself (``#/$defs/…``, ``#/definitions/…``, ``#anchor``, embedded ``$id``
  resources) and the JSON Schema meta-schemas that jsonschema bundles (``jsonschema-specifications``,
  in memory; jsonschema always combines them in). Every other ``$ref``/``$dynamicRef`` gives one
  warning and that part of the schema counts as satisfied (it is "not checked"), the rest is checked.
- **Regexes run by RE2** (linear time in the text, as the scenario ``match`` rules,
  :mod:`mockoss.scenario.pattern`): ``pattern``, ``patternProperties`` and the
  ``patternProperties`` part of ``additionalProperties`` are replaced by RE2-based keywords
  (``jsonschema.validators.extend``). A pattern RE2 cannot compile (backreferences ``\\1``,
  lookaround ``(?=…)``, ``\\cX``, counts over 1000) is not checked, with one warning saying so.
  jsonschema computes ``unevaluatedProperties`` with Python's :mod:`re` on the
  ``patternProperties`` keys and has no hook for it, so in a schema that has
  ``patternProperties`` anywhere, ``unevaluatedProperties`` is not checked (one warning).
  ``uniqueItems`` is checked by hashing (jsonschema compares arrays of objects pairwise).
  The meta-schema's ``format: regex`` check (Python's ``re.compile``) is off: RE2 reports a
  pattern it cannot compile instead. jsonschema's ``evolve`` would switch to the stock class of
  any subschema that names a ``$schema``; here it stays within these classes.
- **Bounded time.** Every keyword evaluation, descent into a subschema, error yielded and ``enum``
  member compared ticks a CPU clock (work in proportion to the schema weighs its size:
  :meth:`~mockoss.scenario.schema_budget.CheckState.tick`); past its budget the check stops
  with a warning (a schema of nested ``anyOf``/``$ref`` can ask for exponential work without any
  cycle). :func:`schema_problems` gives one check :data:`BUDGET_S`; the tool check of a request
  gives all its checks together :data:`mockoss.scenario.tool_check.REQUEST_BUDGET_S` (25 ms), via
  :func:`check_schema`. The overrun is one tick (64 such steps; a single step over a huge value,
  the message of a 1,000,000-member ``enum``, ~0.1 s on a 12 MB body) plus unwinding, a few
  percent, unless the garbage collector's full pass falls inside (tens of ms, once in a while; it
  walks the whole process). Draft 2020-12 schemas are checked against the meta-schema as one
  resource (:mod:`mockoss.scenario.meta_schema`), ~6x faster than as bundled. A cycle (``{"$ref": "#"}``) or nesting deeper than about 150 levels ends in
  :class:`RecursionError`, reported as a warning. Any other exception is a warning too, never a 500.

RE2 against ECMA-262 (the dialect JSON Schema names: Draft 2020-12 Core §6.4, Validation §6.3.3) for
patterns RE2 accepts: ``\\d`` and ``\\w`` are ASCII in both; ``\\s`` is ASCII in RE2
(``[\\t\\n\\f\\r ]``, not even ``\\v``) but Unicode white space and line terminators in ECMA-262;
``.`` excludes only ``\\n`` in RE2 but all four line terminators (``\\n \\r \\u2028 \\u2029``) in
ECMA-262; ``$`` is the end of the text in both (Python's ``re`` also matches before a final
newline); ``\\uXXXX`` and ``\\u{X…}`` (ECMA-262's ``u`` mode) are rewritten to RE2's ``\\x{…}``
here (same meaning); RE2 also accepts syntax that ECMA-262 rejects or reads as a plain letter
(inline flags ``(?i)``, ``(?P<name>…)``, ``\\p{L}`` without the ``u`` flag, ``\\A``, ``\\z``), which
is then run with RE2's meaning; ECMA-262 syntax RE2 refuses (``[^]``, ``\\cX``, lookaround,
backreferences) is "not checked". Text and patterns
with lone surrogates are matched with each replaced by U+FFFD. Reference:
https://github.com/google/re2/wiki/Syntax; ECMA-262 §22.2.
"""

from __future__ import annotations

import functools
import time
from typing import Any, NamedTuple

from mockoss.scenario.meta_schema import meta_schema_for
from mockoss.scenario.schema_budget import CURRENT_CHECK, CheckState, OverBudget, short

__all__ = ["BUDGET_S", "SchemaCheck", "check_schema", "prepare", "schema_problems", "short"]

#: CPU-time budget (seconds, this thread's :func:`time.thread_time`, so a busy machine does not
#: cut a check short) of one :func:`schema_problems` check: meta-schema check plus validation.
#: A legitimate big case, 200 string properties with patterns and 100 KB of arguments, took
#: 61 ms to 0.18 s on a 2-core machine against the bundled meta-schema, 11-18 ms against
#: :func:`mockoss.scenario.meta_schema.flat_meta_schema`; past the budget the check stops with a
#: warning. The tool check of a request does not use this: its checks share
#: :data:`mockoss.scenario.tool_check.REQUEST_BUDGET_S`.
BUDGET_S = 0.5


# --- the check -----------------------------------------------------------------------------------


class SchemaCheck(NamedTuple):
    """What :func:`check_schema` found.

    Attributes:
        notes: "not checked" notes (unresolvable refs, patterns RE2 cannot run), at most
            :data:`~mockoss.scenario.schema_budget.MAX_NOTES`.
        problem: the schema's first meta-schema error, else the best validation error, else a
            budget, cycle or crash report; ``None`` when the arguments were checked and fit.
        over_budget: the check stopped at its CPU budget (``problem`` then says so); what was
            checked until then found nothing.
    """

    notes: list[str]
    problem: str | None
    over_budget: bool


@functools.cache
def prepare() -> None:
    """Do the one-time work of the first check: import jsonschema and referencing (~0.13 s, most
    of it ``jsonschema._format``), build the Draft 2020-12 classes and the flat meta-schema. The tool
    check calls this before it starts its budget's clock, so that the first request of a process is
    checked as fully as any other (the import itself still runs on that request, once)."""
    import jsonschema
    import referencing  # noqa: F401

    from mockoss.scenario.meta_schema import flat_meta_schema
    from mockoss.scenario.schema_keywords import safe_class

    flat_meta_schema()
    safe_class(jsonschema.Draft202012Validator)


_TOO_DEEP = (
    "the arguments were not fully checked: the declared parameters refer to themselves without end "
    "(a $ref cycle such as {'$ref': '#'}) or nest too deep"
)


def check_schema(schema: Any, value: Any, budget_s: float) -> SchemaCheck:
    """Check ``value`` (parsed arguments) against ``schema`` (the declared ``parameters``) within
    ``budget_s`` seconds of this thread's CPU (:func:`time.thread_time`; the check may run a few
    percent over while it unwinds). Never raises for any schema a client can send; never does I/O.

    The meta-schema check and validation share the budget. Draft 2020-12 schemas (and those that
    name no draft) are checked against :func:`mockoss.scenario.meta_schema.flat_meta_schema`.
    """
    import jsonschema
    import referencing

    # The safe keyword classes load with jsonschema, on the first check (prepare), not at start.
    from mockoss.scenario.schema_keywords import safe_class

    started = time.thread_time()
    check = CheckState(schema, budget_s)
    token = CURRENT_CHECK.set(check)
    problem: str | None = None
    over_budget = False
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        meta_cls = jsonschema.validators.validator_for(cls.META_SCHEMA, default=cls)
        # format_checker=None: the meta-schema's "format: regex" would compile with Python's re.
        meta = safe_class(meta_cls)(meta_schema_for(meta_cls), registry=referencing.Registry(), format_checker=None)
        schema_error = next(meta.iter_errors(schema), None)
        if schema_error is not None:
            problem = f"the declared parameters are not a valid JSON Schema: {short(schema_error.message)}"
        else:
            validator = safe_class(cls)(schema, registry=referencing.Registry())
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
            if error is not None:
                problem = (
                    f"arguments do not match the declared parameters at {error.json_path}: {short(error.message)}"
                )
    except OverBudget:
        over_budget = True
        problem = (
            f"the arguments were not fully checked: the schema check stopped after "
            f"{(time.thread_time() - started) * 1000:.0f} ms of CPU (mockoss's limit is {budget_s:.2f} s)"
        )
    except RecursionError:
        problem = _TOO_DEEP
    except Exception as exc:  # noqa: BLE001 - a client's schema must never make a 500 (breaker D3)
        problem = f"the declared parameters could not be checked: {type(exc).__name__}: {short(str(exc))}"
    except BaseException as exc:
        # pyo3's PanicException (a BaseException): jsonschema's type checkers live in an rpds map
        # (Rust), and the recursion limit reached inside its lookup panics instead of raising
        # RecursionError (tests/scenario/test_tool_check_depth.py).
        if type(exc).__name__ != "PanicException":
            raise
        problem = _TOO_DEEP if "RecursionError" in str(exc) else (
            f"the declared parameters could not be checked: PanicException: {short(str(exc))}"
        )
    finally:
        CURRENT_CHECK.reset(token)
    return SchemaCheck(check.notes, problem, over_budget)


def schema_problems(schema: Any, value: Any, budget_s: float | None = None) -> list[str]:
    """Warnings for ``value`` (parsed arguments) against ``schema`` (the declared ``parameters``):
    "not checked" notes first, then the best validation error, if any. Never raises for any schema
    a client can send; never does I/O; stops after ``budget_s`` seconds of CPU (default
    :data:`BUDGET_S`, one check's own budget; the tool check of a request calls
    :func:`check_schema` with what is left of :data:`mockoss.scenario.tool_check.REQUEST_BUDGET_S`)."""
    found = check_schema(schema, value, BUDGET_S if budget_s is None else budget_s)
    return found.notes + ([found.problem] if found.problem else [])
