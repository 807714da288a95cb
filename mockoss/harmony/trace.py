"""Run openai-harmony's genuine ``StreamableParser`` over a completion and record every step.

Profiles never touch the parser: they read a :class:`ParserTrace`, which holds what the parser
reported after each token (the state a server sees when it calls ``parser.process(token)``), the
messages it completed, and the exact ``HarmonyError`` text if it raised.
"""

from __future__ import annotations

import json
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
        skipped: ``(index, str(HarmonyError))`` of every token whose ``process`` raised and was
            skipped, when the trace was made the way vLLM's ``HarmonyParser.process_chunk`` reads
            (``mockoss.harmony.library.parse_with(skip_errors=True)``: catch, ``continue``); such
            tokens keep a step with no channel, recipient or delta. Empty otherwise.
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
    skipped: tuple[tuple[int, str], ...] = ()

    @property
    def ended_inside_message(self) -> bool:
        """True when the input stopped before the open message's stop token (truncation)."""
        return self.error is None and bool(self.pending_tokens)


#: o200k_harmony's ``<|message|>`` token and the parser's stop tokens
#: (``HarmonyEncoding.stop_tokens()``: ``<|return|>``, ``<|end|>``, ``<|call|>``).
_MESSAGE = 200008
_STOP = frozenset((200002, 200007, 200012))


class _Completed:
    """The parser's completed messages, read as they are added: ``StreamableParser.messages``
    builds a ``Message`` of every completed message on each read, so reading it at each message's
    end was quadratic in the messages (1,000 pairs of short messages: 32 s on the first request
    that parsed them). Here only the new messages' JSON is decoded: the parser's JSON list grows by
    appending (checked: the earlier text must be its prefix, else the whole list is decoded)."""

    __slots__ = ("count", "inner", "parser", "text")

    def __init__(self, parser: StreamableParser) -> None:
        self.parser, self.inner = parser, getattr(parser, "_inner", None)
        self.text, self.count = "[", 0  # the JSON read last, without its closing bracket

    def new(self) -> list[Message]:
        """The messages completed since the last call."""
        if self.inner is None:  # another parser library: its own reading
            fresh = self.parser.messages[self.count :]
        else:
            raw = self.inner.messages
            if raw.startswith(self.text) and raw.endswith("]") and len(raw) > len(self.text) + 1:
                tail = raw[len(self.text) :]
                items = json.loads("[" + (tail[1:] if tail[0] == "," else tail))
            else:
                items = json.loads(raw)[self.count :]
            self.text = raw[:-1]
            fresh = [Message.from_dict(item) for item in items]
        self.count += len(fresh)
        return fresh


def parse_tokens(tokens: Sequence[int], *, strict: bool = True) -> ParserTrace:
    """Feed ``tokens`` one by one to ``StreamableParser(encoding, Role.ASSISTANT, strict=strict)``.

    Processing stops at the first ``HarmonyError`` (as a server's generator does). When the input
    ends inside a message, ``process_eos()`` is called and its outcome recorded separately, so a
    profile can choose whether its server flushes at EOS.

    Cost: linear in ``len(tokens)``. openai-harmony's ``StreamableParser.state`` and ``.messages``
    serialise the whole parser state to JSON on every read (``state`` includes the open message's
    content tokens, ``messages`` every completed message), so reading them after every token is
    quadratic. The state machine (openai/harmony@ec7606d:src/encoding.rs,
    ``StreamableParser::process_next``) only leaves ``Content`` on a stop token and ``Header`` on
    ``<|message|>`` or (non-strict) a stop token, and only those exits push a message. So:

    * staying in ``Content`` (a non-stop token, and ``current_role`` still set: it is the open
      header's role in ``Content`` and ``next_role``, ``None`` after the first header, elsewhere)
      and staying in ``Header`` (any other token) are derived without reading ``state``;
    * on every other token ``state`` is read, which is cheap there: ``ExpectStart`` and a fresh
      ``Content`` serialise no content, ``Header`` only its header tokens;
    * ``messages`` is read only when the parser left ``Content`` or ``Header`` for another state,
      the only moments a message can have been completed.

    ``tests/harmony/test_trace_linear.py`` checks the trace equals the per-token reading on the
    scenario library, the fault library and random token streams, with whichever parser library
    (openai-harmony or a fork) is installed.

    Raises:
        Nothing: parser errors are recorded in the trace, never raised.
    """
    parser = StreamableParser(load_encoding(), Role.ASSISTANT, strict=strict)
    steps: list[TokenStep] = []
    append = steps.append
    message_start = 0
    error: str | None = None
    error_index: int | None = None
    state = parser.state
    completed_reader = _Completed(parser)
    content, header = StreamState.CONTENT, StreamState.HEADER
    for index, token in enumerate(tokens):
        try:
            parser.process(token)
        except HarmonyError as exc:
            error, error_index = str(exc), index
            break
        previous = state
        if previous is content and token not in _STOP and parser.current_role is not None:
            pass  # still inside the open message's content
        elif previous is header and token != _MESSAGE and token not in _STOP:
            pass  # one more header token
        else:
            state = parser.state
        completed = None
        if state is not previous and (previous is content or previous is header) and state is not content:
            fresh = completed_reader.new()
            if fresh:
                completed = fresh[-1]
                message_start = index + 1
        append(
            TokenStep(
                token=token,
                state=state,
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
