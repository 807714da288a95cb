"""What Ollama's OpenAI-compatible layer takes from a request body before its chat handler runs.

``openai.FromChatRequest`` / ``FromResponsesRequest`` (``ollama/ollama:openai/openai.go``,
``openai/responses.go@fb307609``) turn ``/v1`` bodies into a native chat request. Three things of
that request change how gpt-oss output is surfaced: the declared tool names (the harmony parser maps
model-side names back to them), whether the conversation ends with an assistant message (the parser
then reads the output as its continuation) and the token limit (``num_predict``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockoss.profiles.ollama.generation import Prefill

__all__ = ["chat_prefill", "chat_tool_names", "max_tokens_of", "responses_prefill", "responses_tool_names"]


def max_tokens_of(value: Any) -> int | None:
    """``num_predict`` from ``max_tokens``/``max_output_tokens``: a positive limit, else none."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _prefill(role: Any, content: str, thinking: str) -> Prefill:
    if str(role).lower() != "assistant":
        return None
    if content:
        return "final"
    return "analysis" if thinking else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def chat_tool_names(body: Mapping[str, Any]) -> tuple[str, ...]:
    """``tools[].function.name`` in order."""
    names = []
    for tool in body.get("tools") or ():
        function = tool.get("function") if isinstance(tool, Mapping) else None
        names.append(str(function.get("name") or "") if isinstance(function, Mapping) else "")
    return tuple(names)


def chat_prefill(body: Mapping[str, Any]) -> Prefill:
    """``final``/``analysis`` when the last message is an assistant message with content / with only
    ``reasoning`` (a list content contributes its last text part, as Ollama splits parts into
    messages)."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else None
    if not isinstance(last, Mapping):
        return None
    content = last.get("content")
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        content = texts[-1] if texts else ""
    reasoning = last.get("reasoning")
    return _prefill(
        last.get("role"), content if isinstance(content, str) else "", reasoning if isinstance(reasoning, str) else ""
    )


def responses_tool_names(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The function names ``FromResponsesRequest`` declares: each tool's ``name``; a ``namespace``
    tool's members as ``namespace.member``; ``web_search`` for the built-in web search (a
    function tool of that name is then dropped)."""
    tools = [t for t in body.get("tools") or () if isinstance(t, Mapping)]
    web_search = any(t.get("type") == "web_search" for t in tools)

    def expand(tool: Mapping[str, Any]) -> list[str]:
        if tool.get("type") != "namespace":
            return [str(tool.get("name") or "")]
        prefix = str(tool.get("name") or "")
        names = []
        for member in tool.get("tools") or ():
            for name in expand(member) if isinstance(member, Mapping) else ():
                names.append(name if not prefix or name.startswith(prefix + ".") else f"{prefix}.{name}")
        return names

    out: list[str] = []
    for tool in tools:
        if tool.get("type") == "web_search":
            out.append("web_search")
            continue
        out.extend(n for n in expand(tool) if not (web_search and n == "web_search"))
    return tuple(out)


def responses_prefill(body: Mapping[str, Any]) -> Prefill:
    """The last message ``FromResponsesRequest`` builds: input messages keep their role, a
    ``reasoning`` item's ``encrypted_content`` becomes the next assistant message's thinking (or
    a trailing thinking-only assistant message), ``function_call`` items join the assistant
    message before them, ``function_call_output`` items are tool messages."""
    items = body.get("input")
    if not isinstance(items, list):
        return None
    role: Any = None
    content = thinking = pending = ""
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        if kind == "reasoning":
            pending = str(item.get("encrypted_content") or "")
        elif kind == "message":
            role, content, thinking = item.get("role"), _text(item.get("content")), ""
            if role == "assistant" and pending:
                thinking, pending = pending, ""
        elif kind == "function_call":
            if role != "assistant":
                role, content, thinking = "assistant", "", ""
            if pending:
                thinking, pending = pending, ""
        elif kind == "function_call_output":
            role, content, thinking = "tool", "", ""
    if pending:
        role, content, thinking = "assistant", "", pending
    return _prefill(role, content, thinking)
