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

import functools
from typing import TYPE_CHECKING, Any

from openai_harmony import StreamState as ParserState

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.library import parse_with
from mockoss.harmony.trace import ParserTrace
from mockoss.profiles.base import SSE_MEDIA_TYPE, ChatRequestView, IdSource, Reply, RequestContext
from mockoss.profiles.replay import IdRecorder, Template, new_id, templatable
from mockoss.profiles.sse import SseEvents
from mockoss.profiles.trtllm.adapter import StreamState, ToolFilter, map_messages, merge_deltas, strip_incomplete
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.trtllm import TrtllmProfile

__all__ = ["engine_batches", "fed_batches", "output_tokens", "response_message", "surface_chat", "usage_info", "wire_delta"]

RETURN, CALL, _START = 200002, 200012, 200006
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
    """trtllm-serve's chat reply for ``completion``; see the module docstring.

    What depends only on the completion and the request's shape (the parse, the mapping, the
    body's text; the stream's chunks) is a template memoised on the completion
    (:mod:`mockoss.profiles.replay`); a request fills in its ids, ``created``, ``model`` and usage."""
    if request.stream:
        return _stream(profile, completion, request, ctx)
    tools = _filter(request)
    if not templatable(completion.text):
        body, _ = _full_body(profile, completion, request.max_tokens, tools, ctx.ids, ctx.created, request.model, ctx.prompt_tokens)
        return Reply(status=200, body=body.encode())
    key = ("trtllm.chat", profile_key(profile), completion.cap(request.max_tokens), tools)
    cached = completion._memo.get(key)
    if cached is None:
        ids = IdRecorder()
        body, count = _full_body(profile, completion, request.max_tokens, tools, ids, ids.value("created"), ids.value("model"), None)
        cached = (Template(body), ids.frozen(), count)
        completion._memo[key] = cached
    template, calls, count = cached  # type: ignore[misc]
    values = {"created": str(ctx.created).encode(), "model": dumps(request.model).encode(),
              "usage": dumps(_usage(profile, ctx.prompt_tokens, count)).encode()}
    return Reply(status=200, body=template.fill(IdRecorder.replay(calls, ctx.ids, values)))


