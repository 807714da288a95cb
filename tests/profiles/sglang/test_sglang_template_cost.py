"""The SGLang chat prompt count costs what is new in a request, and stays the template's count.

Issue 9 (``issues show 9``): the prompt count must cost what is new in the request. After
28d17bc (the count from openai/gpt-oss-20b's ``chat_template.jinja``, as SGLang 0.5.23 renders it:
``python/sglang/srt/entrypoints/openai/serving_chat.py:2198``) a new short chat request rendered
the template once for its new message, the server core also counted the Harmony prompt it then
threw away, and a 400-message conversation was summed message by message every time. Here:

* a plain message's piece is counted from the template's skeleton
  (:mod:`mockoss.profiles.sglang.template_skeleton`): checked against the renders on contents
  made of special-token strings, channel markers, quotes and non-ASCII text;
* a conversation's leading messages are found again whole (:mod:`mockoss.profiles.sglang.template_prefix`),
  analysis text dropped by a plain answer that comes after the prefix included;
* the server core asks the profile for the count (``own_prompt_tokens``,
  :mod:`mockoss.server.profile_hooks`) and counts no Harmony prompt for a short SGLang chat.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from mockoss.profiles.sglang import template, template_pieces, template_skeleton
from mockoss.server import profile_hooks
from mockoss.server.core import MockServer

TRICKY = [
    "",
    "plain words",
    "<|end|>",
    "<|start|>user<|message|>hi",
    "a <|channel|>commentary b",
    "<|message|",
    "|>",
    "<|",
    "x<|endoftext|>y",
    "<|not_special|>",
    '"quoted" \\ back',
    "日本語 🙂 é",
    "  \n\n  ",
    "1234567890",
    "<|return|><|call|>",
]


def _rendered_piece(message: dict[str, Any], before: list[dict[str, Any]]) -> int:
    count = template.text_count
    return count(template._plain_render([*before, message])) - count(template._plain_render(before))


@pytest.mark.parametrize("content", TRICKY + [a + b for a in TRICKY[2:9] for b in TRICKY[9:]])
@pytest.mark.parametrize("kind", ["user", "assistant", "tool"])
def test_a_plain_piece_from_the_skeleton_is_the_rendered_one(kind, content):
    name = "get_weather" if kind == "tool" else None
    message = {"role": kind, "content": content}
    quick = template_skeleton.piece_count(message, name, template._plain_render, template.text_count)
    before = [{"role": "", "content": ""}]
    if kind == "tool":
        before.append(
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": {}}}]}
        )
    assert quick == _rendered_piece(message, before)


def test_an_assistant_content_with_channel_markup_is_rendered_not_summed():
    """The template raises on it (its raise_exception): no skeleton count."""
    message = {"role": "assistant", "content": "x<|channel|>analysis<|message|>y"}
    assert template_skeleton.piece_count(message, None, template._plain_render, template.text_count) is None


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


TOOLS = [
    {"type": "function", "function": {"name": f"tool_{k}", "description": "T.", "parameters": {"type": "object"}}}
    for k in range(2)
]


def _call(k: int, content: Any = None) -> dict[str, Any]:
    arguments = json.dumps({"k": k})
    call = {"id": f"c{k}", "type": "function", "function": {"name": f"tool_{k % 2}", "arguments": arguments}}
    return {"role": "assistant", "content": content, "tool_calls": [call]}


def _history(length: int, analysis: bool) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    k = 0
    while len(messages) < length:
        messages += [
            {"role": "user", "content": f"do {k}"},
            _call(k, f"thinking about {k}" if analysis else None),
            {"role": "tool", "tool_call_id": f"c{k}", "content": f"result {k} <|end|>"},
        ]
        k += 1
    return messages[:length]


@pytest.mark.parametrize("analysis", [False, True])
def test_a_found_prefix_counts_as_the_whole_render_when_a_later_answer_drops_its_analysis(analysis):
    """The calls of a found prefix keep their analysis text until a plain assistant message comes
    after them (the template's future_final_message), in the new messages."""
    template_pieces._prefixes.clear()
    seen = _history(30, analysis)
    for n, tail in enumerate(
        [
            [{"role": "user", "content": "go on"}],
            [_call(40), {"role": "tool", "tool_call_id": "c40", "content": "r"}],
            [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "thanks"}],
            [_call(41, "more thought"), {"role": "user", "content": "and?"}],
            [{"role": "assistant", "content": "final"}],  # the last one: made a user message
        ]
    ):
        body = {"messages": seen + tail, "tools": TOOLS}
        assert _summed(body) == _whole(body), n
    assert len(template_pieces._prefixes._entries) >= 1


def test_a_prefix_is_not_taken_for_a_conversation_that_differs_before_its_last_message():
    template_pieces._prefixes.clear()
    seen = _history(20, True)
    first = {"messages": [*seen, {"role": "user", "content": "a"}], "tools": TOOLS}
    second = {"messages": [*seen, {"role": "user", "content": "b"}], "tools": TOOLS}
    assert _summed(first) == _whole(first)
    assert _summed(second) == _whole(second)
    changed = copy.deepcopy(seen)
    changed[3]["content"] = "changed earlier"  # same last message, another conversation
    third = {"messages": [*changed, {"role": "user", "content": "c"}], "tools": TOOLS}
    assert _summed(third) == _whole(third)


