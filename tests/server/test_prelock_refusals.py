"""A big request that respond refuses is not counted first, whichever check refuses it.

1f909c6 moved the worker process's prompt count (``prelock.PROMPT_COUNTER``, a big body on a worker
thread) after validation, so that a refused request is answered without it (20 MB of long words:
57.7 s to a 404 otherwise; vLLM checks the model before it renders, ``serving_chat.py``
``create_chat_completion``, ``_check_model`` first). An invalid ``X-Mockoss-Transport`` header is
refused too, a 400 answered before the body is judged, yet it still waited for the count (a
review's finding).
"""

from __future__ import annotations

import json

from mockoss import endpoints
from mockoss.scenario import tool_check
from mockoss.server import core, prelock
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
WEATHER = {"type": "object", "properties": {"location": {"type": "string"}}}
BODY = json.dumps(
    {
        "model": MODEL,
        "messages": [{"role": "user", "content": "weather?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
    }
).encode()


def _respond(server: MockServer, headers: dict[str, str]) -> tuple[core.Reply, list[str]]:
    counted: list[str] = []

    def counter(endpoint: str, raw: bytes) -> int:
        counted.append(endpoint)
        return endpoints.prompt_tokens(endpoint, raw)

    token = prelock.PROMPT_COUNTER.set(counter)
    try:
        reply = server.respond("chat", BODY, headers)[0]
    finally:
        prelock.PROMPT_COUNTER.reset(token)
    assert tool_check.DECLARED.get() is None and core.PRECOUNTED_PROMPT_TOKENS.get() is None
    return reply, counted


def test_an_invalid_transport_header_is_refused_without_counting_the_prompt():
    server = MockServer("clean-tool-call")
    reply, counted = _respond(server, {"x-mockoss-transport": "ttft_ms=-5"})
    assert reply.status == 400 and "ttft" in json.loads(reply.body)["error"]["message"]
    assert counted == []
    assert [r.status for r in server.requests] == [400]


def test_a_valid_transport_header_still_counts_in_the_worker_with_the_same_reply():
    counted_server, plain = MockServer("clean-tool-call"), MockServer("clean-tool-call")
    reply, counted = _respond(counted_server, {"x-mockoss-transport": "ttft_ms=5"})
    assert counted == ["chat"]
    assert reply == plain.respond("chat", BODY, {"x-mockoss-transport": "ttft_ms=5"})[0]
    assert [r.warnings for r in counted_server.requests] == [r.warnings for r in plain.requests]