def _full_body(
    profile: TrtllmProfile, completion: Completion, max_tokens: int | None, tools: ToolFilter, ids: IdSource | IdRecorder,
    created: int | str, model: Any, prompt: int | None,
) -> tuple[str, int]:
    """The non-streamed body (``handle_non_streaming_response``) and its completion token count;
    with ``prompt`` ``None`` the usage is the value marker ``usage`` (``ids`` is an :class:`IdRecorder`)."""
    emission = completion.emit(max_tokens)
    tokens, _ = output_tokens(emission.tokens, emission.finish_reason)
    rid = new_id(ids, "chatcmpl-")
    clean = strip_incomplete(tokens)
    trace = parse_with(clean, strict=True, library=profile.harmony_library)  # type: ignore[arg-type]
    # parse_messages_from_completion_tokens ends with process_eos(): with nothing left after the
    # stripping, the parser is still waiting for the first header and raises.
    if not clean or trace.error is not None or trace.eos_error is not None:
        parsed: dict[str, Any] = {"role": "assistant", "content": load_encoding().decode(list(tokens))}
    else:
        parsed = map_messages(
            (*trace.messages, *trace.eos_messages), tools, lambda: new_id(ids, "call_", 13),
            analysis_calls=profile.tool_calls_on_analysis, validate=profile.channel_validation,
        )
    message = response_message(parsed, alias=profile.reasoning_content_alias)
    finish = "tool_calls" if parsed.get("tool_calls") else emission.finish_reason
    choice = {
        "index": 0, "message": message, "logprobs": None, "finish_reason": finish, "stop_reason": None,
        "mm_embedding_handle": None, "disaggregated_params": None, "avg_decoded_tokens_per_iter": None,
    }
    usage = ids.value("usage") if prompt is None else _usage(profile, prompt, len(tokens))
    body = {
        "id": rid, "object": "chat.completion", "created": created, "model": model, "choices": [choice],
        "usage": usage, "prompt_token_ids": None,
    }
    return dumps(body), len(tokens)


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
    batch, ``(first step, step after the last good one, failed)``.

    Linear in the tokens unless a batch drops a token the parser would have accepted: which token
    of a batch raises is read from one trace of what the parser would be fed next (the tokens fed
    so far, then all the rest), read again only after such a batch. A dropped token that would
    have failed while the parser expects ``<|start|>`` leaves the parser as it was (the rule
    :func:`mockoss.harmony.library.parse_with` splices by), so dropping it changes nothing after
    it. (Before, every batch re-read everything fed so far: 7 s for a 1,000-token answer with a
    rejected header at ``stream_interval`` 3.)"""
    trace = parse_with(tokens, strict=True, library=library, skip_errors=True)  # type: ignore[arg-type]
    if not trace.skipped or all(stop - start <= 1 for start, stop, _ in bounds):
        failed = {index for index, _ in trace.skipped}
        broken = [stop > start and stop - 1 in failed for start, stop, _ in bounds]
        return trace, [(start, stop - bad, bad) for (start, stop, _), bad in zip(bounds, broken, strict=True)]
    fed: list[int] = []
    spans = []
    # ahead: the trace of fed[:shift] + tokens[origin:]; a token's place in it is shift + index - origin
    ahead, shift, origin = trace, 0, 0
    failed = {index for index, _ in trace.skipped}
    for start, stop, _ in bounds:
        begin = len(fed)
        error = next((i for i in range(start, stop) if shift + i - origin in failed), None)
        fed.extend(tokens[start:stop] if error is None else tokens[start : error + 1])
        spans.append((begin, len(fed) if error is None else len(fed) - 1, error is not None))
        if error is not None and not all(_inert(ahead, failed, shift + i - origin, tokens[i]) for i in range(error + 1, stop)):
            ahead, shift, origin = parse_with((*fed, *tokens[stop:]), strict=True, library=library, skip_errors=True), len(fed), stop  # type: ignore[arg-type]
            failed = {index for index, _ in ahead.skipped}
    return parse_with(tuple(fed), strict=True, library=library, skip_errors=True), spans  # type: ignore[arg-type]


def _inert(trace: ParserTrace, failed: set[int], at: int, token: int) -> bool:
    """Whether the token at step ``at`` of ``trace`` failed while the parser expected
    ``<|start|>`` and left it so (it is not ``<|start|>``): feeding it or not is the same."""
    return at in failed and token != _START and trace.steps[at - 1].state == ParserState.EXPECT_START and trace.steps[at].state == ParserState.EXPECT_START


def _include_usage(profile: TrtllmProfile, request: ChatRequestView) -> bool:
    if profile.stream_usage != "stream_options":
        return profile.stream_usage == "always"
    options = request.body.get("stream_options") if isinstance(request.body, dict) else None
    return not isinstance(options, dict) or bool(options.get("include_usage", True))


def _stream(profile: TrtllmProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
    """The SSE frames, batch by batch as ``handle_streaming_response`` writes them: the frames'
    choices from a template memoised per request shape (:func:`_stream_specs`), each frame's head
    (id, ``created``, ``model``) and the usage per request. Every frame is ``data: `` and compact
    JSON (which escapes newlines) then ``\\n\\n``: :class:`~mockoss.profiles.sse.SseEvents`."""
    tools, usage_on = _filter(request), _include_usage(profile, request)
    model = dumps(request.model)
    if not templatable(completion.text):
        rids, choices, counts = _stream_specs(profile, completion, request.max_tokens, tools, usage_on, ctx.ids)
        frames = [
            _frame_head(rid, ctx.created, model) + _frame_rest(profile, text, count, ctx.prompt_tokens) for rid, text, count in zip(rids, choices, counts, strict=True)
        ]
        frames.append(_DONE)
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=SseEvents(frames))
    key = ("trtllm.chat.stream", profile_key(profile), completion.cap(request.max_tokens), tools, usage_on)
    cached = completion._memo.get(key)
    if cached is None:
        cached = _stream_template(profile, completion, request.max_tokens, tools, usage_on)
        completion._memo[key] = cached
    calls, indices, rests = cached  # type: ignore[misc]
    ids = IdRecorder.replay(calls, ctx.ids)
    after = f'","object":"chat.completion.chunk","created":{ctx.created},"model":{model},"choices":'.encode()
    heads = [b'data: {"id":"' + rid + after for rid in ids]  # _frame_head's bytes (a call id's head is never used)
    if indices is None:  # one id, every chunk's bytes known, a usage chunk last or none
        head, usage = heads[0], rests[-1].__class__ is int
        frames = list(map(head.__add__, rests[:-1] if usage else rests))
        if usage:
            frames.append(head + _frame_rest(profile, "[]", rests[-1], ctx.prompt_tokens))
    else:
        frames = []
        for index, rest in zip(indices, rests, strict=True):
            if rest.__class__ is bytes:
                frames.append(heads[index] + rest)
            elif rest.__class__ is int:
                frames.append(heads[index] + _frame_rest(profile, "[]", rest, ctx.prompt_tokens))
            else:  # a Template of the choices and the frame's end
                frames.append(heads[index] + rest.fill(ids))
    frames.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=SseEvents(frames))


def _stream_template(
    profile: TrtllmProfile, completion: Completion, max_tokens: int | None, tools: ToolFilter, usage_on: bool,
) -> tuple[tuple[Any, ...], tuple[int, ...] | None, tuple[bytes | Template | int, ...]]:
    """``(calls, indices, rests)``: the :class:`IdRecorder`'s calls, per frame the id it carries
    (an index into the ids they draw; ``indices`` is ``None`` when every frame carries the first)
    and what follows the head: bytes, a usage chunk's completion tokens, or a :class:`Template`
    of the bytes holding call id markers."""
    recorder = IdRecorder()
    rids, choices, counts = _stream_specs(profile, completion, max_tokens, tools, usage_on, recorder)
    rests: list[bytes | Template | int] = []
    for text, count in zip(choices, counts, strict=True):
        if count is not None:
            rests.append(count)
        elif "\\u0000" in text:  # a call id marker (dumps escapes its NULs)
            rests.append(Template(f"{text}}}\n\n"))
        else:
            rests.append(f"{text}}}\n\n".encode())
    indices = [IdRecorder.index(rid) for rid in rids]
    plain = not any(indices) and all(rest.__class__ is bytes for rest in rests[:-1]) and rests[-1].__class__ is not Template
    return recorder.frozen(), None if plain else tuple(indices), tuple(rests)


@functools.lru_cache(maxsize=64)
def profile_key(profile: Any) -> str:
    """The profile as a memo key: its ``repr`` (every switch, in field order), one string whose
    bytes a memo store counts at once (the dataclass is walked field by field)."""
    return repr(profile)


def _frame_head(rid: str, created: int, model: str) -> bytes:
    """A chunk's bytes up to its choices (``model`` is JSON text)."""
    return f'data: {{"id":"{rid}","object":"chat.completion.chunk","created":{created},"model":{model},"choices":'.encode()


