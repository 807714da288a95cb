"""``POST /v1/chat/completions`` as current (2026) vLLM serves gpt-oss.

Reproduces ``vllm/entrypoints/openai/chat_completion/serving.py@006c49d4``
(``chat_completion_full_generator`` / ``chat_completion_stream_generator``) driving
``vllm/parser/harmony.py@053e68ec`` (``HarmonyParser.parse`` / ``parse_delta``), with the wire shapes
of ``chat_completion/protocol.py@002032ee`` and ``generate/base/protocol.py@022e555d``.

Everything that depends only on ``(completion, max_tokens, strict)`` (the classification, the
per-token deltas, their JSON) is computed once and memoised on ``completion._memo``; a request only
stamps its ids, ``created``, model and usage onto precomputed pieces.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mockoss.harmony.completion import CALL
from mockoss.profiles.base import SSE_MEDIA_TYPE, ChatRequestView, Reply, RequestContext
from mockoss.profiles.vllm.errors import stream_error_frame
from mockoss.profiles.vllm.segments import (
    ParsedOutput,
    SegmentType,
    function_name,
    parse_output,
    token_segments,
)

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["surface_chat"]

_DONE = b"data: [DONE]\n\n"
_MEMO = "vllm.chat"


def _dumps(value: object) -> str:
    """Compact JSON, UTF-8 kept as is: what pydantic's ``model_dump_json`` and Starlette's
    ``JSONResponse`` (``ensure_ascii=False``, ``separators=(",", ":")``) both write."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- per completion


@dataclass(frozen=True, slots=True)
class _TokenDelta:
    """What ``parse_delta`` combines for one token, before request options are applied.

    ``tool`` is ``(index, name, arguments)`` for the first delta of a call (``name`` set) or
    ``(index, None, arguments)`` for a later arguments delta.
    """

    content: str
    reasoning: str
    tool: tuple[int, str | None, str] | None


@dataclass(frozen=True, slots=True)
class _Plan:
    """The request-independent outcome of one completion under ``(max_tokens, strict)``."""

    error: str | None
    finish: str
    stop_reason: int | None
    completion_tokens: int
    reasoning_tokens: int
    parsed: ParsedOutput | None
    deltas: tuple[_TokenDelta, ...]  # one per token the parser accepted
    reasoning_upto: tuple[int, ...]  # usage reasoning-token count after each accepted token


def _plan(completion: Completion, max_tokens: int | None, strict: bool, raw_recovery: bool = True) -> _Plan:
    key = (_MEMO, max_tokens, strict) if raw_recovery else (_MEMO, max_tokens, strict, "no-raw-recovery")
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = completion.emit(max_tokens)
    trace = completion.trace(max_tokens=max_tokens, strict=strict)
    segments = token_segments(trace)
    deltas: list[_TokenDelta] = []
    upto: list[int] = []
    reasoning_count = 0
    next_index = 0
    prev_recipient: str | None = None
    for seg in segments:
        reasoning_count += seg.counts_as_reasoning
        upto.append(reasoning_count)
        content = reasoning = ""
        tool: tuple[int, str | None, str] | None = None
        if not seg.completed:
            if seg.kind is SegmentType.CONTENT:
                content = seg.delta
            elif seg.kind is SegmentType.REASONING:
                reasoning = seg.delta
            elif seg.kind is SegmentType.TOOL:
                assert seg.recipient is not None
                if prev_recipient != seg.recipient:
                    tool = (next_index, function_name(seg.recipient), seg.delta)
                    next_index += 1
                elif seg.delta:
                    tool = (next_index - 1, None, seg.delta)
        prev_recipient = seg.recipient
        deltas.append(_TokenDelta(content, reasoning, tool))
    parsed: ParsedOutput | None = None
    if trace.error is None:
        parsed = parse_output(trace, raw_recovery=raw_recovery)
        if parsed.raw_recovered and deltas:
            # flush() at the last token: the recovered raw text joins that token's content delta.
            last = deltas[-1]
            deltas[-1] = _TokenDelta(last.content + parsed.raw_recovered, last.reasoning, last.tool)
    tokens = emission.tokens
    stop_reason = CALL if emission.finish_reason == "stop" and tokens and tokens[-1] == CALL else None
    plan = _Plan(
        error=trace.error,
        finish=emission.finish_reason,
        stop_reason=stop_reason,
        completion_tokens=len(tokens),
        reasoning_tokens=reasoning_count,
        parsed=parsed,
        deltas=tuple(deltas),
        reasoning_upto=tuple(upto),
    )
    completion._memo[key] = plan
    return plan


