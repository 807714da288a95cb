"""``POST /v1/responses`` as LM Studio serves gpt-oss (documented: lmstudio-ai/docs
``1_developer/3_openai-compat/responses.md``; the shapes below follow the OpenAI API reference and
are unverified against LM Studio itself).

Output items in this order: one ``reasoning`` item, one ``message`` item, then each surviving
``function_call``. The stream sends, with ``sequence_number`` from 0: ``response.created``,
``response.in_progress``, per item ``response.output_item.added``, its deltas
(``response.reasoning_text.delta``, ``response.content_part.added`` +
``response.output_text.delta``, ``response.function_call_arguments.delta``), their ``…done``
events and ``response.output_item.done``, then ``response.completed``.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import (
    SSE_MEDIA_TYPE,
    Reply,
    RequestContext,
    ResponsesRequestView,
)
from mockoss.profiles.lmstudio.chat import render
from mockoss.profiles.lmstudio.parse import LmstudioOutput
from mockoss.profiles.memos import held
from mockoss.profiles.replay import FramesTemplate, IdRecorder
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.profiles.lmstudio import LmstudioProfile

__all__ = ["surface_responses"]


def _items(output: LmstudioOutput, ids: list[str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    it = iter(ids)
    if output.reasoning:
        items.append({"id": "rs_" + next(it), "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": output.reasoning}]})
    if output.content:
        part = {"type": "output_text", "text": output.content, "annotations": [], "logprobs": []}
        items.append({"id": "msg_" + next(it), "type": "message", "status": "completed", "role": "assistant", "content": [part]})
    for name, args in output.tool_calls:
        key = next(it)
        items.append({"id": "fc_" + key, "type": "function_call", "status": "completed", "arguments": args, "call_id": "call_" + key, "name": name})
    return items


def _response(request: ResponsesRequestView, ctx: RequestContext, response_id: str, status: str, items: list[dict[str, Any]], usage: dict[str, Any] | None) -> dict[str, Any]:
    body = request.body
    return {
        "id": response_id,
        "object": "response",
        "created_at": ctx.created,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": request.max_output_tokens,
        "model": request.model,
        "output": items,
        "parallel_tool_calls": body.get("parallel_tool_calls") is not False,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "temperature": body.get("temperature", 1.0),
        "tool_choice": request.tool_choice,
        "tools": list(body.get("tools") or []),
        "top_p": body.get("top_p", 1.0),
        "usage": usage,
    }


def surface_responses(
    profile: LmstudioProfile,
    output: LmstudioOutput,
    deltas: tuple,
    completion_tokens: int,
    length: bool,
    request: ResponsesRequestView,
    ctx: RequestContext,
    memo: MutableMapping[object, Any] | None = None,
) -> Reply:
    """LM Studio's Responses reply for classified ``output`` (see the module docstring).
    ``memo``: the completion's memo, where the items' stream events are kept."""
    response_id = "resp_" + ctx.ids.next()
    count = bool(output.reasoning) + bool(output.content) + len(output.tool_calls)
    item_ids = [ctx.ids.next() for _ in range(count)]
    items = _items(output, item_ids)
    status = "incomplete" if length else "completed"
    prompt = ctx.prompt_tokens
    usage = {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion_tokens,
        "output_tokens_details": {"reasoning_tokens": _reasoning_tokens(deltas, memo)},
        "total_tokens": prompt + completion_tokens,
    }
    if not request.stream:
        return Reply(status=200, body=render(profile, _response(request, ctx, response_id, status, items, usage)))
    start = _response(request, ctx, response_id, "in_progress", [], None)
    frames = [_event(kind, number, {"response": start}).encode() for number, kind in enumerate(("response.created", "response.in_progress"))]
    # The items' events depend on the classification only: built once per deltas and memoised on
    # the completion, this request's item ids joined in.
    if memo is None:
        frames += [frame.encode() for frame in _item_events(output, deltas, items, len(frames))]
    else:
        first = len(frames)

        def build() -> FramesTemplate:
            recorder = IdRecorder()
            return FramesTemplate(_item_events(output, deltas, _items(output, [recorder.next() for _ in range(count)]), first))

        # Per the classification's objects (memos.held); both, as an empty deltas tuple is one
        # object for every classification.
        template = held(memo, ("lmstudio.responses.frames",), (output, deltas), build)
        frames += template.fill([item_id.encode() for item_id in item_ids])
    final = _response(request, ctx, response_id, status, items, usage)
    frames.append(_event("response.completed", len(frames), {"response": final}).encode())
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))


def _event(kind: str, number: int, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {dumps({'type': kind, 'sequence_number': number, **data})}\n\n"


def _reasoning_tokens(deltas: tuple, memo: MutableMapping[object, Any] | None) -> int:
    """``output_tokens_details.reasoning_tokens``: the reasoning deltas (counted once per deltas)."""
    return held(memo, ("lmstudio.responses.reasoning",), (deltas,), lambda: sum(1 for kind, _ in deltas if kind == "reasoning"))


def _item_events(output: LmstudioOutput, deltas: tuple, items: list[dict[str, Any]], first: int) -> list[str]:
    """Every item's events, numbered from ``first``."""
    frames: list[str] = []

    def emit(kind: str, **data: Any) -> None:
        frames.append(_event(kind, first + len(frames), data))

    for index, item in enumerate(items):
        kind = item["type"]
        if kind == "reasoning":
            emit("response.output_item.added", output_index=index, item={**item, "content": []})
            for delta_kind, text in deltas:
                if delta_kind == "reasoning":
                    emit("response.reasoning_text.delta", item_id=item["id"], output_index=index, content_index=0, delta=text)
            emit("response.reasoning_text.done", item_id=item["id"], output_index=index, content_index=0, text=output.reasoning)
        elif kind == "message":
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []})
            empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            emit("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=empty)
            for delta_kind, text in deltas:
                if delta_kind == "content":
                    emit("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0, delta=text, logprobs=[])
            emit("response.output_text.done", item_id=item["id"], output_index=index, content_index=0, text=output.content, logprobs=[])
            emit("response.content_part.done", item_id=item["id"], output_index=index, content_index=0, part=item["content"][0])
        else:
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "arguments": ""})
            emit("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=item["arguments"])
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index, arguments=item["arguments"])
        emit("response.output_item.done", output_index=index, item=item)
    return frames
