"""``POST /v1/chat/completions`` as llama-server (2026) serves gpt-oss.

Wire shapes from ggml-org/llama.cpp ``tools/server/server-task.cpp@00efb3e1``
(``server_task_result_cmpl_final::to_json_oaicompat_chat`` / ``…_chat_stream``,
``server_task_result_cmpl_partial::to_json_oaicompat_chat``), ``common/chat.cpp@0083bb18``
(``common_chat_msg::to_json_oaicompat``), ``server_chat_msg_diff_to_json_oaicompat`` and
``tools/server/server-context.cpp@001d906a`` (``handle_completions_impl``: stream framing, errors).
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import SSE_MEDIA_TYPE, ChatRequestView, Reply, RequestContext
from mockoss.profiles.llamacpp.gptoss import ChatMsg
from mockoss.profiles.llamacpp.plan import Diff, Plan
from mockoss.profiles.llamacpp.wire import (
    dumps,
    error_object,
    error_reply,
    random_string,
    timings,
)
from mockoss.profiles.memos import held
from mockoss.profiles.replay import FramesTemplate, IdRecorder

if TYPE_CHECKING:
    from mockoss.profiles.llamacpp import LlamacppProfile

__all__ = ["delta_object", "finish_reason", "message_object", "surface_chat"]

_DONE = b"data: [DONE]\n\n"
_CHUNK_END = b"}\n\n"


def finish_reason(plan_finish: str, msg: ChatMsg | None) -> str:
    """``length`` when cut by ``max_tokens`` (``STOP_TYPE_LIMIT``), else ``tool_calls`` when the
    message has calls, else ``stop``."""
    if plan_finish == "length":
        return "length"
    return "tool_calls" if msg is not None and msg.tool_calls else "stop"


def message_object(msg: ChatMsg, call_ids: list[str]) -> dict[str, Any]:
    """``common_chat_msg::to_json_oaicompat``: ``role``, ``content`` (``""`` when empty),
    ``reasoning_content`` and ``tool_calls`` (``type``, ``function``, ``id``) when non-empty."""
    out: dict[str, Any] = {"role": "assistant", "content": msg.content}
    if msg.reasoning_content:
        out["reasoning_content"] = msg.reasoning_content
    if msg.tool_calls:
        out["tool_calls"] = [
            {"type": "function", "function": {"name": name, "arguments": args}, "id": call_ids[i]}
            for i, (name, args) in enumerate(msg.tool_calls)
        ]
    return out


def delta_object(diff: Diff, call_ids: list[str]) -> dict[str, Any]:
    """``server_chat_msg_diff_to_json_oaicompat`` for one diff."""
    if diff[0] == "reasoning":
        return {"reasoning_content": diff[1]} if diff[1] else {}
    if diff[0] == "content":
        return {"content": diff[1]} if diff[1] else {}
    _, index, name, args, with_id = diff
    call: dict[str, Any] = {"index": index}
    if with_id:
        call["id"] = call_ids[index]
        call["type"] = "function"
    function: dict[str, Any] = {}
    if name:
        function["name"] = name
    if args:
        function["arguments"] = args
    if function:
        call["function"] = function
    return {"tool_calls": [call]}


def _call_ids(ctx: RequestContext, count: int) -> list[str]:
    return [random_string(ctx.ids) for _ in range(count)]


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {"completion_tokens": completion, "prompt_tokens": prompt, "total_tokens": completion + prompt}


def _full(profile: LlamacppProfile, plan: Plan, request: ChatRequestView, ctx: RequestContext) -> Reply:
    msg = plan.message
    assert msg is not None
    if msg.empty:  # oaicompat_msg empty: the raw generated text becomes the content
        msg = ChatMsg(content=plan.generated)
    request_id = "chatcmpl-" + random_string(ctx.ids)
    prompt = ctx.prompt_tokens
    body = {
        "choices": [{"finish_reason": finish_reason(plan.finish, msg), "index": 0, "message": message_object(msg, _call_ids(ctx, len(msg.tool_calls)))}],
        "created": ctx.created,
        "model": request.model,
        "system_fingerprint": profile.build_info,
        "object": "chat.completion",
        "usage": _usage(prompt, plan.n_decoded),
        "id": request_id,
        "timings": timings(prompt, plan.n_decoded, profile.prompt_tokens_per_second, profile.predicted_tokens_per_second),
    }
    return Reply(status=200, body=dumps(body).encode())


def _stream(profile: LlamacppProfile, plan: Plan, request: ChatRequestView, ctx: RequestContext, memo: MutableMapping[object, Any] | None) -> Reply:
    request_id = "chatcmpl-" + random_string(ctx.ids)
    tail = f',"created":{ctx.created},"id":"{request_id}","model":{dumps(request.model)},"system_fingerprint":{dumps(profile.build_info)},"object":"chat.completion.chunk"'
    prompt = ctx.prompt_tokens
    per_token = request.body.get("timings_per_token") is True

    def timed(n_decoded: int) -> str:
        return ',"timings":' + dumps(timings(prompt, n_decoded, profile.prompt_tokens_per_second, profile.predicted_tokens_per_second))

    if per_token or memo is None:  # a timings object on every token's last chunk: built for this request
        call_ids = _call_ids(ctx, len(plan.stream_message.tool_calls))
        frames = _chunk_frames(plan, call_ids, tail, timed if per_token else None)
    else:  # the chunks built once per plan, this request's call ids and tail joined in

        def build() -> tuple[tuple[Any, ...], FramesTemplate, bytes | None]:
            recorder = IdRecorder()
            call_ids = [random_string(recorder) for _ in plan.stream_message.tool_calls]  # type: ignore[arg-type]
            # Built with an empty tail: every chunk then ends with "}\n\n", which the template
            # leaves out; a request adds its tail (id, created, model) and "}\n\n" to each. The
            # error frame that ends a failed stream has no tail: kept whole, after the chunks.
            frames = _chunk_frames(plan, call_ids, "", None)
            error = frames.pop() if plan.stream_error is not None else None
            assert all(frame.endswith(_CHUNK_END) for frame in frames)
            return recorder.frozen(), FramesTemplate([frame[: -len(_CHUNK_END)] for frame in frames]), error

        calls, template, error = held(memo, ("llamacpp.chat.frames",), (plan,), build)  # per plan (memos.held)
        frames = template.fill(IdRecorder.replay(calls, ctx.ids), suffix=(tail + "}\n\n").encode())
        if error is not None:
            frames.append(error)
    if plan.stream_error is not None:
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))
    finish = finish_reason(plan.finish, plan.stream_message)
    finals = [f'{{"choices":[{{"finish_reason":"{finish}","index":0,"delta":{{}}}}]{tail}}}']
    if request.include_usage:
        finals.append(f'{{"choices":[]{tail},"usage":{dumps(_usage(prompt, plan.n_decoded))}}}')
    finals[-1] = finals[-1][:-1] + timed(plan.n_decoded) + "}"
    frames += [f"data: {c}\n\n".encode() for c in finals]
    frames.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))


def _chunk_frames(plan: Plan, call_ids: list[str], tail: str, timed: Callable[[int], str] | None) -> list[bytes]:
    """The stream's frames up to its finish chunk: the partial results' chunks (with ``timed``,
    ``timings_per_token``'s object on each token's last chunk), then the error frame that ends a
    failed stream, or the final update's diff chunks."""

    def chunk(delta: dict[str, Any]) -> str:
        return f'{{"choices":[{{"finish_reason":null,"index":0,"delta":{dumps(delta)}}}]{tail}}}'

    frames: list[bytes] = []
    for n_decoded, diffs in plan.steps:
        chunks = [chunk({"role": "assistant", "content": None})] if n_decoded == 1 else []
        chunks += [chunk(delta_object(d, call_ids)) for d in diffs]
        if chunks and timed is not None:
            chunks[-1] = chunks[-1][:-1] + timed(n_decoded) + "}"
        frames += [f"data: {c}\n\n".encode() for c in chunks]
    if plan.stream_error is not None:
        # set_next's catch: format_oai_sse({"error": …}), then the stream ends without [DONE].
        frames.append(f"data: {dumps({'error': error_object(500, plan.stream_error)})}\n\n".encode())
        return frames
    frames += [f"data: {chunk(delta_object(d, call_ids))}\n\n".encode() for d in plan.final_diffs]
    return frames


