"""llama-server's refusal of a Responses ``function_call_output`` that answers no tool call.

llama-server keeps no responses: ``previous_response_id`` is refused outright (400 ``llama.cpp does
not support 'previous_response_id'.``, :meth:`mockoss.profiles.llamacpp.LlamacppProfile.responses`),
so the calls a ``function_call_output`` answers must be in the same ``input``. The request is
converted to Chat Completions messages (``server_chat_convert_responses_to_chatcmpl``,
ggml-org/llama.cpp@03eb25f3:tools/server/server-chat.cpp): a ``function_call`` item becomes an
assistant message with ``tool_calls`` (merged into the assistant message before it, if any), an
assistant ``message`` item or a ``reasoning`` item an assistant message (merged likewise), a
``function_call_output`` a ``tool`` message. The converter checks no ``call_id``; the gpt-oss chat
template (``chat_template.jinja`` of openai/gpt-oss-20b, embedded in the GGUF) does, by name only: it
remembers the function of the last assistant message with tool calls, forgets it at an assistant
message without, and at a ``tool`` message with none remembered raises ``Message has tool role, but
there was no previous assistant message with a tool call!``. The template's exception is not an
``std::invalid_argument``: llama-server answers it as a 500 (``server_error``), before generating.

So a ``function_call_output`` is refused when no ``function_call`` precedes it, or when an assistant
message (not merged into the call's) comes between; a call with *another* ``call_id`` answers it
(the template uses the last call's name). The message is the template engine's text for
:data:`~mockoss.profiles.llamacpp.template_checks.TOOL_WITHOUT_CALL`
(:func:`~mockoss.profiles.llamacpp.template_checks.error_text`: decorated with the source position
from b7756, the bare message before). Only the tool check is made on converted items (a
``reasoning`` item's text carrying Harmony markup, which the template would refuse as ``thinking``,
is not looked at).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["converted_messages"]


def _text(content: Any) -> list[dict[str, Any]]:
    """An assistant ``message`` item's content as chat text parts (``output_text``/``input_text``
    parts' text; a string is one part)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    return [
        {"type": "text", "text": part["text"]}
        for part in content
        if isinstance(part, Mapping)
        and part.get("type") in ("output_text", "input_text")
        and isinstance(part.get("text"), str)
    ]


def converted_messages(body: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The chat messages ``server_chat_convert_responses_to_chatcmpl`` makes from ``body["input"]``
    (``None`` when it is not a list), as far as the chat template's checks read them: ``role``,
    ``content`` (text parts), ``tool_calls`` and ``reasoning_content``. A ``function_call``, an
    assistant ``message`` and a ``reasoning`` item merge into the assistant message before them
    (a reasoning item sets its ``reasoning_content`` to its first content part's text); items the
    converter refuses are skipped (their own 400s are not emulated here)."""
    items = body.get("input")
    if not isinstance(items, list):
        return None
    messages: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        last = messages[-1] if messages and messages[-1]["role"] == "assistant" else None
        role, kind = item.get("role"), item.get("type")
        if role in ("user", "system", "developer") and isinstance(item.get("content"), (str, list)):
            messages.append({"role": role, "content": item["content"]})
        elif role == "assistant" and kind == "message":
            if last is None:
                messages.append({"role": "assistant", "content": _text(item.get("content"))})
            else:
                last["content"] = [*(last.get("content") or []), *_text(item.get("content"))]
        elif kind == "function_call":
            call = {
                "type": "function",
                "id": item.get("call_id"),
                "function": {"name": item.get("name"), "arguments": item.get("arguments")},
            }
            if last is None:
                messages.append({"role": "assistant", "tool_calls": [call]})
            else:
                last["tool_calls"] = [*(last.get("tool_calls") or []), call]
        elif kind == "function_call_output":
            messages.append({"role": "tool", "content": item.get("output")})
        elif kind == "reasoning":
            parts = item.get("content")
            text = parts[0].get("text") if isinstance(parts, list) and parts and isinstance(parts[0], Mapping) else None
            if not isinstance(text, str):
                continue  # the converter's 400 (not emulated)
            if last is None:
                messages.append({"role": "assistant", "content": [], "reasoning_content": text})
            else:
                last["reasoning_content"] = text
    return messages
