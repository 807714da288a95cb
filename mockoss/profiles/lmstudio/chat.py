"""``POST /v1/chat/completions`` as LM Studio serves gpt-oss (shapes partly unverified).

Known from public sources: ``id`` is ``chatcmpl-`` + 21 lowercase letters and digits, choices are
``{"index","logprobs":null,"finish_reason","message"}``, ``usage`` has ``prompt_tokens``,
``completion_tokens``, ``total_tokens`` (lmstudio-ai/docs ``1_developer/2_rest/endpoints.md``);
``/v1/chat/completions`` always adds ``"stats": {}`` (lmstudio-bug-tracker#601); the message has
``reasoning`` and ``"tool_calls": []`` (reference §4.3). Unverified choices: ``system_fingerprint``
is the model name; tool-call ids are 9 digits; streamed deltas repeat ``"role":"assistant"``; a
tool call is streamed whole when its message completes.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import (
    SSE_MEDIA_TYPE,
    ChatRequestView,
    IdSource,
    Reply,
    RequestContext,
)
from mockoss.profiles.lmstudio.parse import LmstudioOutput
from mockoss.profiles.memos import held
from mockoss.profiles.replay import FramesTemplate, IdRecorder
from mockoss.profiles.wire import dumps, dumps_json

if TYPE_CHECKING:
    from mockoss.profiles.lmstudio import LmstudioProfile

__all__ = ["chat_id", "surface_chat"]

_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_DONE = b"data: [DONE]\n\n"


def chat_id(ids: IdSource, prefix: str = "chatcmpl-") -> str:
    """``prefix`` + 21 lowercase letters and digits (``chatcmpl-i3gkjwthhw96whukek9tz``)."""
    number = int(ids.next(), 16)
    out = []
    for _ in range(21):
        number, digit = divmod(number, 36)
        out.append(_ALNUM[digit])
    return prefix + "".join(out)


def render(profile: LmstudioProfile, value: Any) -> bytes:
    """A JSON body as LM Studio writes it: pretty-printed with two spaces (``pretty_json``)."""
    if profile.pretty_json:
        return dumps_json(value, ensure_ascii=False, indent=2).encode()
    return dumps(value).encode()


def finish_reason(output: LmstudioOutput, length: bool) -> str:
    """``length`` when cut by ``max_tokens``, ``tool_calls`` when calls survived, else ``stop``."""
    if length:
        return "length"
    return "tool_calls" if output.tool_calls else "stop"


def _message(profile: LmstudioProfile, output: LmstudioOutput, call_ids: list[str]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": output.content}
    if profile.reasoning_field == "content":
        message["content"] = output.reasoning + output.content
    elif output.reasoning:
        message[profile.reasoning_field] = output.reasoning
    message["tool_calls"] = [
        {"id": call_ids[i], "type": "function", "function": {"name": name, "arguments": args}}
        for i, (name, args) in enumerate(output.tool_calls)
    ]
    return message


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def surface_chat(
    profile: LmstudioProfile,
    output: LmstudioOutput,
    deltas: tuple,
    completion_tokens: int,
    length: bool,
    request: ChatRequestView,
    ctx: RequestContext,
    memo: MutableMapping[object, Any] | None = None,
) -> Reply:
    """LM Studio's chat reply for classified ``output`` (and its token ``deltas`` when streamed).

    Non-streamed: ``{"id","object":"chat.completion","created","model","choices":[{"index":0,
    "logprobs":null,"finish_reason","message":{"role","content",["reasoning"],"tool_calls":[…]}}],
    "usage":{…},"stats":{},"system_fingerprint"}``. ``reasoning_field`` renames ``reasoning`` to
    ``reasoning_content`` or prepends the reasoning to ``content``.

    Streamed: ``data: {"id","object":"chat.completion.chunk","created","model",
    "system_fingerprint","choices":[{"index":0,"delta":{"role":"assistant",…},"logprobs":null,
    "finish_reason":null}]}`` per token delta and per completed tool call, a last chunk with
    ``delta {}`` and the ``finish_reason`` (and ``usage`` with ``stream_options.include_usage``),
    then ``data: [DONE]``. ``memo``: the completion's memo, where the delta frames are kept.
    """
    request_id = chat_id(ctx.ids)
    call_ids = [ctx.ids.digits(9) for _ in output.tool_calls]
    finish = finish_reason(output, length)
    if not request.stream:
        body = {
            "id": request_id,
            "object": "chat.completion",
            "created": ctx.created,
            "model": request.model,
            "choices": [{"index": 0, "logprobs": None, "finish_reason": finish, "message": _message(profile, output, call_ids)}],
            "usage": _usage(ctx.prompt_tokens, completion_tokens),
            "stats": {},
            "system_fingerprint": request.model,
        }
        return Reply(status=200, body=render(profile, body))
    head = (
        f'data: {{"id":"{request_id}","object":"chat.completion.chunk","created":{ctx.created},'
        f'"model":{dumps(request.model)},"system_fingerprint":{dumps(request.model)},"choices":[{{"index":0,"delta":'
    )
    field = "content" if profile.reasoning_field == "content" else profile.reasoning_field
    # The delta frames depend on the classification only: built once per (classification, field)
    # and memoised on the completion, this request's head (id, created, model) and call ids joined in.
    if memo is None:
        frames = _delta_frames(output, deltas, call_ids, head, field)
    else:

        def build() -> FramesTemplate:
            recorder = IdRecorder()
            marks = [recorder.digits(9) for _ in output.tool_calls]
            return FramesTemplate(_delta_frames(output, deltas, marks, "", field))

        # Per the classification's objects (memos.held); both, as an empty deltas tuple is one
        # object for every classification.
        template = held(memo, ("lmstudio.chat.frames", field), (output, deltas), build)
        frames = template.fill([call_id.encode() for call_id in call_ids], prefix=head.encode())  # the head starts every frame
    usage = f',"usage":{dumps(_usage(ctx.prompt_tokens, completion_tokens))}' if request.include_usage else ""
    frames.append(f'{head}{{}},"logprobs":null,"finish_reason":"{finish}"}}]{usage}}}\n\n'.encode())
    frames.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))


def _delta_frames(output: LmstudioOutput, deltas: tuple, call_ids: list[str], head: str, field: str) -> list[bytes]:
    """One chunk per token delta and per completed tool call (``head`` starts each)."""
    frames: list[bytes] = []
    for kind, value in deltas:
        if kind == "call":
            name, args = output.tool_calls[value]
            call = {"index": value, "id": call_ids[value], "type": "function", "function": {"name": name, "arguments": args}}
            delta: dict[str, Any] = {"role": "assistant", "tool_calls": [call]}
        else:
            delta = {"role": "assistant", field if kind == "reasoning" else "content": value}
        frames.append(f'{head}{dumps(delta)},"logprobs":null,"finish_reason":null}}]}}\n\n'.encode())
    return frames
