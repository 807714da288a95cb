"""A completion's memo is bounded (issue 9: memory bounded in bytes): requests that differ only in
``max_tokens`` used to add an entry each, for good (20,000 distinct values: +390 MB)."""

from __future__ import annotations

import json

from mockoss.harmony.completion import MEMO_ENTRIES, Memo
from mockoss.server.core import MockServer


def _chat(max_tokens: int, stream: bool = False) -> bytes:
    body = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], "max_tokens": max_tokens, "stream": stream}
    return json.dumps(body).encode()


def test_memo_keeps_at_most_its_bound_oldest_dropped_first() -> None:
    memo = Memo()
    for key in range(MEMO_ENTRIES + 10):
        memo[key] = key
    assert len(memo) == MEMO_ENTRIES
    assert list(memo) == list(range(10, MEMO_ENTRIES + 10))
    memo[20] = "again"  # a key already held: stored in place, nothing dropped
    assert len(memo) == MEMO_ENTRIES and memo[20] == "again" and 10 in memo


def test_distinct_max_tokens_do_not_grow_a_completions_memo_and_replies_stay_the_same() -> None:
    server = MockServer(scenario="clean-answer", seed=3)
    first = [server.handle("chat", _chat(1000 + i, stream=i % 2 == 1), {}) for i in range(4)]
    for i in range(400):
        server.handle("chat", _chat(2000 + i, stream=i % 2 == 1), {})
    scenario = server._scenario_for({})
    completions = {id(step.completion): step.completion for rule in scenario.rules for step in rule.steps if step.completion is not None}
    assert completions and all(len(c._memo) <= MEMO_ENTRIES for c in completions.values())
    again = MockServer(scenario="clean-answer", seed=3)
    # The first replies' entries were dropped long ago: computed again, the same bytes (ids from seed and index).
    assert [again.handle("chat", _chat(1000 + i, stream=i % 2 == 1), {}) for i in range(4)] == first
