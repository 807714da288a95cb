"""openai-harmony 0.0.8 emulated on top of the installed parser (one job: find, rewrite, map back).

Split from :mod:`mockoss.harmony.library` (its docstring has the measured difference and sources).
Headers holding ``<|channel|>`` twice or more are found with the parser's state machine, replaced by
a neutral header the installed parser reads genuinely, and the resulting trace is mapped back to the
original tokens with 0.0.8's header fields (:func:`~mockoss.harmony.header_0_0_8.parse_header_0_0_8`).
"""

from __future__ import annotations

import dataclasses

from openai_harmony import Author, Message, Role, StreamState, TextContent

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.header_0_0_8 import Header, HeaderError, parse_header_0_0_8, rust_debug
from mockoss.harmony.skip_errors import CHANNEL, MESSAGE, START, parse_skipping
from mockoss.harmony.trace import ParserTrace, TokenStep, parse_tokens

__all__ = ["HeaderSpan", "divergent_headers", "emulate"]

_STOP = frozenset((200002, 200007, 200012))


@dataclasses.dataclass(frozen=True, slots=True)
class HeaderSpan:
    """Where a header 0.0.8 reads differently sits in a completion's tokens (token indices)."""

    start: int  # index of the first header token
    end: int  # index of the token that ended the header (<|message|>, or a stop token when not strict)
    first: bool  # the completion's first message: the parser already knows the role


def _fails_0_0_8(header_tokens: tuple[int, ...], ended_by_message: bool, role_known: bool) -> bool:
    """Whether 0.0.8 rejects a header (both libraries agree below two ``<|channel|>``, so this
    decides for either when the header has fewer)."""
    try:
        role = Role.ASSISTANT if role_known else None
        header = parse_header_0_0_8(load_encoding().decode_utf8(list(header_tokens)), role, recipient_and_type=ended_by_message)
    except (HeaderError, Exception):  # noqa: BLE001  # any failure to parse is a rejection
        return True
    return ended_by_message and header.remaining is not None


def divergent_headers(tokens: tuple[int, ...], strict: bool, skip_errors: bool = False) -> list[HeaderSpan]:
    """Header spans with two or more ``<|channel|>`` tokens, found with the parser's state machine
    (openai/harmony@ec7606d:src/encoding.rs ``process_next``: Header until ``<|message|>``, or until a
    stop token when not strict; Content until a stop token; then ``<|start|>`` opens the next header)."""
    if tokens.count(CHANNEL) < 2:
        return []
    spans: list[HeaderSpan] = []
    state, start, first, channels = "header", 0, True, 0
    for index, token in enumerate(tokens):
        if state == "header":
            if token == MESSAGE or (not strict and token in _STOP):
                # A stop token ends a header (not strict) with a message only for the first one: the
                # parser pushes it only while it knows the role; both libraries then agree.
                if channels >= 2 and (token == MESSAGE or first):
                    spans.append(HeaderSpan(start, index, first))
                # The parser forgets the role it was given only once a header parses: with errors
                # skipped (vLLM), the header after a rejected first one is read with that role too.
                failed = skip_errors and token == MESSAGE and _fails_0_0_8(tokens[start:index], True, first)
                state, first = ("content" if token == MESSAGE and not failed else "start"), first and failed
            elif token == CHANNEL:
                channels += 1
        elif state == "content":
            if token in _STOP:
                state = "start"
        elif token == START:
            state, start, channels = "header", index + 1, 0
        elif not skip_errors:
            break  # the parser raises here, whichever the library
    return spans


def _neutral_header(first: bool) -> list[int]:
    encoding = load_encoding()
    return ([] if first else encoding.encode("assistant", allowed_special=set())) + [CHANNEL, *encoding.encode("analysis", allowed_special=set())]


def _failing_header(first: bool) -> list[int]:
    """A header both libraries reject at ``<|message|>`` (two recipients, one left over)."""
    encoding = load_encoding()
    role = [] if first else encoding.encode("assistant", allowed_special=set())
    return [*role, CHANNEL, *encoding.encode("analysis to=functions.a to=functions.b", allowed_special=set())]


