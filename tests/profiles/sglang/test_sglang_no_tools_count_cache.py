"""SGLang's chat prompt count (the model's chat template, :mod:`mockoss.profiles.sglang.template`)
costs what is new in a request: a resent ``tool_choice: "none"`` conversation renders nothing again
(its messages' parts are cached: :mod:`mockoss.profiles.sglang.template_pieces`), where the
seventeenth session's final review measured +0.22-0.39 ms per resent 400-message request (then a
Harmony recount), and ``reset`` forgets the parts."""

from __future__ import annotations

import json

from mockoss.profiles.sglang import template
from mockoss.server.core import MockServer

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "W.", "parameters": {"type": "object"}}}
MESSAGES = [{"role": "user", "content": f"message {i}"} for i in range(40)]


def test_a_resent_no_tools_body_renders_once_and_reset_forgets_it(monkeypatch):
    renders = []
    real = template._render_text
    monkeypatch.setattr(template, "_render_text", lambda *args, **kw: renders.append(args) or real(*args, **kw))
    server = MockServer(scenario="clean-answer", profile="sglang")
    server.reset()  # nothing cached by earlier tests
    raw = json.dumps({"model": "m", "messages": MESSAGES, "tools": [TOOL], "tool_choice": "none"}).encode()
    usages = [
        json.loads(server.handle("chat", raw, {"content-type": "application/json"}).body)["usage"] for _ in range(4)
    ]
    assert len({u["prompt_tokens"] for u in usages}) == 1
    first = len(renders)
    assert first and all(args[1] is None for args in renders)  # tool_choice none: no tools rendered
    server.handle("chat", raw, {"content-type": "application/json"})
    assert len(renders) == first  # found
    server.reset()
    server.handle("chat", raw, {"content-type": "application/json"})
    assert len(renders) == 2 * first
