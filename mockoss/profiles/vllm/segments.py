"""How current (2026) vLLM classifies Harmony output into tool calls, reasoning and content.

Shared by the chat and Responses profiles. Everything here reads a :class:`ParserTrace`; nothing
touches the parser. Sources (vllm-project/vllm):

* ``vllm/parser/harmony.py@053e68ec``: ``_SegmentType.from_channel_and_recipient``,
  ``HarmonyParser._normalize_recipient``, ``parse`` (non-streaming), ``process_chunk`` (per-token
  segments and the usage reasoning-token count), ``flush`` (EOS; raw recovery on ``HarmonyError``).
* ``vllm/entrypoints/openai/parser/harmony_utils.py``: ``is_function_recipient``,
  ``extract_function_from_recipient``, ``BUILTIN_TOOL_TO_MCP_SERVER_LABEL``.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass

from openai_harmony import Message, Role

from mockoss.harmony import ParserTrace, load_encoding
from mockoss.harmony.encoding import FIRST_SPECIAL

__all__ = [
    "BUILTIN_TOOLS",
    "ParsedOutput",
    "SegmentType",
    "TokenSegment",
    "classify",
    "function_name",
    "is_function_recipient",
    "normalize_recipient",
    "parse_output",
    "token_segments",
    "tool_arguments",
]

#: Keys of vLLM's ``BUILTIN_TOOL_TO_MCP_SERVER_LABEL``: recipients (or first dotted segments) that
#: are never function calls.
BUILTIN_TOOLS = frozenset({"python", "browser", "container"})
_FUNCTIONS = "functions."
_CONSTRAIN = "<|constrain|>"


class SegmentType(enum.Enum):
    """vLLM's ``_SegmentType``."""

    TOOL = "tool"
    REASONING = "reasoning"
    CONTENT = "content"
    IGNORE = "ignore"


def normalize_recipient(recipient: str | None) -> str | None:
    """``HarmonyParser._normalize_recipient``: cut at the first ``<|constrain|>`` and rstrip.

    ``"<|constrain|>json"`` → ``None``; ``"functions.x <|constrain|>json"`` → ``"functions.x"``;
    ``"functions.x<|channel|>commentary"`` and ``"json"`` are returned unchanged.
    """
    if recipient is None:
        return None
    cut = recipient.find(_CONSTRAIN)
    if cut == -1:
        return recipient
    return recipient[:cut].rstrip() or None


def is_function_recipient(recipient: str | None, allowed: frozenset[str] | None = None) -> bool:
    """``harmony_utils.is_function_recipient``.

    False for empty, ``<|…``, ``assistant``, a builtin (``python``/``browser``/``container``) or a
    recipient whose first dotted segment is a builtin; ``functions.X`` is True iff ``X`` is
    non-empty. Any other bare recipient is True when ``allowed`` is ``None`` (the chat path), else
    only if it is in ``allowed`` (the Responses path passes the request's function-tool names).
    """
    if not recipient or recipient.startswith("<|"):
        return False
    if recipient.startswith(_FUNCTIONS):
        return len(recipient) > len(_FUNCTIONS)
    if recipient == "assistant" or recipient in BUILTIN_TOOLS:
        return False
    if recipient.split(".", 1)[0] in BUILTIN_TOOLS:
        return False
    return True if allowed is None else recipient in allowed


def classify(channel: str | None, recipient: str | None) -> SegmentType:
    """``_SegmentType.from_channel_and_recipient`` (chat path); ``recipient`` already normalised.

    Function recipient → TOOL; else ``analysis`` → REASONING; ``final``, or ``commentary`` with no
    recipient → CONTENT; anything else (``commentary to=python``, unknown channels, header state
    where the channel is ``None``) → IGNORE.
    """
    if recipient and is_function_recipient(recipient):
        return SegmentType.TOOL
    if channel == "analysis":
        return SegmentType.REASONING
    if channel == "final" or (channel == "commentary" and recipient is None):
        return SegmentType.CONTENT
    return SegmentType.IGNORE


def function_name(recipient: str) -> str:
    """``extract_function_from_recipient``: ``recipient.removeprefix("functions.")``."""
    return recipient.removeprefix(_FUNCTIONS)


def tool_arguments(text: str, content_type: str | None) -> str:
    """Arguments string of a non-streamed tool call (``HarmonyParser.parse``).

    Re-serialised with ``json.dumps(json.loads(text))`` (default separators, so ``{"a":1}`` becomes
    ``{"a": 1}``) when the content type is absent or contains ``json``; the raw text when that
    fails with ``JSONDecodeError`` or for any other content type (e.g. ``code``).
    """
    if content_type is not None and "json" not in content_type:
        return text
    try:
        return json.dumps(json.loads(text))
    except json.JSONDecodeError:
        return text