def emulate(tokens: tuple[int, ...], strict: bool, spans: list[HeaderSpan], skip_errors: bool = False) -> ParserTrace:
    """The trace 0.0.8 gives for ``tokens``: each of ``spans`` (:func:`divergent_headers`) replaced
    by a neutral header (or one that fails as 0.0.8's does), the rewritten tokens read by the
    installed parser (errors skipped with ``skip_errors``), then mapped back to ``tokens`` with
    0.0.8's header fields."""
    encoding = load_encoding()
    rewritten: list[int] = []
    origin: list[int] = []  # rewritten index -> original index (-1 inside a neutral header)
    patches: dict[int, Header | None] = {}  # rewritten index of a header's end token -> 0.0.8's header (None: it fails)
    failure: tuple[int, str] | None = None
    cursor = 0
    for span in spans:
        text = encoding.decode_utf8(list(tokens[span.start : span.end]))
        ended_by_message = tokens[span.end] == MESSAGE
        try:
            header = parse_header_0_0_8(text, Role.ASSISTANT if span.first else None, recipient_and_type=ended_by_message)
            if ended_by_message and header.remaining is not None:
                raise HeaderError(f"unexpected tokens remaining in message header: {rust_debug(header.remaining)}")
        except HeaderError as exc:
            if not (skip_errors and ended_by_message):
                failure = (span.end, str(exc))
                break
            # vLLM skips the failing tokens: give the installed parser a header that fails too.
            header = None
        rewritten += tokens[cursor : span.start]
        origin += range(cursor, span.start)
        neutral = _neutral_header(span.first) if header is not None else _failing_header(span.first)
        rewritten += neutral
        origin += [-1] * len(neutral)
        patches[len(rewritten)] = header
        cursor = span.end
    if failure is not None:
        end, _message = failure
        rewritten += tokens[cursor:end]
        origin += range(cursor, end)
    else:
        rewritten += tokens[cursor:]
        origin += range(cursor, len(tokens))
    trace = parse_tokens(tuple(rewritten), strict=strict)
    if skip_errors and trace.error is not None:
        trace = parse_skipping(tuple(rewritten), strict)
    return _map_back(tokens, trace, origin, patches, failure, strict)


def _patched(message: Message, header: Header, *, cut_by_stop: bool) -> Message:
    text = "".join(getattr(part, "text", "") for part in message.content)
    if cut_by_stop:
        text = header.remaining or ""  # a header cut by a stop token (not strict): its words are the content
    return Message(
        author=Author(role=header.role, name=header.name),
        content=[TextContent(text=text)],
        channel=header.channel,
        recipient=header.recipient,
        content_type=header.content_type,
    )


def _map_back(
    tokens: tuple[int, ...],
    trace: ParserTrace,
    origin: list[int],
    patches: dict[int, Header | None],
    failure: tuple[int, str] | None,
    strict: bool,
) -> ParserTrace:
    steps: list[TokenStep] = []
    messages: list[Message] = []
    current: Header | None = None
    cut = False
    header_open = 0  # original index where the pending neutral header's original tokens begin
    for position, step in enumerate(trace.steps):
        original = origin[position]
        if original < 0:
            continue
        if position in patches:
            current, cut = patches[position], step.token != MESSAGE
            for hidden in range(header_open, original):
                steps.append(TokenStep(tokens[hidden], StreamState.HEADER, None, None, None, None, None))
        completed = step.completed
        if current is not None:
            if step.state == StreamState.CONTENT:
                step = dataclasses.replace(step, channel=current.channel, recipient=current.recipient, content_type=current.content_type)
            if completed is not None:
                completed = _patched(completed, current, cut_by_stop=cut)
                step = dataclasses.replace(step, completed=completed)
                current = None
        if completed is not None:
            messages.append(completed)
        steps.append(step)
        if step.token == START and step.state == StreamState.HEADER:
            header_open = original + 1
    error, error_index = trace.error, None if trace.error_index is None else origin[trace.error_index]
    eos_messages = trace.eos_messages
    if current is not None and eos_messages:
        eos_messages = tuple(_patched(m, current, cut_by_stop=False) for m in eos_messages)
    message_start = 0
    for index, step in enumerate(steps):
        if step.completed is not None:
            message_start = index + 1
    if failure is not None and error is None:
        error_index, error = failure
        for hidden in range(len(steps), error_index):
            steps.append(TokenStep(tokens[hidden], StreamState.HEADER, None, None, None, None, None))
        eos_messages, eos_error = (), None
    else:
        eos_error = trace.eos_error
    end = len(tokens) if error_index is None else error_index + 1
    skipped = tuple((origin[index], text) for index, text in trace.skipped if origin[index] >= 0)
    pending = tuple(tokens[message_start:end])
    if skipped:
        dropped = {index for index, _ in skipped}
        pending = tuple(tokens[i] for i in range(message_start, end) if i not in dropped)
    return ParserTrace(
        tokens=tokens,
        skipped=skipped,
        steps=tuple(steps),
        messages=tuple(messages),
        error=error,
        error_index=error_index,
        pending_tokens=pending,
        eos_messages=eos_messages,
        eos_error=eos_error,
        strict=strict,
    )
