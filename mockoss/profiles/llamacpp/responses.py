"""``POST /v1/responses`` as llama-server (2026) serves it: the request is converted to a chat
request (``convert_responses_to_chatcmpl``), the same parser runs, and the result is dressed as a
Response.

Wire shapes from ggml-org/llama.cpp ``tools/server/server-task.cpp@00efb3e1``
(``to_json_oaicompat_resp``, ``to_json_oaicompat_resp_stream``, the partial
``to_json_oaicompat_resp``; ids from ``task_result_state``: ``resp_``/``rs_``/``msg_`` +
``random_string()``) and ``tools/server/server-common.cpp@006639c3`` (``format_oai_resp_sse``:
``event: T\\ndata: {…}\\n\\n``; no ``[DONE]``; no ``sequence_number``).

A ``function_call`` item's ids (switch ``function_call_item_id``): at 00efb3e1 and b9553
(Telosnex/fllama@1d28604d ``src/llama.cpp/tools/server/server-task.cpp:985,1084,1666``) no ``id``
and ``"call_id":"fc_<id>"``; from ggml-org/llama.cpp#24882 (2026-06-21) ``"id":"fc_<id>"`` first
and ``"call_id":"call_<id>"``, in the output, ``output_item.done`` and ``output_item.added``
(read in a later ``server-task.cpp``); ``function_call_arguments.delta``'s ``item_id`` stays
``"fc_<id>"`` (it now names the item).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import (
    SSE_MEDIA_TYPE,
    IdSource,
    Reply,
    RequestContext,
    ResponsesRequestView,
)
from mockoss.profiles.llamacpp.gptoss import ChatMsg
from mockoss.profiles.llamacpp.plan import Plan
from mockoss.profiles.llamacpp.wire import (
    dumps,
    error_object,
    error_reply,
    random_string,
)
from mockoss.profiles.memos import held
from mockoss.profiles.replay import FramesTemplate, IdRecorder

if TYPE_CHECKING:
    from mockoss.profiles.llamacpp import LlamacppProfile

__all__ = ["surface_responses"]


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {"input_tokens": prompt, "output_tokens": completion, "total_tokens": completion + prompt}


def _function_item(name: str, args: str, call_id: str, status: str, item_id: bool) -> dict[str, Any]:
    """A final ``function_call`` item (``to_json_oaicompat_resp``; key order as the server's)."""
    if item_id:  # ggml-org/llama.cpp#24882
        return {
            "id": "fc_" + call_id,
            "type": "function_call",
            "status": status,
            "arguments": args,
            "call_id": "call_" + call_id,
            "name": name,
        }
    return {"type": "function_call", "status": status, "arguments": args, "call_id": "fc_" + call_id, "name": name}


def _added_item(name: str, call_id: str, item_id: bool) -> dict[str, Any]:
    """The streamed ``output_item.added`` item of a call (the partial ``to_json_oaicompat_resp``)."""
    if item_id:  # ggml-org/llama.cpp#24882
        return {
            "id": "fc_" + call_id,
            "arguments": "",
            "call_id": "call_" + call_id,
            "name": name,
            "type": "function_call",
            "status": "in_progress",
        }
    return {"arguments": "", "call_id": "fc_" + call_id, "name": name, "type": "function_call", "status": "in_progress"}


def _full(plan: Plan, request: ResponsesRequestView, ctx: RequestContext, item_id: bool) -> Reply:
    ids = ctx.ids
    response_id = "resp_" + random_string(ids)
    random_string(ids), random_string(ids)  # the state's rs_/msg_ ids, unused when not streaming
    parsed = plan.message
    assert parsed is not None
    call_ids = [random_string(ids) for _ in parsed.tool_calls]
    msg = parsed if not parsed.empty else ChatMsg(content=plan.generated)
    output: list[dict[str, Any]] = []
    if msg.reasoning_content:
        output.append(
            {
                "id": "rs_" + random_string(ids),
                "summary": [],
                "type": "reasoning",
                "content": [{"text": msg.reasoning_content, "type": "reasoning_text"}],
                "encrypted_content": "",
                "status": "completed",
            }
        )
    if msg.content:
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": msg.content}
        output.append(
            {
                "content": [part],
                "id": "msg_" + random_string(ids),
                "role": "assistant",
                "status": "completed",
                "type": "message",
            }
        )
    output += [_function_item(n, a, call_ids[i], "completed", item_id) for i, (n, a) in enumerate(parsed.tool_calls)]
    body = {
        "completed_at": ctx.created,
        "created_at": ctx.created,
        "id": response_id,
        "model": request.model,
        "object": "response",
        "output": output,
        "status": "completed",
        "usage": _usage(ctx.prompt_tokens, plan.n_decoded),
    }
    return Reply(status=200, body=dumps(body).encode())


class _Events:
    """The partial results' event builder (state that persists across a stream)."""

    def __init__(self, ids: IdSource, calls: int, item_id: bool) -> None:
        self.item_id = item_id
        self.response_id = "resp_" + random_string(ids)
        self.reasoning_id = "rs_" + random_string(ids)
        self.message_id = "msg_" + random_string(ids)
        self.call_ids = [random_string(ids) for _ in range(calls)]
        self.thinking = self.text = False
        self.fc_id = ""
        self.frames: list[bytes] = []

    def emit(self, event: str, data: dict[str, Any]) -> None:
        self.frames.append(f"event: {event}\ndata: {dumps({'type': event, **data})}\n\n".encode())

    def step(self, n_decoded: int, diffs: tuple) -> None:
        if n_decoded == 1:
            head = {"id": self.response_id, "object": "response", "status": "in_progress"}
            self.emit("response.created", {"response": head})
            self.emit("response.in_progress", {"response": head})
        for diff in diffs:
            if diff[0] == "reasoning" and diff[1]:
                if not self.thinking:
                    item = {
                        "id": self.reasoning_id,
                        "summary": [],
                        "type": "reasoning",
                        "content": [],
                        "encrypted_content": "",
                        "status": "in_progress",
                    }
                    self.emit("response.output_item.added", {"item": item})
                    self.thinking = True
                self.emit("response.reasoning_text.delta", {"delta": diff[1], "item_id": self.reasoning_id})
            elif diff[0] == "content" and diff[1]:
                if not self.text:
                    item = {
                        "content": [],
                        "id": self.message_id,
                        "role": "assistant",
                        "status": "in_progress",
                        "type": "message",
                    }
                    self.emit("response.output_item.added", {"item": item})
                    self.emit(
                        "response.content_part.added",
                        {"item_id": self.message_id, "part": {"type": "output_text", "text": ""}},
                    )
                    self.text = True
                self.emit("response.output_text.delta", {"item_id": self.message_id, "delta": diff[1]})
            elif diff[0] == "tool":
                _, index, name, args, _with_id = diff
                if name:
                    self.emit(
                        "response.output_item.added", {"item": _added_item(name, self.call_ids[index], self.item_id)}
                    )
                    self.fc_id = self.call_ids[index]
                if args:
                    self.emit("response.function_call_arguments.delta", {"delta": args, "item_id": "fc_" + self.fc_id})

    def finish(self, msg: ChatMsg, model: str, created: int, usage: dict[str, int]) -> None:
        output: list[dict[str, Any]] = []
        if msg.reasoning_content:
            item = {
                "id": self.reasoning_id,
                "summary": [],
                "type": "reasoning",
                "content": [{"text": msg.reasoning_content, "type": "reasoning_text"}],
                "encrypted_content": "",
            }
            self.emit("response.output_item.done", {"item": item})
            output.append(item)
        if msg.content:
            self.emit("response.output_text.done", {"item_id": self.message_id, "text": msg.content})
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": msg.content}
            self.emit("response.content_part.done", {"item_id": self.message_id, "part": part})
            item = {
                "type": "message",
                "status": "completed",
                "id": self.message_id,
                "content": [part],
                "role": "assistant",
            }
            self.emit("response.output_item.done", {"item": item})
            output.append(item)
        for index, (name, args) in enumerate(msg.tool_calls):
            item = _function_item(name, args, self.call_ids[index], "completed", self.item_id)
            self.emit("response.output_item.done", {"item": item})
            output.append(item)
        response = {
            "id": self.response_id,
            "object": "response",
            "created_at": created,
            "status": "completed",
            "model": model,
            "output": output,
            "usage": usage,
        }
        self.emit("response.completed", {"response": response})


def _stream(
    plan: Plan,
    request: ResponsesRequestView,
    ctx: RequestContext,
    memo: MutableMapping[object, Any] | None,
    item_id: bool,
) -> Reply:
    usage = _usage(ctx.prompt_tokens, plan.n_decoded)
    if memo is None:
        return Reply(
            status=200,
            media_type=SSE_MEDIA_TYPE,
            frames=tuple(_events(plan, ctx.ids, request.model, ctx.created, usage, item_id)),
        )
    # The events built once per plan with markers for the ids, model, created_at and usage; a
    # request draws its ids in the same order and joins them in (mockoss.profiles.replay).

    def build() -> tuple[tuple[Any, ...], FramesTemplate]:
        recorder = IdRecorder()
        model, created, usage_marker = recorder.value("model"), recorder.value("created"), recorder.value("usage")
        frames = _events(plan, recorder, model, created, usage_marker, item_id)  # type: ignore[arg-type]
        return recorder.frozen(), FramesTemplate(frames)

    calls, template = held(
        memo, ("llamacpp.responses.frames", item_id), (plan,), build
    )  # per plan and ids (memos.held)
    values = {
        "model": dumps(request.model).encode(),
        "created": str(ctx.created).encode(),
        "usage": dumps(usage).encode(),
    }
    return Reply(
        status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(template.fill(IdRecorder.replay(calls, ctx.ids, values)))
    )


def _events(plan: Plan, ids: IdSource, model: str, created: int, usage: dict[str, int], item_id: bool) -> list[bytes]:
    events = _Events(ids, len(plan.stream_message.tool_calls), item_id)
    for n_decoded, diffs in plan.steps:
        events.step(n_decoded, diffs)
    if plan.stream_error is not None:
        events.frames.append(f"data: {dumps({'error': error_object(500, plan.stream_error)})}\n\n".encode())
    else:
        events.finish(plan.stream_message, model, created, usage)
    return events.frames


def surface_responses(
    profile: LlamacppProfile,
    plan: Plan,
    request: ResponsesRequestView,
    ctx: RequestContext,
    memo: MutableMapping[object, Any] | None = None,
) -> Reply:
    """Surface ``plan`` as llama-server's ``/v1/responses`` reply.

    Non-streamed: ``{"completed_at","created_at","id":"resp_…","model","object":"response",
    "output":[reasoning {"id":"rs_…","summary":[],"type":"reasoning","content":[{"text",
    "type":"reasoning_text"}],"encrypted_content":"","status":"completed"}, message {"content":
    [{"type":"output_text","annotations":[],"logprobs":[],"text"}],"id":"msg_…","role":"assistant",
    "status":"completed","type":"message"}, function_call {"id":"fc_<id>","type","status",
    "arguments","call_id":"call_<id>","name"} (``function_call_item_id``; else no ``id`` and
    ``"call_id":"fc_<id>"``)…],"status":"completed","usage":{"input_tokens","output_tokens",
    "total_tokens"}}``; a failed parse → the same HTTP 500 as chat. ``status`` is a constant,
    ``"completed"`` also for an answer cut at the token limit, here and in the stream's
    ``response.completed`` (Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-task.cpp:998, b9553).

    Streamed: ``response.created`` and ``response.in_progress`` with the first token; per diff
    ``response.output_item.added`` (once per reasoning/message item, on every named tool-call
    delta), ``response.content_part.added``, ``response.reasoning_text.delta``,
    ``response.output_text.delta``, ``response.function_call_arguments.delta``; at the end
    ``response.output_item.done`` (reasoning), ``response.output_text.done``,
    ``response.content_part.done``, ``response.output_item.done`` (message, then each call) and
    ``response.completed``. No ``…done`` events for text deltas discovered only at the final parse.
    A failure ends the stream with ``data: {"error":{…}}``.

    ``memo``: the completion's memo, where a stream's events are kept per plan (built once; a
    request joins in its ids, model, ``created_at`` and usage).
    """
    if not request.stream:
        if plan.error is not None:
            return error_reply(500, plan.error)
        return _full(plan, request, ctx, profile.function_call_item_id)
    return _stream(plan, request, ctx, memo, profile.function_call_item_id)