# --------------------------------------------------------------------------- tool_choice


def _tool_choice(request: ChatRequestView, profile: VllmProfile | None = None) -> str | Mapping[str, object]:
    """Effective ``tool_choice``: an absent one is ``"auto"`` when ``tools`` are sent, else
    ``"none"`` (vLLM's ``ChatCompletionRequest.check_tool_usage``), so a request that declares no
    tools never receives tool calls, whatever the model emitted.

    The profile's ``tool_choice_none="ignored"`` (vllm#30867) turns an explicit ``"none"`` with
    declared tools into ``"auto"``; ``tool_choice_required="ignored"`` (vllm#44216) turns
    ``"required"`` into ``"auto"``.
    """
    if request.tool_choice is None:
        return "auto" if request.tools else "none"
    choice = request.tool_choice
    if profile is not None:
        if choice == "none" and request.tools and profile.tool_choice_none == "ignored":
            return "auto"
        if choice == "required" and profile.tool_choice_required == "ignored":
            return "auto"
    return choice


def _reasoning_json(field: str, value: str | None) -> str:
    """The reasoning member(s) of a message or delta for the ``reasoning_field`` switch."""
    encoded = "null" if value is None else _dumps(value)
    if field == "reasoning":
        return '"reasoning":' + encoded
    if field == "reasoning_content":
        return '"reasoning_content":' + encoded
    return f'"reasoning":{encoded},"reasoning_content":{encoded}'


# --------------------------------------------------------------------------- streaming


@dataclass(frozen=True, slots=True)
class _Sse:
    """Request-independent stream pieces for one ``(include_reasoning, tools)`` variant.

    ``chunks`` holds ``(delta, token_position)`` for each token that yields a chunk before the last
    one; ``delta`` is UTF-8 JSON bytes, or a tuple of bytes and ints where an int is the index of
    the tool call whose per-request id goes there.
    """

    chunks: tuple[tuple[bytes | tuple[bytes | int, ...], int], ...]
    final: bytes | tuple[bytes | int, ...] | None
    tools_streamed: bool
    tool_calls: int


def _delta_json(
    d: _TokenDelta, include_reasoning: bool, tools: bool, field: str = "reasoning"
) -> bytes | tuple[bytes | int, ...] | None:
    """A ``DeltaMessage`` as ``model_dump_json(exclude_unset=True)`` writes it, or ``None``.

    Field order ``content, reasoning, tool_calls``; with ``include_reasoning=False`` vLLM assigns
    ``reasoning = None`` on every delta it keeps, so ``"reasoning":null`` is written. ``field``
    is the ``reasoning_field`` switch; with ``"both"`` the alias validator sets
    ``reasoning_content`` on every delta, ``null`` when there is no reasoning.
    """
    tool = d.tool if tools else None
    if not d.content and not d.reasoning and tool is None:
        return None
    if not include_reasoning and not d.content and tool is None:
        return None
    parts: list[str] = []
    if d.content:
        parts.append('"content":' + _dumps(d.content))
    if not include_reasoning:
        parts.append(_reasoning_json(field, None))
    elif d.reasoning:
        parts.append(_reasoning_json(field, d.reasoning))
    elif field == "both":
        parts.append('"reasoning_content":null')
    head = "{" + ",".join(parts) + ("," if parts and tool else "")
    if tool is None:
        return (head + "}").encode()
    index, name, arguments = tool
    if name is None:
        call = f'"tool_calls":[{{"index":{index},"function":{{"arguments":{_dumps(arguments)}}}}}]}}'
        return (head + call).encode()
    before = (head + '"tool_calls":[{"id":"').encode()
    function = f'{{"name":{_dumps(name)},"arguments":{_dumps(arguments)}}}'
    after = f'","type":"function","index":{index},"function":{function}}}]}}'
    return (before, index, after.encode())


