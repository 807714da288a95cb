"""``POST /v1/chat/completions`` as ``trtllm-serve`` answers for gpt-oss (its ``chat_harmony`` route).

Read from ``tensorrt_llm/serve/harmony_adapter.py`` at NVIDIA/TensorRT-LLM@38134b130944ed5c037949456df20300126ec728
(``handle_streaming_response``, ``handle_non_streaming_response``, ``create_openai_streaming_response``,
``_create_response_message``, ``_determine_finish_reason``, ``_create_usage_info``), the protocol
models of ``tensorrt_llm/serve/openai_protocol.py`` (the stored version with
``DeltaMessage.reasoning``), ``tensorrt_llm/executor/result.py`` (stop handling) and
``openai_server.py`` ``chat_harmony``; later changes are the profile's switches (:mod:`.releases`).

* The engine stops on ``<|return|>`` (the tokenizer's end id: not part of the output) or
  ``<|call|>`` (a stop token id: trimmed from the output, ``stop_reason`` 200012 on the streamed
  finish chunk). ``completion_tokens`` counts the output tokens, so the stop token is not counted.
* Non-streamed: the output tokens, a trailing header without ``<|message|>`` stripped, go through
  openai-harmony's ``parse_messages_from_completion_tokens``; if it raises, ``content`` is the raw
  decoded text, markup and all. ``JSONResponse(model_dump())``: every field, nulls included;
  ``finish_reason`` is ``tool_calls`` when there are calls.
* Streamed (``model_dump_json(exclude_none=True)``): a chunk per adapter delta, the engine's
  response batches of ``stream_interval`` tokens, a finish chunk ``{"delta": {}}`` carrying the
  engine's finish reason (``stop`` after a tool call too), a usage chunk, ``data: [DONE]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.library import parse_with
from mockoss.harmony.trace import ParserTrace
from mockoss.profiles.base import SSE_MEDIA_TYPE, ChatRequestView, Reply, RequestContext
from mockoss.profiles.trtllm.adapter import StreamState, ToolFilter, map_messages, merge_deltas, strip_incomplete
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.trtllm import TrtllmProfile

__all__ = ["engine_batches", "fed_batches", "output_tokens", "response_message", "surface_chat", "usage_info", "wire_delta"]

RETURN, CALL = 200002, 200012
_DONE = b"data: [DONE]\n\n"


def output_tokens(tokens: tuple[int, ...], finish: str) -> tuple[tuple[int, ...], int | None]:
    """``(output token ids, stop_reason)`` after the executor's stop handling."""
    if finish == "stop" and tokens and tokens[-1] in (RETURN, CALL):
        return tokens[:-1], (CALL if tokens[-1] == CALL else None)
    return tokens, None


def usage_info(prompt: int, completions: list[int], *, cached: int = 0, details: bool = True) -> dict[str, Any]:
    """``_create_usage_info``: completion tokens summed over the outputs; ``prompt_tokens_details``
    with ``cached_tokens`` when ``details`` (PR #12292), else ``null``. mockoss has no prefix
    cache: the profile always reports 0 cached tokens."""
    completion = sum(completions)
    return {
        "prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion,
        "prompt_tokens_details": {"cached_tokens": cached} if details else None,
    }


def _usage(profile: TrtllmProfile, prompt: int, completion: int) -> dict[str, Any]:
    return usage_info(prompt, [completion], details=profile.cached_tokens_in_usage)


def response_message(parsed: dict[str, Any], *, alias: bool) -> dict[str, Any]:
    """``_create_response_message`` then ``ChatMessage(**…).model_dump()``: every field, in the
    model's order; ``reasoning_content`` repeats ``reasoning`` when ``alias`` (PR #12046)."""
    reasoning = parsed.get("reasoning")
    return {
        "role": parsed.get("role", "assistant"), "content": parsed.get("content"),
        "reasoning_content": reasoning if alias else None, "reasoning": reasoning, "tool_calls": parsed.get("tool_calls", []),
    }


