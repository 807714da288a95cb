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
  :meth:`_Check.tick`); past its budget the check stops
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
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, NamedTuple

from mockoss.scenario.meta_schema import meta_schema_for
from mockoss.scenario.schema_re2 import compile_pattern  # ECMA-262 escapes, RE2, a bounded cache

__all__ = ["BUDGET_S", "SchemaCheck", "check_schema", "prepare", "schema_problems", "short"]

#: CPU-time budget (seconds, this thread's :func:`time.thread_time`, so a busy machine does not
#: cut a check short) of one :func:`schema_problems` check: meta-schema check plus validation.
#: A legitimate big case, 200 string properties with patterns and 100 KB of arguments, took
#: 61 ms to 0.18 s on a 2-core machine against the bundled meta-schema, 11-18 ms against
#: :func:`mockoss.scenario.meta_schema.flat_meta_schema`; past the budget the check stops with a
#: warning. The tool check of a request does not use this: its checks share
#: :data:`mockoss.scenario.tool_check.REQUEST_BUDGET_S`.
BUDGET_S = 0.5

#: At most this many "not checked" warnings per schema (unresolvable refs, patterns RE2 refuses).
MAX_NOTES = 5


class _OverBudget(Exception):
    pass


class _Check:
    """State of one schema check, reached by the keyword functions through :data:`_CURRENT`."""

    __slots__ = ("_has_pattern_properties", "deadline", "next_clock", "notes", "patterns", "root", "steps")

    def __init__(self, root: Any, budget_s: float) -> None:
        self.deadline = time.thread_time() + budget_s
        self.steps = 0
        self.next_clock = 64
        self.notes: list[str] = []
        self.patterns: dict[str, Callable[[str], bool] | None] = {}
        self.root = root
        self._has_pattern_properties: bool | None = None

    def tick(self, weight: int = 1) -> None:
        """Count ``weight`` steps of work and read the clock once 64 have passed since the last
        reading. A step is a keyword evaluation, a descent into a subschema, an error yielded, an
        ``enum`` member compared; work in proportion to the schema's size weighs by its size (an
        error by its message's length, a pattern compiled by its length), so that no 64 steps hide
        seconds (an ``anyOf`` of 64 refs to a ``required`` of 3,000 names: 0.85 s on a 29 KB body)."""
        self.steps += weight
        if self.steps >= self.next_clock:
            self.next_clock = self.steps + 64
            if time.thread_time() > self.deadline:
                raise _OverBudget

    def note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < MAX_NOTES:
            self.notes.append(text)

    def search(self, pattern: Any) -> Callable[[str], bool] | None:
        """RE2 search function of ``pattern``, or ``None`` (noted) when RE2 cannot run it."""
        if not isinstance(pattern, str):
            return None
        if pattern not in self.patterns:
            self.tick(1 + len(pattern) // 64)
            try:
                self.patterns[pattern] = compile_pattern(pattern)
            except ValueError as exc:
                self.patterns[pattern] = None
                self.note(f"pattern {short(pattern, 60)!r} is not checked: RE2 cannot run it ({exc})")
        return self.patterns[pattern]

    def has_pattern_properties(self) -> bool:
        if self._has_pattern_properties is None:
            found, stack = False, [self.root]
            while stack and not found:
                self.tick()  # every value, annotations too (a default of 1,000,000 lists: 0.49 s)
                node = stack.pop()
                if isinstance(node, dict):
                    found = isinstance(node.get("patternProperties"), dict) and bool(node["patternProperties"])
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
            self._has_pattern_properties = found
        return self._has_pattern_properties


_CURRENT: ContextVar[_Check] = ContextVar("mockoss_schema_check")


def short(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (for warning lines)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- keywords ------------------------------------------------------------------------------------

_REF_KEYWORDS = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})


