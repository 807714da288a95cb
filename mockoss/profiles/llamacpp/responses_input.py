"""llama-server's Responses ``input`` as the chat messages its gpt-oss chat template checks.

llama-server keeps no responses: ``previous_response_id`` is refused outright (400 ``llama.cpp does
not support 'previous_response_id'.``, :mod:`mockoss.profiles.llamacpp.refusals`), so the calls a
``function_call_output`` answers must be in the same ``input``. The request is converted to Chat
Completions messages (``server_chat_convert_responses_to_chatcmpl``,
ggml-org/llama.cpp@03eb25f3:tools/server/server-chat.cpp): a ``function_call`` item becomes an
assistant message with ``tool_calls`` (merged into the assistant message before it, if any), an
assistant ``message`` item or a ``reasoning`` item an assistant message (merged likewise; the
reasoning item's text is its ``reasoning_content``), a ``function_call_output`` a ``tool`` message.
The converter checks no ``call_id``.

Every refusal of the chat template (:mod:`mockoss.profiles.llamacpp.template_checks`) applies to
the converted messages, as to chat messages, before generating (HTTP 500 ``server_error``):

* a ``function_call_output`` with no ``function_call`` before it, or with an assistant message (not
  merged into the call's) between: ``Message has tool role, but there was no previous assistant
  message with a tool call!`` (the template remembers the last call's name, so a call with
  *another* ``call_id`` answers it);
* a ``reasoning`` item whose text holds Harmony markup (``<|channel|>analysis<|message|>``): the
  ``thinking`` refusal (``You have passed a message containing <|channel|> tags in the thinking
  field…``);
* reasoning, an assistant message and a call merged into one message: ``Cannot pass both content
  and thinking…`` where the handler still kept the content (``thinking_field="with_tool_calls"``,
  ``llamacpp@b7756`` and before);
* markup in an assistant message item's text, where the content check is in force
  (``template_channel_check``, ``llamacpp@b6100``).

Each is in the template engine's words (:func:`~mockoss.profiles.llamacpp.template_checks.error_text`:
decorated with the source position from b7756, the bare message before).
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