@pytest.mark.parametrize("seed", range(4))
def test_random_agent_turns_with_prefixes_are_the_whole_renders(seed):
    rng = random.Random(seed)
    template_pieces._prefixes.clear()
    messages = _history(rng.randint(8, 20), rng.random() < 0.5)
    for turn in range(10):
        k = 100 + turn
        choice = rng.random()
        if choice < 0.4:
            messages = messages + [_call(k, rng.choice([None, "", "hmm <|end|>"]))]
            messages = messages + [{"role": "tool", "tool_call_id": f"c{k}", "content": rng.choice(TRICKY)}]
        elif choice < 0.7:
            messages = messages + [{"role": "assistant", "content": rng.choice(TRICKY[:3])}]
            messages = messages + [{"role": "user", "content": rng.choice(TRICKY)}]
        else:
            messages = messages + [{"role": "user", "content": rng.choice(TRICKY)}]
        body = {"messages": messages, "tools": TOOLS}
        assert _summed(body) == _whole(body), json.dumps(body)[:1500]


def test_the_core_counts_no_harmony_prompt_for_a_short_sglang_chat(monkeypatch):
    """The profile's own count is ctx.prompt_tokens (profile_hooks.prompt_count): the Harmony
    count the SGLang profile replaced is not made; vLLM's chat still counts it."""
    harmony = []
    real = profile_hooks.prompt_tokens
    monkeypatch.setattr(profile_hooks, "prompt_tokens", lambda *args: harmony.append(args[0]) or real(*args))
    body = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "How many tokens is this?"}]}
    raw = json.dumps(body).encode()
    sglang = MockServer(scenario="clean-answer", profile="sglang")
    usage = json.loads(sglang.handle("chat", raw, {"content-type": "application/json"}).body)["usage"]
    assert usage["prompt_tokens"] == _whole(body)
    assert harmony == []
    vllm = MockServer(scenario="clean-answer", profile="vllm")
    assert vllm.handle("chat", raw, {"content-type": "application/json"}).status == 200
    assert harmony == ["chat"]


def test_a_request_refusal_without_raw_is_still_called_as_before():
    """Profiles whose request_refusal takes (endpoint, body) only are called so."""

    class Old:
        def request_refusal(self, endpoint: str, body: Any) -> str:
            return f"{endpoint}:{len(body)}"

    class New:
        def request_refusal(self, endpoint: str, body: Any, raw: bytes = b"") -> bytes:
            return raw

    assert profile_hooks.refusal(Old(), "chat", {"a": 1}, b"x") == "chat:1"
    assert profile_hooks.refusal(New(), "chat", {}, b"raw") == b"raw"
    assert profile_hooks.refusal(object(), "chat", {}, b"raw") is None


def test_the_head_kept_for_the_very_same_tools_follows_tool_choice_and_variables():
    """The head's count is reused for a request holding the very tools list and first message of
    the last one (a body parsed from a kept one shares them); tool_choice and the template
    variables still decide it."""
    tools = [*TOOLS]
    system = {"role": "system", "content": "Be brief."}
    bodies = [
        {"messages": [system, {"role": "user", "content": "hi"}], "tools": tools},
        {"messages": [system, {"role": "user", "content": "hi"}], "tools": tools, "tool_choice": "none"},
        {"messages": [system, {"role": "user", "content": "hi"}], "tools": tools, "reasoning_effort": "high"},
        {"messages": [{"role": "system", "content": "Other."}, {"role": "user", "content": "hi"}], "tools": tools},
        {"messages": [{"role": "user", "content": "hi"}], "tools": tools},
    ]
    for body in bodies:
        assert template._render_count(body) == _whole(body)


def test_the_longest_stored_prefix_is_taken(monkeypatch):
    """A short history that also begins a long conversation is stored too; the long
    conversation's next turn takes its own prefix (it summed the rest again when the newest
    entry, the short one, was taken first)."""
    template_pieces._prefixes.clear()
    long_history = _history(60, False)
    for n in range(2):
        body = {"messages": [*long_history, {"role": "user", "content": f"long {n}"}], "tools": TOOLS}
        assert _summed(body) == _whole(body)
    for n in range(2):
        body = {"messages": [*long_history[:12], {"role": "user", "content": f"short {n}"}], "tools": TOOLS}
        assert _summed(body) == _whole(body)
    added = []
    real = template_pieces._add
    monkeypatch.setattr(template_pieces, "_add", lambda *args: added.append(1) or real(*args))
    body = {"messages": [*long_history, {"role": "user", "content": "long 2"}], "tools": TOOLS}
    assert _summed(body) == _whole(body)
    assert len(added) == 1  # the new message only
