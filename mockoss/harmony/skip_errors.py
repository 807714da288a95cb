"""Parsing with errors skipped, as vLLM's ``HarmonyParser.process_chunk`` reads (one job).

Split from :mod:`mockoss.harmony.library`, whose :func:`~mockoss.harmony.library.parse_with`
takes this path for ``skip_errors=True`` (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py: a token
whose ``process`` raises ``HarmonyError`` is skipped and parsing goes on).
"""

from __future__ import annotations

import functools

from openai_harmony import Message, Role, StreamState

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.trace import ParserTrace, TokenStep, parse_tokens

__all__ = ["CHANNEL", "MESSAGE", "START", "parse_skipping"]

START, CHANNEL, MESSAGE = 200006, 200005, 200008


def parse_skipping(tokens: tuple[int, ...], strict: bool) -> ParserTrace:
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
        rest = parse_skipping(tokens[restart + 1 :], strict)
        steps.append(TokenStep(START, StreamState.HEADER, None, None, None, None, None))
        steps += rest.steps
        skipped += [(i + restart + 1, text) for i, text in rest.skipped]
        messages += rest.messages
        pending = rest.pending_tokens if rest.messages else (*pending, START, *rest.pending_tokens)
        eos_messages, eos_error = rest.eos_messages, rest.eos_error
    elif restart < len(tokens):
        prelude = _synthetic_message()
        rest = parse_skipping((*prelude, *tokens[restart:]), strict)
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
    avoids); only the cases :func:`parse_skipping` cannot splice take this path.
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
