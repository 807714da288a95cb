"""Where a problem is in a scenario file: field paths, YAML line numbers, readable pydantic errors.

Every loader error reads ``FILE:LINE: FIELD: problem``, e.g.
``x.yaml:7: rules[0].match.turn: Input should be greater than or equal to 1``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import yaml
from pydantic import ValidationError

__all__ = ["key_line", "loc_text", "node_line", "validation_errors", "where"]

Loc = Sequence[int | str]


def loc_text(loc: Loc) -> str:
    """``["rules", 0, "match", "turn"]`` → ``rules[0].match.turn``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def node_line(node: yaml.Node | None, loc: Loc) -> int | None:
    """Follow ``loc`` through the YAML node tree; return the 1-based line of the deepest match."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if node is None:
                break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line


def key_line(root: yaml.Node | None, key: str) -> int | None:
    """The 1-based line of top-level ``key:`` itself (not of its value), else ``None``."""
    if isinstance(root, yaml.MappingNode):
        for k, _ in root.value:
            if getattr(k, "value", None) == key:
                return k.start_mark.line + 1
    return None


def where(origin: str, root: yaml.Node | None, loc: Loc) -> str:
    """``FILE:LINE`` for ``loc`` (``FILE`` alone when the line is unknown)."""
    line = node_line(root, loc)
    return f"{origin}:{line}" if line else origin


def _data_loc(data: Any, loc: Loc, kind: str) -> tuple[int | str, ...]:
    """``loc`` without pydantic's union-member tags (``int``, ``TurnRange``, ``function-after[…]``):
    keep the parts that exist in the data, and a missing field's name."""
    kept: list[int | str] = []
    for position, part in enumerate(loc):
        in_list = isinstance(part, int) and isinstance(data, list) and -len(data) <= part < len(data)
        if in_list or (isinstance(part, str) and isinstance(data, Mapping) and part in data):
            data = data[part]
        elif kind == "missing" and position == len(loc) - 1 and isinstance(part, str):
            pass
        else:
            continue
        kept.append(part)
    return tuple(kept)


def _extra(error: Any) -> tuple[str, ...]:
    """A fault error's own field (``tokens``), appended to its location."""
    field = (error.get("ctx") or {}).get("field") if error["type"] == "fault" else None
    return (field,) if isinstance(field, str) and field != "fault" else ()


def _is_type_error(kind: str) -> bool:
    return kind.endswith("_type") or kind in ("model_attributes_type", "dict_type", "is_instance_of")


def _message(error: Any) -> str:
    """pydantic's message, but a text too short in words about text: ``min_length`` on a
    validated ``str`` (``raw: ""``, a template) is checked after the validator, as a length of any
    value, so pydantic said "Value should have at least 1 item after validation, not 0"
    (the sixteenth session's breaker, item 12)."""
    context = error.get("ctx") or {}
    if error["type"] == "too_short" and isinstance(error.get("input"), str) and "min_length" in context:
        least = context["min_length"]
        hint = " (an empty answer: messages: [{channel: final, content: ''}])" if error["loc"][-1:] == ("raw",) else ""
        return f"String should have at least {least} character{'' if least == 1 else 's'}, not {len(error['input'])}{hint}"
    return error["msg"]


def validation_errors(origin: str, root: yaml.Node | None, error: ValidationError, data: Any) -> Iterator[str]:
    """One ``FILE:LINE: FIELD: problem`` line per problem.

    For a value that may take several forms (``turn: 2 | [2, 3] | {min, max}``), pydantic reports
    one error per form; a "wrong type" error is dropped when another form got further (its error
    is about the value, or deeper inside it), and the rest at one field are joined with "; or ".
    """
    items = [(_data_loc(data, e["loc"], e["type"]) + _extra(e), e["type"], _message(e)) for e in error.errors()]
    kept = [
        (loc, kind, msg)
        for loc, kind, msg in items
        if not _is_type_error(kind) or not any(o[: len(loc)] == loc and not _is_type_error(k) for o, k, _ in items)
    ]
    merged: dict[tuple[int | str, ...], list[str]] = {}
    for loc, kind, msg in kept:
        message = "unknown field" if kind == "extra_forbidden" else msg
        if message not in merged.setdefault(loc, []):
            merged[loc].append(message)
    for loc, messages in merged.items():
        yield f"{where(origin, root, loc)}: {loc_text(loc)}: {'; or '.join(messages)}"
