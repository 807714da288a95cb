"""``POST /v1/chat/completions`` as SGLang serves gpt-oss (sgl-project/sglang@v0.5.23).

Checked by running it (``tools/sglang_serving_diff.py``: 1,241 chat exchanges, 0 differences but
``reasoning_tokens``, an engine count) and read from ``python/sglang/srt/entrypoints/openai/serving_chat.py`` (``_build_chat_response``,
``_generate_chat_stream``, ``_generate_stream_content``, ``_process_tool_call_stream``,
``_process_tool_calls``), ``sse_utils.py`` (``build_sse_content``), ``protocol.py`` (the models and
their serializers) and ``managers/detokenizer_manager.py`` (``trim_matched_stop``):

* The text the parsers see is the detokenized output with special tokens kept (gpt-oss forces
  ``skip_special_tokens=False``), the matched stop token cut off, except ``<|call|>`` when the tool
  parser is ``gpt-oss`` (that is how a call's block gets its end marker).
* ``id`` is the request id, 32 hex digits with no prefix (``uuid.uuid4().hex``, io_struct);
  tool-call ids are ``call_`` + 24 hex digits.
* Non-streamed: ``content`` is never null (``""``), ``reasoning_content`` null when empty,
  ``tool_calls`` only when there are calls, ``matched_stop`` the stop token id (``null`` after a
  tool call or a ``length`` stop), ``metadata: {"weight_version": "default"}``.
* Streamed: a first chunk with ``role`` and ``content: ""``, then reasoning and content deltas (the
  msgspec chunks keep ``reasoning_content: null`` in every delta; chunks of the tool path are
  pydantic dumps with every field), each call whole in one delta, a finish chunk with
  ``matched_stop``, a usage chunk (``choices: []``) with ``stream_options.include_usage``, then
  ``data: [DONE]``. What the parsers still hold when the stream ends is lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.base import SSE_MEDIA_TYPE, ChatRequestView, Reply, RequestContext
from mockoss.profiles.sglang.detectors import ReasoningStream, ToolCallStream, parse_tool_calls, split_reasoning
from mockoss.profiles.sglang.detokenizer import FIRST_SPECIAL, stream_deltas
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.sglang import SglangProfile

__all__ = ["surface_chat"]

RETURN, CALL, ENDOFTEXT, END = 200002, 200012, 199999, 200007
_STOPS = (RETURN, CALL, ENDOFTEXT)
_DONE = b"data: [DONE]\n\n"


def _finish(profile: SglangProfile, tokens: tuple[int, ...], finish: str) -> tuple[tuple[int, ...], str, int | None]:
    """``(tokens the text is made of, finish type, matched stop token)`` after ``trim_matched_stop``."""
    if finish != "stop" or not tokens or tokens[-1] not in _STOPS:
        return tokens, finish, None
    matched = tokens[-1]
    keep = matched == CALL and profile.tool_call_parser == "gpt-oss"
    return (tokens if keep else tokens[:-1]), "stop", matched


def _reasoning_tokens(profile: SglangProfile, tokens: tuple[int, ...]) -> int:
    """Tokens up to and with the first ``<|end|>`` (``Req.update_reasoning_tokens``), when a
    reasoning parser is set and ``count_reasoning_tokens`` (whether the scheduler counts them for
    gpt-oss depends on its chat template's reasoning config: unverified)."""
    if profile.reasoning_parser is None or not profile.count_reasoning_tokens:
        return 0
    return tokens.index(END) + 1 if END in tokens else len(tokens)


def _usage(prompt: int, completion: int, reasoning: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion,
        "prompt_tokens_details": None, "reasoning_tokens": reasoning,
        "completion_tokens_details": {"reasoning_tokens": reasoning} if reasoning else None,
    }


def _tools(profile: SglangProfile, request: ChatRequestView) -> frozenset[str] | None:
    """Declared function names when the tool parser runs for this request, else ``None``."""
    if profile.tool_call_parser is None or not request.tools or request.tool_choice == "none":
        return None
    return frozenset(t.name for t in request.tools if t.type == "function" and t.name)


def surface_chat(profile: SglangProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
    """SGLang's chat reply for ``completion``; see the module docstring for the rules."""
    emission = completion.emit(request.max_tokens)
    tokens, finish, matched = _finish(profile, emission.tokens, emission.finish_reason)
    reasoning_tokens = _reasoning_tokens(profile, emission.tokens)
    usage = _usage(ctx.prompt_tokens, len(emission.tokens), reasoning_tokens)
    rid = ctx.ids.next()
    tools = _tools(profile, request)
    if request.stream:
        # The trimmed stop token's step still runs the parsers, with the text the finish adds.
        steps = stream_deltas(emission.tokens, skip_special=profile.skip_special_tokens, trim_last=len(tokens) < len(emission.tokens))
        return _stream(profile, steps, finish, matched, (usage, reasoning_tokens), rid, tools, request, ctx)
    kept = [t for t in tokens if not (profile.skip_special_tokens and t >= FIRST_SPECIAL)]
    text = load_encoding().decode(kept) if kept else ""
    reasoning: str | None = None
    if profile.reasoning_parser is not None and profile.separate_reasoning:
        reasoning, text = split_reasoning(text)
    calls: list = []
    if tools is not None:
        text, calls = parse_tool_calls(text, tools, forward_unknown=profile.forward_unknown_tools, hyphenated=profile.hyphenated_tool_names)
        if calls and finish == "stop":
            finish, matched = "tool_calls", None
    message: dict[str, Any] = {"role": "assistant", "content": text or "", "reasoning_content": reasoning or None}
    if calls:
        message["tool_calls"] = [
            {"id": ctx.ids.next("call_")[:29], "index": i, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for i, c in enumerate(calls)
        ]
    body = {
        "id": rid, "object": "chat.completion", "created": ctx.created, "model": request.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish, "matched_stop": matched}],
        "usage": usage, "metadata": {"weight_version": "default"},
    }
    return Reply(status=200, body=dumps(body).encode())


def _stream(
    profile: SglangProfile, steps: list[str], finish: str, matched: int | None, usage_total: tuple[dict[str, Any], int],
    rid: str, tools: frozenset[str] | None, request: ChatRequestView, ctx: RequestContext,
) -> Reply:
    """The SSE frames. ``stream_options.include_usage`` or ``stream_default_include_usage`` adds the
    usage chunk (``should_include_usage``); ``continuous_usage_stats`` puts the counts so far on
    every reasoning, content and tool-call chunk."""
    usage, reasoning_total = usage_total
    head = f'{{"id":"{rid}","object":"chat.completion.chunk","created":{ctx.created},"model":{dumps(request.model)},"choices":[{{"index":0,"delta":'
    step_usage: dict[str, Any] | None = None

    def light(delta: dict[str, Any], finish_reason: str | None = None, stop: int | None = None, with_usage: bool = False) -> bytes:
        # sse_utils.build_sse_content: msgspec, reasoning_content always present, usage only when set.
        extra = f',"usage":{dumps(step_usage)}' if with_usage and step_usage is not None else ""
        tail = f',"logprobs":null,"finish_reason":{dumps(finish_reason)},"matched_stop":{dumps(stop)}}}]{extra}}}'
        return f"data: {head}{dumps(delta)}{tail}\n\n".encode()

    def full(delta: dict[str, Any]) -> bytes:
        # ChatCompletionStreamResponse.model_dump_json(): every field, tool_calls only when set.
        base = {"role": None, "content": None, "reasoning_content": None}
        tail = f',"logprobs":null,"finish_reason":null,"matched_stop":null}}],"usage":{dumps(step_usage)}}}'
        return f"data: {head}{dumps({**base, **delta})}{tail}\n\n".encode()

    frames = [light({"reasoning_content": None, "role": "assistant", "content": ""})]
    reasoning_stream = ReasoningStream() if profile.reasoning_parser is not None and profile.separate_reasoning else None
    call_stream = (
        ToolCallStream(tools, profile.forward_unknown_tools, profile.stream_plain_text_passthrough, profile.hyphenated_tool_names)
        if tools is not None
        else None
    )
    called = False
    for done, delta in enumerate(steps, 1):
        if request.continuous_usage_stats:
            step_usage = _usage(ctx.prompt_tokens, done, min(done, reasoning_total))
        if reasoning_stream is not None:
            thought, delta = reasoning_stream.feed(delta)
            if thought:
                frames.append(light({"reasoning_content": thought}, with_usage=True))
        if call_stream is not None:
            text, calls = call_stream.feed(delta)
            if text:
                frames.append(full({"content": text}))
            for call in calls:
                called = True
                entry = {"id": ctx.ids.next("call_")[:29], "index": call.index, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                frames.append(full({"tool_calls": [entry]}))
        elif delta:
            frames.append(light({"reasoning_content": None, "content": delta}, with_usage=True))
    final = "tool_calls" if called and finish == "stop" else finish
    frames.append(light({"reasoning_content": None}, final, matched))
    if request.include_usage or profile.stream_default_include_usage:
        frames.append(f'data: {{"id":"{rid}","object":"chat.completion.chunk","created":{ctx.created},"model":{dumps(request.model)},"choices":[],"usage":{dumps(usage)}}}\n\n'.encode())
    frames.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))
