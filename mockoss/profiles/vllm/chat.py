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

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mockoss.profiles.base import ChatRequestView, Reply, RequestContext

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile

from mockoss.profiles.vllm.chat_plan import (
    Plan,
    dumps,
    effective_tool_choice,
    plan_completion,
)
from mockoss.profiles.vllm.chat_stream import sse_pieces, stream

__all__ = ["surface_chat"]

# --------------------------------------------------------------------------- non-streaming


def _full(profile: VllmProfile, plan: Plan, request: ChatRequestView, ctx: RequestContext) -> Reply:
    """Body of ``chat_completion_full_generator``, serialised as ``JSONResponse(model_dump())``."""
    parsed = plan.parsed
    assert parsed is not None
    request_id = ctx.ids.next("chatcmpl-")
    choice = effective_tool_choice(request, profile)
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
    return Reply(status=200, body=dumps(body).encode())


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
    plan = plan_completion(completion, max_tokens, strict, raw_recovery)
    if not request.stream:
        if plan.error is not None:
            return profile.error(profile.harmony_error_status, plan.error)
        return _full(profile, plan, request, ctx)
    tools = profile.enable_auto_tool_choice and effective_tool_choice(request, profile) != "none"
    field = profile.reasoning_field
    sse = sse_pieces(completion, plan, max_tokens, strict, request.include_reasoning, tools, field, raw_recovery)
    return stream(profile, plan, sse, request, ctx)
