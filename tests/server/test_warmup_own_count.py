"""The warm-up counts a request's prompt as the reply would (``profile_hooks.prompt_count``): for
a profile with its own count (SGLang chat: the model's chat template) no Harmony count is made
only to be thrown away (final review, session 18: the warm-up made one, the reply then counted
again; the usage was right either way)."""

from __future__ import annotations

import json

from mockoss.server import profile_hooks, warmup
from mockoss.server.core import MockServer


def test_the_warm_up_of_a_long_sglang_step_makes_no_harmony_count(monkeypatch):
    calls: list[tuple] = []
    real = profile_hooks.prompt_tokens
    for module in (profile_hooks, warmup):  # warmup held its own reference before
        monkeypatch.setattr(module, "prompt_tokens", lambda *a: calls.append(a) or real(*a), raising=False)
    text = " ".join(f"word{i}" for i in range(6000))  # past warmup.LONG_TOKENS: warmed before the lock
    step = {"completion": {"messages": [{"channel": "final", "content": text}]}}
    server = MockServer(scenario={"steps": [step] * 2}, profile="sglang")
    body = json.dumps({"model": server.served_model_names[0], "messages": [{"role": "user", "content": "hi"}]}).encode()
    token = warmup.WARM_BEFORE_LOCK.set(True)
    try:
        warmed, _ = server.respond("chat", body, {})
    finally:
        warmup.WARM_BEFORE_LOCK.reset(token)
    plain, _ = server.respond("chat", body, {})
    assert warmed.status == plain.status == 200
    assert json.loads(warmed.body)["usage"]["prompt_tokens"] == json.loads(plain.body)["usage"]["prompt_tokens"]
    assert calls == []
