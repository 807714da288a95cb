"""SGLang's chat ``usage.prompt_tokens`` is the model's own chat template rendered and encoded.

SGLang 0.5.23 renders openai/gpt-oss-20b's ``chat_template.jinja`` through transformers'
``apply_chat_template`` (sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/openai/serving_chat.py:2198,
``_render_and_encode_chat_template``), not the Harmony renderer mockoss counts for vLLM
(:mod:`mockoss.profiles.sglang.template`). The expected values below are SGLang's own answers:
``tools/goldens/sglang_serving_engine.py`` (SGLang 0.5.23's serving code in process, the model's
template, the o200k_harmony tokenizer) run on these bodies in session 18; every one differs from the
Harmony count mockoss gave before (a late system message, the last assistant message made a user
message, ``continue_final_message``, template variables, tool results as JSON strings, the
analysis text of a tool call...), or was served where SGLang refuses.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from mockoss.profiles.sglang import template
from mockoss.profiles.sglang.template import TEMPLATE_FILE, TEMPLATE_SHA256, Refusal, template_count
from mockoss.server.core import MockServer

ROOT = Path(__file__).resolve().parents[3]
MODEL = "openai/gpt-oss-20b"
HEADERS = {"content-type": "application/json"}
USER = {"role": "user", "content": "What is the weather in Paris?"}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather.",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    },
}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'}}
    ],
}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "15 C"}
LYON = {
    **CALL,
    "tool_calls": [
        {
            "id": "call_2",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"location": "Lyon", "days": 2}'},
        }
    ],
}

#: name -> (body, SGLang 0.5.23's prompt_tokens).
COUNTS: dict[str, tuple[dict[str, Any], int]] = {
    "late-system-ignored": (
        {
            "messages": [
                USER,
                {"role": "assistant", "content": "Sunny."},
                {"role": "system", "content": "Be brief, always."},
                {"role": "user", "content": "Tomorrow?"},
            ]
        },
        88,
    ),
    "last-assistant-as-user": ({"messages": [USER, {"role": "assistant", "content": "It is"}]}, 80),
    "continue-final-message": (
        {"messages": [USER, {"role": "assistant", "content": "It is"}], "continue_final_message": True},
        76,
    ),
    "model-identity": ({"messages": [USER], "chat_template_kwargs": {"model_identity": "You are a weather bot."}}, 66),
    "builtin-browser": ({"messages": [USER], "chat_template_kwargs": {"builtin_tools": ["browser"]}}, 474),
    "chat-template-kwargs-effort": (
        {"messages": [USER], "chat_template_kwargs": {"reasoning_effort": "extremely high"}},
        75,
    ),
    "tool-result-parts": (
        {
            "messages": [
                USER,
                CALL,
                {**RESULT, "content": [{"type": "text", "text": "15 C"}, {"type": "text", "text": "sunny"}]},
            ],
            "tools": [WEATHER],
        },
        159,
    ),
    "call-analysis-kept": (
        {"messages": [USER, {**CALL, "content": "Checking the weather."}, RESULT], "tools": [WEATHER]},
        168,
    ),
    "call-analysis-dropped": (
        {
            "messages": [
                USER,
                {**CALL, "content": "Checking the weather."},
                RESULT,
                {"role": "assistant", "content": "15 C."},
                {"role": "user", "content": "Thanks"},
            ],
            "tools": [WEATHER],
        },
        172,
    ),
    "agent-two-calls": (
        {
            "messages": [
                {"role": "system", "content": "You are an agent."},
                USER,
                CALL,
                RESULT,
                LYON,
                {"role": "tool", "tool_call_id": "call_2", "content": '{"temp": 12.5}'},
            ],
            "tools": [WEATHER],
            "reasoning_effort": "high",
        },
        213,
    ),
}
#: name -> (body, SGLang 0.5.23's 400 message).
REFUSALS: dict[str, tuple[dict[str, Any], str]] = {
    "tool-before-any-call": (
        {"messages": [{"role": "tool", "content": "15 C"}, USER]},
        "Message has tool role, but there was no previous assistant message with a tool call!",
    ),
    "tool-before-any-call-with-tools": (
        {"messages": [{"role": "tool", "content": "15 C"}, USER], "tools": [WEATHER]},
        "'dict object' has no attribute 'function'",
    ),
    "channel-markup-in-content": (
        {"messages": [USER, {"role": "assistant", "content": "<|channel|>analysis<|message|>hmm"}, USER]},
        (
            "You have passed a message containing <|channel|> tags in the content field. Instead of doing this, you "
            "should pass analysis messages (the string between '<|message|>' and '<|end|>') in the 'thinking' field, "
            "and final messages (the string between '<|message|>' and '<|end|>') in the 'content' field."
        ),
    ),
    "reasoning-effort-a-number": (  # protocol.py normalize_reasoning_inputs: a float; "Reasoning: " + 0.5
        {"messages": [USER], "reasoning": {"effort": 0.5}, "tools": [WEATHER]},
        'can only concatenate str (not "float") to str',
    ),
    "arguments-not-json": (
        {
            "messages": [
                USER,
                {
                    **CALL,
                    "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": "Paris"}}
                    ],
                },
                RESULT,
            ],
            "tools": [WEATHER],
        },
        "Assistant tool call function.arguments must be valid JSON.",
    ),
    "arguments-array": (
        {
            "messages": [
                USER,
                {
                    **CALL,
                    "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": '["Paris"]'}}
                    ],
                },
                RESULT,
            ],
            "tools": [WEATHER],
        },
        "Assistant tool call function.arguments must be a JSON object.",
    ),
}


def handle(server: MockServer, body: dict[str, Any]) -> tuple[int, Any]:
    reply = server.handle("chat", json.dumps({"model": MODEL, **body}).encode(), HEADERS)
    return reply.status, json.loads(reply.body)


@pytest.mark.parametrize("name", list(COUNTS))
def test_prompt_tokens_are_sglangs(name):
    body, expected = COUNTS[name]
    status, reply = handle(MockServer(scenario="clean-answer", profile="sglang"), body)
    assert status == 200, reply
    assert reply["usage"]["prompt_tokens"] == expected


@pytest.mark.parametrize("name", list(REFUSALS))
def test_what_the_template_cannot_render_is_sglangs_400(name):
    body, message = REFUSALS[name]
    server = MockServer(scenario="clean-answer", profile="sglang")
    assert handle(server, body) == (
        400,
        {"object": "error", "message": message, "type": "BadRequest", "param": None, "code": 400},
    )
    assert [r.step for r in server.requests] == [None]  # refused before a step is drawn


def test_input_ids_are_the_prompt():
    """``_process_messages``: a request with ``input_ids`` renders no template."""
    assert template_count({"messages": [USER], "input_ids": [1, 2, 3]}) == 3


def test_the_template_is_the_goldens_and_ships_as_package_data():
    assert hashlib.sha256(TEMPLATE_FILE.read_bytes()).hexdigest() == TEMPLATE_SHA256
    header = json.loads((ROOT / "tests/golden/sglang-0.5.23/scenario-clean-answer-0.json").read_text())["header"]
    assert header["chat_template"].endswith(TEMPLATE_SHA256)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["mockoss.profiles.sglang"]
    assert any(TEMPLATE_FILE.match(pattern) for pattern in patterns)
    assert any(dep.startswith("jinja2") for dep in config["project"]["dependencies"])


@pytest.mark.parametrize("date", ["1000-01-01", "2025-08-07", "2099-12-31", "9999-12-31"])
def test_the_date_does_not_change_the_count(monkeypatch, date):
    """The template writes ``strftime_now("%Y-%m-%d")``; mockoss fixes the date, SGLang uses the
    day's: every such date is six tokens."""
    from datetime import datetime

    expected = template_count({"messages": [USER]})
    monkeypatch.setattr(template, "TEMPLATE_DATE", datetime.fromisoformat(date))
    assert date in template.render_prompt({"messages": [USER]})[0]
    assert template_count({"messages": [USER]}) == expected


def _whole(body: dict[str, Any]) -> Any:
    """The count by rendering the whole template (the reference the summed count must equal)."""
    try:
        text, prefix = template.render_prompt(body)
    except Refusal as refusal:
        return refusal.message
    return template.text_count(text) + (template.text_count(prefix) if prefix else 0)


def _summed(body: dict[str, Any]) -> Any:
    try:
        return template._render_count(copy.deepcopy(body))
    except Refusal as refusal:
        return refusal.message


def test_the_summed_count_is_the_whole_render_on_sglangs_shapes():
    for body, _ in [*COUNTS.values(), *REFUSALS.values()]:
        assert _summed(body) == _whole(body)
