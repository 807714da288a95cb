"""A completion's memo is bounded in bytes, not only in entries (issue 9: memory bounded in bytes).

32 entries of a few bytes each and 32 entries of megabytes each (a key or template holding
request data: an echoed tool list) used to be the same to :class:`Memo`; and Ollama's
per-generation memo (reply templates keyed on the request's echoed fields) was a plain dict.
"""

from __future__ import annotations

import gc
import json
import sys

import pytest

from mockoss.harmony import completion as completion_module
from mockoss.harmony.completion import MEMO_BYTES, MEMO_ENTRIES, Completion, Memo, memo_bytes
from mockoss.harmony.lru import ENTRY_OVERHEAD, approx_bytes
from mockoss.server.core import MockServer

MB = 1024 * 1024


def test_a_few_huge_entries_stay_within_the_bound() -> None:
    memo = Memo(limit=2 * MB)
    for i in range(5):
        memo[("big", i)] = "x" * (700 * 1024)  # 0.7 MB each: two fit, not three
        assert memo.size <= memo.limit
        assert approx_bytes(dict(memo)) <= memo.limit
    assert list(memo) == [("big", 3), ("big", 4)]  # the oldest dropped first
    assert memo[("big", 4)] == "x" * (700 * 1024)


def test_an_entry_bigger_than_the_bound_is_not_kept() -> None:
    memo = Memo(limit=1 * MB)
    memo["small"] = "s"
    memo["huge"] = "x" * (2 * MB)
    assert "huge" not in memo and "small" in memo and memo.size <= memo.limit
    memo["small"] = "y" * (2 * MB)  # a held key given a value too big: dropped, not kept stale
    assert "small" not in memo and memo.size == 0


def test_the_huge_key_counts_too() -> None:
    memo = Memo(limit=1 * MB)
    tools = tuple(f"tool_{i}_" + "d" * 1000 for i in range(2000))  # ~2 MB of request data in a key
    memo[("lmstudio", None, tools)] = "plan"
    assert len(memo) == 0 and memo.size == 0


def test_the_entry_bound_still_holds_for_small_entries() -> None:
    memo = Memo()
    for key in range(MEMO_ENTRIES + 5):
        memo[key] = key
    assert len(memo) == MEMO_ENTRIES and memo.size <= MEMO_BYTES


def test_sizes_are_given_back_when_entries_and_memos_go() -> None:
    gc.collect()
    before = memo_bytes()
    memo = Memo(limit=4 * MB)
    memo["a"] = "x" * MB
    memo["b"] = "y" * 1000
    held = memo.size
    assert held >= MB and memo_bytes() == before + held
    del memo["a"]
    assert memo_bytes() == before + memo.size < before + held
    assert memo.pop("b") == "y" * 1000 and memo.size == 0 and memo_bytes() == before
    other = Memo()
    other["c"] = "z" * MB
    assert memo_bytes() >= before + MB
    del other
    gc.collect()
    assert memo_bytes() == before


def test_all_memos_together_stay_within_the_total(monkeypatch: pytest.MonkeyPatch) -> None:
    gc.collect()
    monkeypatch.setattr(completion_module, "MEMO_TOTAL_BYTES", memo_bytes() + 3 * MB)
    memos = [Memo(limit=2 * MB) for _ in range(4)]
    for i, memo in enumerate(memos):
        memo["a"] = "x" * (900 * 1024)
        memo["b"] = "y" * (900 * 1024)
        assert memo_bytes() <= completion_module.MEMO_TOTAL_BYTES, i
    assert sum(len(m) for m in memos) <= 3  # the later memos keep less, or nothing
    assert sorted(memos[0]) == ["a", "b"] and len(memos[-1]) == 0  # the first keeps both; the total is full by the last


def test_a_completions_memo_is_a_bounded_memo() -> None:
    completion = Completion.from_text("<|channel|>final<|message|>hi<|return|>")
    assert isinstance(completion._memo, Memo) and completion._memo.limit == MEMO_BYTES == 8 * MB


