"""Ollama's streamed ``/v1/responses`` events (``ollama/ollama:openai/responses.go``
``ResponsesStreamConverter`` at ``fb307609``): the chat handler's responses in, the Responses
stream events out (``event: T\ndata: {…}\n\n``, Go maps: keys sorted). Its one job is that
conversion; which ids it writes, and the memoised template around it, are
:mod:`mockoss.profiles.ollama.responses`'.

Events: ``response.created``, ``response.in_progress`` before the first; thinking as a
``reasoning`` item and ``response.reasoning_summary_text.delta`` (closed when text or a tool call
follows, or at the end); text as a ``message`` item with ``output_text.delta``, closed at the end;
a tool call as four events with all its arguments in one delta; text after a tool call is not
streamed; ``response.completed`` last.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockoss.profiles.ollama.gojson import dumps
from mockoss.profiles.ollama.responses_objects import Echo, response_object, sorted_map, text_part

__all__ = ["StreamConverter"]


class StreamConverter:
    """``ResponsesStreamConverter``, fed the chat handler's responses one by one (:meth:`process`);
    ``frames`` holds the events written so far. The ids are given (``response_id``, the message's
    ``item_id``, ``reasoning_item_id(n)`` for the ``n``-th reasoning item, 0-based: Ollama draws
    a new ``rs_%d`` for each, ``openai/responses.go:1242-1244``; function-call items are
    ``<call_item_id>_<i>``): :mod:`~mockoss.profiles.ollama.responses` passes placeholders, filled
    per request."""

    def __init__(
        self,
        echo: Echo,
        model: str,
        response_id: str,
        item_id: str,
        reasoning_item_id: Callable[[int], str],
        call_item_id: str,
    ) -> None:
        self.response_id, self.item_id, self.echo, self.model = response_id, item_id, echo, model
        self.reasoning_item_id, self.call_item_id = reasoning_item_id, call_item_id
        self.reasoning_items = 0
        self.frames: list[str] = []
        self.seq = self.output_index = 0
        self.first = True
        self.tool_calls_sent = self.content_started = False
        self.text = self.thinking = ""
        self.reasoning_id: str | None = None
        self.completed: list[dict[str, Any]] = []

    def event(self, kind: str, data: dict[str, Any]) -> None:
        data["type"], data["sequence_number"] = kind, self.seq
        self.seq += 1
        self.frames.append(f"event: {kind}\ndata: {dumps(sorted_map(data))}\n\n")

    def response(
        self, status: str, output: list[Any], usage: dict[str, Any] | None, now: int, completed: int | None
    ) -> dict[str, Any]:
        return response_object(
            self.echo,
            self.response_id,
            self.model,
            created=now,
            completed=completed,
            status=status,
            output=output,
            usage=usage,
            stream=True,
        )

    def process(
        self,
        now: int,
        content: str,
        thinking: str,
        calls: list[tuple[str, str, str]],
        done: bool,
        usage: dict[str, Any],
    ) -> None:
        if self.first:
            self.first = False
            self.event("response.created", {"response": self.response("in_progress", [], None, now, None)})
            self.event("response.in_progress", {"response": self.response("in_progress", [], None, now, None)})
        if thinking:
            self._thinking(thinking)
        if calls:
            self._finish_reasoning()
            self._calls(calls)
            self.tool_calls_sent = True
        if not calls and not self.tool_calls_sent and content:
            self._text(content)
        if done:
            self._complete(now, usage)

    def _thinking(self, thinking: str) -> None:
        if self.reasoning_id is None:
            self.reasoning_id = self.reasoning_item_id(self.reasoning_items)
            self.reasoning_items += 1
            item = {"id": self.reasoning_id, "type": "reasoning", "summary": []}
            self.event("response.output_item.added", {"output_index": self.output_index, "item": item})
        self.thinking += thinking
        self.event(
            "response.reasoning_summary_text.delta",
            {"item_id": self.reasoning_id, "output_index": self.output_index, "summary_index": 0, "delta": thinking},
        )

    def _finish_reasoning(self) -> None:
        if self.reasoning_id is None:
            return
        item = {
            "id": self.reasoning_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": self.thinking}],
            "encrypted_content": self.thinking,
        }
        self.completed.append(item)
        index, item_id, text = self.output_index, self.reasoning_id, self.thinking
        self.reasoning_id, self.thinking = None, ""
        self.output_index += 1
        self.event(
            "response.reasoning_summary_text.done",
            {"item_id": item_id, "output_index": index, "summary_index": 0, "text": text},
        )
        self.event("response.output_item.done", {"output_index": index, "item": item})

    def _calls(self, calls: list[tuple[str, str, str]]) -> None:
        for i, (call_id, name, arguments) in enumerate(calls):
            index = self.output_index + i
            item_id = f"{self.call_item_id}_{i}"
            item = {
                "id": item_id,
                "type": "function_call",
                "status": "completed",
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
            }
            self.completed.append(item)
            added = {**item, "status": "in_progress", "arguments": ""}
            self.event("response.output_item.added", {"output_index": index, "item": added})
            self.event(
                "response.function_call_arguments.delta",
                {"item_id": item_id, "output_index": index, "delta": arguments},
            )
            self.event(
                "response.function_call_arguments.done",
                {"item_id": item_id, "output_index": index, "arguments": arguments},
            )
            self.event("response.output_item.done", {"output_index": index, "item": item})
        self.output_index += len(calls)

    def _message(self, status: str, content: list[Any]) -> dict[str, Any]:
        return {"id": self.item_id, "type": "message", "status": status, "role": "assistant", "content": content}

    def _text(self, content: str) -> None:
        self._finish_reasoning()
        if not self.content_started:
            self.content_started = True
            self.event(
                "response.output_item.added",
                {"output_index": self.output_index, "item": self._message("in_progress", [])},
            )
            self.event(
                "response.content_part.added",
                {"item_id": self.item_id, "output_index": self.output_index, "content_index": 0, "part": text_part("")},
            )
        self.text += content
        self.event(
            "response.output_text.delta",
            {
                "item_id": self.item_id,
                "output_index": self.output_index,
                "content_index": 0,
                "delta": content,
                "logprobs": [],
            },
        )

    def _complete(self, now: int, usage: dict[str, Any]) -> None:
        self._finish_reasoning()
        index, text = self.output_index, self.text
        if not self.tool_calls_sent and self.content_started:
            self.event(
                "response.output_text.done",
                {"item_id": self.item_id, "output_index": index, "content_index": 0, "text": text, "logprobs": []},
            )
            self.event(
                "response.content_part.done",
                {"item_id": self.item_id, "output_index": index, "content_index": 0, "part": text_part(text)},
            )
            self.event(
                "response.output_item.done",
                {"output_index": index, "item": self._message("completed", [text_part(text)])},
            )
        output: list[Any] = list(self.completed)
        if self.content_started:
            output.append(self._message("completed", [text_part(text)]))
        # buildFinalOutput (openai/responses.go:1536-1555) appends to a nil slice: nothing to
        # append, and the completed response's output is null, not [].
        final = self.response("completed", output or None, usage, now, now)  # type: ignore[arg-type]
        self.event("response.completed", {"response": final})
