"""The reference server's generation loop: which stream events each token yields, and how it ends.

Reproduces ``StreamResponsesEvents.run`` of
openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py for function tools (no browser or
code-interpreter tool), reading a :class:`~mockoss.harmony.ParserTrace` instead of driving the
parser. Per token, in the server's order:

1. ``parser.process(token)``, any exception swallowed (``except Exception: pass``): the trace is
   made with ``skip_errors=True``, the way a rejected token leaves the parser where it was.
2. If the parser's state is ``EXPECT_START``: ``output_index`` goes up by one and, when the parser
   has completed a message, the *last* completed message is closed again: a recipient gives a
   ``response.output_item.done`` with a fresh ``function_call`` (no ``added`` event and no
   argument deltas before it); an ``analysis`` message without recipient gives
   ``reasoning_text.done``, ``content_part.done``, ``output_item.done``; a ``final`` message gives
   ``output_text.done``, ``content_part.done``, ``output_item.done``. The index starts at -1 and only
   moves here, so the first item's ``added`` and delta events carry ``output_index: -1`` and its
   ``done`` events 0; a token rejected while the parser expects ``<|start|>`` closes the same
   message a second time at the next index.
3. A content delta on ``final`` or ``analysis`` without recipient opens the item
   (``output_item.added`` + ``content_part.added``) once per index, then sends the delta.
4. ``<|return|>`` or ``<|call|>`` ends the loop (``ValueError("No messages to process")`` when the
   parser has completed no message); otherwise, with ``max_output_tokens`` tokens already kept, the
   loop ends (this token's events were sent but the token is not kept); else the token is kept.

The output tokens kept are then parsed again for ``response.completed``
(:mod:`mockoss.profiles.gptoss_ref.objects`). An exception anywhere ends the generator: the
stream stops after the events so far (uvicorn drops the connection) and a non-streamed request
gets Starlette's 500 ``Internal Server Error``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from openai_harmony import Message, StreamState

from mockoss.harmony.library import parse_with
from mockoss.profiles.base import IdSource
from mockoss.profiles.gptoss_ref.objects import (
    StreamIds,
    function_call,
    function_name,
    message_item,
    reasoning_item,
    text_part,
)

__all__ = ["CALL", "RETURN", "LoopResult", "Rules", "run_loop"]

RETURN, CALL = 200002, 200012


@dataclass(frozen=True, slots=True)
class Rules:
    """The behaviours that changed with openai/gpt-oss#199 (v0.0.9); the defaults are v0.0.9's.

    Attributes:
        event_item_ids: events name their item and message items have ``item_`` ids; false: every
            ``item_id`` is ``"item_1234"`` and message items have no ``id`` key.
        analysis_recipient_reasoning: an ``analysis`` message with a recipient is also closed as
            reasoning (stream) and mapped to a reasoning item (final response), as before v0.0.9.
        browser_calls: a ``browser.*`` recipient (no browser tool declared) is streamed as a
            function call; false (before v0.0.9): it gets no event.
    """

    event_item_ids: bool = True
    analysis_recipient_reasoning: bool = False
    browser_calls: bool = True


@dataclass(slots=True)
class LoopResult:
    """What the loop produced.

    Attributes:
        events: the stream events after ``response.in_progress``, without ``sequence_number``.
        output_tokens: the tokens kept (``usage.output_tokens``; parsed for the final response).
        ids: the ids the events used.
        crash: ``"ExceptionType: text"`` when the loop raised, else ``None``.
    """

    events: list[dict[str, Any]] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    ids: StreamIds = field(default_factory=StreamIds)
    crash: str | None = None


class _Loop:
    def __init__(self, ids: IdSource, rules: Rules) -> None:
        self.fresh = ids
        self.rules = rules
        self.message_ids = rules.event_item_ids
        self.out = LoopResult()
        self.reasoning_id: str | None = None
        self.message_id: str | None = None

    def _reasoning(self) -> str:
        if self.reasoning_id is None:
            self.reasoning_id = self.fresh.next("rs_")
            self.out.ids.reasoning.append(self.reasoning_id)
        return self.reasoning_id

    def _message(self) -> str:
        if not self.message_ids:  # before openai/gpt-oss#199: message items have no id
            return "item_1234"
        if self.message_id is None:
            self.message_id = self.fresh.next("item_")
            self.out.ids.messages.append(self.message_id)
        return self.message_id

    def emit(self, kind: str, **fields: Any) -> None:
        if "item_id" in fields and not self.message_ids:  # before openai/gpt-oss#199: the models' default
            fields["item_id"] = "item_1234"
        self.out.events.append({"type": kind, **fields})

    def close(self, previous: Message, index: int) -> None:
        """The ``done`` events for ``previous`` at ``index`` (step 2 of the module docstring)."""
        recipient = previous.recipient
        if recipient is not None and recipient != "python" and (self.rules.browser_calls or not recipient.startswith("browser.")):
            fc_id, call_id = self.fresh.next("fc_"), self.fresh.next("call_")
            self.out.ids.function_calls.append((fc_id, call_id))
            item = function_call(function_name(previous.recipient), previous.content[0].text, fc_id, call_id)  # type: ignore[union-attr]
            self.emit("response.output_item.done", output_index=index, item=item)
        if previous.channel == "analysis" and (recipient is None or self.rules.analysis_recipient_reasoning):
            rid = self._reasoning()
            text = previous.content[0].text  # type: ignore[union-attr]
            part = {"type": "reasoning_text", "text": text}
            self.emit("response.reasoning_text.done", item_id=rid, output_index=index, content_index=0, text=text)
            self.emit("response.content_part.done", item_id=rid, output_index=index, content_index=0, part=part)
            self.emit("response.output_item.done", output_index=index, item=reasoning_item(rid, [text]))
            self.reasoning_id = None
        if previous.channel == "final":
            mid = self._message()
            text = previous.content[0].text  # type: ignore[union-attr]
            part = text_part(text, [])
            self.emit("response.output_text.done", item_id=mid, output_index=index, content_index=0, text=text, logprobs=[])
            self.emit("response.content_part.done", item_id=mid, output_index=index, content_index=0, part=part)
            self.emit("response.output_item.done", output_index=index, item=message_item(mid, [part], None, with_id=self.message_ids))
            self.message_id = None


def run_loop(
    tokens: Sequence[int], *, max_output_tokens: int | None, library: str, ids: IdSource, exhausted: str | None, rules: Rules = Rules()
) -> LoopResult:
    """Run the loop over the tokens the backend returns.

    ``tokens``: what ``infer_next_token`` returns, call by call; when the loop asks for more,
    ``exhausted`` is the backend's exception text (``None``: the tokens always end the loop first).
    ``max_output_tokens``: the request's (``None`` when it sent ``null``: the comparison raises
    ``TypeError`` at the first token that is not a stop token). ``rules``: the release's
    behaviours (:class:`Rules`).
    """
    loop = _Loop(ids, rules)
    out = loop.out
    limit = len(tokens) if max_output_tokens is None else min(len(tokens), max_output_tokens + 1)
    trace = parse_with(tuple(tokens[:limit]), strict=True, library=library, skip_errors=True)  # type: ignore[arg-type]
    completed: list[Message] = []
    index = -1
    opened = False
    for position, step in enumerate(trace.steps):
        token = step.token
        if step.completed is not None:
            completed.append(step.completed)
        try:
            if step.state == StreamState.EXPECT_START:
                index += 1
                opened = False
                if completed:
                    loop.close(completed[-1], index)
            if step.delta and step.recipient is None and step.channel in ("final", "analysis"):
                if step.channel == "final":
                    mid = loop._message()
                    if not opened:
                        opened = True
                        loop.emit("response.output_item.added", output_index=index, item=message_item(mid, [], None, with_id=rules.event_item_ids))
                        loop.emit("response.content_part.added", item_id=mid, output_index=index, content_index=0,
                                  part=text_part("", None))
                    loop.emit("response.output_text.delta", item_id=mid, output_index=index, content_index=0, delta=step.delta, logprobs=[])
                else:
                    rid = loop._reasoning()
                    if not opened:
                        opened = True
                        loop.emit("response.output_item.added", output_index=index, item=reasoning_item(rid, []))
                        loop.emit("response.content_part.added", item_id=rid, output_index=index, content_index=0,
                                  part={"type": "reasoning_text", "text": ""})
                    loop.emit("response.reasoning_text.delta", item_id=rid, output_index=index, content_index=0, delta=step.delta)
        except (IndexError, AttributeError) as exc:  # a message without content: content[0]
            out.crash = f"IndexError: {exc}"
            return out
        if token in (RETURN, CALL):
            if not completed:
                out.crash = "ValueError: No messages to process"
            return out
        if max_output_tokens is None:
            out.crash = "TypeError: '>=' not supported between instances of 'int' and 'NoneType'"
            return out
        if len(out.output_tokens) >= max_output_tokens:
            return out
        out.output_tokens.append(token)
        if position == len(trace.steps) - 1 and limit == len(tokens):
            out.crash = exhausted or "RuntimeError: the backend returned no stop token"
    return out
