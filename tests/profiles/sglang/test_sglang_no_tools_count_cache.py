"""SGLang's prompt count without tools (``tool_choice: "none"``, :func:`mockoss.profiles.sglang.chat.chat_prompt_tokens`)
is kept under the body's bytes with the other whole-body counts (:func:`mockoss.endpoints.body_count`):
a resent body costs a lookup, not a recount of its conversation under the server's lock (the
seventeenth session's final review measured +0.22-0.39 ms per 400-message request, every time),
and ``reset`` forgets it."""

from __future__ import annotations

import json

import mockoss.harmony.prompt.count as count_module
from mockoss.server.core import MockServer

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "W.", "parameters": {"type": "object"}}}
MESSAGES = [{"role": "user", "content": f"message {i}"} for i in range(40)]


def test_a_resent_no_tools_body_is_counted_twice_then_found_and_reset_forgets_it(monkeypatch):
    calls = []
    real = count_module.count_chat_prompt

    def counting(body, **options):
        calls.append(options.get("exclude_tools_when_tool_choice_none", False))
        return real(body, **options)

    monkeypatch.setattr(count_module, "count_chat_prompt", counting)
    server = MockServer(scenario="clean-answer", profile="sglang")
    raw = json.dumps({"model": "m", "messages": MESSAGES, "tools": [TOOL], "tool_choice": "none"}).encode()
    usages = [json.loads(server.handle("chat", raw, {"content-type": "application/json"}).body)["usage"] for _ in range(4)]
    assert len({u["prompt_tokens"] for u in usages}) == 1
    assert calls.count(True) == 2  # the body's first and second sending (admission), then found
    server.reset()
    server.handle("chat", raw, {"content-type": "application/json"})
    assert calls.count(True) == 3
