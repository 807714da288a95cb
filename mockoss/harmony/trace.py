"""Run openai-harmony's genuine ``StreamableParser`` over a completion and record every step.

Profiles never touch the parser: they read a :class:`ParserTrace`, which holds what the parser
reported after each token (the state a server sees when it calls ``parser.process(token)``), the
messages it completed, and the exact ``HarmonyError`` text if it raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openai_harmony import HarmonyError, Message, Role, StreamableParser, StreamState

from mockoss.harmony.encoding import load_encoding

__all__ = ["ParserTrace", "TokenStep", "parse_tokens"]


@dataclass(frozen=True, slots=True)
class TokenStep:
    """The parser's view right after ``process(token)`` succeeded.

    Attributes:
        token: the token id just processed.
        state: ``StreamState`` after the token.
        channel, recipient, content_type: the current message's header fields; ``None`` while the
            header is still being read and again after a stop token (openai-harmony only knows
            them once ``<|message|>`` arrives).
        delta: ``last_content_delta``, the decoded content this token added, or ``None``.
        completed: the message this token closed (a stop token), else ``None``.
    """

    token: int
    state: StreamState
    channel: str | None
    recipient: str | None
    content_type: str | None
    delta: str | None
    completed: Message | None


@dataclass(frozen=True, slots=True)
class ParserTrace:
    """Everything the parser reported for one emitted token sequence.

    Attributes:
        tokens: the tokens fed (the stop token included when one was emitted).
        steps: one :class:`TokenStep` per token processed without error.
        messages: the messages completed by stop tokens, in order.
        error: ``str(HarmonyError)`` if ``process`` raised, e.g.
            ``unexpected tokens remaining in message header: Some("to=functions.x")``; else ``None``.
        error_index: index into ``tokens`` of the token that raised, else ``None``.
        pending_tokens: tokens of the message still open when the input ended (or when the
            error was raised), from its ``<|start|>`` or from the completion's start; vLLM's
            ``flush()`` decodes these as raw text.
        eos_messages: what ``process_eos()`` added when the input ended inside a message
            (a truncated message is flushed as complete), else empty.
        eos_error: ``str(HarmonyError)`` raised by ``process_eos()``, e.g.
            ``Unexpected EOS while waiting for message header to complete``, else ``None``.
        strict: the parser mode used.
    """

    tokens: tuple[int, ...]
    steps: tuple[TokenStep, ...]
    messages: tuple[Message, ...]
    error: str | None
    error_index: int | None
    pending_tokens: tuple[int, ...]
    eos_messages: tuple[Message, ...]
    eos_error: str | None
    strict: bool

    @property
    def ended_inside_message(self) -> bool:
        """True when the input stopped before the open message's stop token (truncation)."""
        return self.error is None and bool(self.pending_tokens)


def parse_tokens(tokens: Sequence[int], *, strict: bool = True) -> ParserTrace:
    """Feed ``tokens`` one by one to ``StreamableParser(encoding, Role.ASSISTANT, strict=strict)``.

    Processing stops at the first ``HarmonyError`` (as a server's generator does). When the input
    ends inside a message, ``process_eos()`` is called and its outcome recorded separately, so a
    profile can choose whether its server flushes at EOS.

    Raises:
        Nothing: parser errors are recorded in the trace, never raised.
    """
    parser = StreamableParser(load_encoding(), Role.ASSISTANT, strict=strict)
    steps: list[TokenStep] = []
    message_start = 0
    seen_messages = 0
    error: str | None = None
    error_index: int | None = None
    for index, token in enumerate(tokens):
        try:
            parser.process(token)
        except HarmonyError as exc:
            error, error_index = str(exc), index
            break
        messages = parser.messages
        completed = messages[-1] if len(messages) > seen_messages else None
        if completed is not None:
            seen_messages = len(messages)
            message_start = index + 1
        steps.append(
            TokenStep(
                token=token,
                state=parser.state,
                channel=parser.current_channel,
                recipient=parser.current_recipient,
                content_type=parser.current_content_type,
                delta=parser.last_content_delta,
                completed=completed,
            )
        )
    end = len(tokens) if error_index is None else error_index + 1
    pending = tuple(tokens[message_start:end])
    completed_messages = tuple(parser.messages)
    eos_messages: tuple[Message, ...] = ()
    eos_error: str | None = None
    if error is None and pending:
        try:
            parser.process_eos()
            eos_messages = tuple(parser.messages[len(completed_messages) :])
        except HarmonyError as exc:
            eos_error = str(exc)
    return ParserTrace(
        tokens=tuple(tokens),
        steps=tuple(steps),
        messages=completed_messages,
        error=error,
        error_index=error_index,
        pending_tokens=pending,
        eos_messages=eos_messages,
        eos_error=eos_error,
        strict=strict,
    )
