"""The chat template's count summed from cached parts (:mod:`mockoss.profiles.sglang.template_pieces`)
equals the whole render's, and costs what is new in a conversation.

The whole render (:func:`mockoss.profiles.sglang.template.render_prompt`: openai/gpt-oss-20b's
``chat_template.jinja`` rendered as transformers renders it, which
``tools/goldens/sglang_serving_engine.py`` matched with SGLang 0.5.23's serving code) is the
reference; the summed count must give the same number, or the same refusal, on random
conversations grown turn by turn (tool calls, tool results, analysis text, late system messages,
odd schemas, template variables).
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from mockoss.profiles.sglang import template, template_pieces
from mockoss.server.core import MockServer

WORDS = [
    "Paris",
    "é",
    "日本語",
    "  spaced  ",
    "a\nb",
    "x" * 40,
    "1234567",
    "don't",
    "<|end|>",
    "🙂",
    "",
    "null",
    '"q"',
    "{}",
]
SCHEMAS: list[dict[str, Any]] = [
    {"type": "string"},
    {"type": "integer", "default": 3},
    {"type": "array"},
    {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "number"}}}},
    {"type": ["integer", "null"]},
    {"type": "string", "enum": ["c", "f"], "description": "unit"},
    {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
    {"oneOf": [{"type": "string"}, {"type": "number", "description": "n"}]},
]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5)))


def _tools(rng: random.Random) -> list[dict[str, Any]]:
    tools = []
    for k in range(rng.randint(0, 3)):
        function: dict[str, Any] = {
            "name": f"tool_{k}",
            "parameters": {
                "type": "object",
                "properties": {f"p{j}": rng.choice(SCHEMAS) for j in range(rng.randint(0, 3))},
            },
        }
        if rng.random() < 0.95:
            function["description"] = _text(rng) or "Does things."
        tools.append({"type": "function", "function": function})
    return tools


def _turn(rng: random.Random, tools: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """One turn: a user message, then maybe a tool call and its result, then maybe an answer."""
    turn: list[dict[str, Any]] = [{"role": "user", "content": _text(rng) or "hi"}]
    if tools and rng.random() < 0.5:
        arguments = json.dumps(rng.choice([{"location": "Paris"}, {"n": 1.0, "u": "é"}, {}, {"s": "<|call|>"}]))
        call = {
            "id": f"call_{k}",
            "type": "function",
            "function": {"name": rng.choice(tools)["function"]["name"], "arguments": arguments},
        }
        turn.append({"role": "assistant", "content": rng.choice([None, "", "Let me check."]), "tool_calls": [call]})
        turn.append(
            {
                "role": "tool",
                "tool_call_id": f"call_{k}",
                "content": rng.choice([_text(rng), [{"type": "text", "text": "15 C"}]]),
            }
        )
    if rng.random() < 0.6:
        turn.append({"role": "assistant", "content": _text(rng) or "Done."})
    if rng.random() < 0.05:
        turn.append({"role": rng.choice(["system", "tool"]), "content": "late"})
    return turn


def _whole(body: dict[str, Any]) -> Any:
    try:
        text, prefix = template.render_prompt(body)
    except template.Refusal as refusal:
        return ("refused", refusal.message)
    return template.text_count(text) + (template.text_count(prefix) if prefix else 0)


def _summed(body: dict[str, Any]) -> Any:
    try:
        return template._render_count(copy.deepcopy(body))
    except template.Refusal as refusal:
        return ("refused", refusal.message)


@pytest.mark.parametrize("seed", range(6))
def test_summed_counts_are_the_whole_renders_turn_by_turn(seed):
    rng = random.Random(seed)
    tools = _tools(rng)
    body: dict[str, Any] = {"messages": [], **({"tools": tools} if tools else {})}
    if rng.random() < 0.5:
        body["messages"].append({"role": rng.choice(["system", "developer"]), "content": _text(rng)})
    if rng.random() < 0.3:
        body["reasoning_effort"] = rng.choice(["low", "high"])
    if rng.random() < 0.2:
        body["chat_template_kwargs"] = rng.choice(
            [{"model_identity": "A bot."}, {"builtin_tools": ["python"]}, {"raise_exception": 1}]
        )
    if tools and rng.random() < 0.3:
        body["tool_choice"] = rng.choice(
            ["none", {"type": "function", "function": {"name": tools[0]["function"]["name"]}}]
        )
    for k in range(12):
        body["messages"] = body["messages"] + _turn(rng, tools, k)
        assert _summed(body) == _whole(body), json.dumps(body)[:2000]


def test_a_resent_conversation_renders_only_its_new_messages(monkeypatch):
    """Agents resend the conversation: the next turn renders its two new messages' pieces, not the
    conversation (whose whole render is quadratic in its tool calls)."""
    rng = random.Random(1)
    tools = [
        {"type": "function", "function": {"name": "tool_0", "description": "T.", "parameters": {"type": "object"}}}
    ]
    messages: list[dict[str, Any]] = []
    for k in range(30):
        messages += _turn(rng, tools, k)
    # A final answer after the calls (it drops their analysis text), then the user: as an agent sends it.
    messages += [{"role": "assistant", "content": "Answered."}, {"role": "user", "content": "Thanks."}]
    body = {"messages": messages, "tools": tools}
    template._render_count(copy.deepcopy(body))
    renders = []
    real = template._render_text
    monkeypatch.setattr(template, "_render_text", lambda *args, **kw: renders.append(args) or real(*args, **kw))
    grown = {
        **body,
        "messages": messages
        + [{"role": "assistant", "content": "Step done."}, {"role": "user", "content": "Next step."}],
    }
    count = template._render_count(copy.deepcopy(grown))
    # The new assistant and user messages are plain: counted from the template's skeleton
    # (mockoss.profiles.sglang.template_skeleton), no render; the rest is one stored prefix.
    assert renders == []
    assert count == _whole(grown)


def test_one_render_decides_the_refusal_and_the_count(monkeypatch):
    """The refusal check (before a step is drawn) and the count of one request share one count,
    and the refusal check gets the body's bytes: from its third sending (the whole-body cache's
    admission, endpoints.body_count) a resent body is a lookup (it was recounted each time)."""
    calls = []
    real = template._render_count
    monkeypatch.setattr(template, "_render_count", lambda body: calls.append(1) or real(body))
    server = MockServer(scenario="clean-answer", profile="sglang")
    raw = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Hi"}]}).encode()
    for _ in range(5):
        assert server.handle("chat", raw, {"content-type": "application/json"}).status == 200
    assert len(calls) == 2


def test_a_body_counted_with_its_bytes_is_kept_under_them(monkeypatch):
    """With the body's bytes, a count is kept in the whole-body cache (admitted at its second
    sending), so a resent body costs a lookup."""
    calls = []
    real = template._render_count
    monkeypatch.setattr(template, "_render_count", lambda body: calls.append(1) or real(body))
    raw = json.dumps({"messages": [{"role": "user", "content": "A body sent again and again."}]}).encode()
    counts = {template.template_count(json.loads(raw), raw) for _ in range(4)}
    assert len(counts) == 1 and len(calls) == 2


def test_reset_forgets_the_parts(monkeypatch):
    server = MockServer(scenario="clean-answer", profile="sglang")
    raw = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Forget me on reset."}]}).encode()
    server.handle("chat", raw, {"content-type": "application/json"})
    renders = []
    real = template._render_text
    monkeypatch.setattr(template, "_render_text", lambda *args, **kw: renders.append(args) or real(*args, **kw))
    server.handle("chat", raw, {"content-type": "application/json"})
    assert renders == []
    server.reset()
    server.handle("chat", raw, {"content-type": "application/json"})
    assert renders


def test_the_parts_cache_is_bounded_in_bytes(monkeypatch):
    """Entries are charged their key's bytes (a message's content): a small budget still counts right."""
    from mockoss.harmony.lru import BytesLRU

    monkeypatch.setattr(template_pieces, "_cache", BytesLRU(4096))
    messages = [{"role": "user", "content": f"message {k} " + "x" * 500} for k in range(40)]
    body = {"messages": messages}
    assert template._render_count(copy.deepcopy(body)) == _whole(body)
    assert 0 < template_pieces._cache.size <= 4096