def _guarded(keyword: str, function: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """``function`` with a budget tick, and an unresolvable reference turned into a note."""

    import referencing.exceptions

    unresolvable = referencing.exceptions.Unresolvable

    def keyword_check(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        check = _CURRENT.get()
        check.tick()
        try:
            for error in function(validator, value, instance, schema):
                check.tick(1 + len(error.message) // 64)  # building it may repr the schema's value (enum, const)
                yield error
        except unresolvable as exc:
            what = (
                f"{keyword} {short(value, 60)!r}" if keyword in _REF_KEYWORDS and isinstance(value, str) else keyword
            )
            check.note(
                f"{what} is not checked: it does not resolve within the schema "
                f"(mockoss never downloads or reads a referenced file; {short(str(exc).split(' within ', 1)[0], 80)})"
            )

    keyword_check.__name__ = function.__name__
    return keyword_check


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string"):
        found = _CURRENT.get().search(pattern)
        if found is not None and not found(instance):
            yield ValidationError(f"{short(repr(instance))} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    check = _CURRENT.get()
    for pattern, subschema in patterns.items():
        found = check.search(pattern)
        if found is None:
            continue
        for key, value in instance.items():
            if found(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _extras(instance: dict[str, Any], schema: dict[str, Any]) -> list[str] | None:
    """Keys neither in ``properties`` nor matched by a ``patternProperties`` pattern; ``None`` when
    a pattern cannot be run (then no key is known to be extra)."""
    properties = schema.get("properties", {})
    check = _CURRENT.get()
    searches = [check.search(pattern) for pattern in schema.get("patternProperties", {})]
    if any(search is None for search in searches):
        return None
    return [key for key in instance if key not in properties and not any(found(key) for found in searches)]


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    extras = _extras(instance, schema)
    if not extras:
        return
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif additional is False:
        names = ", ".join(repr(each) for each in sorted(extras))
        verb = "was" if len(extras) == 1 else "were"
        if "patternProperties" in schema:
            regexes = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(
                f"{names} {'does' if len(extras) == 1 else 'do'} not match any of the regexes: {regexes}"
            )
        else:
            yield ValidationError(f"Additional properties are not allowed ({names} {verb} unexpected)")


def _enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's ``enum``, the same comparison (``jsonschema._utils.equal``) and message, with a
    budget tick per member compared: the meta-schema check never ticks over the members
    (``items: true``), and 50,000 of them were compared in one tick."""
    from jsonschema._utils import equal
    from jsonschema.exceptions import ValidationError

    check = _CURRENT.get()
    for each in enums:
        check.tick()
        if equal(each, instance):
            return
    yield ValidationError(f"{instance!r} is not one of {enums!r}")


def _canonical(value: Any) -> Any:
    """A hashable form of a JSON value under JSON Schema equality: ``1 == 1.0``, ``true != 1``,
    object key order ignored."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, dict):
        return ("o", frozenset((key, _canonical(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("a", tuple(_canonical(item) for item in value))
    return ("v", value)


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema compares arrays of objects pairwise (quadratic: 40,000 objects would take
    minutes in one keyword call, out of the budget's reach); this is one hash per element."""
    from jsonschema.exceptions import ValidationError

    if unique and validator.is_type(instance, "array"):
        seen: set[Any] = set()
        for item in instance:
            key = _canonical(item)
            if key in seen:
                yield ValidationError(f"{short(repr(instance))} has non-unique elements")
                return
            seen.add(key)


def _unevaluated_properties(original: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def unevaluated_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        check = _CURRENT.get()
        if check.has_pattern_properties():
            if validator.is_type(instance, "object"):
                check.note(
                    "unevaluatedProperties is not checked in a schema with patternProperties "
                    "(jsonschema would run those patterns with Python's re, not RE2)"
                )
            return
        yield from original(validator, value, instance, schema)

    return unevaluated_properties


_CLASSES: dict[type, type] = {}


def _safe_class(cls: type) -> type:
    """``cls`` (a jsonschema validator class) with the keywords above; one class per draft."""
    safe = _CLASSES.get(cls)
    if safe is None:
        import jsonschema

        replaced: dict[str, Callable[..., Iterator[Any]]] = dict(cls.VALIDATORS)  # type: ignore[attr-defined]
        for keyword, function in (
            ("pattern", _pattern),
            ("patternProperties", _pattern_properties),
            ("additionalProperties", _additional_properties),
            ("uniqueItems", _unique_items),
            ("enum", _enum),
        ):
            if keyword in replaced:
                replaced[keyword] = function
        if "unevaluatedProperties" in replaced:
            replaced["unevaluatedProperties"] = _unevaluated_properties(replaced["unevaluatedProperties"])
        guarded = {keyword: _guarded(keyword, function) for keyword, function in replaced.items()}
        safe = jsonschema.validators.extend(cls, validators=guarded)
        safe.evolve = _evolve_within_safe_classes(cls, safe)  # type: ignore[attr-defined]
        _CLASSES[cls] = _CLASSES[safe] = safe
    return safe


def _evolve_within_safe_classes(base: type, safe: type) -> Callable[..., Any]:
    """jsonschema's ``evolve`` (used by every ``descend``) picks the class named by a subschema's
    ``$schema`` and would leave these keywords for the stock ones (and Python's re): a subschema
    with ``"$schema"`` and a ``pattern``, or any meta-schema resource. Same steps, safe classes."""
    import attrs
    import jsonschema

    fields = [(field.name, field.alias) for field in attrs.fields(safe) if field.init]

    def evolve(self: Any, **changes: Any) -> Any:
        check = _CURRENT.get(None)
        if check is not None:  # a descent: into an empty subschema it runs no keyword (allOf of 1,000 {})
            check.tick()
        schema = changes.setdefault("schema", self.schema)
        new_class = _safe_class(jsonschema.validators.validator_for(schema, default=base))
        for name, alias in fields:
            if alias not in changes:
                changes[alias] = getattr(self, name)
        return new_class(**changes)

    return evolve


# --- the check -----------------------------------------------------------------------------------


class SchemaCheck(NamedTuple):
    """What :func:`check_schema` found.

    Attributes:
        notes: "not checked" notes (unresolvable refs, patterns RE2 cannot run), at most
            :data:`MAX_NOTES`.
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

    flat_meta_schema()
    _safe_class(jsonschema.Draft202012Validator)


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

    started = time.thread_time()
    check = _Check(schema, budget_s)
    token = _CURRENT.set(check)
    problem: str | None = None
    over_budget = False
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        meta_cls = jsonschema.validators.validator_for(cls.META_SCHEMA, default=cls)
        # format_checker=None: the meta-schema's "format: regex" would compile with Python's re.
        meta = _safe_class(meta_cls)(meta_schema_for(meta_cls), registry=referencing.Registry(), format_checker=None)
        schema_error = next(meta.iter_errors(schema), None)
        if schema_error is not None:
            problem = f"the declared parameters are not a valid JSON Schema: {short(schema_error.message)}"
        else:
            validator = _safe_class(cls)(schema, registry=referencing.Registry())
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
            if error is not None:
                problem = (
                    f"arguments do not match the declared parameters at {error.json_path}: {short(error.message)}"
                )
    except _OverBudget:
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
        _CURRENT.reset(token)
    return SchemaCheck(check.notes, problem, over_budget)


def schema_problems(schema: Any, value: Any, budget_s: float | None = None) -> list[str]:
    """Warnings for ``value`` (parsed arguments) against ``schema`` (the declared ``parameters``):
    "not checked" notes first, then the best validation error, if any. Never raises for any schema
    a client can send; never does I/O; stops after ``budget_s`` seconds of CPU (default
    :data:`BUDGET_S`, one check's own budget; the tool check of a request calls
    :func:`check_schema` with what is left of :data:`mockoss.scenario.tool_check.REQUEST_BUDGET_S`)."""
    found = check_schema(schema, value, BUDGET_S if budget_s is None else budget_s)
    return found.notes + ([found.problem] if found.problem else [])
