"""``POST /v1/chat/completions`` as current (2026) vLLM serves gpt-oss.

Reproduces ``vllm/entrypoints/openai/chat_completion/serving.py@006c49d4``
(``chat_completion_full_generator`` / ``chat_completion_stream_generator``) driving
``vllm/parser/harmony.py@053e68ec`` (``HarmonyParser.parse`` / ``parse_delta``), with the wire shapes
of ``chat_completion/protocol.py@002032ee`` and ``generate/base/protocol.py@022e555d``.

Everything that depends only on ``(completion, max_tokens, strict)`` (the classification, the
per-token deltas, their JSON) is computed once and memoised on ``completion._memo``; a request only
stamps its ids, ``created``, model and usage onto precomputed pieces. A non-streamed request without
the options of :mod:`mockoss.profiles.vllm.options` is answered by :func:`cached_full_reply`: one
memo lookup per (profile, request shape), then one ``%`` format of the finished body.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from mockoss.profiles.base import JSON_MEDIA_TYPE, ChatRequestView, Reply, RequestContext

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile

from mockoss.profiles.vllm.chat_plan import (
    MEMO,
    Plan,
    assistant_message,
    dumps,
    effective_tool_choice,
    plan_completion,
    stream_keeps_tool_calls,
    with_end_of_script,
)
from mockoss.profiles.vllm.chat_stream import sse_pieces, stream
from mockoss.profiles.vllm.options import OptionError, recovery_log, regroup_deltas, stream_interval
from mockoss.profiles.vllm.segments import token_segments
from mockoss.slotnew import slot_builder

__all__ = ["cached_full_reply", "surface_chat"]

# --------------------------------------------------------------------------- non-streaming


#: A slot in a cached body template: ``dumps`` writes ``"\u0000name\u0000"``, which no scripted
#: text produces by accident (it would need literal NUL characters around a slot name).
_SLOT = re.compile(r'"\\u0000(\w+)\\u0000"')


def _slot(name: str) -> str:
    return f"\x00{name}\x00"


def _tool_kind(request: ChatRequestView, profile: VllmProfile) -> str:
    """The effective ``tool_choice`` as a memo key: ``"named"`` for any named function (the body
    does not depend on the name), else ``"auto"``, ``"none"`` or ``"required"``."""
    choice = effective_tool_choice(request, profile)
    return "named" if isinstance(choice, Mapping) else choice  # type: ignore[return-value]


def _format(pieces: list[str], tool_calls: int) -> str:
    """``%``-format text of a body template split by :data:`_SLOT` (text, name, text, …): the
    slots become ``%s`` in the order ``id, created, model, tool0…, prompt, total`` (the order of
    the body's fields, checked here), with the id prefixes and quotes written into the text."""
    names = tuple(pieces[1::2])
    expected = ("id", "created", "model", *(f"tool{i}" for i in range(tool_calls)), "prompt", "total")
    if names != expected:
        raise AssertionError(f"chat body slots out of order: {names}")
    holes = {"id": '"chatcmpl-%s"', "model": "%s", "created": "%s", "prompt": "%s", "total": "%s"}
    out = [holes.get(piece, '"chatcmpl-tool-%s"') if i % 2 else piece.replace("%", "%%") for i, piece in enumerate(pieces)]
    return "".join(out)


def _full_template(
    profile: VllmProfile, plan: Plan, request: ChatRequestView, completion: Completion
) -> tuple[str, int]:
    """The body of ``chat_completion_full_generator`` (``JSONResponse(model_dump())``) as a
    ``%``-format (:func:`_format`), built once per plan and request shape; returns (format,
    number of tool calls)."""
    choice = effective_tool_choice(request, profile)
    named = isinstance(choice, Mapping)
    required = choice == "required"
    kind = "named" if named else choice
    key = (
        MEMO,
        "full",
        completion.cap(request.max_tokens),  # with strict and flush_raw_recovery: the plan's own key
        profile.strict,
        profile.flush_raw_recovery,
        kind,
        request.include_reasoning,
        profile.enable_auto_tool_choice,
        profile.reasoning_field,
        profile.harmony_library,
        profile.harmony_errors,
        profile.weight_versions_field,
        profile.finish_tool_calls_needs_calls,
        profile.system_fingerprint(),
    )
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    parsed = plan.parsed
    assert parsed is not None
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
    message = assistant_message(content)
    if calls:  # ChatMessage's serializer drops an empty tool_calls list
        message["tool_calls"] = [
            {"id": _slot(f"tool{i}"), "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ]
    reasoning = parsed.reasoning if request.include_reasoning else None
    if profile.reasoning_field != "reasoning_content":
        message["reasoning"] = reasoning
    if profile.reasoning_field != "reasoning":
        message["reasoning_content"] = reasoning
    if profile.finish_tool_calls_needs_calls:  # 0.33 resolve_finish_reason
        tool_finish = bool(calls) and not named and plan.finish == "stop"
    else:  # 0.32: auto calls made, or "required" and the engine stopped
        tool_finish = auto_called or (required and plan.finish == "stop")
    body = {
        "id": _slot("id"),
        "object": "chat.completion",
        "created": _slot("created"),
        "model": _slot("model"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if tool_finish else plan.finish,
                "stop_reason": plan.stop_reason,
                "token_ids": None,
                "routed_experts": None,
                **({"weight_versions": None} if profile.weight_versions_field else {}),
            }
        ],
        "service_tier": None,
        "system_fingerprint": profile.system_fingerprint(),
        "usage": {
            "prompt_tokens": _slot("prompt"),
            "total_tokens": _slot("total"),
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
    result = (_format(_SLOT.split(dumps(body)), len(calls)), len(calls))
    completion._memo[key] = result
    return result


_make_reply = slot_builder(Reply)


@functools.lru_cache(maxsize=64)
def _model_json(model: str) -> str:
    """``model`` as JSON (a server answers few model names; 0.5 us saved a request)."""
    return dumps(model)


def _fill(fmt: str, tool_calls: int, completion_tokens: int, model: str, ctx: RequestContext, id_digits: int) -> str:
    """The body: ``fmt`` filled with this request's ids (chat id first, then one per tool call,
    drawn in that order from ``ctx.ids``), ``created``, model and usage."""
    next_hex = ctx.ids.next16 if id_digits == 16 else ctx.ids.next
    prompt = ctx.prompt_tokens
    if not tool_calls:
        return fmt % (next_hex(), ctx.created, _model_json(model), prompt, prompt + completion_tokens)
    head = (next_hex(), ctx.created, _model_json(model))
    return fmt % (*head, *[next_hex() for _ in range(tool_calls)], prompt, prompt + completion_tokens)


def _full(profile: VllmProfile, plan: Plan, request: ChatRequestView, ctx: RequestContext, completion: Completion) -> Reply:
    """Fill the cached body template with this request's ids, ``created``, model and usage."""
    fmt, tool_calls = _full_template(profile, plan, request, completion)
    body = _fill(fmt, tool_calls, plan.completion_tokens, request.model, ctx, profile.id_digits)
    return Reply(status=200, body=body.encode())


#: Body keys of the options (:mod:`mockoss.profiles.vllm.options`) that can change a non-streamed
#: chat reply or refuse it: ``ignore_eos``, and ``stream_interval`` (validated even when not
#: streamed). A body without them is answered by :func:`cached_full_reply`.
_OPTION_KEYS = frozenset({"ignore_eos", "stream_interval"})
_CACHED = "vllm.chat.reply"


def cached_full_reply(profile: VllmProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply | None:
    """What :meth:`VllmProfile.surface <mockoss.profiles.vllm.VllmProfile.surface>` answers a
    non-streamed ``harmony_parser`` chat request without :data:`_OPTION_KEYS`, the same bytes and
    log; ``None`` for any other request, or when the reply is an error (the full path answers).

    The request-independent outcome (body format, tool-call count, completion tokens, the
    :func:`~mockoss.profiles.vllm.options.recovery_log` line) is memoised on ``completion`` per
    (profile object, ``max_tokens``, tool kind, ``include_reasoning``), so a request costs one
    lookup, its ids and one ``%`` format (2.8 us instead of 6.8 in process, measured). The key holds
    ``id(profile)`` (hashing the profile's 40 switches would cost 0.4 us); the entry holds the
    profile and serves only that very object.
    """
    if request.stream or profile.chat_parser != "harmony_parser" or not _OPTION_KEYS.isdisjoint(request.body):
        return None
    choice = request.tool_choice
    kind = ("auto" if request.tools else "none") if choice is None else _tool_kind(request, profile)
    engine = with_end_of_script(completion) if profile.end_of_script_eos else completion
    key = (_CACHED, id(profile), engine.cap(request.max_tokens), kind, request.include_reasoning)  # the plan's limit
    entry = completion._memo.get(key)
    if entry is None or entry[0] is not profile:  # type: ignore[index]
        entry = completion._memo[key] = _reply_entry(profile, completion, request)
    _profile, fmt, tool_calls, completion_tokens, log = entry  # type: ignore[misc]
    if fmt is None:
        return None
    body = _fill(fmt, tool_calls, completion_tokens, request.model, ctx, profile.id_digits)
    return _make_reply(200, JSON_MEDIA_TYPE, body.encode(), (), (), None, log)  # Reply(status=200, body=…, log=log), mockoss.slotnew


def _reply_entry(
    profile: VllmProfile, completion: Completion, request: ChatRequestView
) -> tuple[VllmProfile, str | None, int, int, tuple[str, ...]]:
    """(profile, body format or ``None`` for an error reply, tool calls, completion tokens, log
    lines) for :func:`cached_full_reply`, computed as :func:`surface_chat` does."""
    engine = with_end_of_script(completion) if profile.end_of_script_eos else completion
    skip = profile.harmony_errors == "skip"
    plan = plan_completion(engine, request.max_tokens, profile.strict, profile.flush_raw_recovery, profile.harmony_library, skip)
    if plan.error is not None:
        return (profile, None, 0, 0, ())
    fmt, tool_calls = _full_template(profile, plan, request, engine)
    warning = recovery_log(profile, "chat", completion, request)  # of the completion before <|endoftext|>, as surface logs it
    return (profile, fmt, tool_calls, plan.completion_tokens, (warning,) if warning else ())


# --------------------------------------------------------------------------- entry point


def surface_chat(profile: VllmProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext) -> Reply:
    """Surface ``completion`` as vLLM's ``/v1/chat/completions`` reply, JSON or SSE.

    Non-streamed (``chat_completion_full_generator``): HTTP 200 with
    ``{"id":"chatcmpl-<16hex>","object":"chat.completion","created","model","choices":[{"index":0,
    "message":{"role","content","refusal","annotations","audio","function_call",["tool_calls"],
    "reasoning"},"logprobs","finish_reason","stop_reason","token_ids","routed_experts",
    ["weight_versions"]}],
    "service_tier","system_fingerprint","usage":{"prompt_tokens","total_tokens","completion_tokens",
    "prompt_tokens_details","completion_tokens_details":{"reasoning_tokens"}},"prompt_logprobs",
    "prompt_token_ids","prompt_text","kv_transfer_params","ec_transfer_params","metrics"}``.
    Reasoning/content/tool calls come from :func:`~mockoss.profiles.vllm.segments.parse_output`.
    Tool calls (``{"id":"chatcmpl-tool-<16hex>","type":"function","function":{name,arguments}}``)
    are kept when ``tool_choice`` names a function or is ``required`` (content then ``content or
    ""``), or is ``auto`` or absent with ``enable_auto_tool_choice``; dropped otherwise,
    and never without ``--enable-auto-tool-choice`` (no tool parser, ``ParserManager.get_parser``).
    ``tool_calls`` is omitted when empty (``ChatMessage._serialize``). ``finish_reason`` is
    ``tool_calls`` when the choice carries calls and the engine stopped, the tool choice not named
    (0.33 ``resolve_finish_reason``; switch ``finish_tool_calls_needs_calls`` for 0.32's rule),
    else the engine's ``stop``/``length``; ``stop_reason`` is 200012 after ``<|call|>`` or 199999
    after ``<|endoftext|>`` (generation-config stop tokens; switch ``end_of_script_eos``), ``null``
    after ``<|return|>`` (the tokenizer EOS) or on ``length``. ``reasoning_tokens`` counts the
    non-special tokens left in ``analysis`` or addressed ``commentary``
    (``HarmonyParser._is_reasoning_token``). A token the parser rejects is skipped
    (``harmony_errors="skip"``, 0.32/0.33); with ``"raise"`` a ``HarmonyError`` →
    ``profile.error(harmony_error_status, message)`` (``create_error_response``; vllm#51977).

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
    follow :func:`~mockoss.profiles.vllm.chat_plan.stream_keeps_tool_calls`. 0.33 adds
    ``kv_transfer_params`` to every chunk after the role chunk and ``weight_versions`` to the
    finish chunk; ``system_fingerprint`` goes on the finish chunk or the usage chunk. With
    ``harmony_errors="raise"``, a ``HarmonyError`` mid-stream (vllm#46464, #51977): the chunks
    before the failing token (role chunk included), then
    :func:`~mockoss.profiles.vllm.errors.stream_error_frame`, then ``data: [DONE]``.
    """
    if profile.chat_parser != "harmony_parser":
        from mockoss.profiles.vllm.chat_legacy import surface_chat_legacy

        return surface_chat_legacy(profile, completion, request, ctx)
    max_tokens = request.max_tokens
    strict = profile.strict
    raw_recovery = profile.flush_raw_recovery
    skip = profile.harmony_errors == "skip"
    if profile.end_of_script_eos:
        completion = with_end_of_script(completion)
    plan = plan_completion(completion, max_tokens, strict, raw_recovery, profile.harmony_library, skip)
    interval = _stream_interval(profile, request)
    if isinstance(interval, Reply):
        return interval
    if not request.stream:
        if plan.error is not None:
            return profile.error(profile.harmony_error_status, plan.error)
        return _full(profile, plan, request, ctx, completion)
    tools = stream_keeps_tool_calls(profile, request)
    field = profile.reasoning_field
    variant: tuple[object, ...] = () if profile.harmony_library == "oss-harmony" and skip else (profile.harmony_library, skip)
    if interval > 1:  # --stream-interval / stream_interval: tokens merged into chunks
        kinds = None
        if profile.stream_interval_channels == "last":  # the parser's channel after each token
            trace = completion.trace(max_tokens=max_tokens, strict=strict, library=profile.harmony_library, skip_errors=skip)
            kinds = tuple(seg.kind.name for seg in token_segments(trace))
        plan = regroup_deltas(plan, interval, profile.stream_interval_channels, kinds)
        variant += ("interval", interval, profile.stream_interval_channels)
    sse = sse_pieces(completion, plan, max_tokens, strict, request.include_reasoning, tools, field, raw_recovery, variant)
    return stream(profile, plan, sse, request, ctx)


def _stream_interval(profile: VllmProfile, request: ChatRequestView) -> int | Reply:
    """The request's stream interval (:func:`mockoss.profiles.vllm.options.stream_interval`), or
    the 400 for a bad ``stream_interval``."""
    try:
        return stream_interval(request.body, profile.stream_interval)
    except OptionError as exc:
        return profile.error(400, str(exc), param=exc.param)
