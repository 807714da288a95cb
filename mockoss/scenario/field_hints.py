"""Hints for an unknown field in a scenario file: a "did you mean", or where the field belongs.

The loader's line ``x.yaml:5: steps[0].completion.messages[0].chanel: unknown field`` (pydantic's
``extra_forbidden``, :func:`mockoss.scenario.locate.validation_errors`) becomes
``...: unknown field (did you mean 'channel'?)``, and ``x.yaml:6: steps[0].messages: unknown field``
(``messages:`` written beside ``completion:`` instead of under it) becomes
``...: unknown field ('messages' belongs under steps[0].completion)``. The valid names are read
from the scenario models themselves (:mod:`mockoss.scenario.schema`), so a field added there is
suggested without a change here. Only the error path imports this module (issue 9, start-up).
"""

from __future__ import annotations

import difflib
import re
import typing
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel

from mockoss.scenario.locate import loc_text

__all__ = ["with_field_hints"]

_UNKNOWN = ": unknown field"
_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation can hold, through ``Optional``, unions, ``Annotated``,
    lists and dicts: ``list[StepSpec] | None`` → ``[StepSpec]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models(typing.get_args(annotation)[0])
    if origin is None or origin is typing.Literal:
        return []
    args = typing.get_args(annotation)[1:] if origin is dict else typing.get_args(annotation)  # unions, lists
    return [m for a in args for m in _models(a)]


def _at(root: type[BaseModel], path: list[int | str]) -> list[type[BaseModel]]:
    """The models that may sit at ``path`` below ``root`` (list indexes pass through)."""
    models = [root]
    for part in path:
        if isinstance(part, int):
            continue
        models = [
            m for model in models if part in model.model_fields for m in _models(model.model_fields[part].annotation)
        ]
    return models


def _fields(models: Iterable[type[BaseModel]]) -> list[str]:
    return list(dict.fromkeys(name for model in models for name in model.model_fields))


def field_hint(root: type[BaseModel], path: list[int | str]) -> str:
    """The hint for the unknown field at the end of ``path`` (``["steps", 0, "messages"]``), with a
    leading space, or ``""``: the field one level down (under a field of the same mapping that
    holds a model with it), one level up (a field of the enclosing mapping), else the closest valid
    names at that place (:func:`difflib.get_close_matches`, cutoff 0.6)."""
    *parent, name = path
    if not isinstance(name, str):
        return ""
    here = _at(root, parent)
    if not here:
        return ""
    below = [field for field in _fields(here) if name in _fields(_at(root, [*parent, field]))]
    if len(below) == 1:
        return f" ({name!r} belongs under {loc_text([*parent, below[0]])})"
    up = parent[:-1] if parent and isinstance(parent[-1], str) else parent[:-2]  # past a list index too
    if parent and name in _fields(_at(root, up)):
        return f" ({name!r} belongs in {loc_text(up)})" if up else f" ({name!r} belongs at the top level)"
    close = difflib.get_close_matches(name, _fields(here), 3, 0.6)
    if close:
        return f" (did you mean {' or '.join(map(repr, close))}?)"
    above = difflib.get_close_matches(name, _fields(_at(root, up)), 1, 0.6) if parent else []
    return f" (did you mean {above[0]!r}, in {loc_text(up)}?)" if above else ""


def _path(text: str) -> list[int | str] | None:
    """``steps[0].completion.chanel`` → ``["steps", 0, "completion", "chanel"]``; ``None`` when the
    text does not read back to itself (a key holding ``.`` or ``[``)."""
    parts: list[int | str] = [int(i) if i else key for i, key in _PART.findall(text)]
    return parts if parts and loc_text(parts) == text else None


def with_field_hints(lines: Iterable[str], root: type[BaseModel]) -> Iterator[str]:
    """The loader's error lines, each ``FILE:LINE: FIELD: unknown field`` one with its hint."""
    for line in lines:
        if line.endswith(_UNKNOWN):
            head = line[: -len(_UNKNOWN)]
            path = _path(head.rpartition(": ")[2])
            if path is not None:
                line += field_hint(root, path)
        yield line
