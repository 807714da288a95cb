"""A long sequence of leaves is sized in chunks, to the same total (issue 9: nothing holds the GIL long).

``approx_bytes`` sums a sequence of leaves (token ids, text pieces) with ``sum(map(sys.getsizeof,
...))``: one C call that runs no bytecode, so no other thread (the event loop) runs until it
returns; 3 million token ids held the others 217-285 ms. It now sums ``LEAF_CHUNK`` items per call.
"""

from __future__ import annotations

import builtins
import sys
from typing import Any

import pytest

from mockoss.harmony import lru
from mockoss.harmony.lru import approx_bytes

CHUNK = lru.LEAF_CHUNK


def _exact(items: list[Any]) -> int:
    return sys.getsizeof(items) + builtins.sum(sys.getsizeof(item) for item in items)


@pytest.mark.parametrize("count", [CHUNK - 1, CHUNK, CHUNK + 1, 5 * CHUNK + 3])
def test_a_long_list_of_leaves_is_counted_exactly(count: int) -> None:
    leaves: list[Any] = [(200_000 + i, "piece" * (i % 7), b"x" * (i % 3), 1.5, None, True)[i % 6] for i in range(count)]
    assert approx_bytes(leaves) == _exact(leaves)


def test_sampled_containers_of_long_leaf_lists_scale_as_before() -> None:
    # 70 tuples of CHUNK + 5 ids: 64 of them sampled (here the first 64), each summed exactly,
    # scaled by 70 / 64
    rows = [tuple(range(1000 + i, 1000 + i + CHUNK + 5)) for i in range(70)]
    per_row = [sys.getsizeof(row) + builtins.sum(map(sys.getsizeof, row)) for row in rows[:64]]
    expected = sys.getsizeof(rows) + (70 / 64) * builtins.sum(per_row)
    assert abs(approx_bytes(rows) - expected) <= 0.001 * expected


def test_no_single_c_level_sum_covers_more_than_a_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []

    def counting_sum(items: Any, start: Any = 0) -> Any:
        items = list(items)
        sizes.append(len(items))
        return builtins.sum(items, start)

    monkeypatch.setattr(lru, "sum", counting_sum, raising=False)
    ids = list(range(100_000, 100_000 + 20 * CHUNK + 17))
    assert approx_bytes(ids) == _exact(ids)
    assert sizes and max(sizes) <= CHUNK, max(sizes)


def test_the_walk_stops_within_a_chunk_of_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []

    def counting_sum(items: Any, start: Any = 0) -> Any:
        items = list(items)
        sizes.append(len(items))
        return builtins.sum(items, start)

    monkeypatch.setattr(lru, "sum", counting_sum, raising=False)
    ids = list(range(100_000, 100_000 + 40 * CHUNK))
    budget = sys.getsizeof(ids) + 2 * CHUNK * 28  # the list itself and about two chunks of ids
    assert approx_bytes(ids, budget) > budget
    assert builtins.sum(sizes) <= 4 * CHUNK, builtins.sum(sizes)
