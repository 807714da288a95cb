"""The reference server's response object and output items, and its final mapping of Harmony messages.

Shapes and field order are those of the pydantic models in
openai/gpt-oss@7b58334:gpt_oss/responses_api/types.py (``ResponseObject``, ``Item``,
``ReasoningItem``, ``FunctionCallItem``, ``TextContentItem``) as ``model_dump`` writes them; the
mapping is ``generate_response`` of gpt_oss/responses_api/api_server.py, which parses the output
tokens again with ``parse_messages_from_completion_tokens`` (not the stream's parser):

* a message with a recipient that is not built in (built in: ``browser.*``, ``python``,
  ``assistant``) becomes a ``function_call`` (``functions.`` cut from the name, the first content
  part as ``arguments``), whatever its channel;
* otherwise a ``final`` message becomes a ``message`` item (one ``output_text`` part per content
  part, ``annotations: []``, ``status: "completed"``);
* an ``analysis`` message without recipient becomes a ``reasoning`` item (``summary: []``, one
  ``reasoning_text`` part per content part); everything else (``commentary`` preambles, messages
  to built-in recipients off the final channel) is dropped.

Ids come from the stream (the ``fc_``/``call_``, ``rs_`` and ``item_`` ids its events used, in
order); a message the stream did not name gets a fresh ``fc_``/``call_``/``rs_`` id, and a
``message`` item the stream did not name has ``id: null``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openai_harmony import Message

from mockoss.profiles.base import IdSource

__all__ = ["MODEL_IDENTIFIER", "StreamIds", "final_output", "function_call", "message_item", "reasoning_item", "response_object"]

#: ``types.MODEL_IDENTIFIER``: the ``model`` of every response object (the request's is not echoed).
MODEL_IDENTIFIER = "gpt-oss-120b"
_BUILT_IN = ("python", "assistant")


@dataclass(slots=True)
class StreamIds:
    """The ids the stream handed out, in order (``function_call_ids``, ``reasoning_item_ids``,
    ``message_item_ids`` of ``StreamResponsesEvents``)."""

    function_calls: list[tuple[str, str]] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def _text(message: Message) -> str:
    """``message.content[0].text`` (an ``IndexError`` in the server when there is no content)."""
    return message.content[0].text  # type: ignore[no-any-return, union-attr]


def function_call(name: str, arguments: str, fc_id: str, call_id: str) -> dict[str, Any]:
    """``FunctionCallItem``: ``type, name, arguments, status, id, call_id``."""
    return {"type": "function_call", "name": name, "arguments": arguments, "status": "completed", "id": fc_id, "call_id": call_id}


def reasoning_item(item_id: str, texts: Sequence[str]) -> dict[str, Any]:
    """``ReasoningItem``: ``id, type, summary: [], content: [reasoning_text…]``."""
    return {"id": item_id, "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": t} for t in texts]}


def text_part(text: str, annotations: list[Any] | None) -> dict[str, Any]:
    """``TextContentItem`` of type ``output_text``: ``type, text, status: "completed", annotations``."""
    return {"type": "output_text", "text": text, "status": "completed", "annotations": annotations}


def message_item(item_id: str | None, parts: list[dict[str, Any]], status: str | None, *, with_id: bool = True) -> dict[str, Any]:
    """``Item``: ``id, type: "message", role: "assistant", content, status`` (no ``id`` key before
    v0.0.9: ``with_id=False``)."""
    item = {"id": item_id, "type": "message", "role": "assistant", "content": parts, "status": status}
    if not with_id:
        del item["id"]
    return item


def function_name(recipient: str) -> str:
    """The ``name`` of a call: the recipient with a leading ``functions.`` cut."""
    return recipient.removeprefix("functions.")


def final_output(
    messages: Sequence[Message], ids: StreamIds, fresh: IdSource, *, with_ids: bool = True, analysis_recipient_reasoning: bool = False
) -> list[dict[str, Any]]:
    """``generate_response``'s ``output`` for the parsed ``messages`` (see the module docstring).
    Before v0.0.9 (openai/gpt-oss#199): message items have no ``id`` (``with_ids=False``) and an
    ``analysis`` message to a built-in recipient is a reasoning item (``analysis_recipient_reasoning``)."""
    output: list[dict[str, Any]] = []
    calls: Iterator[tuple[str, str]] = iter(ids.function_calls)
    reasoning: Iterator[str] = iter(ids.reasoning)
    message_ids: Iterator[str] = iter(ids.messages)
    for message in messages:
        recipient = message.recipient or ""
        if recipient and not recipient.startswith("browser.") and recipient not in _BUILT_IN:
            fc_id, call_id = next(calls, None) or (fresh.next("fc_"), fresh.next("call_"))
            output.append(function_call(function_name(recipient), _text(message), fc_id, call_id))
        elif message.channel == "final":
            parts = [text_part(getattr(c, "text", ""), []) for c in message.content]
            output.append(message_item(next(message_ids, None), parts, "completed", with_id=with_ids))
        elif message.channel == "analysis" and (not recipient or analysis_recipient_reasoning):
            output.append(reasoning_item(next(reasoning, None) or fresh.next("rs_"), [getattr(c, "text", "") for c in message.content]))
    return output


def response_object(
    *,
    response_id: str,
    created: int,
    body: Mapping[str, Any],
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, int] | None,
    error: dict[str, str] | None = None,
    metadata: dict[str, Any] | None = None,
    max_output_tokens: int | None = 131072,
) -> dict[str, Any]:
    """``ResponseObject`` as ``generate_response`` fills it: ``max_output_tokens`` (the request's or
    the default) and ``previous_response_id`` from the request, ``instructions: null``, ``model`` always
    :data:`MODEL_IDENTIFIER`, ``tool_choice: "auto"`` and ``top_p: 1`` whatever was asked."""
    return {
        "output": output,
        "created_at": created,
        "usage": usage,
        "status": status,
        "background": None,
        "error": error,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": max_output_tokens,
        "max_tool_calls": None,
        "metadata": metadata or {},
        "model": MODEL_IDENTIFIER,
        "parallel_tool_calls": False,
        "previous_response_id": body.get("previous_response_id"),
        "id": response_id,
        "object": "response",
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "top_p": 1,
    }
