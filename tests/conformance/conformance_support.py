"""Helpers for the conformance tests: play one raw Harmony completion to one emulated server.

A *target* is ``"PROFILE [SWITCH=VALUE …]"`` (``"vllm"``, ``"vllm harmony_error_status=400"``,
``"llamacpp parser=regex"``). Requests go through ``MockServer.handle``, the server's own request
path, so error bodies have each server's shape (Ollama's ``/v1`` errors included).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from mockoss.profiles.base import Reply
from mockoss.scenario.loader import scenario_from_data
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
OLLAMA_MODEL = "gpt-oss:20b"  # Ollama serves name:tag model names only

#: llama-server's reply to output its gpt-oss grammar rejects (reference §4.1, llama.cpp#25321).
PEG_ERROR = "The model produced output that does not match the expected peg-native format"


@dataclass(frozen=True)
class Out:
    """What a client reads from one non-streamed reply.

    Chat: ``content``, ``reasoning`` (``reasoning`` or ``reasoning_content``; native Ollama
    ``thinking``), ``calls`` = ``(name, arguments)``. Responses: ``items`` (output item types),
    ``content`` (output_text joined), ``reasoning`` (reasoning text joined), ``calls`` =
    ``(name, arguments)`` of function calls and ``(server_label/name, arguments)`` of MCP calls.
    Errors: ``status``, ``error`` (message) and ``error_type``.
    """

    status: int = 200
    content: str | None = None
    reasoning: str | None = None
    calls: tuple[tuple[str, str], ...] = ()
    items: tuple[str, ...] = ()
    error: str | None = None
    error_type: str | None = None


def fail(status: int, message: str, error_type: str | None = None) -> Out:
    return Out(status=status, error=message, error_type=error_type)


def peg_500() -> Out:
    return fail(500, PEG_ERROR, "server_error")


def server(target: str, text: str) -> tuple[MockServer, str]:
    """A ``MockServer`` whose every request is answered with the raw completion ``text``."""
    profile, *switches = target.split()
    parsed = {k: yaml.safe_load(v) for k, v in (s.split("=", 1) for s in switches)}
    model = OLLAMA_MODEL if profile == "ollama" else MODEL
    scenario = scenario_from_data({"steps": [{"completion": {"raw": text}}]}, name="conformance", default_version=True)
    return MockServer(scenario=scenario, profile=profile, switches=parsed, served_model_names=[model]), model


def body_for(endpoint: str, model: str, tools: Sequence[str], extra: Mapping[str, Any]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {}}
    if endpoint == "responses":
        body: dict[str, Any] = {"model": model, "input": "Hi"}
        if tools:
            body["tools"] = [{"type": "function", "name": n, "parameters": parameters} for n in tools]
    else:
        body = {"model": model, "messages": [{"role": "user", "content": "Hi"}]}
        if tools:
            body["tools"] = [{"type": "function", "function": {"name": n, "parameters": parameters}} for n in tools]
        if endpoint == "ollama.chat":
            body["stream"] = False
    body.update(extra)
    return body


def reply(target: str, text: str, *, endpoint: str = "chat", tools: Sequence[str] = (), **extra: Any) -> Reply:
    """The raw :class:`Reply` of ``target`` for ``text`` (``extra`` goes into the request body)."""
    mock, model = server(target, text)
    return mock.handle(endpoint, json.dumps(body_for(endpoint, model, tools, extra)).encode(), {})


def frames(target: str, text: str, *, endpoint: str = "chat", tools: Sequence[str] = (), **extra: Any) -> list[str]:
    """The decoded stream frames (HTTP 200 asserted)."""
    answer = reply(target, text, endpoint=endpoint, tools=tools, stream=True, **extra)
    assert answer.status == 200, answer.body
    return [frame.decode() for frame in answer.frames]


def sse_data(frame: str) -> Any:
    """The JSON of an SSE frame's ``data:`` line (``"[DONE]"`` as is)."""
    data = frame.split("data: ", 1)[1].rstrip("\n")
    return data if data == "[DONE]" else json.loads(data)


def sse_events(all_frames: Sequence[str]) -> list[str]:
    """The ``event:`` names of a Responses stream, in order."""
    return [frame.split("\n", 1)[0].removeprefix("event: ") for frame in all_frames]


def _error_of(data: Any) -> tuple[str, str | None]:
    inner = data.get("error") if isinstance(data, Mapping) else None
    if isinstance(inner, Mapping):
        return inner["message"], inner.get("type")
    if isinstance(inner, str):
        return inner, None
    return data["message"], data.get("type")  # vLLM's flat body


def out(target: str, text: str, *, endpoint: str = "chat", tools: Sequence[str] = (), **extra: Any) -> Out:
    """Fold the non-streamed reply of ``target`` into :class:`Out`."""
    answer = reply(target, text, endpoint=endpoint, tools=tools, **extra)
    data = json.loads(answer.body)
    if answer.status >= 400:
        return fail(answer.status, *_error_of(data))
    if endpoint == "responses":
        items, content, reasoning, calls = [], [], [], []
        for item in data["output"]:
            items.append(item["type"])
            if item["type"] == "message":
                content += [p["text"] for p in item["content"]]
            elif item["type"] == "reasoning":
                reasoning += [p["text"] for p in item.get("content") or ()]
            elif item["type"] == "function_call":
                calls.append((item["name"], item["arguments"]))
            elif item["type"] == "mcp_call":
                calls.append((f"{item['server_label']}/{item['name']}", item["arguments"]))
        joined = "\n".join
        return Out(
            200, joined(content) if content else None, joined(reasoning) if reasoning else None, tuple(calls), tuple(items)
        )
    if endpoint == "ollama.chat":
        message = data["message"]
        calls = tuple(
            (c["function"]["name"], json.dumps(c["function"]["arguments"], separators=(",", ":")))
            for c in message.get("tool_calls") or ()
        )
        return Out(200, message.get("content"), message.get("thinking"), calls)
    message = data["choices"][0]["message"]
    calls = tuple((c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or ())
    return Out(200, message.get("content"), message.get("reasoning", message.get("reasoning_content")), calls)


def finish_reason(target: str, text: str, *, tools: Sequence[str] = (), **extra: Any) -> tuple[str, Any]:
    """``(finish_reason, stop_reason)`` of a non-streamed chat reply (``stop_reason`` ``None`` if absent)."""
    choice = json.loads(reply(target, text, tools=tools, **extra).body)["choices"][0]
    return choice["finish_reason"], choice.get("stop_reason")
