"""The objects Ollama's ``/v1/responses`` writes: the response object and its request echo.

``openai/responses.go@fb307609``: ``ToResponse`` builds a Go struct (fields in declaration order) for
non-streamed replies; ``ResponsesStreamConverter.buildResponseObject`` builds a ``map[string]any``
for stream events, which Go writes with sorted keys. Request fields are echoed as Go decoded them
(``ResponsesRequest``): floats as ``float64``, ``parameters`` as a map (sorted), a ``json_schema``
format's ``schema`` as raw JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from mockoss.profiles.ollama.gojson import Raw, go_any
from mockoss.profiles.wire import dumps_json, rebuild

__all__ = ["Echo", "response_object", "sorted_map", "text_part", "usage"]

_HTML = re.compile("[<>&\u2028\u2029]")


def sorted_map(value: Any) -> Any:
    """A Go map as ``json.Marshal`` writes it: keys sorted, at every level (raw JSON untouched).
    At any depth: past the recursion limit, :func:`_sorted_map_deep`."""
    try:
        return _sorted_map(value)
    except RecursionError:
        return _sorted_map_deep(value)


def _sorted_map(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted_map(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_map(v) for v in value]
    return value


def _sorted_map_deep(value: Any) -> Any:
    """:func:`_sorted_map` with an explicit stack (:func:`~mockoss.profiles.wire.rebuild`): each
    mapping with its keys in sorted order, each list copied; anything else as it is."""
    return rebuild(value, mapping=Mapping, sequence=list, entries=_sorted_items)


def _sorted_items(item: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    return [(key, item[key]) for key in sorted(item)]


def _text(value: Any) -> str:
    """``str(value or "")``; ``""`` for a value nested too deep for ``str`` to recurse. (Ollama
    decodes ``effort``/``summary`` into Go strings, so a non-string is really its 400
    ``json: cannot unmarshal …``; not emulated, as before for shallow values.)"""
    try:
        return str(value or "")
    except RecursionError:
        return ""


def _float(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _raw_json(value: Any) -> Raw:
    """A ``json.RawMessage`` echoed back: the request's JSON, compacted, ``< > &`` and U+2028/9
    escaped (what ``json.Marshal`` does to a raw message; number spellings may differ)."""
    text = dumps_json(value, ensure_ascii=False, separators=(",", ":"))  # json.dumps, at any depth
    return Raw(_HTML.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


class Echo:
    """The request fields a response object echoes, decoded as Go decodes ``ResponsesRequest``.

    :attr:`key` identifies the echo (equal keys give equal response objects).
    """

    def __init__(self, body: Mapping[str, Any]) -> None:
        self.instructions = body.get("instructions") if isinstance(body.get("instructions"), str) else ""
        truncation = body.get("truncation")
        self.truncation = truncation if isinstance(truncation, str) else "disabled"
        self.tools = [t for t in body.get("tools") or () if isinstance(t, Mapping)]
        text = body.get("text")
        self.format = (
            text.get("format") if isinstance(text, Mapping) and isinstance(text.get("format"), Mapping) else None
        )
        reasoning = body.get("reasoning") if isinstance(body.get("reasoning"), Mapping) else {}
        self.effort = _text(reasoning.get("effort"))
        self.summary = _text(reasoning.get("summary"))
        self.top_p = _float(body.get("top_p"), 1.0)
        self.temperature = _float(body.get("temperature"), 1.0)
        limit = body.get("max_output_tokens")
        self.max_output_tokens = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
        self.background = body.get("background") is True
        fields = (
            "instructions",
            "truncation",
            "tools",
            "text",
            "reasoning",
            "top_p",
            "temperature",
            "max_output_tokens",
            "background",
        )
        try:
            self.key: object = json.dumps([body.get(name) for name in fields], sort_keys=True, default=str)
        except RecursionError:  # nested too deep to spell out: a key equal to no other (never reused)
            self.key = object()

    def tool(self, tool: Mapping[str, Any], *, stream: bool) -> dict[str, Any]:
        parameters = tool.get("parameters")
        out: dict[str, Any] = {
            "type": str(tool.get("type") or ""),
            "name": str(tool.get("name") or ""),
            "description": tool.get("description") if isinstance(tool.get("description"), str) else None,
            "strict": tool.get("strict") if isinstance(tool.get("strict"), bool) else None,
            "parameters": go_any(parameters) if isinstance(parameters, Mapping) else None,
        }
        nested = [t for t in tool.get("tools") or () if isinstance(t, Mapping)]
        if nested and not stream:
            out["tools"] = [self.tool(t, stream=False) for t in nested]
        return out

    def text_format(self, *, stream: bool) -> dict[str, Any]:
        if self.format is None:
            return {"type": "text"}
        fmt = self.format
        out: dict[str, Any] = {"type": str(fmt.get("type") or "")}
        if fmt.get("name"):
            out["name"] = str(fmt["name"])
        if fmt.get("schema") is not None:
            out["schema"] = _raw_json(fmt["schema"])
        if isinstance(fmt.get("strict"), bool):
            out["strict"] = fmt["strict"]
        return out

    def reasoning(self, *, stream: bool) -> dict[str, Any] | None:
        if not (self.effort or self.summary):
            return None
        if stream:
            return {"effort": self.effort or None, "summary": self.summary or None}
        out = {}
        if self.effort:
            out["effort"] = self.effort
        if self.summary:
            out["summary"] = self.summary
        return out


def usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }


def response_object(
    echo: Echo,
    response_id: str,
    model: str,
    *,
    created: int,
    completed: int | None,
    status: str,
    output: list[Any],
    usage: dict[str, Any] | None,
    stream: bool,
) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "completed_at": completed,
        "status": status,
        "incomplete_details": None,
        "model": model,
        "previous_response_id": None,
        "instructions": echo.instructions or None,
        "output": output,
        "error": None,
        "tools": [echo.tool(t, stream=stream) for t in echo.tools],
        "tool_choice": "auto",
        "truncation": echo.truncation,
        "parallel_tool_calls": True,
        "text": {"format": echo.text_format(stream=stream)},
        "top_p": echo.top_p,
        "presence_penalty": 0,
        "frequency_penalty": 0,
        "top_logprobs": 0,
        "temperature": echo.temperature,
        "reasoning": echo.reasoning(stream=stream),
        "usage": usage,
        "max_output_tokens": echo.max_output_tokens,
        "max_tool_calls": None,
        "store": False,
        "background": echo.background,
        "service_tier": "default",
        "metadata": {},
        "safety_identifier": None,
        "prompt_cache_key": None,
    }


def text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