def _frame_rest(profile: TrtllmProfile, choices: str, count: int | None, prompt: int) -> bytes:
    """A chunk's bytes from its choices (JSON text) on, with the usage of ``count`` completion
    tokens unless ``None``."""
    if count is None:
        return f"{choices}}}\n\n".encode()
    # exclude_none: a null prompt_tokens_details is left out of a streamed usage
    usage = dumps({k: v for k, v in _usage(profile, prompt, count).items() if v is not None})
    return f'{choices},"usage":{usage}}}\n\n'.encode()


def _stream_specs(
    profile: TrtllmProfile, completion: Completion, max_tokens: int | None, tools: ToolFilter, usage_on: bool, ids: IdSource | IdRecorder,
) -> tuple[list[str], list[str], list[int | None]]:
    """The stream's frames before [DONE] as three lists: each frame's id, its choices as JSON, and
    its usage's completion tokens (``None``: no usage); ids asked of ``ids`` in the order the
    server makes them. (Lists of strings, not a tuple per frame: fewer objects for the collector
    to walk while a long stream is built.)"""
    emission = completion.emit(max_tokens)
    emitted, finish = emission.tokens, emission.finish_reason
    tokens, stop_reason = output_tokens(emitted, finish)
    bounds = engine_batches(len(emitted), len(tokens), profile.stream_interval)
    trace, spans = fed_batches(tokens, bounds, profile.harmony_library)
    state = StreamState(tools, lambda: new_id(ids, "call_", 13), analysis_calls=profile.tool_calls_on_analysis, validate=profile.channel_validation)
    stream_id = ids.next("chatcmpl-") if profile.stable_stream_ids else None
    sent: set[str] = set()

    rids: list[str] = []
    choices: list[str] = []
    counts: list[int | None] = []

    def made(choice: list[dict[str, Any]]) -> tuple[str, str]:
        return stream_id or ids.next("chatcmpl-"), dumps(choice)  # the id when the server makes the chunk

    def frame(chunk: tuple[str, str], usage: int | None = None) -> None:
        rids.append(chunk[0])
        choices.append(chunk[1])
        counts.append(usage)

    def deltas(span: tuple[int, int, bool]) -> tuple[list[tuple[str, str]], bool]:
        raw = state.batch(trace, *span)
        if raw is None:
            return [], False
        out = []
        for delta in merge_deltas(raw) if profile.merge_deltas else raw:
            wire, should_stop = wire_delta(delta, sent, alias=profile.reasoning_content_alias)
            choice: dict[str, Any] = {"index": 0, "delta": wire}
            if should_stop:
                choice["finish_reason"] = "stop"
                out.append(made([choice]))
                return out, True
            out.append(made([choice]))
        return out, False

    first = True
    for (start, stop, done), span in zip(bounds, spans, strict=True):
        chunks, should_stop = (deltas(span) if not done or (profile.flush_final_batch and stop > start) else ([], False))
        if profile.role_chunk == "every_batch" and not done or profile.role_chunk == "first" and first:
            frame(made([{"index": 0, "delta": {"role": "assistant"}}]))
        first = False
        for chunk in chunks:
            frame(chunk)
        if should_stop:
            if usage_on:
                frame(made([]), stop)
            break
        if done:
            end: dict[str, Any] = {"index": 0, "delta": {}, "finish_reason": finish}
            if stop_reason is not None:
                end["stop_reason"] = stop_reason
            frame(made([end]))
            if usage_on:
                frame(made([]), len(tokens))
    return rids, choices, counts


def _call_delta(call: dict[str, Any], sent: set[str]) -> dict[str, Any]:
    """``DeltaToolCall``: id, type, index and name the first time a call id is seen, then only
    type, index and the new arguments."""
    call_id, function = call["id"], call["function"]
    if call_id not in sent:
        sent.add(call_id)
        return {"id": call_id, "type": "function", "index": call["index"], "function": {"name": function["name"], "arguments": function["arguments"]}}
    return {"type": "function", "index": call["index"], "function": {"arguments": function["arguments"]}}