def surface_chat(
    profile: LlamacppProfile, plan: Plan, request: ChatRequestView, ctx: RequestContext, memo: MutableMapping[object, Any] | None = None
) -> Reply:
    """Surface ``plan`` as llama-server's ``/v1/chat/completions`` reply.

    Non-streamed: ``{"choices":[{"finish_reason","index":0,"message":{"role","content",
    ["reasoning_content"],["tool_calls"]}}],"created","model","system_fingerprint",
    "object":"chat.completion","usage":{"completion_tokens","prompt_tokens","total_tokens"},
    "id":"chatcmpl-<32 alnum>","timings":{…}}``. When the final parse yields an empty message (e.g.
    only an unsolicited call, which the grammar consumes and drops), ``content`` is the raw
    generated text. A failed final parse → HTTP 500
    ``{"error":{"code":500,"message":"The model produced output that does not match the expected
    peg-native format","type":"server_error"}}`` (llama.cpp#25321); with ``parse_error="position"``
    (b9553) the message is ``Failed to parse input at pos N: <rest>`` (:func:`.gptoss.failed_parse_message`).

    Streamed (HTTP 200, ``data: {chunk}\\n\\n``): the first token's chunk carries
    ``delta {"role":"assistant","content":null}``; then one chunk per diff of each token's reparse
    (``reasoning_content`` / ``content`` / ``tool_calls[{index,[id,type],[function{[name],
    [arguments]}]}]``); the final update's diffs; a ``finish_reason`` chunk with ``delta {}``; with
    ``stream_options.include_usage`` a ``choices: []`` usage chunk; ``timings`` on the last chunk;
    ``data: [DONE]``. A failed final parse (or a reparse that rewrote streamed text) ends the
    stream with ``data: {"error":{…}}`` and no ``[DONE]``.
    """
    if not request.stream:
        if plan.error is not None:
            return error_reply(500, plan.error)
        return _full(profile, plan, request, ctx)
    return _stream(profile, plan, request, ctx, memo)
