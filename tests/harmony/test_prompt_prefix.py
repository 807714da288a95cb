"""The cheap paths of the prompt count stay exact and are taken.

:mod:`mockoss.harmony.prompt.prefix` finds an agent's resent messages in one lookup; the counts
must still equal ``len(render_chat_prompt(body))`` whatever follows the prefix (a later call that
redeclares a call id, an analysis drop across the boundary), and the prefix must actually be found
when bodies are parsed fresh for every request, as the server does. Also the caches themselves:
:class:`~mockoss.harmony.lru.ClockCache` (second chance, bounded in bytes), the doorkeeper of
:meth:`~mockoss.harmony.lru.BytesLRU.offer`, and the direct call of openai-harmony's BPE.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from test_prompt_count import random_chat, random_responses

from mockoss import endpoints
from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.lru import ENTRY_OVERHEAD, BytesLRU, ClockCache
from mockoss.harmony.prompt import bpe, render_chat_prompt, render_responses_prompt
from mockoss.harmony.prompt import count as count_module
from mockoss.harmony.prompt.count import clear_caches, count_chat_prompt, count_responses_prompt
from mockoss.harmony.prompt.prefix import MAX_TRIES, PrefixCache

TOOLS = [{"type": "function", "function": {"name": f"tool_{k}", "parameters": {"type": "object"}}} for k in range(3)]


def _fresh(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the server has it: parsed from its bytes, no object shared with earlier ones."""
    return json.loads(json.dumps(body))


