"""The prompt Ollama renders for a ``POST /v1/responses`` body (``openai.FromResponsesRequest``).

Ollama (``ollama/ollama@fb3076099``, ``openai/responses.go:416-621``) turns a Responses request
into ``/api/chat`` messages and tools, then renders them as any chat
(:mod:`mockoss.profiles.ollama.render`):

* ``instructions`` → a system message first; a string ``input`` → one user message.
* A ``message`` item (or an item with a ``role`` and no ``type``, :242-258) → a message of its role
  whose content is its text parts concatenated (``input_text``/``output_text``, :729-760; a string
  content is one ``input_text``). An assistant message takes the pending reasoning item's
  ``encrypted_content`` as thinking; one followed by the ``function_call_output`` of a call the
  previous assistant message made is merged into that message (content joined by ``\\n``).
* A ``function_call`` → a tool call (arguments decoded) on the previous assistant message, else on
  a new one (taking the pending thinking).
* A ``function_call_output`` → a ``tool`` message with ``tool_call_id`` but **no tool name**, so the
  template writes ``<|start|>functions. to=assistant`` (an empty name): Ollama's behaviour.
* A ``reasoning`` item → pending thinking (its ``encrypted_content``), left over at the end as an
  assistant message of its own.
* ``reasoning.effort`` → ``think`` (``thinkFromReasoningEffort``); tools: ``function`` tools as
  they are, ``namespace`` tools flattened to ``NAME.member`` (:662-685).

Not ported (:class:`~mockoss.profiles.ollama.render.Unported`): ``web_search`` tools, image and
file parts, web-search call items, arguments nested deeper than Python's JSON decoder goes (Go's
goes to 10,000 levels). A field of a JSON type Go does not decode into these structs is refused
before the count (:mod:`~mockoss.profiles.ollama.go_decode`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mockoss.profiles.ollama.render import Message, Unported

__all__ = ["responses_messages", "responses_tools"]


def _text(content: Any) -> str:
    """``convertResponsesContent``'s text: the parts' text concatenated."""
    if isinstance(content, str) or content is None:
        return content or ""
    if not isinstance(content, list):  # refused before the count (go_decode)
        raise Unported(f"a content of JSON type {type(content).__name__}")
    out = ""
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in ("input_text", "output_text"):
            raise Unported(f"a {kind!r} content part")
        out += str(part.get("text") or "")
    return out


def _arguments(text: Any) -> Any:
    if not text:
        return None
    if not isinstance(text, str):  # refused before the count (go_decode)
        raise Unported("function call arguments that are not a string")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's decoder goes
        raise Unported(
            "function call arguments that are not JSON (Ollama answers 400), or too deep to decode here"
        ) from None


def responses_messages(body: Mapping[str, Any]) -> list[Message]:
    """``FromResponsesRequest``'s messages (see the module docstring).

    Raises:
        Unported: an item or part the port does not cover."""
    out: list[Message] = []
    if body.get("instructions"):
        out.append(Message("system", str(body["instructions"])))
    given = body.get("input")
    if isinstance(given, str):
        if given:
            out.append(Message("user", given))
        given = []
    items = [item for item in given or () if isinstance(item, Mapping)]
    pending = ""
    for index, item in enumerate(items):
        kind = item.get("type") or ("message" if item.get("role") else "")
        if kind == "reasoning":
            pending = str(item.get("encrypted_content") or "")
        elif kind == "message":
            message = Message(str(item.get("role") or ""), _text(item.get("content")))
            if message.role == "assistant" and pending:
                message.thinking, pending = pending, ""
            following = items[index + 1] if index + 1 < len(items) else None
            answered = following.get("call_id") if following and following.get("type") == "function_call_output" else ""
            if message.role == "assistant" and answered and out and out[-1].role == "assistant":
                last = out[-1]
                if answered in last.call_ids:
                    if last.content and message.content:
                        last.content += "\n"
                    last.content += message.content
                    last.thinking = message.thinking or last.thinking
                    continue
            out.append(message)
        elif kind == "function_call":
            call = (str(item.get("name") or ""), _arguments(item.get("arguments")))
            if out and out[-1].role == "assistant":
                target = out[-1]
            else:
                target = Message("assistant")
                out.append(target)
            target.tool_calls.append(call)
            target.call_ids.append(str(item.get("call_id") or ""))
            if pending:
                target.thinking, pending = pending, ""
        elif kind == "function_call_output":
            output = item.get("output")
            out.append(Message("tool", output if isinstance(output, str) else _text(output)))
        else:
            raise Unported(f"a {kind!r} input item")
    if pending:
        out.append(Message("assistant", thinking=pending))
    return out


def responses_tools(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The request's tools as ``api.Tool`` JSON (``convertTools``/``convertTool``).

    Raises:
        Unported: a ``web_search`` tool."""
    out: list[Mapping[str, Any]] = []
    for tool in body.get("tools") or ():
        if isinstance(tool, Mapping):
            out.extend(_expand(tool))
    return out


def _expand(tool: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if tool.get("type") == "web_search":
        raise Unported("a web_search tool")
    if tool.get("type") != "namespace":
        parameters = tool.get("parameters") if isinstance(tool.get("parameters"), Mapping) else {}
        function = {
            "name": str(tool.get("name") or ""),
            "description": str(tool.get("description") or ""),
            "parameters": parameters,
        }
        return [{"type": tool.get("type"), "function": function}]
    prefix = str(tool.get("name") or "")
    members: list[Mapping[str, Any]] = []
    members_given = tool.get("tools")
    for member in members_given if isinstance(members_given, list) else ():
        for expanded in _expand(member) if isinstance(member, Mapping) else ():
            function = dict(expanded["function"])
            if prefix and not function["name"].startswith(prefix + "."):
                function["name"] = prefix + "." + function["name"]
            members.append({**expanded, "function": function})
    return members
