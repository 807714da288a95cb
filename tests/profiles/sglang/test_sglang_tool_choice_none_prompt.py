"""``tool_choice: "none"``: SGLang renders the chat prompt without the declared tools.

sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/openai/serving_chat.py:1861
(``_process_messages``) hands the chat template ``tools`` only ``if effective_tools and
request.tool_choice != "none"``; found by ``tests/golden/sglang-0.5.23`` (the 68
``chat-nostream-tools-choice-none`` exchanges, SGLang's own serving code with the model's chat
template). So ``usage.prompt_tokens`` is the count without tools, and the context-length check
(``--context-length``) measures that prompt too.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from mockoss.server.app import create_app
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather.",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    }
]
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "Weather in Paris?"}]}


def post(body: dict[str, Any], **switches: Any) -> tuple[int, Any]:
    server = MockServer(scenario="clean-answer", profile="sglang", switches=switches)
    with TestClient(create_app(server), base_url="http://127.0.0.1:8000") as client:
        reply = client.post(
            "/v1/chat/completions", content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
    return reply.status_code, reply.json()


def prompt_tokens(body: dict[str, Any]) -> int:
    status, data = post(body)
    assert status == 200, data
    return data["usage"]["prompt_tokens"]


def test_tool_choice_none_counts_the_prompt_without_the_tools():
    without = prompt_tokens(CHAT)
    assert prompt_tokens({**CHAT, "tools": TOOLS, "tool_choice": "none"}) == without


@pytest.mark.parametrize("choice", ["auto", "required", {"type": "function", "function": {"name": "get_weather"}}])
def test_other_tool_choices_count_the_tools(choice):
    assert prompt_tokens({**CHAT, "tools": TOOLS, "tool_choice": choice}) > prompt_tokens(CHAT)


def test_context_length_measures_the_prompt_without_the_tools():
    """A prompt that fits only without its tools is served with ``tool_choice: "none"``."""
    fits = prompt_tokens(CHAT) + 10  # room for the scheduler's reserve (context_length.py)
    assert post({**CHAT, "tools": TOOLS, "tool_choice": "none", "max_tokens": 1}, context_length=fits)[0] == 200
    assert post({**CHAT, "tools": TOOLS, "max_tokens": 1}, context_length=fits)[0] == 400