@dataclass(frozen=True, slots=True)
class TokenSegment:
    """What ``HarmonyParser.process_chunk`` records for one token (``Segment``), pre-classified.

    Attributes:
        channel: parser channel after the token.
        recipient: normalised recipient after the token.
        kind: :func:`classify` of the two.
        delta: ``last_content_delta or ""``.
        completed: the token closed a message (such segments are skipped when streaming).
        counts_as_reasoning: counted in ``usage.completion_tokens_details.reasoning_tokens``
            (channel ``analysis``, or ``commentary`` with a recipient, and not a special token).
    """

    channel: str | None
    recipient: str | None
    kind: SegmentType
    delta: str
    completed: bool
    counts_as_reasoning: bool


def token_segments(trace: ParserTrace) -> tuple[TokenSegment, ...]:
    """One :class:`TokenSegment` per token the parser accepted (the failing token has none)."""
    out: list[TokenSegment] = []
    for step in trace.steps:
        channel = step.channel
        recipient = normalize_recipient(step.recipient)
        out.append(
            TokenSegment(
                channel=channel,
                recipient=recipient,
                kind=classify(channel, recipient),
                delta=step.delta or "",
                completed=step.completed is not None,
                # HarmonyParser._is_reasoning_token (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py,
                # same in v0.33.0): the channel test, and not a special token (get_encoding()
                # .is_special_token: ids from 199998 up), so <|message|> is not counted.
                counts_as_reasoning=(channel == "analysis" or (channel == "commentary" and recipient is not None))
                and step.token < FIRST_SPECIAL,
            )
        )
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ParsedOutput:
    """The non-streaming result of ``HarmonyParser.parse`` (reasoning and tool parser configured).

    Attributes:
        reasoning: REASONING message texts joined with ``"\\n"``, or ``None`` if there are none.
        content: CONTENT message texts joined with ``"\\n"``, or ``None``.
        tool_calls: ``(name, arguments)`` per TOOL message, in order (before any tool_choice
            filtering, which is the caller's job).
        raw_recovered: ``flush()`` hit a ``HarmonyError`` at EOS and surfaced the decoded open
            message (``model_tokenizer.decode(current_message_tokens)``) as final-channel content.
    """

    reasoning: str | None
    content: str | None
    tool_calls: tuple[tuple[str, str], ...]
    raw_recovered: str | None


def _eos_messages(trace: ParserTrace) -> tuple[tuple[Message, ...], str | None]:
    if trace.error is not None or not trace.pending_tokens:
        return (), None
    if trace.eos_error is not None:
        return (), load_encoding().decode(list(trace.pending_tokens))
    return trace.eos_messages, None


def parse_output(trace: ParserTrace, *, raw_recovery: bool = True) -> ParsedOutput:
    """Classify the completed messages of ``trace`` as ``HarmonyParser.parse`` + ``flush`` do.

    Messages whose author is not the assistant, or with no content, are skipped; empty reasoning
    or content texts are skipped; a TOOL message always yields a call (arguments may be ``""``).
    At EOS inside a message the flushed message is classified like any other, unless
    ``process_eos`` raised, in which case the raw decoded tokens of the open message become one
    more content part (vllm#45736 follow-up: no more silent ``content: null``). With
    ``raw_recovery=False`` that part is dropped and ``raw_recovered`` is ``None``: the silent
    ``content: null`` of vllm-project/vllm#45736.

    Raises:
        ValueError: ``trace.error`` is set (the caller must surface the ``HarmonyError`` first).
    """
    if trace.error is not None:
        raise ValueError("trace ended with a HarmonyError; nothing to parse")
    flushed, raw = _eos_messages(trace)
    if not raw_recovery:
        raw = None
    reasoning: list[str] = []
    content: list[str] = []
    calls: list[tuple[str, str]] = []
    for msg in (*trace.messages, *flushed):
        if msg.author.role != Role.ASSISTANT or not msg.content:
            continue
        text = msg.content[0].text
        recipient = normalize_recipient(msg.recipient)
        kind = classify(msg.channel, recipient)
        if kind is SegmentType.REASONING and text:
            reasoning.append(text)
        elif kind is SegmentType.CONTENT and text:
            content.append(text)
        elif kind is SegmentType.TOOL:
            assert recipient is not None
            calls.append((function_name(recipient), tool_arguments(text, msg.content_type)))
    if raw:
        content.append(raw)
    return ParsedOutput(
        reasoning="\n".join(reasoning) or None,
        content="\n".join(content) or None,
        tool_calls=tuple(calls),
        raw_recovered=raw,
    )
