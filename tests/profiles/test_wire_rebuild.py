"""mockoss.profiles.wire.rebuild: the one explicit-stack copy behind the deep fallbacks.

``finite``, Ollama's ``go_any``/``sorted_map`` and gptoss_ref's error-entry encoder each copy
request data past the recursion limit through :func:`rebuild`; their recursive fast paths are the
reference, so the deep paths must give the same values, and must not recurse.
"""

from __future__ import annotations

import json
import random
import sys
from collections import OrderedDict
from types import MappingProxyType
from typing import Any

import pytest
from test_wire_deep import _value  # tests/profiles is on sys.path

from mockoss.profiles.gptoss_ref.request import _jsonable
from mockoss.profiles.ollama.gojson import _go_any, _go_any_deep
from mockoss.profiles.ollama.responses_objects import _sorted_map, _sorted_map_deep
from mockoss.profiles.wire import finite, rebuild

LEAVES: list[Any] = [None, True, False, 0, -7, 2**70, 1.5, -0.0, float("nan"), float("inf"), "", "x", "\ud800"]
KEYS: list[Any] = ["b", "a", "c", "1", "z"]  # strings only: Go's maps and sorted() need comparable keys


def _read_only_every_other(items: dict[Any, Any]) -> Any:
    return MappingProxyType(items) if len(items) % 2 else items  # a Mapping that is not a dict


@pytest.mark.parametrize("seed", range(3))
def test_the_deep_fallbacks_give_what_the_recursive_paths_give(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(300):
        value = _value(rnd, leaves=LEAVES, keys=KEYS, mapping=_read_only_every_other)
        assert repr(_go_any_deep(value)) == repr(_go_any(value))
        assert repr(_sorted_map_deep(value)) == repr(_sorted_map(value))


def test_a_key_given_twice_keeps_its_first_place_and_its_last_value() -> None:
    # go_any: two lone surrogates both become U+FFFD; the comprehension keeps the last value, sorted.
    twice = {chr(0xD800): "first", "b": 0, chr(0xDFFF): "last", "a": 0}
    assert (
        list(_go_any_deep(twice).items())
        == list(_go_any(twice).items())
        == [("a", 0.0), ("b", 0.0), ("\ufffd", "last")]
    )
    # gptoss_ref: str() of the keys, set one by one: the last value, at the first place.
    assert list(_jsonable({1: "first", "z": 0, "1": "last"}).items()) == [("1", "last"), ("z", 0)]
    copy = rebuild({"k": 1, "j": 2}, entries=lambda m: [("same", v) for v in m.values()])
    assert copy == {"same": 2}


def test_containers_and_leaves_as_each_caller_says() -> None:
    assert rebuild(("a", ["b"], {"c": (1,)})) == ["a", ["b"], {"c": [1]}]  # tuples become lists
    assert rebuild("abc", sequence=(str, list)) == "abc"  # a str is never a sequence of letters
    assert _sorted_map_deep({"t": (2, 1)}) == {"t": (2, 1)}  # sorted_map copies lists only
    ordered = OrderedDict([("b", 1), ("a", 2)])
    assert type(rebuild(ordered)) is dict and list(rebuild(ordered)) == ["b", "a"]  # a copy, in order
    proxy = MappingProxyType({"a": 1})
    assert rebuild(proxy) is proxy and rebuild(proxy, mapping=MappingProxyType) == {"a": 1}  # mapping: dict by default
    assert rebuild([1.5, "x"], lambda leaf: str(leaf)) == ["1.5", "x"]
    source = [[1], {"a": [2]}]
    copy = rebuild(source)
    assert copy == source and copy[0] is not source[0] and copy[1]["a"] is not source[1]["a"]


def test_finite_nulls_non_finite_floats_and_returns_clean_values_themselves() -> None:
    clean = {"a": [1.5, {"b": (2,)}]}
    assert finite(clean) is clean
    assert finite({"a": [float("nan"), (float("-inf"), 1.0)], "b": float("inf")}) == {
        "a": [None, [None, 1.0]],
        "b": None,
    }


def test_a_non_finite_dict_key_is_written_as_json_writes_it_without_a_retry_loop() -> None:
    """finite() replaces values, not keys: the encoders must not retry on what it cannot change."""
    from mockoss.profiles import wire

    calls: list[Any] = []
    original = wire.finite
    try:
        wire.finite = lambda value: calls.append(value) or original(value)  # type: ignore[assignment]
        assert wire.dumps({float("nan"): 1, "b": [float("inf")]}) == '{"NaN":1,"b":[null]}'
        assert wire.dumps_json({float("inf"): 1}) == '{"Infinity": 1}'
    finally:
        wire.finite = original  # type: ignore[assignment]
    assert len(calls) == 3  # dumps: once per value with a non-finite value, once on the clean copy; dumps_json: once


def test_deeper_than_recursion_allows() -> None:
    depth = sys.getrecursionlimit() * 3
    nested: Any = {"z": float("nan"), "a": 1}
    for _ in range(depth):
        nested = {"k": [nested], "b": 2}
    expected_leaf = {"a": 1.0, "z": float("nan")}
    for copy, leaf in (
        (_go_any_deep(nested), expected_leaf),
        (_sorted_map_deep(nested), {"a": 1, "z": float("nan")}),
        (finite(nested), {"z": None, "a": 1}),
        (_jsonable(nested), {"z": float("nan"), "a": 1}),
    ):
        for _ in range(depth):
            assert set(copy) == {"k", "b"}
            copy = copy["k"][0]
        assert json.dumps(copy) == json.dumps(leaf)
