"""A tool without a description: SGLang's gpt-oss chat template cannot render it, a 400.

The model's template writes ``"// " + tool.description`` for each tool it gets (openai/gpt-oss-20b
``chat_template.jinja``, ``render_tool_namespace``); SGLang retries with the tools flattened, fails
on ``tool.function`` and answers ``'dict object' has no attribute 'function'`` as a 400
``BadRequest`` (sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/openai/serving_chat.py:2206-2221,
serving_base.py:123), before any stream starts. The template gets the tools only when
``tool_choice`` is not ``"none"``, and only the named one for a named choice
(serving_chat.py:1861-1872). Found by ``tests/golden/sglang-0.5.23`` (SGLang's own serving code).
The switch ``tool_description_required`` (on by default, as a deployment of the model's own files
runs) turns it off. A refused request plays no scripted step: SGLang renders the prompt before it
generates.
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


def test_on_by_default_and_off_serves_them():
    """The model's own template is the default; ``false``: a deployment whose ``--chat-template``
    renders such tools."""
    assert get_profile("sglang").tool_description_required is True
    assert post({**CHAT, "tools": [BARE]}, required=False)[0] == 200


def test_a_refused_request_plays_no_step():
    """The refusal comes before generation: the scenario's first step answers the next request."""
    server = MockServer(scenario="clean-tool-call", profile="sglang")
    refused = server.handle("chat", json.dumps({**CHAT, "tools": [BARE]}).encode(), {"content-type": "application/json"})
    assert (refused.status, json.loads(refused.body)) == (400, REFUSAL)
    tool = {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}}
    served = server.handle("chat", json.dumps({**CHAT, "tools": [tool]}).encode(), {"content-type": "application/json"})
    assert served.status == 200 and "get_weather" in json.loads(served.body)["choices"][0]["message"]["content"]
    assert [r.step for r in server.requests] == [None, 0]