def _sse(
    completion: Completion,
    plan: _Plan,
    max_tokens: int | None,
    strict: bool,
    include_reasoning: bool,
    tools: bool,
    field: str = "reasoning",
    raw_recovery: bool = True,
) -> _Sse:
    key = (_MEMO, max_tokens, strict, "sse", include_reasoning, tools)
    if field != "reasoning" or not raw_recovery:
        key += (field, raw_recovery)
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    deltas = plan.deltas
    body = deltas if plan.error is not None else deltas[:-1]
    chunks = []
    for position, d in enumerate(body):
        encoded = _delta_json(d, include_reasoning, tools, field)
        if encoded is not None:
            chunks.append((encoded, position))
    final = None
    if plan.error is None:
        empty = b'{"reasoning_content":null}' if field == "both" else b"{}"
        final = (deltas and _delta_json(deltas[-1], include_reasoning, tools, field)) or empty
    emitted = deltas if plan.error is None else body
    streamed = tools and any(d.tool is not None for d in emitted)
    calls = sum(1 for d in emitted if d.tool is not None and d.tool[1] is not None) if tools else 0
    result = _Sse(tuple(chunks), final, streamed, calls)
    completion._memo[key] = result
    return result


def _usage(prompt: int, completion: int, reasoning: int) -> str:
    return (
        f'{{"prompt_tokens":{prompt},"total_tokens":{prompt + completion},"completion_tokens":{completion},'
        f'"completion_tokens_details":{{"reasoning_tokens":{reasoning}}}}}'
    )


def _stream(profile: VllmProfile, plan: _Plan, sse: _Sse, request: ChatRequestView, ctx: RequestContext) -> Reply:
    """Frames of ``chat_completion_stream_generator`` (one engine step per token)."""
    request_id = ctx.ids.next("chatcmpl-")
    tool_ids = [ctx.ids.next("chatcmpl-tool-").encode() for _ in range(sse.tool_calls)]
    prompt = ctx.prompt_tokens
    include_usage = request.include_usage
    continuous = include_usage and request.continuous_usage_stats
    head = (
        f'data: {{"id":"{request_id}","object":"chat.completion.chunk","created":{ctx.created},'
        f'"model":{_dumps(request.model)},"choices":['
    ).encode()
    open_choice = head + b'{"index":0,"delta":'
    mid = b',"logprobs":null,"finish_reason":null,"token_ids":null}]'

    def delta_bytes(delta: bytes | tuple[bytes | int, ...]) -> bytes:
        if delta.__class__ is bytes:
            return delta  # type: ignore[return-value]
        return b"".join(p if p.__class__ is bytes else tool_ids[p] for p in delta)  # type: ignore[misc, index, union-attr]

    role = b'{"role":"assistant","content":""' + (b',"reasoning_content":null}' if profile.reasoning_field == "both" else b"}")
    first = open_choice + role + b',"logprobs":null,"finish_reason":null}]'
    if continuous:
        first += (',"usage":' + _usage(prompt, 0, 0)).encode()
    frames = [first + b',"prompt_token_ids":null,"prompt_text":null}\n\n']
    upto = plan.reasoning_upto
    if continuous:
        for delta, position in sse.chunks:
            usage = (',"usage":' + _usage(prompt, position + 1, upto[position]) + "}\n\n").encode()
            frames.append(open_choice + delta_bytes(delta) + mid + usage)
    else:
        tail = b"}\n\n"
        frames.extend([open_choice + delta_bytes(delta) + mid + tail for delta, _ in sse.chunks])
    if plan.error is not None:
        frames.append(stream_error_frame(profile.harmony_error_status, plan.error, body=profile.error_body))
        frames.append(_DONE)
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))
    assert sse.final is not None
    named = isinstance(_tool_choice(request, profile), Mapping)
    finish = "tool_calls" if sse.tools_streamed and not named and plan.finish == "stop" else plan.finish
    stop_reason = "null" if plan.stop_reason is None else str(plan.stop_reason)
    last = (
        f',"logprobs":null,"finish_reason":"{finish}","stop_reason":{stop_reason},"token_ids":null}}]'
    ).encode()
    usage = b""
    if continuous:
        usage = (',"usage":' + _usage(prompt, plan.completion_tokens, plan.reasoning_tokens)).encode()
    frames.append(open_choice + delta_bytes(sse.final) + last + usage + b"}\n\n")
    if include_usage:
        total = _usage(prompt, plan.completion_tokens, plan.reasoning_tokens).encode()
        frames.append(head + b'],"usage":' + total + b"}\n\n")
    frames.append(_DONE)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))


