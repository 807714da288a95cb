"""Helpers for test_library.py: what a client sees (:class:`Seen`), the requests a case sends, and
two ways to get the answers, in process through ``MockServer.handle`` (any profile) or over HTTP
with the official ``openai`` SDK (the ``mockoss`` fixture, profile ``vllm``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
import yaml

from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
#: Ollama only serves ``name:tag`` model names.
OLLAMA_MODEL = "gpt-oss:20b"
USER = "Hi"

#: ``(type, name, arguments)``: ``function`` for chat tool calls and ``function_call`` items,
#: ``mcp_call`` (name ``server_label/name``), ``web_search_call`` (name = action type, then the
#: query or url).
Call = tuple[str, str, str]


@dataclass(frozen=True)
class Seen:
    """What a client sees for one non-streamed request.

    ``items`` are Responses output item types (empty for chat); ``finish`` is the chat
    ``finish_reason`` (native Ollama: ``done_reason``; Responses: ``status``); on an HTTP error
    only ``status``, ``error`` (the message) and ``error_type`` are set.
    """

    status: int = 200
    items: tuple[str, ...] = ()
    content: str | None = None
    reasoning: str | None = None
    calls: tuple[Call, ...] = ()
    finish: str | None = None
    error: str | None = None
    error_type: str | None = None


#: llama-server's answer when the output does not match its gpt-oss grammar (llama.cpp#25321).
PEG_500 = Seen(
    status=500,
    error="The model produced output that does not match the expected peg-native format",
    error_type="server_error",
)


def error(status: int, message: str, error_type: str | None = None) -> Seen:
    return Seen(status=status, error=message, error_type=error_type)


@dataclass(frozen=True)
class Case:
    """One shipped scenario: the requests it is played with, and what each target sees.

    ``expect`` keys are ``"PROFILE ENDPOINT [SWITCH=VALUE …]"`` (e.g. ``"vllm chat"``,
    ``"vllm chat flush_raw_recovery=false"``, ``"ollama ollama.chat"``); each value holds one
    :class:`Seen` per request, in order. Requests declare the function tools ``tools`` and add
    ``extra`` fields (``max_tokens`` is sent as ``max_output_tokens`` to Responses).
    """

    tools: tuple[str, ...]
    expect: Mapping[str, Sequence[Seen]]
    extra: Mapping[str, Any] = field(default_factory=dict)


def parse_target(key: str) -> tuple[str, str, dict[str, Any]]:
    profile, endpoint, *switches = key.split()
    return profile, endpoint, {k: yaml.safe_load(v) for k, v in (s.split("=", 1) for s in switches)}


def request_body(
    endpoint: str, tools: Sequence[str], extra: Mapping[str, Any], model: str = MODEL
) -> dict[str, Any]:
    """The body a case sends to ``endpoint``: one user message, the declared tools, ``extra``."""
    parameters = {"type": "object", "properties": {}}
    if endpoint == "responses":
        body: dict[str, Any] = {"model": model, "input": USER}
        if tools:
            body["tools"] = [{"type": "function", "name": n, "parameters": parameters} for n in tools]
        for key, value in extra.items():
            body["max_output_tokens" if key == "max_tokens" else key] = value
        return body
    body = {"model": model, "messages": [{"role": "user", "content": USER}]}
    if tools:
        body["tools"] = [{"type": "function", "function": {"name": n, "parameters": parameters}} for n in tools]
    if endpoint == "ollama.chat":
        body["stream"] = False
    body.update(extra)
    return body


def _error_of(data: Any) -> tuple[str | None, str | None]:
    if isinstance(data, Mapping):
        inner = data.get("error")
        if isinstance(inner, Mapping):
            return inner.get("message"), inner.get("type")
        if isinstance(inner, str):
            return inner, None
        if "message" in data:  # vLLM's flat body
            return data["message"], data.get("type")
        return json.dumps(data, separators=(",", ":")), None
    return str(data), None


def _responses_seen(data: Mapping[str, Any]) -> Seen:
    items, content, reasoning, calls = [], [], [], []
    for item in data["output"]:
        kind = item["type"]
        items.append(kind)
        if kind == "message":
            content += [p["text"] for p in item["content"] if p["type"] == "output_text"]
        elif kind == "reasoning":
            reasoning += [p["text"] for p in item.get("content") or ()]
        elif kind == "function_call":
            calls.append((kind, item["name"], item["arguments"]))
        elif kind == "mcp_call":
            calls.append((kind, f"{item['server_label']}/{item['name']}", item["arguments"]))
        elif kind == "web_search_call":
            action = item["action"]
            calls.append((kind, action["type"], action.get("query") or action.get("url") or ""))
    return Seen(
        200, tuple(items), "\n".join(content) if content else None, "\n".join(reasoning) if reasoning else None,
        tuple(calls), data.get("status"),
    )


def seen_from_body(endpoint: str, status: int, body: bytes) -> Seen:
    """Fold a non-streamed reply body into :class:`Seen`."""
    data = json.loads(body)
    if status >= 400:
        return error(status, *_error_of(data))
    if endpoint == "responses":
        return _responses_seen(data)
    if endpoint == "ollama.chat":
        message = data["message"]
        calls = tuple(
            ("function", c["function"]["name"], json.dumps(c["function"]["arguments"], separators=(",", ":")))
            for c in message.get("tool_calls") or ()
        )
        return Seen(200, (), message.get("content"), message.get("thinking"), calls, data.get("done_reason"))
    choice = data["choices"][0]
    message = choice["message"]
    reasoning = message.get("reasoning", message.get("reasoning_content"))
    calls = tuple(("function", c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or ())
    return Seen(200, (), message.get("content"), reasoning, calls, choice["finish_reason"])


def replay_in_process(scenario: str, key: str, case: Case) -> list[Seen]:
    """Play the scenario on a fresh ``MockServer`` for the target ``key``, one request per expected answer."""
    profile, endpoint, switches = parse_target(key)
    model = OLLAMA_MODEL if profile == "ollama" else MODEL
    server = MockServer(scenario=scenario, profile=profile, switches=switches, served_model_names=[model])
    raw = json.dumps(request_body(endpoint, case.tools, case.extra, model)).encode()
    seen = []
    for _ in case.expect[key]:
        reply = server.handle(endpoint, raw, {})
        assert not reply.streamed
        seen.append(seen_from_body(endpoint, reply.status, reply.body))
    return seen


# --------------------------------------------------------------------------- the openai SDK


def _sdk_error(exc: openai.APIStatusError) -> Seen:
    body = exc.body if isinstance(exc.body, Mapping) else {}
    return error(exc.status_code, body.get("message"), body.get("type"))


def sdk_chat(client: openai.OpenAI, case: Case) -> Seen:
    """One chat completion with the official SDK, folded into :class:`Seen`."""
    body = request_body("chat", case.tools, case.extra)
    try:
        reply = client.chat.completions.create(**body)
    except openai.APIStatusError as exc:
        return _sdk_error(exc)
    choice = reply.choices[0]
    message = choice.message
    extra = message.model_extra or {}
    reasoning = extra.get("reasoning", extra.get("reasoning_content"))
    calls = tuple(("function", c.function.name, c.function.arguments) for c in message.tool_calls or ())
    return Seen(200, (), message.content, reasoning, calls, choice.finish_reason)


def sdk_responses(client: openai.OpenAI, case: Case) -> Seen:
    """One Responses request with the official SDK, folded into :class:`Seen`."""
    body = request_body("responses", case.tools, case.extra)
    try:
        response = client.responses.create(**body)
    except openai.APIStatusError as exc:
        return _sdk_error(exc)
    return _responses_seen(response.model_dump(mode="json"))