def _agent(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an agent."}]
    for k in range(turns):
        messages.append({"role": "user", "content": f"Task {k}: look at file {k}."})
        call = {"id": f"call_{k}", "type": "function", "function": {"name": f"tool_{k % 3}", "arguments": json.dumps({"n": k})}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{k}", "content": f"result {k}"})
    return messages


def _record_finds(monkeypatch: pytest.MonkeyPatch, cache: Any) -> Any:
    """Clear the caches, record the length of each prefix ``cache.find`` finds (0: none), yield
    the record, clear again."""
    clear_caches()
    found: list[int] = []
    original = cache.find

    def find(messages: Any) -> Any:
        prefix = original(messages)
        found.append(prefix.length if prefix is not None else 0)
        return prefix

    monkeypatch.setattr(cache, "find", find)
    yield found
    clear_caches()


@pytest.fixture
def hits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the prefixes found, one entry per lookup (0: none found)."""
    yield from _record_finds(monkeypatch, count_module._prefixes)


def test_a_growing_agent_conversation_is_found_again_every_turn_and_counted_exactly(hits: list[int]) -> None:
    full = _agent(12)
    ends = range(10, len(full) + 1, 2)
    for end in ends:
        body = _fresh({"model": "m", "messages": full[:end], "tools": TOOLS})
        assert count_chat_prompt(body) == len(render_chat_prompt(body))
    # A turn stores the run of messages it found counted (all but its own two new ones); from the
    # third turn on, that run of the turn before is found: all but the last four messages.
    assert hits[:2] == [0, 0] and hits[2:] == [end - 4 for end in ends[2:]]


def test_a_resent_prefix_with_a_new_tail_is_found(hits: list[int]) -> None:
    seen = _agent(5)
    for n in range(6):
        tail = [{"role": "assistant", "content": f"Step {n} done."}, {"role": "user", "content": f"Now step {n + 1}."}]
        body = _fresh({"model": "m", "messages": seen + tail, "tools": TOOLS})
        assert count_chat_prompt(body) == len(render_chat_prompt(body))
    assert hits[:2] == [0, 0] and hits[2:] == [len(seen)] * 4


def test_the_server_finds_the_prefix_of_an_agent_turn(hits: list[int]) -> None:
    """Through ``MockServer.respond`` (its own parse, validation and views before the count): the
    marshal bytes of a resent prefix must not depend on what else the request path references."""
    from mockoss.server.core import MockServer

    server = MockServer("clean-answer")
    seen = _agent(6)
    for n in range(5):
        tail = [{"role": "user", "content": f"Now step {n}."}]
        raw = json.dumps({"model": "openai/gpt-oss-20b", "messages": seen + tail, "tools": TOOLS}).encode()
        server.respond("chat", raw, {})
    assert hits[:2] == [0, 0] and hits[2:] == [len(seen)] * 3


def test_a_later_call_that_redeclares_an_id_of_the_prefix_is_counted_exactly(hits: list[int]) -> None:
    """vLLM names a tool result by the last call declaring its id, even a later one."""
    seen = _agent(4)
    for turn in range(4):
        body = _fresh({"model": "m", "messages": [*seen, {"role": "user", "content": f"again {turn}"}]})
        assert count_chat_prompt(body) == len(render_chat_prompt(body))
    assert hits[-1] == len(seen)
    clash = {"id": "call_1", "type": "function", "function": {"name": "a_much_longer_tool_name", "arguments": "{}"}}
    body = _fresh({"model": "m", "messages": [*seen, {"role": "assistant", "content": None, "tool_calls": [clash]}]})
    assert count_chat_prompt(body) == len(render_chat_prompt(body))
    # And a prefix is not stored from a request whose later call renamed one of its results.
    clear_caches()
    for turn in range(3):
        body = _fresh({"model": "m", "messages": [*seen, {"role": "user", "content": f"u{turn}"}, {"role": "assistant", "content": None, "tool_calls": [clash]}]})
        assert count_chat_prompt(body) == len(render_chat_prompt(body))
    plain = _fresh({"model": "m", "messages": [*seen, {"role": "user", "content": "plain"}]})
    assert count_chat_prompt(plain) == len(render_chat_prompt(plain))


def test_an_analysis_drop_across_the_prefix_boundary_is_counted_exactly(hits: list[int]) -> None:
    seen = _agent(3)
    seen[3] = {**seen[3], "reasoning": "I should call a tool."}  # an analysis turn inside the prefix
    for n in range(4):
        tail: list[dict[str, Any]] = [{"role": "user", "content": f"next {n}"}]
        if n % 2:
            tail.append({"role": "assistant", "content": f"Final answer {n}."})  # drops the analysis turn
        body = _fresh({"model": "m", "messages": seen + tail})
        assert count_chat_prompt(body) == len(render_chat_prompt(body))
    assert any(hits)


@pytest.mark.parametrize("seed", range(40))
def test_random_conversations_grown_turn_by_turn_with_prefixes_everywhere(seed: int, hits: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Prefixes from two messages on, random conversations (every role, content shape, reasoning,
    tool calls with clashing and unknown ids), each turn parsed fresh: counts stay exact."""
    monkeypatch.setattr(count_module, "PREFIX_MIN", 2)
    rng = random.Random(5000 + seed)
    full = random_chat(rng)
    full["messages"] += random_chat(rng)["messages"]
    for msg in full["messages"]:  # later calls redeclaring earlier ids, as some clients do
        for call in msg.get("tool_calls", []):
            if rng.random() < 0.4:
                call["id"] = rng.choice(["c0", "c1"])
        if msg["role"] == "tool" and rng.random() < 0.5:
            msg["tool_call_id"] = rng.choice(["c0", "c1"])
    for end in range(len(full["messages"]) + 1):
        for _ in range(2):  # a turn, and the same turn resent
            body = _fresh({**full, "messages": full["messages"][:end]})
            assert count_chat_prompt(body) == len(render_chat_prompt(body))


def test_the_random_growth_test_does_use_prefixes(hits: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(count_module, "PREFIX_MIN", 2)
    for seed in range(10):
        rng = random.Random(5000 + seed)
        full = random_chat(rng)
        for end in range(len(full["messages"]) + 1):
            count_chat_prompt(_fresh({**full, "messages": full["messages"][:end]}))
    assert sum(1 for length in hits if length) > 10


@pytest.fixture
def item_hits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """As ``hits``, for the prefixes of Responses input items."""
    yield from _record_finds(monkeypatch, count_module._item_prefixes)


def _responses_agent(turns: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for k in range(turns):
        items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"Task {k}."}]})
        items.append({"type": "reasoning", "content": [{"type": "reasoning_text", "text": f"I will call tool_{k % 3}."}]})
        items.append({"type": "function_call", "call_id": f"call_{k}", "name": f"tool_{k % 3}", "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"call_{k}", "output": f"result {k}"})
    return items


def test_a_growing_responses_agent_finds_its_items_and_counts_exactly(item_hits: list[int]) -> None:
    """A result's tool name comes from a call inside the prefix: the prefix carries the names."""
    full = _responses_agent(6)
    ends = range(8, len(full) + 1, 2)
    for end in ends:
        body = _fresh({"model": "m", "instructions": "Be brief.", "tools": [{"type": "function", "name": "tool_0"}], "input": full[:end]})
        assert count_responses_prompt(body) == len(render_responses_prompt(body))
    assert item_hits[:2] == [0, 0] and item_hits[2:] == [end - 4 for end in ends[2:]]


def test_the_server_finds_the_prefix_of_a_responses_agent_turn(item_hits: list[int]) -> None:
    from mockoss.server.core import MockServer

    server = MockServer("clean-answer")
    seen = _responses_agent(4)
    for n in range(5):
        tail = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"Now step {n}."}]}]
        raw = json.dumps({"model": "openai/gpt-oss-20b", "input": seen + tail, "tools": [{"type": "function", "name": "tool_0"}]}).encode()
        server.respond("responses", raw, {})
    assert item_hits[:2] == [0, 0] and item_hits[2:] == [len(seen)] * 3


