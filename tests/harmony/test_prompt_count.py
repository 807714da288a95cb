"""Incremental prompt token counts equal the length of the real renderer's prompt.

:mod:`mockoss.harmony.prompt.count` sums cached per-message counts; it rests on openai-harmony
rendering a conversation as its messages rendered one by one (no BPE merge across the special
tokens between them). Both the claim and the counts are checked here against the installed Harmony
library, on the scenario library's requests and on random conversations.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import Conversation, DeveloperContent, RenderOptions, Role

from mockoss.endpoints import clear_prompt_caches, prompt_tokens
from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.lru import ENTRY_OVERHEAD, BytesLRU
from mockoss.harmony.prompt import count as count_module
from mockoss.harmony.prompt import render_chat_prompt, render_responses_prompt
from mockoss.harmony.prompt.chat import _chat_messages
from mockoss.harmony.prompt.count import cache_size, count_chat_prompt, count_responses_prompt
from mockoss.harmony.prompt.responses import _responses_messages
from mockoss.server.core import MockServer

WORDS = ["hello", " world", "ls -la", "é", "日本語", "\n\n", "  ", "{", '"x": 1', "<|end|>", "analysis", "to=functions.x"]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6)))


def _content(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.6:
        return _text(rng)
    if kind < 0.7:
        return None
    return [
        rng.choice([{"type": "text", "text": _text(rng)}, {"type": "image_url", "image_url": {"url": "x"}}, _text(rng)])
        for _ in range(rng.randint(0, 3))
    ]


def _tools(rng: random.Random, responses: bool) -> list[dict[str, Any]]:
    tools = []
    for i in range(rng.choice([0, 0, 1, 3])):
        spec: dict[str, Any] = {"name": f"tool_{i}"}
        if rng.random() < 0.7:
            spec["description"] = _text(rng)
        if rng.random() < 0.7:
            spec["parameters"] = {"type": "object", "properties": {"path": {"type": "string", "description": _text(rng)}}}
        tools.append({"type": "function", **spec} if responses else {"type": "function", "function": spec})
    if responses:
        tools += [{"type": t} for t in ("web_search_preview", "code_interpreter", "container") if rng.random() < 0.3]
    return tools


def random_chat(rng: random.Random) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if rng.random() < 0.5:
        messages.append({"role": rng.choice(["system", "developer"]), "content": _content(rng)})
    ids: list[str] = []
    for _ in range(rng.randint(0, 10)):
        role = rng.choice(["user", "user", "assistant", "assistant", "tool", "system", "function"])
        msg: dict[str, Any] = {"role": role, "content": _content(rng)}
        if role == "assistant":
            if rng.random() < 0.5:
                msg[rng.choice(["reasoning", "reasoning_content"])] = _text(rng)
            if rng.random() < 0.4:
                calls = [
                    {"id": f"c{len(ids) + i}", "type": "function", "function": {"name": f"tool_{i}", "arguments": '{"a":1}'}}
                    for i in range(rng.randint(1, 2))
                ]
                ids += [c["id"] for c in calls]
                msg["tool_calls"] = calls
        if role == "tool":
            msg["tool_call_id"] = rng.choice([*ids, "unknown"]) if ids else "unknown"
        messages.append(msg)
    body: dict[str, Any] = {"model": "m", "messages": messages}
    if rng.random() < 0.6:
        body["tools"] = _tools(rng, responses=False)
    if rng.random() < 0.4:
        body["reasoning_effort"] = rng.choice(["low", "medium", "high", "none", None])
    if rng.random() < 0.2:
        body["tool_choice"] = "none"
    return body


def random_responses(rng: random.Random) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m"}
    if rng.random() < 0.3:
        body["input"] = _text(rng)
    else:
        items: list[dict[str, Any]] = []
        for i in range(rng.randint(0, 8)):
            kind = rng.choice(["message", "message", "function_call", "function_call_output", "reasoning", "other"])
            if kind == "message":
                item: dict[str, Any] = {
                    "role": rng.choice(["user", "assistant", "system", "developer", "tool"]),
                    "content": rng.choice([_text(rng), [{"type": "input_text", "text": _text(rng)}]]),
                }
                if rng.random() < 0.5:
                    item["type"] = "message"
            elif kind == "function_call":
                item = {"type": kind, "call_id": f"c{i % 3}", "name": f"tool_{i}", "arguments": "{}"}
            elif kind == "function_call_output":
                item = {"type": kind, "call_id": f"c{rng.randint(0, 3)}", "output": rng.choice([_text(rng), [{"text": _text(rng)}]])}
            elif kind == "reasoning":
                item = {"type": kind, "content": [{"type": "reasoning_text", "text": _text(rng)}] * rng.randint(0, 2)}
            else:
                item = {"type": "item_reference", "id": "x"}
            items.append(item)
        body["input"] = items
    if rng.random() < 0.4:
        body["instructions"] = rng.choice([_text(rng), [{"type": "input_text", "text": _text(rng)}], None])
    if rng.random() < 0.6:
        body["tools"] = _tools(rng, responses=True)
    if rng.random() < 0.4:
        body["reasoning"] = {"effort": rng.choice(["low", "high", "minimal"])}
    if rng.random() < 0.4:  # vLLM's previous_input_messages, chat and Harmony formats
        body["previous_input_messages"] = [_previous_input(rng) for _ in range(rng.randint(0, 5))]
    return body


def _previous_input(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.5:
        entry: dict[str, Any] = {
            "author": {"role": rng.choice(["user", "assistant", "tool", "system", "developer", "nobody"])},
            "content": rng.choice([_text(rng), [{"type": "text", "text": _text(rng)}], None]),
        }
        if rng.random() < 0.6:
            entry["channel"] = rng.choice(["analysis", "final", "commentary"])
        if rng.random() < 0.3:
            entry["recipient"], entry["content_type"] = "functions.tool_0", "json"
        if rng.random() < 0.2:
            entry["author"]["name"] = "functions.tool_1"
        return entry
    role = rng.choice(["user", "assistant", "tool", "system", "developer"])
    entry = {"role": role, "content": _content(rng)}
    if role == "assistant" and rng.random() < 0.5:
        entry["tool_calls"] = [{"function": {"name": f"tool_{i}", "arguments": rng.choice(['{"a":1}', None])}} for i in range(2)]
    if role == "tool":
        entry["name"] = rng.choice(["tool_0", "functions.tool_1", ""])
    return entry


@pytest.mark.parametrize("seed", range(60))
def test_a_conversation_renders_as_its_messages_rendered_one_by_one(seed: int) -> None:
    """The claim the count rests on, against the real renderer: no token spans two messages."""
    rng = random.Random(seed)
    encoding = load_encoding()
    for messages in (_chat_messages(random_chat(rng), "2026-01-01", False), _responses_messages(random_responses(rng), "2026-01-01", True)):
        whole = encoding.render_conversation_for_completion(
            Conversation.from_messages(messages), Role.ASSISTANT, config=None
        )
        functions = any(
            (tools := getattr(c, "tools", None)) and tools.get("functions") and tools["functions"].tools
            for m in messages
            for c in m.content
            if isinstance(c, DeveloperContent)
        )
        pieces: list[int] = []
        last_assistant = [m for m in messages if m.author.role == Role.ASSISTANT][-1:]
        drop = bool(last_assistant) and last_assistant[0].channel == "final"
        first_final = next((i for i, m in enumerate(messages) if m.channel == "final"), len(messages))
        for i, message in enumerate(messages):
            if drop and i < first_final and message.channel == "analysis":
                continue
            pieces += encoding.render(message, RenderOptions(conversation_has_function_tools=functions))
        assert whole == pieces + encoding.encode("<|start|>assistant", allowed_special="all")


@pytest.mark.parametrize("seed", range(150))
def test_counts_equal_the_rendered_prompt_on_random_conversations(seed: int) -> None:
    rng = random.Random(seed)
    chat, responses = random_chat(rng), random_responses(rng)
    exclude, builtin = rng.random() < 0.5, rng.random() < 0.5
    for _ in range(2):  # cold, then from the cache
        assert count_chat_prompt(chat, exclude_tools_when_tool_choice_none=exclude) == len(
            render_chat_prompt(chat, exclude_tools_when_tool_choice_none=exclude)
        )
        assert count_responses_prompt(responses, builtin_tools=builtin) == len(
            render_responses_prompt(responses, builtin_tools=builtin)
        )


@pytest.mark.parametrize("seed", range(20))
def test_counts_stay_exact_as_a_conversation_grows_turn_by_turn(seed: int) -> None:
    """The agent pattern: each request resends the previous ones' messages plus new ones."""
    rng = random.Random(1000 + seed)
    full = random_chat(rng)
    for end in range(len(full["messages"]) + 1):
        body = {**full, "messages": full["messages"][:end]}
        assert count_chat_prompt(body) == len(render_chat_prompt(body))