def wire_delta(delta: dict[str, Any], sent: set[str], *, alias: bool) -> tuple[dict[str, Any], bool]:
    """``create_openai_streaming_response``'s ``DeltaMessage`` for one adapter delta, as
    ``exclude_none`` dumps it, and whether it is the ``should_stop`` signal (then the chunk carries
    ``finish_reason: "stop"`` and nothing after it in the batch is sent)."""
    if "reasoning" in delta:
        text = delta["reasoning"]
        return ({"reasoning_content": text, "reasoning": text} if alias else {"reasoning": text}), False
    if "content" in delta:
        return {"content": delta["content"]}, False
    if "tool_calls" in delta:
        return {"tool_calls": [_call_delta(call, sent) for call in delta["tool_calls"]]}, False
    return {}, "should_stop" in delta


def _filter(request: ChatRequestView) -> ToolFilter:
    names = [t.name or "" for t in request.tools if t.type == "function"] if request.tools else None
    return ToolFilter.of(None if request.tool_choice == "none" else names, request.tool_choice)


def surface_chat(profile: TrtllmProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
    """trtllm-serve's chat reply for ``completion``; see the module docstring."""
    emission = completion.emit(request.max_tokens)
    tokens, stop_reason = output_tokens(emission.tokens, emission.finish_reason)
    if request.stream:
        return _stream(profile, emission.tokens, tokens, emission.finish_reason, stop_reason, request, ctx)
    rid = ctx.ids.next("chatcmpl-")
    clean = strip_incomplete(tokens)
    trace = parse_with(clean, strict=True, library=profile.harmony_library)  # type: ignore[arg-type]
    # parse_messages_from_completion_tokens ends with process_eos(): with nothing left after the
    # stripping, the parser is still waiting for the first header and raises.
    if not clean or trace.error is not None or trace.eos_error is not None:
        parsed: dict[str, Any] = {"role": "assistant", "content": load_encoding().decode(list(tokens))}
    else:
        parsed = map_messages(
            (*trace.messages, *trace.eos_messages), _filter(request), lambda: ctx.ids.next("call_")[:13],
            analysis_calls=profile.tool_calls_on_analysis, validate=profile.channel_validation,
        )
    message = response_message(parsed, alias=profile.reasoning_content_alias)
    finish = "tool_calls" if parsed.get("tool_calls") else emission.finish_reason
    choice = {
        "index": 0, "message": message, "logprobs": None, "finish_reason": finish, "stop_reason": None,
        "mm_embedding_handle": None, "disaggregated_params": None, "avg_decoded_tokens_per_iter": None,
    }
    body = {
        "id": rid, "object": "chat.completion", "created": ctx.created, "model": request.model, "choices": [choice],
        "usage": _usage(profile, ctx.prompt_tokens, len(tokens)), "prompt_token_ids": None,
    }
    return Reply(status=200, body=dumps(body).encode())


def engine_batches(emitted: int, output: int, interval: int) -> list[tuple[int, int, bool]]:
    """``(start, stop, done)`` token slices of the output, one per engine response: every
    ``interval`` iterations (one token each) and the last; the stop token's iteration adds none."""
    bounds, last = [], 0
    for j in range(interval, emitted, interval):
        bounds.append((last, j, False))
        last = j
    bounds.append((last, output, True))
    return bounds


def fed_batches(tokens: tuple[int, ...], bounds: list[tuple[int, int, bool]], library: str) -> tuple[ParserTrace, list[tuple[int, int, bool]]]:
    """What the stream's parser was fed: a batch whose token raises ``HarmonyError`` stops there
    (the rest of the batch is never processed); later batches go on. Returns the parser's trace
    over the fed tokens (erroring tokens skipped, as a caught error leaves the parser) and, per
    batch, ``(first step, step after the last good one, failed)``."""
    trace = parse_with(tokens, strict=True, library=library, skip_errors=True)  # type: ignore[arg-type]
    if not trace.skipped or all(stop - start <= 1 for start, stop, _ in bounds):
        failed = {index for index, _ in trace.skipped}
        broken = [stop > start and stop - 1 in failed for start, stop, _ in bounds]
        return trace, [(start, stop - bad, bad) for (start, stop, _), bad in zip(bounds, broken, strict=True)]
    fed: list[int] = []
    spans = []
    for start, stop, _ in bounds:
        begin = len(fed)
        attempt = parse_with((*fed, *tokens[start:stop]), strict=True, library=library, skip_errors=True)  # type: ignore[arg-type]
        error = next((index for index, _ in attempt.skipped if index >= begin), None)
        fed.extend(tokens[start:stop] if error is None else tokens[start : start + error - begin + 1])
        spans.append((begin, len(fed) if error is None else error, error is not None))
    return parse_with(tuple(fed), strict=True, library=library, skip_errors=True), spans  # type: ignore[arg-type]


def _include_usage(profile: TrtllmProfile, request: ChatRequestView) -> bool:
    if profile.stream_usage != "stream_options":
        return profile.stream_usage == "always"
    options = request.body.get("stream_options") if isinstance(request.body, dict) else None
    return not isinstance(options, dict) or bool(options.get("include_usage", True))


def _stream(
    profile: TrtllmProfile, emitted: tuple[int, ...], tokens: tuple[int, ...], finish: str, stop_reason: int | None,
    request: ChatRequestView, ctx: RequestContext,
) -> Reply:
    """The SSE frames, batch by batch as ``handle_streaming_response`` writes them."""
    bounds = engine_batches(len(emitted), len(tokens), profile.stream_interval)
    trace, spans = fed_batches(tokens, bounds, profile.harmony_library)
    state = StreamState(_filter(request), lambda: ctx.ids.next("call_")[:13], analysis_calls=profile.tool_calls_on_analysis, validate=profile.channel_validation)
    stream_id = ctx.ids.next("chatcmpl-") if profile.stable_stream_ids else None
    model = dumps(request.model)
    sent: set[str] = set()

    def frame(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
        rid = stream_id or ctx.ids.next("chatcmpl-")
        # exclude_none: a null prompt_tokens_details is left out of a streamed usage
        tail = f',"usage":{dumps({k: v for k, v in usage.items() if v is not None})}' if usage is not None else ""
        return f'data: {{"id":"{rid}","object":"chat.completion.chunk","created":{ctx.created},"model":{model},"choices":{dumps(choices)}{tail}}}\n\n'.encode()

    def deltas(span: tuple[int, int, bool]) -> tuple[list[bytes], bool]:
        raw = state.batch(trace, *span)
        if raw is None:
            return [], False
        out = []
        for delta in merge_deltas(raw) if profile.merge_deltas else raw:
            wire, should_stop = wire_delta(delta, sent, alias=profile.reasoning_content_alias)
            choice: dict[str, Any] = {"index": 0, "delta": wire}
            if should_stop:
                choice["finish_reason"] = "stop"
                out.append(frame([choice]))
                return out, True
            out.append(frame([choice]))
        return out, False

    frames: list[bytes] = []
    usage_on = _include_usage(profile, request)
    first = True
    for (start, stop, done), span in zip(bounds, spans, strict=True):
        chunks, should_stop = (deltas(span) if not done or (profile.flush_final_batch and stop > start) else ([], False))
        if profile.role_chunk == "every_batch" and not done or profile.role_chunk == "first" and first:
            frames.append(frame([{"index": 0, "delta": {"role": "assistant"}}]))
        first = False
        frames.extend(chunks)
        if should_stop:
            if usage_on:
                frames.append(frame([], _usage(profile, ctx.prompt_tokens, stop)))
            break
        if done:
            end: dict[str, Any] = {"index": 0, "delta": {}, "finish_reason": finish}
            if stop_reason is not None:
                end["stop_reason"] = stop_reason
            frames.append(frame([end]))
            if usage_on:
                frames.append(frame([], _usage(profile, ctx.prompt_tokens, len(tokens))))
    frames.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))


def _call_delta(call: dict[str, Any], sent: set[str]) -> dict[str, Any]:
    """``DeltaToolCall``: id, type, index and name the first time a call id is seen, then only
    type, index and the new arguments."""
    call_id, function = call["id"], call["function"]
    if call_id not in sent:
        sent.add(call_id)
        return {"id": call_id, "type": "function", "index": call["index"], "function": {"name": function["name"], "arguments": function["arguments"]}}
    return {"type": "function", "index": call["index"], "function": {"arguments": function["arguments"]}}
