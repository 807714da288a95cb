"""mockoss.profiles.wire: JSON at any depth, the same text as :mod:`json` writes.

A request may hold data nested nearly as deep as :func:`json.loads` parses; a profile that echoes
it encodes it further down the stack, where :mod:`json`'s encoder raised ``RecursionError`` (an
unscripted 500, "mockoss internal error"). :func:`dumps` and :func:`dumps_json` fall back on an
explicit-stack encoder that must write exactly what :mod:`json` writes.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from mockoss.profiles.wire import _dumps_deep, dumps, dumps_json

LAYOUTS = [
    {"separators": (",", ":"), "ensure_ascii": False},  # dumps
    {"indent": 2, "ensure_ascii": False},  # LM Studio's pretty_json
    {},  # json.dumps defaults (mlx-lm, vLLM's streamed errors)
    {"indent": 3, "separators": (",", ": "), "ensure_ascii": True},
]
LEAVES = [None, True, False, 0, -7, 2**80, 1.5, -0.0, 1e300, float("nan"), float("inf"), float("-inf"), "", "é\"\\\n\x01\u2028\ud800", "x"]
KEYS = ["a", "é", 1, 2.5, True, False, None, "\n", float("nan")]


def _value(
    rnd: random.Random,
    depth: int = 0,
    *,
    leaves: Sequence[Any] = LEAVES,
    keys: Sequence[Any] = KEYS,
    mapping: Callable[[dict[Any, Any]], Any] = dict,
) -> Any:
    """Random JSON-like data: ``leaves``, lists, tuples and ``mapping``s of the dicts drawn
    (``tests/profiles/test_wire_rebuild.py`` draws string keys and read-only mappings)."""
    pick = rnd.random()
    if depth > 5 or pick < 0.4:
        return rnd.choice(leaves)
    more = {"leaves": leaves, "keys": keys, "mapping": mapping}
    if pick < 0.7:
        return [_value(rnd, depth + 1, **more) for _ in range(rnd.randint(0, 4))]
    if pick < 0.8:
        return tuple(_value(rnd, depth + 1, **more) for _ in range(rnd.randint(0, 3)))
    return mapping({rnd.choice(keys): _value(rnd, depth + 1, **more) for _ in range(rnd.randint(0, 4))})


@pytest.mark.parametrize("layout", LAYOUTS, ids=["compact", "indent2", "defaults", "indent3-ascii"])
def test_same_text_as_json(layout: dict) -> None:
    rnd = random.Random(7)
    for _ in range(1500):
        value = _value(rnd)
        assert _dumps_deep(value, **layout) == json.dumps(value, **layout), value


def _deep(depth: int, leaf: object = "x") -> object:
    value = leaf
    for i in range(depth):
        value = {"k": value} if i % 2 else [value, 1]
    return value


def test_deeper_than_recursion_allows() -> None:
    depth = sys.getrecursionlimit() + 500
    value = _deep(depth)
    with pytest.raises(RecursionError):
        json.dumps(value)
    text = dumps(value)
    assert text.count("[") == text.count("]") == depth // 2 and text.startswith('{"k":[{"k":[')
    assert dumps_json(value, indent=2, ensure_ascii=False).count("\n") > depth
    shallow = _deep(50)  # the fallback writes what json writes at depths both reach
    assert _dumps_deep(shallow, separators=(",", ":"), ensure_ascii=False) == dumps(shallow)


def test_same_errors_as_json() -> None:
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        _dumps_deep(loop)
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None, not tuple"):
        _dumps_deep({(1,): 2})
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        _dumps_deep([set()])
    shared = [1]  # the same list twice, not on its own path: not a cycle
    assert _dumps_deep([shared, shared]) == json.dumps([shared, shared])
