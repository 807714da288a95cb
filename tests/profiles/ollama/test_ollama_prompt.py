"""Ollama's prompt for gpt-oss, as its own code renders it: text, counts and ``context``.

``prompt_golden.json`` was recorded from Ollama's template package at ollama/ollama@fb3076099
running the gpt-oss model's Go template (``tools/goldens/ollama_prompts.py``, the harness's render
mode; the template as ``unslothai/unsloth@015bdef0d9`` records the registry's): conversations with
tool calls and results, system messages, prefills, think levels, renamed tools and Responses
items. mockoss rendered openai-harmony's prompt instead, so every request declaring tools counted
other tokens (``  location: string,`` is indented in Ollama's template; JSON Schema type names).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.ollama import prompt
from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"
RECORDS = json.loads((Path(__file__).parent / "prompt_golden.json").read_text(encoding="utf-8"))
TEXT = {
    "/api/chat": prompt.native_chat_prompt_text,
    "/v1/chat/completions": prompt.openai_chat_prompt_text,
    "/v1/responses": prompt.responses_prompt_text,
}
ENDPOINT = {
    "/api/chat": "ollama.chat",
    "/api/generate": "ollama.generate",
    "/v1/chat/completions": "chat",
    "/v1/responses": "responses",
}


def _ids(text: str) -> list[int]:
    return load_encoding().encode(text, allowed_special="all")


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_the_prompt_is_the_text_ollama_renders(record):
    if record["endpoint"] == "/api/generate":
        assert prompt.render_native_generate_prompt(record["request"]) == _ids(record["prompt"])
    else:
        assert TEXT[record["endpoint"]](record["request"]) == record["prompt"]


def _count(reply) -> int:
    body = json.loads(reply.body)
    if "prompt_eval_count" in body:
        return body["prompt_eval_count"]
    usage = body["usage"]
    return usage.get("prompt_tokens", usage.get("input_tokens"))


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_every_route_reports_the_rendered_prompt_s_tokens(record):
    """``prompt_eval_count`` / ``usage.prompt_tokens`` / ``usage.input_tokens``: the prompt's
    o200k_harmony tokens, special tokens parsed (llama-server's ``/completion``), also when the
    same body comes again (the whole-body cache)."""
    server = MockServer("clean-answer", profile="ollama", served_model_names=[MODEL, "m"])
    body = json.dumps({**record["request"], "stream": False}).encode()
    for _ in range(3):
        reply = server.respond(ENDPOINT[record["endpoint"]], body, {})[0]
        assert reply.status == 200, reply.body
        assert _count(reply) == len(_ids(record["prompt"]))


def test_generate_context_starts_with_the_rendered_prompt():
    server = MockServer("clean-answer", profile="ollama")
    reply = server.respond(
        "ollama.generate", json.dumps({"model": MODEL, "prompt": "Hi", "stream": False}).encode(), {}
    )[0]
    text = prompt.render_native_generate_prompt({"prompt": "Hi"})
    context = json.loads(reply.body)["context"]
    assert context[: len(text)] == text
    assert load_encoding().decode(text).endswith("<|start|>user<|message|>Hi<|end|><|start|>assistant")


def test_the_date_line_is_fixed():
    """Ollama writes today's date (``currentDate``: ``time.Now()``); mockoss a fixed one."""
    text = prompt.native_chat_prompt_text({"messages": [{"role": "user", "content": "Hi"}]})
    assert "\nCurrent date: 2026-01-01\n\nReasoning: medium\n\n" in text


def test_a_built_in_tool_is_counted_by_the_approximation():
    """The template's browser/python sections are not ported: such a request is still counted
    (openai-harmony's render of the equivalent Chat Completions body)."""
    tools = [{"type": "function", "function": {"name": "python", "parameters": {"type": "object", "properties": {}}}}]
    body = {"messages": [{"role": "user", "content": "Hi"}], "tools": tools}
    assert len(prompt.render_native_chat_prompt(body)) > 0
    assert prompt.openai_prompt_tokens("chat", body, 7, b"x-builtin") == 7
