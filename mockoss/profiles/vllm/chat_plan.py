"""The request-independent half of vLLM's ``/v1/chat/completions``: one plan per completion.

:func:`plan_completion` classifies a completion's parser trace into per-token deltas once per
``(completion, max_tokens, strict, raw_recovery)`` and memoises it on ``completion._memo``; the
helpers here are shared by the non-streamed body (:mod:`mockoss.profiles.vllm.chat`) and the
stream (:mod:`mockoss.profiles.vllm.chat_stream`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mockoss.harmony.completion import CALL, END_OF_TEXT
from mockoss.profiles.base import ChatRequestView
from mockoss.profiles.vllm.segments import (
    ParsedOutput,
    SegmentType,
    function_name,
    parse_output,
    token_segments,
)
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile

__all__ = [
    "DONE",
    "MEMO",
    "Plan",
    "TokenDelta",
    "dumps",
    "effective_tool_choice",
    "plan_completion",
    "reasoning_json",
    "usage_json",
]

DONE = b"data: [DONE]\n\n"
MEMO = "vllm.chat"


def with_end_of_script(completion: Completion) -> Completion:
    """``completion`` followed by ``<|endoftext|>`` when it holds neither ``<|return|>`` nor
    ``<|call|>`` (the engine would otherwise have to go on sampling), else ``completion`` itself;
    the extended completion is memoised on the original (switch ``end_of_script_eos``)."""
    extended = completion._memo.get("vllm.eos")
    if extended is None:
        from mockoss.harmony import Completion as _Completion
        from mockoss.harmony.completion import RETURN

        tokens = completion.tokens
        if RETURN in tokens or CALL in tokens:
            extended = completion
        else:
            extended = _Completion(text=completion.text + "<|endoftext|>", tokens=(*tokens, END_OF_TEXT))
        completion._memo["vllm.eos"] = extended
    return extended  # type: ignore[return-value]


# --------------------------------------------------------------------------- per completion


@dataclass(frozen=True, slots=True)
class TokenDelta:
    """What ``parse_delta`` combines for one token, before request options are applied.

    ``tool`` is ``(index, name, arguments)`` for the first delta of a call (``name`` set) or
    ``(index, None, arguments)`` for a later arguments delta. ``more_tools``: further
    ``tool_calls`` entries of the same delta, in order (only a stream-interval chunk that spans
    several calls has them, :func:`mockoss.profiles.vllm.options.regroup_deltas`).
    """

    content: str
    reasoning: str
    tool: tuple[int, str | None, str] | None
    more_tools: tuple[tuple[int, str | None, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Plan:
    """The request-independent outcome of one completion under ``(max_tokens, strict)``."""

    error: str | None
    finish: str
    stop_reason: int | None
    completion_tokens: int
    reasoning_tokens: int
    parsed: ParsedOutput | None
    deltas: tuple[TokenDelta, ...]  # one per token the parser accepted
    reasoning_upto: tuple[int, ...]  # usage reasoning-token count after each accepted token


def plan_completion(
    completion: Completion,
    max_tokens: int | None,
    strict: bool,
    raw_recovery: bool = True,
    library: str = "oss-harmony",
    skip_errors: bool = True,
) -> Plan:
    """The plan of ``completion``; ``library`` and ``skip_errors`` select the parse
    (:func:`mockoss.harmony.library.parse_with`; vLLM 0.32/0.33 skip erroring tokens). Keyed by
    the effective limit (:meth:`~mockoss.harmony.Completion.cap`): every ``max_tokens`` that does
    not cut the answer shares one plan."""
    max_tokens = completion.cap(max_tokens)
    key = (MEMO, max_tokens, strict) if raw_recovery else (MEMO, max_tokens, strict, "no-raw-recovery")
    if library != "oss-harmony" or not skip_errors:
        key += (library, skip_errors)
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = completion.emit(max_tokens)
    trace = completion.trace(max_tokens=max_tokens, strict=strict, library=library, skip_errors=skip_errors)
    segments = token_segments(trace)
    deltas: list[TokenDelta] = []
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
        deltas.append(TokenDelta(content, reasoning, tool))
    parsed: ParsedOutput | None = None
    if trace.error is None:
        parsed = parse_output(trace, raw_recovery=raw_recovery)
        if parsed.raw_recovered and deltas:
            # flush() at the last token: the recovered raw text joins that token's content delta.
            last = deltas[-1]
            deltas[-1] = TokenDelta(last.content + parsed.raw_recovered, last.reasoning, last.tool)
    tokens = emission.tokens
    # stop_reason: a stop token other than the tokenizer's EOS (<|return|>): <|call|> or <|endoftext|>.
    stop_reason = tokens[-1] if emission.finish_reason == "stop" and tokens and tokens[-1] in (CALL, END_OF_TEXT) else None
    plan = Plan(
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


def effective_tool_choice(request: ChatRequestView, profile: VllmProfile | None = None) -> str | Mapping[str, object]:
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


def stream_keeps_tool_calls(profile: VllmProfile, request: ChatRequestView) -> bool:
    """Whether the chat stream sends the tool-call deltas the parser yields.

    0.33 (``stream_tool_calls_need_tools``): ``keeps_tool_calls``: ``tool_choice`` ``required``
    or named, or ``auto`` (the default when tools are declared) with ``--enable-auto-tool-choice``
    (vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/chat_completion/message_assembly.py).
    0.32: every call, given the server has the tool parser (``--enable-auto-tool-choice``).
    """
    if not profile.stream_tool_calls_need_tools:
        return profile.enable_auto_tool_choice
    choice = effective_tool_choice(request, profile)
    if isinstance(choice, Mapping) or choice == "required":
        return True
    return profile.enable_auto_tool_choice and choice == "auto"


def assistant_message(content: str | None) -> dict[str, object]:
    """The fields every vLLM ``ChatMessage`` starts with, in order; callers add ``tool_calls``
    and the reasoning field(s)."""
    return {"role": "assistant", "content": content, "refusal": None, "annotations": None, "audio": None, "function_call": None}


def reasoning_json(field: str, value: str | None) -> str:
    """The reasoning member(s) of a message or delta for the ``reasoning_field`` switch."""
    encoded = "null" if value is None else dumps(value)
    if field == "reasoning":
        return '"reasoning":' + encoded
    if field == "reasoning_content":
        return '"reasoning_content":' + encoded
    return f'"reasoning":{encoded},"reasoning_content":{encoded}'


def usage_json(prompt: int, completion: int, reasoning: int) -> str:
    return (
        f'{{"prompt_tokens":{prompt},"total_tokens":{prompt + completion},"completion_tokens":{completion},'
        f'"completion_tokens_details":{{"reasoning_tokens":{reasoning}}}}}'
    )