def _responses(tools_bytes: int, i: int) -> bytes:
    description = f"{i} " + "d" * tools_bytes
    body = {"model": "gpt-oss:20b", "input": "hi", "tools": [{"type": "function", "name": "f", "description": description, "parameters": {"type": "object"}}]}
    return json.dumps(body).encode()


def test_ollama_reply_templates_keyed_on_request_data_stay_within_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ollama's /v1/responses memoises a reply template per request echo (tools, text, reasoning)
    on the generation: a distinct tool list per request used to add an entry each, for good (a
    plain dict). Here 40 requests with 8 KB of tools each, under a 64 KB bound."""
    monkeypatch.setattr(completion_module, "MEMO_BYTES", 64 * 1024)
    server = MockServer(scenario="clean-answer", profile="ollama")
    for i in range(40):
        reply = server.handle("responses", _responses(8 * 1024, i), {})
        assert reply.status == 200
    scenario = server._scenario_for({})
    completion = scenario.rules[0].steps[0].completion
    generations = [v for v in completion._memo.values() if hasattr(v, "memo")]
    assert generations
    for generation in generations:
        assert isinstance(generation.memo, Memo)
        assert generation.memo.size <= generation.memo.limit
        assert approx_bytes(dict(generation.memo)) <= generation.memo.limit + ENTRY_OVERHEAD * MEMO_ENTRIES
        assert len(generation.memo) < 40


def test_approx_bytes_counts_what_a_value_holds_at_any_depth() -> None:
    text = "x" * 10_000
    assert approx_bytes(text) == sys.getsizeof(text)
    assert approx_bytes((text, text)) == sys.getsizeof((text, text)) + 2 * sys.getsizeof(text)  # leaves counted per reference
    deep: object = "leaf"
    for _ in range(100_000):
        deep = [deep]
    assert approx_bytes(deep) >= 100_000 * sys.getsizeof([None])
    assert approx_bytes(deep, limit=1000) < 2000  # stops soon after the limit

    class Slotted:
        __slots__ = ("payload",)

        def __init__(self) -> None:
            self.payload = "p" * 5000

    assert approx_bytes(Slotted()) > 5000
    completion = Completion.from_text("<|channel|>final<|message|>hi<|return|>")
    assert approx_bytes(("plan", completion), opaque=(Completion,)) < approx_bytes(("plan", completion))


def test_approx_bytes_estimates_long_sequences_from_samples_close_to_the_full_count() -> None:
    """Long sequences are sampled (SAMPLED_ITEMS), which kept the first request on a 10,000-token
    completion at 65 ms instead of 125 (benchmarks/bench_first_request.py); the estimate of a
    sequence of like items stays within a few per cent of the full walk."""
    from mockoss.harmony import lru

    tokens = [tuple(range(n % 7, n % 7 + 5)) for n in range(20_000)]
    chunks = [f"chunk {n} " * (1 + n % 3) for n in range(20_000)]
    for value in (tokens, chunks, (tokens, chunks)):
        full = 0
        seen: set[int] = set()
        pending = [value]
        while pending:  # the full walk, by hand
            obj = pending.pop()
            if isinstance(obj, (list, tuple)):
                if id(obj) in seen:
                    continue
                seen.add(id(obj))
                pending.extend(obj)
            full += sys.getsizeof(obj)
        estimate = lru.approx_bytes(value)
        assert abs(estimate - full) <= 0.05 * full, (estimate, full)


def test_long_sequences_of_leaves_are_counted_exactly_whatever_their_sizes() -> None:
    """A review's reproducers: a 65-item tuple holding a 20 MB string at index 64, and a set of
    tool names with two of 3 MB, were estimated at a few KB by sampling; sequences of leaves
    (where request data sits) are now summed exactly."""
    from mockoss.harmony.lru import approx_bytes

    big = "x" * 20_000_000
    items = tuple(["a"] * 64 + [big])
    assert approx_bytes(items) == sys.getsizeof(items) + 64 * sys.getsizeof("a") + sys.getsizeof(big)
    names = frozenset([f"t{i}" for i in range(64)] + ["y" * 3_000_000, "z" * 3_000_000])
    assert approx_bytes(names) >= 6_000_000