def _library_bodies() -> list[tuple[str, dict[str, Any]]]:
    directory = Path(__file__).resolve().parents[1] / "scenarios"
    sys.path.insert(0, str(directory))
    try:
        modules = {}
        for name in ("library_support", "library_table_parser", "library_table_servers"):
            spec = importlib.util.spec_from_file_location(name, directory / f"{name}.py")
            modules[name] = importlib.util.module_from_spec(spec)
            sys.modules.setdefault(name, modules[name])
            spec.loader.exec_module(modules[name])  # type: ignore[union-attr]
    finally:
        sys.path.remove(str(directory))
    cases = {**modules["library_table_parser"].PARSER_CASES, **modules["library_table_servers"].SERVER_CASES}
    support = modules["library_support"]
    return [
        (f"{name}-{endpoint}", support.request_body(endpoint, case.tools, case.extra))
        for name, case in sorted(cases.items())
        for endpoint in ("chat", "responses")
    ]


@pytest.mark.parametrize(("name", "body"), _library_bodies())
def test_counts_equal_the_rendered_prompt_on_the_scenario_library_requests(name: str, body: dict[str, Any]) -> None:
    if name.endswith("-chat"):
        assert count_chat_prompt(body) == len(render_chat_prompt(body))
    else:
        assert count_responses_prompt(body) == len(render_responses_prompt(body))


