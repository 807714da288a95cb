"""Run openai-harmony's genuine ``StreamableParser`` over a completion and record every step.

Profiles never touch the parser: they read a :class:`ParserTrace`, which holds what the parser
reported after each token (the state a server sees when it calls ``parser.process(token)``), the
messages it completed, and the exact ``HarmonyError`` text if it raised.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from openai_harmony import HarmonyEncoding, HarmonyError, Message, Role, StreamableParser, StreamState

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


#: A parser whose completed messages serialise to more than this many characters is replaced, at
#: its next ``ExpectStart``, by a fresh one (:class:`_Completed`): each read of ``messages`` then
#: costs at most this much plus the new message.
REBASE_CHARS = 4096


class _Completed:
    """The parser's completed messages, read as they are added, in time linear in the messages.

    ``StreamableParser.messages`` serialises every completed message to JSON on each read (and the
    Python wrapper builds a ``Message`` of each), so reading it at each message's end was quadratic
    in the messages. Two steps make it linear:

    * only the new messages' JSON is decoded: the parser's JSON list grows by appending (checked:
      the earlier text must be its prefix, else the whole list is decoded);
    * the JSON itself stays short: once it passes :data:`REBASE_CHARS` characters, the parser is
      replaced at its next ``ExpectStart`` by ``StreamableParser(encoding, None, strict=…)``, which
      is in exactly the state the old one is in then. In ``StreamableParser::process_next``
      (openai/harmony@ec7606d:src/encoding.rs, unchanged in oss-harmony 0.0.11's sdist) every
      move to ``ExpectStart`` sets ``next_role`` to ``None`` and leaves ``last_content_delta``
      ``None`` and the undecoded token/byte buffers empty, which is what a parser made with no
      role starts with; only ``tokens`` and ``messages`` (the history) differ, and the trace keeps
      the messages itself (:attr:`done`).

    Measured (CPU, old and new alternated in one run on the shared 2-core machine): reasoning and
    preamble messages of ~14 tokens (``benchmarks/bench_first_request.py --messages``), 1,000
    messages 236 -> 177 ms, 8,000 4,237 -> 1,601 ms (8,000 / 1,000: 18.0x -> 9.1x); with tool calls
    among them (longer JSON), 8,000 messages 9.1-10.4 s -> 2.8-3.1 s. What remains is the parser's
    own ``process`` (~10-16 us a token, flat along the completion).
    """

    __slots__ = ("count", "done", "encoding", "inner", "parser", "strict", "text")

    def __init__(self, parser: StreamableParser, encoding: HarmonyEncoding, strict: bool) -> None:
        self.encoding, self.strict = encoding, strict
        self.done: list[Message] = []  # every message completed so far, across parsers
        self._use(parser)

    def _use(self, parser: StreamableParser) -> None:
        self.parser, self.inner = parser, getattr(parser, "_inner", None)
        self.text, self.count = "[", 0  # the JSON read last, without its closing bracket

    def new(self) -> list[Message]:
        """The messages the current parser completed since the last call (also added to :attr:`done`)."""
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
        self.done += fresh
        return fresh

    def rebase(self) -> StreamableParser:
        """Call when the parser is in ``ExpectStart`` with every message read: the parser to go on
        with (a fresh one once the history's JSON passed :data:`REBASE_CHARS`)."""
        if self.inner is not None and len(self.text) > REBASE_CHARS:
            self._use(StreamableParser(self.encoding, None, strict=self.strict))
        return self.parser


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
      the only moments a message can have been completed; each read serialises only the messages
      completed since the parser was last replaced by a fresh one in the same state
      (:class:`_Completed`), so it does not grow with the message's position.

    ``tests/harmony/test_trace_linear.py`` checks the trace equals the per-token reading on the
    scenario library, the fault library and random token streams, with whichever parser library
    (openai-harmony or a fork) is installed.

    Raises:
        Nothing: parser errors are recorded in the trace, never raised.
    """
    encoding = load_encoding()
    parser = StreamableParser(encoding, Role.ASSISTANT, strict=strict)
    steps: list[TokenStep] = []
    append = steps.append
    message_start = 0
    error: str | None = None
    error_index: int | None = None
    state = parser.state
    completed_reader = _Completed(parser, encoding, strict)
    content, header, expect_start = StreamState.CONTENT, StreamState.HEADER, StreamState.EXPECT_START
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
        if completed is not None and state is expect_start:
            parser = completed_reader.rebase()
    end = len(tokens) if error_index is None else error_index + 1
    pending = tuple(tokens[message_start:end])
    completed_reader.new()  # none expected: every message is pushed on a transition read above
    completed_messages = tuple(completed_reader.done)
    eos_messages: tuple[Message, ...] = ()
    eos_error: str | None = None
    if error is None and pending:
        try:
            parser.process_eos()
            eos_messages = tuple(completed_reader.new())
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
