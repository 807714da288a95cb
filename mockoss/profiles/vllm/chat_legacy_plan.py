"""The request-independent outcome of one completion on 2025 vLLM's chat path (its own module so
that the reply (:mod:`mockoss.profiles.vllm.chat_legacy`) and the stream
(:mod:`mockoss.profiles.vllm.chat_legacy_stream`) both take it without importing each other):
the parser's error, the engine's finish and stop token, the completed messages and the open
message's text, memoised on the completion per ``(max_tokens, strict, library)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mockoss.harmony.completion import CALL

if TYPE_CHECKING:
    from openai_harmony import Message

    from mockoss.harmony import Completion

__all__ = ["LegacyPlan", "legacy_plan"]

_MEMO = "vllm.chat_legacy"


@dataclass(frozen=True, slots=True)
class LegacyPlan:
    """The request-independent outcome of one completion under ``(max_tokens, strict)``.

    Attributes:
        error: the ``HarmonyError`` text if the parser raised, else ``None``.
        finish: the engine's ``stop`` / ``length``.
        stop_reason: 200012 after ``<|call|>``, else ``None``.
        completion_tokens: emitted tokens.
        messages: completed messages (``parser.messages``).
        current: ``parser.current_content`` at the end (the open message's text).
    """

    error: str | None
    finish: str
    stop_reason: int | None
    completion_tokens: int
    messages: tuple[Message, ...]
    current: str


def legacy_plan(completion: Completion, max_tokens: int | None, strict: bool, library: str = "oss-harmony") -> LegacyPlan:
    """Parse the emitted tokens once per ``(max_tokens, strict, library)``; memoised on the completion."""
    max_tokens = completion.cap(max_tokens)  # every limit that does not cut the answer shares a plan
    key = (_MEMO, max_tokens, strict, library)
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = completion.emit(max_tokens)
    trace = completion.trace(max_tokens=max_tokens, strict=strict, library=library)
    current = ""
    for step in trace.steps:
        current = "" if step.completed is not None else current + (step.delta or "")
    tokens = emission.tokens
    stop_reason = CALL if emission.finish_reason == "stop" and tokens and tokens[-1] == CALL else None
    plan = LegacyPlan(trace.error, emission.finish_reason, stop_reason, len(tokens), trace.messages, current)
    completion._memo[key] = plan
    return plan