def test_a_responses_prefix_then_a_final_answer_drops_its_reasoning_exactly(item_hits: list[int]) -> None:
    seen = _responses_agent(3)
    for n in range(4):
        tail: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": f"next {n}"}]
        if n % 2:
            tail.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"Done {n}."}]})
        body = _fresh({"model": "m", "input": seen + tail})
        assert count_responses_prompt(body) == len(render_responses_prompt(body))
    assert item_hits[2:] == [len(seen)] * 2


def _random_items(rng: random.Random) -> dict[str, Any]:
    """A random Responses body whose ``input`` is a list of two random bodies' items."""
    bodies = [random_responses(rng) for _ in range(6)]
    full = next(b for b in bodies if isinstance(b.get("input"), list))
    for other in bodies:
        if other is not full and isinstance(other.get("input"), list):
            full["input"] += other["input"]
            break
    return full


@pytest.mark.parametrize("seed", range(40))
def test_random_responses_inputs_grown_item_by_item_with_prefixes_everywhere(seed: int, item_hits: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(count_module, "PREFIX_MIN", 2)
    rng = random.Random(7000 + seed)
    full = _random_items(rng)
    for end in range(len(full["input"]) + 1):
        for _ in range(2):
            body = _fresh({**full, "input": full["input"][:end]})
            for builtin in (False, True):
                assert count_responses_prompt(body, builtin_tools=builtin) == len(render_responses_prompt(body, builtin_tools=builtin))


def test_the_random_responses_growth_does_use_prefixes(item_hits: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(count_module, "PREFIX_MIN", 2)
    for seed in range(20):
        full = _random_items(random.Random(7000 + seed))
        for end in range(len(full["input"]) + 1):
            count_responses_prompt(_fresh({**full, "input": full["input"][:end]}))
    assert sum(1 for length in item_hits if length) > 10


def test_the_prefix_cache_is_bounded_in_entries_and_bytes() -> None:
    cache = PrefixCache(limit=4000)  # an entry: ~940 bytes (its objects, ~16 KB counted, are not kept)
    for n in range(40):
        messages = _fresh([{"role": "user", "content": f"{n} " + "x" * 900}, {"role": "user", "content": "y"}])
        cache.store(messages, 2, lambda n=n: count_module.Prefix(2, n, False, ((n, False, None),), {}, frozenset()))
    assert 0 < len(cache) <= 4 and 0 < cache.size <= 4000
    found = cache.find(_fresh([{"role": "user", "content": "39 " + "x" * 900}, {"role": "user", "content": "y"}, {"role": "user"}]))
    assert found is not None and found.tokens == 39
    assert cache.find(_fresh([{"role": "user", "content": "0 " + "x" * 900}, {"role": "user", "content": "y"}])) is None
    cache.clear()
    assert len(cache) == 0


def test_a_lookup_gives_up_after_max_tries_prefixes_whose_bytes_differ() -> None:
    """Prefixes sharing their last message but not their first: each mismatch costs a marshal."""
    cache = PrefixCache(limit=10**6)
    runs = [_fresh([{"role": "user", "content": f"first {n}"}, {"role": "user", "content": "same"}]) for n in range(4)]
    for n, run in enumerate(runs):
        cache.store(run, 2, lambda n=n: count_module.Prefix(2, n, False, ((n, False, None),), {}, frozenset()))
    assert cache.find(_fresh(runs[3])).tokens == 3  # the newest
    assert cache.find(_fresh(runs[2])).tokens == 2  # one mismatch first
    assert cache.find(_fresh(runs[0])) is None  # two mismatches (runs 2 and 3 now lead): given up
    assert MAX_TRIES == 2


def test_a_prefix_stored_after_a_shorter_one_matches_on_every_segment() -> None:
    """A turn's prefix extends the key of the prefix it found by the bytes of the messages in
    between: a request that differs only there (same first messages, same last one) must not
    take it."""
    cache = PrefixCache(limit=10**6)
    messages = _fresh([{"role": "user", "content": c} for c in "abcd"])
    short = count_module.Prefix(2, 2, False, ((1, False, None),) * 2, {}, frozenset())
    cache.store(messages, 2, lambda: short)
    cache.store(messages, 4, lambda: count_module.Prefix(4, 4, False, ((1, False, None),) * 4, {}, frozenset()), after=short)
    assert [len(entry[1]) for entry in cache._entries] == [2, 1]  # two segments, then one
    assert cache.find(_fresh([{"role": "user", "content": c} for c in "abcde"])).length == 4
    assert cache.find(_fresh([{"role": "user", "content": c} for c in "abXd"])).length == 2


def test_a_prefix_is_matched_on_exact_data_only() -> None:
    """``==`` says ``1 == 1.0 == True``; the marshal bytes that decide do not."""
    cache = PrefixCache(limit=10**6)
    stored = [{"role": "user", "content": "a", "n": 1}, {"role": "user", "content": "b"}]
    cache.store(_fresh(stored), 2, lambda: count_module.Prefix(2, 7, False, ((7, False, None),), {}, frozenset()))
    assert cache.find(_fresh(stored)) is not None
    for other in (1.0, True):
        assert cache.find(_fresh([{"role": "user", "content": "a", "n": other}, {"role": "user", "content": "b"}])) is None
    assert cache.find(_fresh([{"n": 1, "role": "user", "content": "a"}, {"role": "user", "content": "b"}])) is None


def test_clock_cache_gives_a_used_entry_a_second_chance_and_stays_in_its_budget() -> None:
    cache: ClockCache[int] = ClockCache(3 * (100 + ENTRY_OVERHEAD))
    for key in "abc":
        cache.put(key, 1, 100)
    assert cache.get("a") == 1  # "a" is used: "b" is evicted first
    cache.put("d", 1, 100)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 1 and cache.get("d") == 1
    assert cache.size == 3 * (100 + ENTRY_OVERHEAD) and len(cache) == 3
    cache.put("e", 1, 100)  # every entry used: one sweep unmarks them, then the oldest goes
    assert len(cache) == 3 and cache.size <= cache.limit and cache.get("e") == 1
    cache.put("huge", 1, 10**6)  # larger than the budget: not stored
    assert cache.get("huge") is None and len(cache) == 3
    cache.put("e", 2, 50)  # a new value replaces the old one and its size
    assert cache.get("e") == 2 and cache.size == 2 * (100 + ENTRY_OVERHEAD) + 50 + ENTRY_OVERHEAD
    cache.clear()
    assert len(cache) == 0 and cache.size == 0


def test_bytes_lru_offer_stores_a_key_from_its_second_offer_on() -> None:
    cache: BytesLRU[int] = BytesLRU(10**6)
    assert cache.offer("a", 1, 10) == 1 and cache.get("a") is None
    assert cache.offer("a", 1, 10) == 1 and cache.get("a") == 1
    cache.offer("b", 2, 10)
    cache.clear()
    cache.offer("b", 2, 10)
    assert cache.get("b") is None  # clear() forgot the first offer too


def test_prompt_tokens_keeps_a_body_from_its_second_sighting_on() -> None:
    endpoints.clear_prompt_caches()
    raw = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello there"}]}).encode()
    expected = len(render_chat_prompt(json.loads(raw)))
    assert endpoints.prompt_tokens("chat", raw) == expected and len(endpoints._counts) == 0
    assert endpoints.prompt_tokens("chat", raw) == expected and len(endpoints._counts) == 1
    assert endpoints.prompt_tokens("chat", raw) == expected
    endpoints.clear_prompt_caches()


@pytest.mark.parametrize("text", ["", "hello world", "<|end|> and <|start|>", "é日本語 \n\n  x", "to=functions.x <|constrain|>json"])
def test_the_direct_bpe_call_agrees_with_openai_harmony_encode(text: str) -> None:
    assert bpe.encoder()(text, []) == load_encoding().encode(text, disallowed_special=())


@pytest.mark.parametrize(
    "message",
    [
        {"role": "assistant", "content": "Plain answer."},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": "text", "reasoning": ""},
        {"role": "assistant", "content": "text", "reasoning_content": "thinking"},
        {"role": "tool", "tool_call_id": "c1", "content": "result"},
        {"role": "tool", "tool_call_id": "nope", "content": None},
        {"role": "user", "content": None},
    ],
)
def test_the_message_fast_paths_count_as_the_renderer(message: dict[str, Any]) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    body = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": [call]}, message]}
    clear_caches()
    assert count_chat_prompt(body) == len(render_chat_prompt(body))


@pytest.mark.parametrize(
    "values",
    [
        [{"role": "user", "content": f"hi {k}"} for k in range(1000)],
        [{"role": "user", "content": "x" * 200} for _ in range(200)],
        [
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
            for k in range(300)
        ],
        [{"role": "user", "content": [{"type": "text", "text": "a"} for _ in range(100)]} for _ in range(20)],
        [{"type": "function", "function": {"name": f"t{k}", "parameters": {"type": "object", "properties": {"p": {"type": "string"}, "n": {"type": "integer"}}, "required": ["p"]}}} for k in range(20)],
    ],
)
def test_kept_objects_are_counted_at_no_less_than_their_memory(values: list) -> None:
    """Entries keep their messages' (or tools') objects for the identity checks; the bytes
    counted for them bound what they take (issue 9, the breaker's finding 3 on the splice
    cache: marshal writes a repeated key once, so its bytes alone undercount)."""
    import json
    import marshal
    import tracemalloc

    from mockoss.harmony.prompt.prefix import objects_bytes

    text = json.dumps(values)
    tracemalloc.start()
    try:
        parsed = json.loads(text)
        used = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert objects_bytes(len(marshal.dumps(parsed)), len(parsed)) >= used