@pytest.mark.parametrize(
    "body",
    [
        {"messages": [{"role": "user", "content": "bad \ud800 surrogate"}]},
        {"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {"x": float("nan")}}}]},
    ],
)
def test_bodies_the_renderer_rejects_are_counted_like_the_repaired_render(body: dict[str, Any]) -> None:
    assert count_chat_prompt(body) == len(render_chat_prompt(body))


def test_prompt_tokens_counts_chat_and_responses_bodies_incrementally() -> None:
    chat = {"model": "m", "messages": [{"role": "user", "content": "What is 2 + 2?"}]}
    responses = {"model": "m", "input": "What is 2 + 2?"}
    assert prompt_tokens("chat", json.dumps(chat).encode()) == len(render_chat_prompt(chat))
    assert prompt_tokens("responses", json.dumps(responses).encode()) == len(render_responses_prompt(responses))


def test_reset_clears_the_prompt_caches() -> None:
    server = MockServer("clean-answer")
    server.handle("chat", json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}).encode(), {})
    assert cache_size() > 0
    server.reset()
    assert cache_size() == 0


def test_the_message_cache_is_bounded_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # A plain user message ({"role", "content"} only) is kept by its text (_user_texts), any other in _messages.
    for name, extra in (("_messages", {"name": "u"}), ("_user_texts", {})):
        small: BytesLRU[Any] = BytesLRU(64 * 1024)
        monkeypatch.setattr(count_module, name, small)
        for i in range(200):  # 200 distinct 2 KB messages: about 400 KB of keys
            body = {"messages": [{"role": "user", "content": f"{i} " + "x" * 2000, **extra}]}
            assert count_chat_prompt(body) == len(render_chat_prompt(body))
        assert 0 < small.size <= 64 * 1024 and len(small) < 200
    clear_prompt_caches()


def test_bytes_lru_evicts_least_recently_used_first() -> None:
    cache: BytesLRU[int] = BytesLRU(3 * (100 + ENTRY_OVERHEAD))
    for key in "abc":
        cache.put(key, 1, 100)
    assert cache.get("a") == 1  # "b" is now the oldest
    cache.put("d", 1, 100)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("d") == 1
    cache.put("huge", 1, 10**6)  # larger than the budget: not stored, nothing evicted
    assert cache.get("huge") is None and len(cache) == 3
    cache.clear()
    assert len(cache) == 0 and cache.size == 0
