"""The Draft 2020-12 meta-schema as one resource: the same constraints, checked ~6x faster.

A tool check (:mod:`mockoss.scenario.schema_check`) first checks the declared ``parameters``
against their draft's meta-schema. Draft 2020-12's (``https://json-schema.org/draft/2020-12/schema``,
as bundled by ``jsonschema-specifications``) is an ``allOf`` of seven vocabulary meta-schemas
(``meta/core``, ``meta/applicator``, …), each its own resource whose subschema positions recurse
through ``{"$dynamicRef": "#meta"}``. jsonschema evaluates that at every level of the checked
schema: seven ``$ref`` lookups (URI joins, registry look-ups) and a dynamic-scope search per
subschema. Measured on a 2-core machine, jsonschema 4.26, meta-schema check alone: the OpenAI
SDK's ``Query`` tool schema (openai/openai-python@063375b7a12f3f3a0de10aec829c0416651be8cc:helpers.md,
"Auto-parsing function tool calls"; 1.4 KB) 5.8-7.4 ms with the bundled meta-schema, 1.0-1.3 ms
with :func:`flat_meta_schema`; a Draft-07 meta-schema, one resource already, 0.25 ms.

:func:`flat_meta_schema` builds, from the bundled resources (nothing is copied into this file),
one object ``{"type": ["object", "boolean"], "properties": …, "$defs": …}``:

- every vocabulary's ``properties`` and ``$defs``, merged in the ``allOf`` order, then the top
  meta-schema's own ``properties`` (the deprecated ``definitions``, ``dependencies``,
  ``$recursiveAnchor``, ``$recursiveRef``);
- ``{"$dynamicRef": "#meta"}`` becomes ``{"$ref": "#"}``: checked against the top meta-schema,
  the outermost resource of the dynamic scope that has ``"$dynamicAnchor": "meta"`` is the top
  meta-schema itself, so every dynamic reference lands there (JSON Schema Core 2020-12 §8.2.3.2);
- ``"meta/core#/$defs/X"`` (and the other vocabularies' such refs) becomes ``"#/$defs/X"``.

Why it accepts exactly what the bundled one accepts: an ``allOf`` of ``{"type": T, "properties":
P_i}`` with pairwise disjoint ``P_i`` constrains each property by its one subschema, as
``{"type": T, "properties": ∪ P_i}`` does. Disjointness, the shared ``type`` and that the
vocabularies use no other keyword are checked when it is built; if any fails (another
``jsonschema-specifications``), :func:`flat_meta_schema` returns ``None`` and the bundled
meta-schema is used. The errors come in the same order too (``properties`` iterates in the merged
order): the first error's message, the one a tool-check warning shows, was the same on 6,000
fuzzed schemas (5,549 of them invalid) as with the bundled meta-schema
(``tests/scenario/test_tool_check_budget.py`` keeps a smaller sample).
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["DRAFT_2020_12", "flat_meta_schema", "meta_schema_for"]

#: The ``$id`` of the Draft 2020-12 meta-schema.
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

#: Keywords a vocabulary meta-schema may carry besides ``type``, ``properties`` and ``$defs``:
#: identification and annotations, which constrain nothing.
_INERT = frozenset({"$schema", "$id", "$vocabulary", "$dynamicAnchor", "title", "$comment", "description"})


#: Keywords whose value maps names (property names, definition names) to subschemas.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas", "definitions"})


def _static(node: Any, schema: bool = True) -> Any:
    """``node`` (a subschema when ``schema``) with ``$dynamicRef: "#meta"`` as ``$ref: "#"`` and
    vocabulary refs made root-relative; a name map's keys (``"$ref"`` as a property name) stay."""
    if isinstance(node, list):
        return [_static(value, schema) for value in node]
    if not isinstance(node, dict):
        return node
    if not schema:
        return {key: _static(value) for key, value in node.items()}
    out = {key: _static(value, key not in _SCHEMA_MAPS) for key, value in node.items()}
    if out.get("$dynamicRef") == "#meta":
        del out["$dynamicRef"]
        out["$ref"] = "#"
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("meta/") and "#/$defs/" in ref:
        out["$ref"] = "#" + ref.split("#", 1)[1]
    return out


@functools.cache
def flat_meta_schema() -> dict[str, Any] | None:
    """The Draft 2020-12 meta-schema as one resource (see the module docstring), or ``None`` when
    the bundled meta-schema does not have the shape this relies on. Built once; do not mutate."""
    from jsonschema_specifications import REGISTRY

    top = REGISTRY.contents(DRAFT_2020_12)
    if set(top) - _INERT - {"allOf", "type", "properties"} or not isinstance(top.get("allOf"), list):
        return None
    kind = top.get("type")
    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    base = DRAFT_2020_12.rsplit("/", 1)[0] + "/"
    for part in top["allOf"]:
        if set(part) != {"$ref"} or not isinstance(part["$ref"], str):
            return None
        vocabulary = REGISTRY.contents(base + part["$ref"])
        if set(vocabulary) - _INERT - {"type", "properties", "$defs"} or vocabulary.get("type") != kind:
            return None
        own, own_defs = vocabulary.get("properties", {}), vocabulary.get("$defs", {})
        if set(own) & set(properties) or set(own_defs) & set(defs):
            return None
        properties.update(own)
        defs.update(own_defs)
    if set(top.get("properties", {})) & set(properties):
        return None
    properties.update(top.get("properties", {}))
    flat = _static({"type": kind, "properties": properties, "$defs": defs})
    return flat if _refs_local(flat, defs) else None


def _refs_local(node: Any, defs: dict[str, Any]) -> bool:
    """Every reference in the subschema ``node`` is ``#`` or ``#/$defs/NAME`` of ``defs``; no
    dynamic or recursive one is left."""
    stack: list[tuple[Any, bool]] = [(node, True)]
    while stack:
        item, schema = stack.pop()
        if isinstance(item, list):
            stack.extend((value, schema) for value in item)
        elif isinstance(item, dict) and not schema:
            stack.extend((value, True) for value in item.values())
        elif isinstance(item, dict):
            if "$dynamicRef" in item or "$recursiveRef" in item:
                return False
            ref = item.get("$ref", "#")
            if ref != "#" and not (isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs):
                return False
            stack.extend((value, key not in _SCHEMA_MAPS) for key, value in item.items())
    return True


def meta_schema_for(cls: Any) -> Any:
    """The meta-schema to check schemas of the jsonschema validator class ``cls`` against:
    Draft 2020-12's as one resource (:func:`flat_meta_schema`), any other draft's as bundled
    (``cls.META_SCHEMA``). A subclass made by ``jsonschema.validators.extend`` keeps its draft's."""
    if cls.META_SCHEMA.get("$id") == DRAFT_2020_12:
        flat = flat_meta_schema()
        if flat is not None:
            return flat
    return cls.META_SCHEMA