# --------------------------------------------------------------------------- non-streaming


def _full(profile: VllmProfile, plan: _Plan, request: ChatRequestView, ctx: RequestContext) -> Reply:
    """Body of ``chat_completion_full_generator``, serialised as ``JSONResponse(model_dump())``."""
    parsed = plan.parsed
    assert parsed is not None
    request_id = ctx.ids.next("chatcmpl-")
    choice = _tool_choice(request, profile)
    named = isinstance(choice, Mapping)
    required = choice == "required"
    parser_calls = parsed.tool_calls if profile.enable_auto_tool_choice else ()
    content = parsed.content
    calls: tuple[tuple[str, str], ...] = ()
    auto_called = False
    if named or required:
        content = content or ""
        calls = parser_calls
    elif profile.enable_auto_tool_choice and choice == "auto":
        calls = parser_calls
        auto_called = bool(calls)
    message: dict[str, object] = {
        "role": "assistant",
        "content": content,
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
    }
    if calls:  # ChatMessage's serializer drops an empty tool_calls list
        message["tool_calls"] = [
            {"id": ctx.ids.next("chatcmpl-tool-"), "type": "function", "function": {"name": n, "arguments": a}}
            for n, a in calls
        ]
    reasoning = parsed.reasoning if request.include_reasoning else None
    if profile.reasoning_field != "reasoning_content":
        message["reasoning"] = reasoning
    if profile.reasoning_field != "reasoning":
        message["reasoning_content"] = reasoning
    tool_finish = auto_called or (required and plan.finish == "stop")
    prompt = ctx.prompt_tokens
    body = {
        "id": request_id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": request.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if tool_finish else plan.finish,
                "stop_reason": plan.stop_reason,
                "token_ids": None,
                "routed_experts": None,
            }
        ],
        "service_tier": None,
        "system_fingerprint": None,
        "usage": {
            "prompt_tokens": prompt,
            "total_tokens": prompt + plan.completion_tokens,
            "completion_tokens": plan.completion_tokens,
            "prompt_tokens_details": None,
            "completion_tokens_details": {"reasoning_tokens": plan.reasoning_tokens},
        },
        "prompt_logprobs": None,
        "prompt_token_ids": None,
        "prompt_text": None,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }
    return Reply(status=200, body=_dumps(body).encode())


# --------------------------------------------------------------------------- entry point


