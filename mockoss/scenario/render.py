"""Turn a completion spec into a :class:`~mockoss.harmony.Completion`: once at load time, or per
request when its text holds templates (:mod:`mockoss.scenario.template`).

A completion without templates is rendered, faulted and tokenized once and shared by every
request. A templated one keeps its parsed templates and is rendered for each request; the result
is cached on the rendered text (the last :data:`CACHE_SIZE` distinct texts), so a template whose
output repeats costs one dictionary lookup.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from openai_harmony import Message, Role

from mockoss.harmony import Completion
from mockoss.recipient_position import DEFAULT
from mockoss.scenario.fakers import FAKER_LOCK
from mockoss.scenario.schema import CompletionSpec, HarmonyMessageSpec
from mockoss.scenario.template import (
    RenderContext,
    Template,
    TemplateRenderError,
    parse_template,
)

__all__ = ["CACHE_SIZE", "CompletionTemplate", "compile_completion"]

#: Rendered completions a templated step keeps, by text.
CACHE_SIZE = 64

#: Guards every template's cache: a render may run before the server lock, on a worker thread
#: (:mod:`mockoss.server.warmup` renders a long one there), beside one under it.
_CACHE_LOCK = threading.Lock()


def harmony_message(spec: HarmonyMessageSpec, content: str | None = None) -> Message:
    """The assistant :class:`openai_harmony.Message` for ``spec`` (``content`` overrides its text)."""
    message = Message.from_role_and_content(Role.ASSISTANT, spec.content if content is None else content)
    if spec.channel is not None:
        message = message.with_channel(spec.channel)
    if spec.recipient is not None:
        message = message.with_recipient(spec.recipient)
    if spec.content_type is not None:
        message = message.with_content_type(spec.content_type)
    return message


def _build(
    messages: Sequence[Message], fault: Mapping[str, Any] | None, specs: Sequence[HarmonyMessageSpec]
) -> Completion:
    if fault is None:  # an unset position is the role position (mockoss.recipient_position)
        return Completion.from_messages(messages, [spec.recipient_position or DEFAULT for spec in specs])
    # With a fault, the fault's own recipient_position renders every header (the schema refuses a
    # message that sets the other one: mockoss.recipient_position.check_under_fault).
    from mockoss.harmony.faults import apply_fault

    return Completion.from_text(apply_fault(messages, fault))


class CompletionTemplate:
    """A completion whose ``raw`` text or message contents hold templates.

    Args:
        raw: the parsed ``raw`` template, or ``None`` for structured messages.
        messages: the message specs and their parsed ``content`` templates (``None``: plain text).
        fault: a checked fault spec (``validate_fault`` output) applied after rendering.
    """

    __slots__ = ("_cache", "fault", "messages", "raw", "uses_faker")

    def __init__(
        self,
        raw: Template | None = None,
        messages: Sequence[tuple[HarmonyMessageSpec, Template | None]] = (),
        fault: Mapping[str, Any] | None = None,
    ) -> None:
        self.raw = raw
        self.messages = tuple(messages)
        self.fault = fault
        templates = [raw] if raw is not None else [t for _, t in self.messages if t is not None]
        self.uses_faker = any(t.uses_faker for t in templates)
        self._cache: OrderedDict[Any, Completion] = OrderedDict()

    def render(self, ctx: RenderContext) -> Completion:
        """The completion for one request.

        Raises:
            TemplateRenderError: the request lacks an echoed value, or the rendered text cannot be
                rendered, faulted or tokenized.
        """
        if self.uses_faker:
            with FAKER_LOCK:
                key = self._texts(ctx)
        else:
            key = self._texts(ctx)
        with _CACHE_LOCK:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        try:
            if self.raw is not None:
                completion = Completion.from_text(key[0])
            else:
                messages = [harmony_message(spec, text) for (spec, _), text in zip(self.messages, key, strict=True)]
                completion = _build(messages, self.fault, [spec for spec, _ in self.messages])
        except Exception as exc:  # noqa: BLE001  # renderer, fault or tokenizer refused the rendered text
            raise TemplateRenderError(f"the rendered completion cannot be used: {exc}") from None
        with _CACHE_LOCK:  # one built meanwhile by another thread (a warm-up) wins: its plans may be built
            completion = self._cache.setdefault(key, completion)
            self._cache.move_to_end(key)
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return completion

    def _texts(self, ctx: RenderContext) -> tuple[str, ...]:
        if self.raw is not None:
            return (self.raw.render(ctx),)
        return tuple(spec.content if t is None else t.render(ctx) for spec, t in self.messages)


def compile_completion(spec: CompletionSpec) -> Completion | CompletionTemplate:
    """A ready :class:`Completion`, or a :class:`CompletionTemplate` when the text is templated.

    The fault spec is always checked at load time; whether it applies to a templated completion's
    rendered messages is known per request (a failure then is a 400 naming it).

    Raises:
        mockoss.harmony.faults.FaultError: the fault spec is invalid or cannot apply.
        ValueError: the renderer or tokenizer refused the content.
    """
    fault = None
    if spec.fault is not None:
        from mockoss.harmony.faults import validate_fault

        fault = validate_fault(spec.fault)
    if spec.raw is not None:
        raw = parse_template(spec.raw)
        return Completion.from_text(spec.raw) if raw is None else CompletionTemplate(raw=raw)
    messages = [(m, parse_template(m.content)) for m in spec.messages or ()]
    if all(t is None for _, t in messages):
        return _build([harmony_message(m) for m, _ in messages], fault, [m for m, _ in messages])
    return CompletionTemplate(messages=messages, fault=fault)
