"""``orjson.loads`` for a tool call's arguments nested deeper than Python's recursion limit.

SGLang 0.5.23 parses an assistant tool call's ``arguments`` with ``orjson.loads``
(sgl-project/sglang v0.5.23, ``python/sglang/srt/entrypoints/openai/serving_chat.py:181``
``parse_tool_call_arguments``), whose nesting limit is 1,024 levels: ``"[" * 1024 + "]" * 1024``
parses, 1,025 levels is ``JSONDecodeError: depth limit exceeded`` (checked with orjson 3.13.0,
the version SGLang 0.5.23's environment installs). mockoss parses with :func:`json.loads`, whose
C scanner stops at the interpreter's recursion limit (~1,000 levels, less the caller's frames)
with a ``RecursionError``; :func:`loads_deep` answers what orjson would for such a text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ORJSON_MAX_DEPTH", "loads_deep", "nesting_depth"]

#: orjson's nesting limit (``"[" * 1024 + "]" * 1024`` parses, one level more does not).
ORJSON_MAX_DEPTH = 1024


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``text`` outside JSON strings (an escaped quote
    does not end a string); text that is not JSON is read the same way (an upper bound is all the
    caller needs: orjson stops at the first level past its limit, before any later error)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def loads_deep(text: str, parse_constant: Callable[[str], Any]) -> Any:
    """What ``orjson.loads`` makes of ``text``, which raised ``RecursionError`` in
    ``json.loads(text, parse_constant=parse_constant)`` (``parse_constant`` is not called again):
    ``ValueError`` when it nests deeper than :data:`ORJSON_MAX_DEPTH` (orjson's
    ``JSONDecodeError``); an array (``[]`` stands for it: the caller only asks whether it is an
    object) when it starts with ``[``, taken as valid JSON (not checked: a text of 1,000-1,024
    levels that is not JSON is orjson's error, ``must be valid JSON``, where this says ``must be a
    JSON object``); else ``RecursionError`` again (an object that deep: the caller falls back;
    SGLang's template render then fails with its own ``RecursionError``, a 500).

    The recursion limit is not raised to parse it: ``sys.setrecursionlimit`` is the whole
    interpreter's, so every other thread would parse deeper meanwhile (a review's finding: the core's
    body parse answered a 1,500-level body by timing).

    Raises:
        ValueError: more than 1,024 levels.
        RecursionError: an object (or other text) nested past this interpreter's limit.
    """
    if nesting_depth(text) > ORJSON_MAX_DEPTH:
        raise ValueError("depth limit exceeded")
    if text.lstrip(" \t\n\r").startswith("["):
        return []
    raise RecursionError("nested past the interpreter's recursion limit")
