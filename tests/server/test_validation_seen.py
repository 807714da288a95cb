"""The lookup before validation (mockoss.harmony.prompt.seen) changes no decision, error or count.

:func:`mockoss.schemas.chat.quick_validate` skips the messages of a stored prefix that an accepted
request held, and tools equal to an accepted request's, and hands its lookup to the prompt count.
Every test here would fail if that skip accepted a body the model refuses (a changed message
inside the prefix, a prefix stored by a count alone, a changed tool, a bad new message or tool
choice), or if the count given the lookup differed from a full render. The bodies are parsed
fresh for every request, as the server has them, and the skip is shown to be taken.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from quick_support import outcome  # tests/server is on sys.path

from mockoss import endpoints, steps
from mockoss.harmony.prompt import count as count_module
from mockoss.harmony.prompt import render_chat_prompt, seen
from mockoss.harmony.prompt.count import clear_caches, count_chat_prompt
from mockoss.harmony.prompt.prefix import RECENT, Prefix, PrefixCache, RecentKeys
from mockoss.scenario.conversation import RequestFacts, body_turn
from mockoss.schemas import chat
from mockoss.schemas.chat import ChatCompletionRequest, SeenChatRequest, quick_validate
from mockoss.server.core import MockServer
from mockoss.server.validation import SLICE_ITEMS, validate_request

TOOLS = [
    {"type": "function", "function": {"name": f"tool_{k}", "description": f"tool {k}", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}}
    for k in range(5)
]
#: Messages the chat schema refuses (ChatMessageParam: role, content).
INVALID_MESSAGES: list[Any] = [
    {"role": "robot", "content": "x"}, {"role": "user", "content": ["x"]}, {"role": "user", "content": 1},
    {"content": "no role"}, {"role": "user", "content": {"a": 1}}, None, "text",
]
#: Tools the chat schema refuses (ChatToolParam, FunctionDefinition).
INVALID_TOOLS: list[Any] = [
    {"type": "function", "function": {"name": ""}}, {"type": "function", "function": {"name": 1}},
    {"type": "fn", "function": {"name": "f"}}, {"type": "function", "function": {"name": "f", "parameters": []}},
    {"type": "function"}, "tool",
]


def _fresh(body: Any) -> Any:
    """``body`` as the server has it: parsed from its bytes, no object shared with earlier ones."""
    return json.loads(json.dumps(body))


def _turn(k: int, tag: str = "") -> list[dict[str, Any]]:
    """Messages of one agent step: a user message, a tool call, its result."""
    call = {"id": f"call_{k}", "type": "function", "function": {"name": f"tool_{k % 5}", "arguments": json.dumps({"n": k})}}
    return [
        {"role": "user", "content": f"Step {k}: read file {k}{tag}."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{k}", "content": f"contents of file {k}{tag}"},
    ]


def _conversation(steps: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an agent."}]
    for k in range(steps):
        messages += _turn(k)
    return messages


def _served(body: dict[str, Any]) -> tuple[Any, int | None]:
    """What the server does with ``body``: (outcome of validate_request, the prompt count when
    accepted, given the validation's lookup as MockServer.respond gives it)."""
    result = outcome(lambda b: validate_request(ChatCompletionRequest, b), body)
    if result[0] != "accepted":
        return result, None
    request = validate_request(ChatCompletionRequest, _fresh(body))  # (outcome's request is not returned)
    counted = count_chat_prompt(body, seen=request.prompt_seen() if isinstance(request, SeenChatRequest) else None)
    return result, counted


#: Per lookup of the quick validation: how many leading messages it may skip (a validated
#: prefix's length, else 0) (recorded by the ``validated`` fixture).
SKIPPABLE: list[int] = []


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Clear the prompt caches; record how many messages each looked-up quick validation
    validated, and whether it skipped the tools (and, in :data:`SKIPPABLE`, how many messages
    each lookup let it skip); clear again."""
    clear_caches()
    sizes: list[tuple[int, bool]] = []
    original = chat._validate_seen

    def record(body: Any) -> Any:
        sizes.append((len(body["messages"]), body["tools"] is None))
        return original(body)

    def find(messages: Any, tools: Any) -> seen.Seen:
        found = seen.find_seen(messages, tools)
        SKIPPABLE.append(found.prefix.length if found.prefix is not None and found.prefix.validated else 0)
        return found

    SKIPPABLE.clear()
    monkeypatch.setattr(chat, "_validate_seen", record)
    monkeypatch.setattr(chat, "_seen_functions", lambda: (find, seen.accept_seen))
    yield sizes
    clear_caches()


def refusals_agree(model: Any, body: dict[str, Any]) -> list[Any]:
    """Both ``validate_request`` and the model refuse ``body``, with the same errors (compared as
    JSON, their ``ctx`` exceptions by repr); return them."""
    quick, whole = outcome(lambda b: validate_request(model, b), body), outcome(model.model_validate, body)
    assert quick[0] == "rejected" and quick == whole, (quick, whole)
    return json.loads(quick[1])  # type: ignore[no-any-return]


def _accept(body: dict[str, Any]) -> int:
    """Validate and count ``body`` as the server does (it must be accepted); its count."""
    request = validate_request(ChatCompletionRequest, body)
    assert isinstance(request, SeenChatRequest)
    return count_chat_prompt(body, seen=request.prompt_seen())


def test_an_agent_turn_validates_only_its_new_messages_and_counts_exactly(validated: list[tuple[int, int]]) -> None:
    full = _conversation(8)
    for end in range(10, len(full) + 1, 3):
        body = _fresh({"model": "m", "messages": full[:end], "tools": TOOLS})
        assert _accept(body) == len(render_chat_prompt(body))
        assert outcome(ChatCompletionRequest.model_validate, body)[0] == "accepted"
    # The first turn validates everything; then each turn finds the run the turn before stored
    # (all but its last three new messages, see test_prompt_prefix) and the same tools.
    assert validated[0] == (10, False)
    assert len(validated) == len(range(10, len(full) + 1, 3))  # one validation per turn
    assert all(n <= 6 and tools_skipped for n, tools_skipped in validated[2:]), validated


def test_a_changed_message_inside_a_seen_prefix_is_refused_with_the_models_error(validated: list[tuple[int, int]]) -> None:
    full = _conversation(6)
    for end in (10, 13, 16):
        _accept(_fresh({"model": "m", "messages": full[:end], "tools": TOOLS}))
    before = len(validated)
    for position in (1, 4, 7, 12):  # not the prefix's last message: the cheap filter alone would pass it
        for bad in INVALID_MESSAGES:
            messages = _fresh(full)
            messages[position] = bad
            body = {"model": "m", "messages": messages, "tools": TOOLS}
            assert quick_validate(body, SLICE_ITEMS) is None, (position, bad)
            refusals_agree(ChatCompletionRequest, body)
    assert any(n < 10 for n, _ in validated[before:])  # the skip was taken by these bodies


def test_a_prefix_stored_by_a_count_alone_is_validated_again() -> None:
    """The count also runs on bodies nobody validated (tests, the prompt-count worker, profiles
    with their own checks): what it stores must not let a refused message through."""
    clear_caches()
    try:
        full = _conversation(6)
        full[4] = {"role": "robot", "content": "rendered as nothing, refused by the schema"}
        for end in (10, 13, 16):  # counted only: prefixes holding the bad message are stored
            body = _fresh({"model": "m", "messages": full[:end], "tools": TOOLS})
            assert count_chat_prompt(body) == len(render_chat_prompt(body))
        body = _fresh({"model": "m", "messages": full[:19], "tools": TOOLS})
        found = seen.find_seen(body["messages"], body["tools"])
        assert found.prefix is not None and found.prefix.length >= 10 and not found.prefix.validated
        assert quick_validate(body, SLICE_ITEMS) is None
        errors = refusals_agree(ChatCompletionRequest, body)
        assert errors[0]["loc"][:2] == ["messages", 4]
    finally:
        clear_caches()


def test_a_bad_new_message_after_a_validated_prefix_is_refused(validated: list[tuple[int, int]]) -> None:
    full = _conversation(6)
    for end in (10, 13, 16):
        _accept(_fresh({"model": "m", "messages": full[:end], "tools": TOOLS}))
    before = len(validated)
    assert seen.find_seen(_fresh(full[:17]), None).prefix.length == 13  # type: ignore[union-attr]  # the run the turn of 13 sent
    for position in range(13, 17):  # the first message after the prefix, and on
        for bad in INVALID_MESSAGES:
            messages = _fresh(full[:17])
            messages[position] = bad
            body = {"model": "m", "messages": messages, "tools": _fresh(TOOLS)}
            assert quick_validate(body, SLICE_ITEMS) is None, (position, bad)
            refusals_agree(ChatCompletionRequest, body)
    # A key that is not a string (only a Python caller can build one) in a new message
    body = {"model": "m", "messages": [*_fresh(full[:16]), {"role": "user", 1: "x"}], "tools": _fresh(TOOLS)}
    assert quick_validate(body, SLICE_ITEMS) is None
    assert refusals_agree(ChatCompletionRequest, body)[0]["type"] == "invalid_key"
    assert any(n < 10 for n, _ in validated[before:])  # the skip was taken by these bodies


def test_tools_equal_to_validated_ones_are_skipped_and_any_other_tools_are_validated(validated: list[tuple[int, int]]) -> None:
    messages = [{"role": "user", "content": "hi"}]
    _accept(_fresh({"messages": messages, "tools": TOOLS}))
    body = _fresh({"messages": messages, "tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "tool_3"}}})
    request = validate_request(ChatCompletionRequest, body)
    assert validated[-1] == (1, True)  # the tools were not validated again
    assert request.view("m", body) == ChatCompletionRequest.model_validate(body).view("m", body)
    assert [t.name for t in request.view("m", body).tools] == [f"tool_{k}" for k in range(5)]
    # a named choice the tools do not declare, with the same (skipped) tools
    body = _fresh({"messages": messages, "tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "zz"}}})
    assert quick_validate(body, SLICE_ITEMS) is None
    assert "Tool 'zz' has not been passed" in refusals_agree(ChatCompletionRequest, body)[0]["msg"]
    for position in range(len(TOOLS)):
        for bad in INVALID_TOOLS:
            tools = _fresh(TOOLS)
            tools[position] = bad
            body = {"messages": _fresh(messages), "tools": tools}
            assert quick_validate(body, SLICE_ITEMS) is None, (position, bad)
            refusals_agree(ChatCompletionRequest, body)
    tools = _fresh(TOOLS)
    tools[2]["function"][7] = "a key that is not a string"
    assert quick_validate({"messages": _fresh(messages), "tools": tools}, SLICE_ITEMS) is None
    # the same tools with a value of another type (equal by ==, not by bytes) are validated again
    tools = _fresh(TOOLS)
    tools[0]["function"]["parameters"]["properties"]["n"]["minimum"] = 1
    before = len(validated)
    _accept({"messages": _fresh(messages), "tools": tools})
    tools = _fresh(tools)
    tools[0]["function"]["parameters"]["properties"]["n"]["minimum"] = True
    _accept({"messages": _fresh(messages), "tools": tools})
    assert [skipped for _, skipped in validated[before:]] == [False, False]


@pytest.mark.parametrize("seed", range(4))
def test_random_agent_conversations_decide_and_count_as_the_model_and_the_renderer(seed: int, validated: list[tuple[int, int]]) -> None:
    """Conversations grown turn by turn, each turn sent fresh; now and then a message anywhere
    (inside the seen prefix or new), a tool or the tool choice is made invalid for one request."""
    rng = random.Random(seed)
    for _ in range(6):
        tag = f" ({rng.random()})"  # a new conversation (the per-message cache holds the others')
        full = [{"role": "system", "content": f"agent{tag}"}]
        tools = _fresh(TOOLS[: rng.randint(0, 5)])
        for k in range(rng.randint(4, 10)):
            full += _turn(k, tag)
            if rng.random() < 0.3:
                full.append({"role": "assistant", "content": rng.choice(["done", "", None])})
            body = {"model": "m", "messages": _fresh(full), "tools": _fresh(tools)} if tools else {"model": "m", "messages": _fresh(full)}
            kind = rng.random()
            if kind < 0.15:
                body["messages"][rng.randrange(len(full))] = rng.choice(INVALID_MESSAGES)
            elif kind < 0.2 and tools:
                body["tools"][rng.randrange(len(tools))] = rng.choice(INVALID_TOOLS)
            elif kind < 0.25:
                body["tool_choice"] = rng.choice(["required", {"type": "function", "function": {"name": "tool_4"}}])
            result, counted = _served(body)
            assert result == outcome(ChatCompletionRequest.model_validate, body), body
            if counted is not None:
                assert counted == len(render_chat_prompt(body))
    assert sum(1 for n in SKIPPABLE if n >= 8) > 15, SKIPPABLE  # the shortcut was taken (often) as well as refused


def _exchanges(bodies: list[bytes], scenario: Any = "clean-answer") -> list[tuple[int, bytes, int | None]]:
    clear_caches()
    server = MockServer(scenario=scenario)
    replies = [server.handle("chat", raw, {}) for raw in bodies]
    return [(reply.status, reply.body, record.turn) for reply, record in zip(replies, server.requests)]


def test_the_server_answers_byte_for_byte_as_without_the_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same requests (valid turns, refused ones, changed tools) through MockServer, with the
    lookup and with a lookup that never finds anything: the same statuses, bytes (usage and
    error messages included) and turns (counted from the prefix on, with the lookup), for a
    scenario without and one with ``match`` checks (whose facts count the turn)."""
    full = _conversation(10)
    bodies = []
    for end in range(4, len(full) + 1, 3):
        messages = _fresh(full[:end])
        body: dict[str, Any] = {"model": "openai/gpt-oss-20b", "messages": messages, "tools": TOOLS}
        if end % 2:
            bad = _fresh(body)
            bad["messages"][end // 2] = INVALID_MESSAGES[end % len(INVALID_MESSAGES)]
            bodies.append(json.dumps(bad).encode())
        if end % 5 == 0:
            bad = _fresh(body)
            bad["tools"][1] = INVALID_TOOLS[end % len(INVALID_TOOLS)]
            bodies.append(json.dumps(bad).encode())
        bodies.append(json.dumps(body).encode())
    bodies += [bodies[-1]] * 3  # the same bytes again: the whole-body cache is skipped, the count is the same
    matching = steps.script(steps.rule(steps.final("late"), turn={"min": 4}), steps.rule(steps.final("early")))
    try:
        with_lookup = [_exchanges(bodies), _exchanges(bodies, matching)]
        statuses = {status for status, _, _ in with_lookup[0]}
        assert statuses == {200, 400} and len({turn for _, _, turn in with_lookup[0]}) > 5
        assert any(b"late" in body for _, body, _ in with_lookup[1]) and any(b"early" in body for _, body, _ in with_lookup[1])

        def finds_nothing(messages: Any, tools: Any) -> seen.Seen:
            return seen.Seen(None, None, False)

        monkeypatch.setattr(chat, "_seen_functions", lambda: (finds_nothing, seen.accept_seen))
        assert [_exchanges(bodies), _exchanges(bodies, matching)] == with_lookup
    finally:
        clear_caches()


def test_a_resent_body_the_count_cannot_render_is_estimated_and_warned_once(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A body with a seen prefix skips the whole-body cache, except for the estimate of a body
    the count failed on: its warning is not repeated."""
    clear_caches()
    try:
        full = _conversation(6)
        for end in (10, 13, 16):
            _accept(_fresh({"model": "m", "messages": full[:end], "tools": TOOLS}))
        raw = json.dumps({"model": "m", "messages": full[:19], "tools": TOOLS}).encode()

        def panics(*args: Any) -> Any:
            raise RuntimeError("a tokenizer panic")

        monkeypatch.setattr(count_module, "_count_chat", panics)
        counts = []
        for _ in range(3):
            body = json.loads(raw)
            request = validate_request(ChatCompletionRequest, body)
            assert request.prompt_seen().prefix is not None  # type: ignore[attr-defined]
            counts.append(endpoints.prompt_tokens("chat", raw, body, endpoints.request_seen(request)))
        assert counts == [len(raw) // 4] * 3
        assert sum("estimating prompt_tokens" in r.getMessage() for r in caplog.records) == 1
    finally:
        endpoints.clear_prompt_caches()


def test_a_stored_prefix_counts_its_assistant_messages_as_the_turn_does() -> None:
    """``Prefix.assistants`` (reused from the shorter prefix a turn found) is the count the chat
    turn reads; body_turn from a prefix equals body_turn from the messages."""
    clear_caches()
    try:
        rng = random.Random(7)
        full: list[Any] = [{"role": "system", "content": "s"}]
        for k in range(30):
            full += rng.choice([_turn(k, " (a)"), [{"role": "assistant", "content": rng.choice(["x", "", None])}], [{"role": "user", "content": f"u{k}"}]])
            body = _fresh({"model": "m", "messages": full, "tools": TOOLS})
            request = validate_request(ChatCompletionRequest, body)
            count_chat_prompt(body, seen=request.prompt_seen())  # type: ignore[attr-defined]
            for entry in count_module._prefixes._entries:
                prefix = entry[3]
                assert prefix.assistants == sum(isinstance(m, dict) and m.get("role") == "assistant" for m in body["messages"][: prefix.length])
            found = request.prompt_seen().prefix  # type: ignore[attr-defined]
            assert body_turn(body, found) == body_turn(body) == RequestFacts("chat", body, {}, "m", None, found).turn
        assert len(count_module._prefixes) > 5
    finally:
        clear_caches()


def test_prefix_marks_survive_a_store_of_the_same_messages() -> None:
    """A prefix stored again under the same key (the same messages) keeps its validated mark,
    and ``validate`` marks the stored prefix it is given."""
    cache = PrefixCache(limit=10**6)
    messages = _fresh([{"role": "user", "content": f"message {k}"} for k in range(4)])
    cache.store(messages, 4, lambda: Prefix(4, 4, False, ((1, False, None),) * 4, {}, frozenset()))
    found = cache.find(_fresh(messages))
    assert found is not None and not found.validated
    cache.validate(found)
    assert cache.find(_fresh(messages)).validated  # type: ignore[union-attr]
    cache.store(messages, 4, lambda: Prefix(4, 4, False, ((1, False, None),) * 4, {}, frozenset()))
    assert len(cache) == 1 and cache.find(_fresh(messages)).validated  # type: ignore[union-attr]


def test_recent_keys_are_bounded_compared_by_value_and_found_as_stored() -> None:
    keys = RecentKeys(limit=10_000)
    for k in range(RECENT + 3):
        keys.add(b"key %d" % k)
    assert len(keys._entries) == RECENT and b"key 0" not in keys and b"key %d" % (RECENT + 2) in keys
    stored = keys.find(b"key 5")
    assert stored is not None and stored is keys.find(bytes(bytearray(b"key 5")))  # the stored key, not the one asked with
    memo = keys.add(b"key 5")
    assert memo is stored[1] and keys._entries[0] is stored  # the same memo, moved first
    tools = [{"type": "function"}]
    keys.add(b"tools", tools)
    assert keys.find_object(tools)[0] == b"tools" and keys.find_object([{"type": "function"}]) is None  # by identity
    small = RecentKeys(limit=700)  # a key added without its object costs its bytes + 256
    small.add(b"y" * 200)
    small.add(b"z" * 200)  # the two do not fit together
    assert b"z" * 200 in small and b"y" * 200 not in small
    assert small.add(b"x" * 500) == {} and b"x" * 500 not in small  # larger than the whole budget: not kept
    small.clear()
    assert small.size == 0


def test_a_view_declares_the_tools_of_its_own_body() -> None:
    """The declarations kept with validated tools are those of the tools they were built from."""
    clear_caches()
    try:
        views = []
        for names in (["a", "b"], ["a", "b"], ["b", "a"], ["a", "b"]):
            tools = [{"type": "function", "function": {"name": n}} for n in names]
            body = _fresh({"messages": [{"role": "user", "content": "hi"}], "tools": tools})
            request = validate_request(ChatCompletionRequest, body)
            view = request.view("m", body)
            assert view == ChatCompletionRequest.model_validate(body).view("m", body)
            views.append([t.name for t in view.tools])
        assert views == [["a", "b"], ["a", "b"], ["b", "a"], ["a", "b"]]
        assert request.prompt_seen().tools_memo["decls"] is view.tools  # type: ignore[attr-defined]  # from the memo
    finally:
        clear_caches()


def test_reset_forgets_the_validated_tools() -> None:
    clear_caches()
    _accept(_fresh({"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}))
    assert count_module._valid_tools.size > 0
    assert seen.find_seen([], _fresh(TOOLS)).tools_validated
    clear_caches()
    assert count_module._valid_tools.size == 0
    assert not seen.find_seen([], _fresh(TOOLS)).tools_validated


def test_the_lookup_threshold_is_the_counts() -> None:
    """schemas.chat keeps its own copy (importing the count at its import would load openai-harmony)."""
    from mockoss.schemas import chat

    assert chat._LOOKUP_MESSAGES == count_module.PREFIX_MIN


def test_a_long_tools_list_is_still_kept_by_its_bytes() -> None:
    """The review of issue 9 (13th session), finding 2: counted with its objects, a list of 100
    tools (66 KB of marshal) was over the whole budget and not kept at all, so every request
    validated its tools again (545 -> 920 us). It is kept by its bytes, without its objects."""
    import marshal

    from mockoss.harmony.prompt.caches import MESSAGE_CACHE_BYTES

    keys = RecentKeys(limit=MESSAGE_CACHE_BYTES // 32)
    tools = [{"type": "function", "function": {"name": f"tool_{k}", "description": f"{k} " + "d" * 500, "parameters": {"type": "object"}}} for k in range(100)]
    key = marshal.dumps(tools)
    assert len(key) > 50_000
    keys.add(key, tools)
    assert keys.find(key) is not None and keys.find_object(tools) is None  # by its bytes only
    small = tools[:5]
    keys.add(marshal.dumps(small), small)
    assert keys.find_object(small) is not None  # a short list: by identity too
    cache = PrefixCache(limit=10**6)
    messages = _fresh([{"role": "user", "content": f"{k} " + "x" * 2000} for k in range(100)])
    cache.store(messages, 100, lambda: Prefix(100, 1, False, ((1, False, None),), {}, frozenset()))
    assert len(cache) == 1 and cache.find(_fresh(messages)) is not None  # stored by its bytes
