"""How LM Studio classifies gpt-oss output, from openai-harmony's parser trace.

LM Studio is closed source; what is known comes from public issues (reference §4.3): the answer is
in ``message.content``, the analysis in ``message.reasoning`` (an older setting returned
``reasoning_content``; earlier releases put reasoning in ``content``, anything-llm#4267,
lmstudio-js#388), and a tool call that fails to parse is silently omitted, leaving
``"tool_calls": []``. Everything below that goes further is a documented, unverified choice:

* parsing uses openai-harmony's ``StreamableParser`` (non-strict by default, switch ``strict``);
* ``analysis`` without recipient → reasoning; ``final`` or ``commentary`` without recipient →
  content; parts are joined with ``"\\n"``;
* a message with a recipient is a tool call when the recipient is ``functions.NAME``, ``NAME`` is
  a declared tool and the content parses as JSON; any other addressed message (undeclared tool,
  built-in, ``<|constrain|>json`` misread as a recipient) is omitted;
* a ``HarmonyError`` drops the message it hit and everything after it (the failed call is omitted);
* streamed text deltas are the per-token deltas, so several content messages stream without the
  ``"\n"`` that joins them in a non-streamed reply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from openai_harmony import Message, Role

from mockoss.harmony import ParserTrace

__all__ = ["LmstudioOutput", "TokenDelta", "classify_output", "token_deltas"]

_FUNCTIONS = "functions."


@dataclass(frozen=True, slots=True)
class LmstudioOutput:
    """The classified output.

    Attributes:
        reasoning: analysis texts joined with ``"\\n"`` (``""`` if none).
        content: final/preamble texts joined with ``"\\n"`` (``""`` if none).
        tool_calls: ``(name, arguments)`` of the calls that parsed, arguments verbatim.
        omitted: addressed messages that were dropped (for ``mockoss explain``-style diagnostics).
    """

    reasoning: str
    content: str
    tool_calls: tuple[tuple[str, str], ...]
    omitted: int


def _tool_call(msg: Message, tools: frozenset[str]) -> tuple[str, str] | None:
    recipient = msg.recipient or ""
    if not recipient.startswith(_FUNCTIONS) or msg.channel not in ("commentary", "analysis"):
        return None
    name = recipient[len(_FUNCTIONS) :]
    text = msg.content[0].text if msg.content else ""
    if name not in tools:
        return None
    try:
        json.loads(text)
    except ValueError:
        return None
    return name, text


def _messages(trace: ParserTrace) -> tuple[Message, ...]:
    if trace.error is None and trace.eos_error is None:
        return (*trace.messages, *trace.eos_messages)
    return trace.messages


def classify_output(trace: ParserTrace, tools: frozenset[str]) -> LmstudioOutput:
    """Classify the messages of ``trace`` (see the module docstring) for declared ``tools``."""
    reasoning: list[str] = []
    content: list[str] = []
    calls: list[tuple[str, str]] = []
    omitted = 0
    for msg in _messages(trace):
        if msg.author.role != Role.ASSISTANT:
            omitted += 1
            continue
        text = msg.content[0].text if msg.content else ""
        if msg.recipient:
            call = _tool_call(msg, tools)
            if call is None:
                omitted += 1
            else:
                calls.append(call)
        elif msg.channel == "analysis":
            reasoning.append(text)
        elif msg.channel in ("final", "commentary"):
            content.append(text)
    if trace.error is not None or trace.eos_error is not None:
        omitted += 1
    return LmstudioOutput("\n".join(r for r in reasoning if r), "\n".join(c for c in content if c), tuple(calls), omitted)


#: ``(kind, text)`` for one token: kind ``"reasoning"`` or ``"content"``, or ``("call", index)``
#: when a message completed as the index-th surviving tool call.
TokenDelta = tuple[str, object]


def _streamed_call(msg: Message, tools: frozenset[str]) -> bool:
    """Whether a completed message is streamed as a tool call: exactly the messages
    :func:`classify_output` keeps as calls (an assistant's addressed message that parses), so that
    the streamed call indexes are the classified calls'. A message whose author is not the
    assistant (a doubled or unknown role header) was counted here but omitted there, and the
    stream indexed past the classified calls: an unscripted 500 on ``tool-call-leaked-three-times``
    and ``doubled-channel-tool-call-vanishes`` (issue 9, eighth session)."""
    return bool(msg.recipient) and msg.author.role == Role.ASSISTANT and _tool_call(msg, tools) is not None


def token_deltas(trace: ParserTrace, tools: frozenset[str]) -> tuple[TokenDelta, ...]:
    """Stream deltas in token order: unaddressed ``analysis`` text as reasoning, unaddressed
    ``final``/``commentary`` text as content, and each tool call as a whole when its message
    completes and parses (a call that fails is never streamed)."""
    out: list[TokenDelta] = []
    calls = 0
    for step in trace.steps:
        if step.completed is not None:
            if _streamed_call(step.completed, tools):
                out.append(("call", calls))
                calls += 1
            continue
        if not step.delta or step.recipient:
            continue
        if step.channel == "analysis":
            out.append(("reasoning", step.delta))
        elif step.channel in ("final", "commentary"):
            out.append(("content", step.delta))
    if trace.error is None and trace.eos_error is None:
        for msg in trace.eos_messages:
            if _streamed_call(msg, tools):
                out.append(("call", calls))
                calls += 1
    return tuple(out)
