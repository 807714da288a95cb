"""``POST /v1/responses`` (not streamed) as vllm-mlx serves gpt-oss (waybarrios/vllm-mlx@v0.6.0:
``vllm_mlx/server.py`` ``create_response``, ``_responses_request_to_chat_request``,
``_run_responses_request``, ``_build_responses_output_items``, ``_build_response_object``;
``vllm_mlx/api/responses_models.py``).

The request becomes a chat request on the same engine (function tools only; other tool types
only add a system line to the prompt), so the text the parsers see is the engine's cleaned text
(:mod:`.chat`). Unlike chat, the tool parser runs *first*, on that text, and the reasoning parser
after it on the same text (on the tool parser's leftover when a call was found). Items: a
``reasoning`` item (``rs_``), a ``message`` (``msg_``), then one ``function_call`` per call
(``fc_``, ``call_id`` ``call_`` + 8 hex), ids ``prefix_`` + 32 hex. The response echoes the request
as pydantic normalised it (a function tool gains ``description: ""`` and ``strict: false``),
``top_p``/``temperature`` default to 0.9/0.7 (``_FALLBACK_*``), ``model`` is the served name, a
``length`` stop is ``incomplete`` with ``max_output_tokens``, and ``output_text`` (a computed
field) comes last. The stream is :mod:`.responses_stream`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply, RequestContext
from mockoss.profiles.vllm_mlx import cached
from mockoss.profiles.vllm_mlx import parsers as p
from mockoss.profiles.vllm_mlx.engine import coerce_arguments, token_limit
from mockoss.profiles.vllm_mlx.responses_stream import stream_responses
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm_mlx import VllmMlxProfile

__all__ = ["chat_tools_of", "response_object", "surface_responses"]


def _tool(tool: Any) -> Any:
    """A request tool as ``list[ResponseFunctionTool | dict]`` validates it."""
    if isinstance(tool, dict) and tool.get("type", "function") == "function" and isinstance(tool.get("name"), str):
        params = tool.get("parameters")
        return {
            "type": "function", "name": tool["name"], "description": tool.get("description", ""),
            "parameters": params if isinstance(params, dict) else {"type": "object", "properties": {}},
            "strict": bool(tool.get("strict", False)),
        }
    return tool


def _chat_tools(tools: list[Any]) -> list[dict] | None:
    """``_responses_tools_to_chat_tools``: the function tools in chat form (``None`` if none)."""
    out = [
        {"type": "function", "function": {"name": t["name"], "description": t["description"] or "", "parameters": t["parameters"] or {"type": "object", "properties": {}}}}
        for t in tools if isinstance(t, dict) and t.get("type") == "function" and "strict" in t
    ]
    return out or None


def chat_tools_of(body: dict) -> list[dict] | None:
    """The chat tools a Responses request becomes (its function tools), ``None`` if none."""
    return _chat_tools([_tool(t) for t in body.get("tools") or []])


def response_object(body: dict, items: list[dict[str, Any]], count: int, finish: str | None, rid: str, model: str, prompt_tokens: int, created: int) -> dict[str, Any]:
    """``_build_response_object``: the response for ``items``; ``finish=None`` is the in-progress
    object of ``response.created`` (no usage)."""
    fmt = body.get("text", {}).get("format", {}) if isinstance(body.get("text"), dict) else {}
    answer = "".join(part["text"] for item in items if item["type"] == "message" for part in item["content"] if part["type"] == "output_text")
    status = "in_progress" if finish is None else "incomplete" if finish == "length" else "completed"
    return {
        "id": rid, "object": "response", "created_at": created, "status": status, "background": False, "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if finish == "length" else None,
        "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"), "max_tool_calls": None,
        "metadata": body.get("metadata") or {}, "model": model, "output": items,
        "parallel_tool_calls": body.get("parallel_tool_calls", True), "previous_response_id": body.get("previous_response_id"),
        "text": {"format": {"type": fmt.get("type", "text") if isinstance(fmt, dict) else "text"}},
        "tool_choice": body.get("tool_choice", "auto"), "tools": [_tool(t) for t in body.get("tools") or []],
        "top_p": float(body["top_p"]) if body.get("top_p") is not None else 0.9,
        "temperature": float(body["temperature"]) if body.get("temperature") is not None else 0.7,
        "truncation": body.get("truncation", "disabled"),
        "usage": None if finish is None else {
            "input_tokens": prompt_tokens, "output_tokens": count, "total_tokens": prompt_tokens + count,
            "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0},
        },
        "user": body.get("user"), "store": body.get("store", True), "output_text": answer,
    }


def surface_responses(profile: VllmMlxProfile, completion: Completion, request: Any, ctx: RequestContext, model: str) -> Reply:
    """vllm-mlx's Responses object for ``completion`` (``request`` is a Responses request view)."""
    body = request.body if isinstance(request.body, dict) else {}

    def build(items: list, count: int, finish: str | None, rid: str) -> dict[str, Any]:
        return response_object(body, items, count, finish, rid, model, ctx.prompt_tokens, ctx.created)

    chat_tools = chat_tools_of(body)
    if request.stream:
        return stream_responses(profile, completion, request, ctx, build, chat_tools)
    limit = token_limit(body.get("max_output_tokens"), profile.max_tokens)
    _raw, finish, count, text = cached.generated_text(completion, limit, bool(chat_tools))
    choice = body.get("tool_choice", "auto")
    parse_calls = bool((chat_tools or not profile.tool_parse_needs_tools) and choice != "none")

    def parts() -> tuple[str | None, str | None, list[p.ToolCallText]]:
        calls: list[p.ToolCallText] = []
        cleaned: str | None = text
        if parse_calls:
            harmony = profile.tool_call_parser is not None
            calls, cleaned = p.tool_calls_with_fallback(text, fixed=profile.harmony_call_fix, tools_declared=bool(chat_tools), harmony=harmony)
        reasoning = None
        if profile.reasoning_parser is not None:
            extract = p.REASONING_PARSERS[profile.reasoning_parser][0]
            reasoning, remaining = extract(text)
            cleaned = remaining if not calls else extract(cleaned or "")[1]
        return reasoning, p.clean_output_text(cleaned) if cleaned else None, calls

    # The parsers depend on whether tools are declared and parsed for, not on the tools themselves.
    key = ("vllm_mlx.responses.parts", cached.limit_key(completion, limit), bool(chat_tools), parse_calls, profile)
    reasoning, answer, calls = cached.memoised(completion, key, parts)
    items: list[dict[str, Any]] = []
    if reasoning:
        items.append({"id": "rs_" + ctx.ids.next(), "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": reasoning}], "status": "completed"})
    if answer:
        items.append({"id": "msg_" + ctx.ids.next(), "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer, "annotations": [], "logprobs": []}], "status": "completed"})
    for call in calls:
        arguments = coerce_arguments(call.arguments, call.name, chat_tools) if call.coerce else call.arguments
        items.append({"id": "fc_" + ctx.ids.next(), "type": "function_call", "call_id": "call_" + ctx.ids.next()[:8], "name": call.name, "arguments": arguments, "status": "completed"})
    out = build(items, count, finish, "resp_" + ctx.ids.next())
    return Reply(status=200, body=dumps(out).encode())
