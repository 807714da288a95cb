"""A tool without a description: SGLang's gpt-oss chat template cannot render it, a 400.

The model's template writes ``"// " + tool.description`` for each tool it gets (openai/gpt-oss-20b
``chat_template.jinja``, ``render_tool_namespace``); SGLang retries with the tools flattened, fails
on ``tool.function`` and answers ``'dict object' has no attribute 'function'`` as a 400
``BadRequest`` (sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/openai/serving_chat.py:2206-2221,
serving_base.py:123), before any stream starts. The template gets the tools only when
``tool_choice`` is not ``"none"``, and only the named one for a named choice
(serving_chat.py:1861-1872). Found by ``tests/golden/sglang-0.5.23`` (SGLang's own serving code).
The switch ``tool_description_required`` (off by default) turns it on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from mockoss.profiles.registry import get_profile
from mockoss.server.app import create_app
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
BARE = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}
DESCRIBED = {
    "type": "function",
    "function": {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {}}},
}
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "Weather in Paris?"}]}
REFUSAL = {
    "object": "error",
    "message": "'dict object' has no attribute 'function'",
    "type": "BadRequest",
    "param": None,
    "code": 400,
}


def post(body: dict[str, Any], required: bool = True) -> tuple[int, Any]:
    server = MockServer(scenario="clean-answer", profile="sglang", switches={"tool_description_required": required})
    with TestClient(create_app(server), base_url="http://127.0.0.1:8000") as client:
        reply = client.post(
            "/v1/chat/completions", content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
    if reply.headers["content-type"].startswith("text/event-stream"):
        return reply.status_code, reply.text
    return reply.status_code, reply.json()


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("choice", [None, "auto", "required"])
def test_a_tool_without_description_is_refused(stream, choice):
    body = {**CHAT, "tools": [DESCRIBED, BARE], "stream": stream}
    if choice is not None:
        body["tool_choice"] = choice
    assert post(body) == (400, REFUSAL)


def test_a_null_description_is_refused_too():
    bare = {"type": "function", "function": {**BARE["function"], "description": None}}
    assert post({**CHAT, "tools": [bare]}) == (400, REFUSAL)


@pytest.mark.parametrize(
    "choice", ["none", {"type": "function", "function": {"name": "get_weather"}}], ids=["none", "named-described"]
)
def test_tools_the_template_does_not_get_are_not_checked(choice):
    status, _ = post({**CHAT, "tools": [DESCRIBED, BARE], "tool_choice": choice})
    assert status == 200


def test_described_tools_are_served():
    assert post({**CHAT, "tools": [DESCRIBED]})[0] == 200


def test_off_by_default():
    """A deployment whose chat template renders such tools (the switch's default)."""
    assert post({**CHAT, "tools": [BARE]}, required=False)[0] == 200
    assert get_profile("sglang").tool_description_required is False
