"""The jsonschema keywords replaced for safety: RE2 patterns, budget ticks, refs that never do I/O.

Split from :mod:`mockoss.scenario.schema_check` (its docstring lists each replacement and why:
mockoss breaker report D1-D3). One job: :func:`safe_class` turns a jsonschema validator class into
one whose keywords tick the running check's budget (:mod:`mockoss.scenario.schema_budget`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from mockoss.scenario.schema_budget import CURRENT_CHECK, short

__all__ = ["safe_class"]

_REF_KEYWORDS = frozenset({"$ref", "$dynamicRef", "$recursiveRef"})


def _guarded(keyword: str, function: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    """``function`` with a budget tick, and an unresolvable reference turned into a note."""

    import referencing.exceptions

    unresolvable = referencing.exceptions.Unresolvable

    def keyword_check(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        check = CURRENT_CHECK.get()
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
        found = CURRENT_CHECK.get().search(pattern)
        if found is not None and not found(instance):
            yield ValidationError(f"{short(repr(instance))} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    check = CURRENT_CHECK.get()
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
    check = CURRENT_CHECK.get()
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

    check = CURRENT_CHECK.get()
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
        check = CURRENT_CHECK.get()
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


def safe_class(cls: type) -> type:
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
        check = CURRENT_CHECK.get(None)
        if check is not None:  # a descent: into an empty subschema it runs no keyword (allOf of 1,000 {})
            check.tick()
        schema = changes.setdefault("schema", self.schema)
        new_class = safe_class(jsonschema.validators.validator_for(schema, default=base))
        for name, alias in fields:
            if alias not in changes:
                changes[alias] = getattr(self, name)
        return new_class(**changes)

    return evolve