def surface_chat(profile: VllmProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
    """Surface ``completion`` as vLLM's ``/v1/chat/completions`` reply, JSON or SSE.

    Non-streamed (``chat_completion_full_generator``): HTTP 200 with
    ``{"id":"chatcmpl-<32hex>","object":"chat.completion","created","model","choices":[{"index":0,
    "message":{"role","content","refusal","annotations","audio","function_call",["tool_calls"],
    "reasoning"},"logprobs","finish_reason","stop_reason","token_ids","routed_experts"}],
    "service_tier","system_fingerprint","usage":{"prompt_tokens","total_tokens","completion_tokens",
    "prompt_tokens_details","completion_tokens_details":{"reasoning_tokens"}},"prompt_logprobs",
    "prompt_token_ids","prompt_text","kv_transfer_params","ec_transfer_params","metrics"}``.
    Reasoning/content/tool calls come from :func:`~mockoss.profiles.vllm.segments.parse_output`.
    Tool calls (``{"id":"chatcmpl-tool-<32hex>","type":"function","function":{name,arguments}}``)
    are kept when ``tool_choice`` names a function or is ``required`` (content then ``content or
    ""``), or is ``auto`` or absent with ``enable_auto_tool_choice``; dropped otherwise,
    and never without ``--enable-auto-tool-choice`` (no tool parser, ``ParserManager.get_parser``).
    ``tool_calls`` is omitted when empty (``ChatMessage._serialize``). ``finish_reason`` is
    ``tool_calls`` when auto calls were surfaced or ``required`` stopped normally, else the engine's
    ``stop``/``length``; ``stop_reason`` is 200012 after ``<|call|>`` (a generation-config stop
    token), ``null`` after ``<|return|>`` (the tokenizer EOS) or on ``length``.
    ``reasoning_tokens`` counts tokens left in ``analysis`` or addressed ``commentary``
    (``HarmonyParser.process_chunk``). A ``HarmonyError`` → ``profile.error(harmony_error_status,
    message)`` (``create_error_response``; vllm#51977).

    Streamed (``chat_completion_stream_generator``): HTTP 200, ``data: {chunk}\\n\\n`` frames
    serialised with ``model_dump_json(exclude_unset=True)``: a role chunk
    (``delta {"role":"assistant","content":""}``, ``prompt_token_ids``/``prompt_text`` null); one
    chunk per token whose ``parse_delta`` is not ``None`` (``content`` / ``reasoning`` /
    ``tool_calls``: the first delta of a call has ``id,type,index,function{name,arguments}``,
    later ones ``index,function{arguments}``); the last token's chunk with ``finish_reason``
    (``tool_calls`` if calls were streamed, ``tool_choice`` is not named and the engine stopped)
    and ``stop_reason``; with ``include_usage`` a ``choices: []`` usage chunk
    (``exclude_none``); ``data: [DONE]``. ``continuous_usage_stats`` (only with
    ``include_usage``, ``should_include_usage``) adds running usage to every chunk. Tool deltas
    need ``enable_auto_tool_choice`` and ``tool_choice != "none"``. A ``HarmonyError`` mid-stream
    (vllm#46464, #51977): the chunks before the failing token (role chunk included), then
    :func:`~mockoss.profiles.vllm.errors.stream_error_frame`, then ``data: [DONE]``.
    """
    if profile.chat_parser != "harmony_parser":
        from mockoss.profiles.vllm.chat_legacy import surface_chat_legacy

        return surface_chat_legacy(profile, completion, request, ctx)
    max_tokens = request.max_tokens
    strict = profile.strict
    raw_recovery = profile.flush_raw_recovery
    plan = _plan(completion, max_tokens, strict, raw_recovery)
    if not request.stream:
        if plan.error is not None:
            return profile.error(profile.harmony_error_status, plan.error)
        return _full(profile, plan, request, ctx)
    tools = profile.enable_auto_tool_choice and _tool_choice(request, profile) != "none"
    field = profile.reasoning_field
    sse = _sse(completion, plan, max_tokens, strict, request.include_reasoning, tools, field, raw_recovery)
    return _stream(profile, plan, sse, request, ctx)
