"""Harmony messages and scripted steps, the building blocks of :mod:`mockoss.steps` (see there)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["FORMAT_VERSION", "LEAK_FORMS", "Message", "Step", "error", "fault", "final", "leak", "preamble", "raw", "reasoning", "step_of", "tool_call"]

FORMAT_VERSION = 1

#: Text forms of a tool call leaked into the answer, as real models emit them (:func:`leak`), and
#: the fault spec each one applies (:mod:`mockoss.harmony.faults`).
LEAK_FORMS: Mapping[str, Mapping[str, str]] = {
    # hermes-agent#84158: `to=functions.terminal {"command":"ls"}` as the final answer.
    "bare": {"kind": "tool_call_as_text", "form": "bare"},
    # hermes-agent PR #84231: the role word kept in front of the recipient.
    "role": {"kind": "tool_call_as_text", "form": "role"},
    # hermes-agent PR #84231: a decoded `<|channel|>commentary to=…` inside the answer.
    "channel": {"kind": "tool_call_as_text", "form": "channel"},
    # hermes-agent#84158 (the reporter's paraphrase) and cloudflare/ai#574: a JSON envelope.
    "json": {"kind": "tool_call_as_text", "form": "json"},
    # oobabooga/textgen#7374: every special token stripped (`assistantcommentary to=functions.x json{…}`).
    "stripped": {"kind": "special_tokens_stripped"},
}


def _compact(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Message:
    """One assistant message in Harmony's terms (the YAML ``messages`` item).

    Attributes:
        channel: ``analysis``, ``commentary`` or ``final`` (``None``: no channel).
        recipient: e.g. ``functions.get_weather`` (``None``: nobody, the user reads it).
        content_type: e.g. ``<|constrain|>json``.
        content: the text (may hold ``{{ … }}`` templates, :mod:`mockoss.scenario.template`).
    """

    channel: str | None = None
    recipient: str | None = None
    content_type: str | None = None
    content: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """Read a YAML ``messages`` item. Raises ``TypeError`` for an unknown field."""
        unknown = set(data) - {"channel", "recipient", "content_type", "content"}
        if unknown:
            raise TypeError(f"Message: unknown field(s) {', '.join(sorted(unknown))}")
        return cls(**dict(data))

    def with_channel(self, channel: str | None) -> Message:
        """A copy on ``channel``."""
        return dataclasses.replace(self, channel=channel)

    def with_recipient(self, recipient: str | None) -> Message:
        """A copy addressed to ``recipient``."""
        return dataclasses.replace(self, recipient=recipient)

    def with_content_type(self, content_type: str | None) -> Message:
        """A copy with ``content_type``."""
        return dataclasses.replace(self, content_type=content_type)

    def with_content(self, content: str) -> Message:
        """A copy whose content is ``content``."""
        return dataclasses.replace(self, content=content)

    def to_dict(self) -> dict[str, Any]:
        """The YAML ``messages`` item: only the fields that are set, in Harmony header order."""
        data = {k: v for k, v in (("channel", self.channel), ("recipient", self.recipient),
                                  ("content_type", self.content_type)) if v is not None}
        data["content"] = self.content
        return data

    def __add__(self, other: Message | Step) -> Step:
        return Step(messages=(self,)) + other

    # A message used as a step: the Step setters, on a one-message step.

    def with_times(self, times: int) -> Step:
        """A one-message :class:`Step` answering ``times`` consecutive requests."""
        return Step(messages=(self,)).with_times(times)

    def with_note(self, note: str) -> Step:
        """A one-message :class:`Step` with a ``note``."""
        return Step(messages=(self,)).with_note(note)

    def with_optional(self, optional: bool = True) -> Step:
        """A one-message :class:`Step` that may go unused."""
        return Step(messages=(self,)).with_optional(optional)

    def with_tool_mismatch_intended(self, intended: bool = True) -> Step:
        """A one-message :class:`Step` whose tool call is off the request's tools on purpose."""
        return Step(messages=(self,)).with_tool_mismatch_intended(intended)

    def with_fault(self, kind: str, **params: Any) -> Step:
        """A one-message :class:`Step` through fault ``kind``."""
        return Step(messages=(self,)).with_fault(kind, **params)

    def with_transport(self, **fields: Any) -> Step:
        """A one-message :class:`Step` with transport fields."""
        return Step(messages=(self,)).with_transport(**fields)

    def _python(self) -> str:
        if self.recipient is None and self.content_type is None:
            helper = {"analysis": "reasoning", "final": "final", "commentary": "preamble"}.get(self.channel or "")
            if helper:
                return f"{helper}({self.content!r})"
        if (self.channel == "commentary" and self.content_type == "<|constrain|>json"
                and (self.recipient or "").startswith("functions.")):
            return f"tool_call({self.recipient.removeprefix('functions.')!r}, {_arguments_python(self.content)})"  # type: ignore[union-attr]
        return f"Message.from_dict({self.to_dict()!r})"


def _arguments_python(content: str) -> str:
    try:
        value = json.loads(content)
    except ValueError:
        return repr(content)
    return repr(value) if isinstance(value, dict) and _compact(value) == content else repr(content)


def reasoning(text: str) -> Message:
    """The chain of thought: a message on the ``analysis`` channel."""
    return Message(channel="analysis", content=text)


def final(text: str) -> Message:
    """The answer the user reads: a message on the ``final`` channel (closed by ``<|return|>``)."""
    return Message(channel="final", content=text)


def preamble(text: str) -> Message:
    """A preamble: user-visible text on the ``commentary`` channel with no recipient, which
    gpt-oss writes before a batch of tool calls (openai/harmony docs/format.md, "Preambles")."""
    return Message(channel="commentary", content=text)


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    namespace: str = "functions",
    content_type: str | None = "<|constrain|>json",
) -> Message:
    """A function tool call: ``commentary`` channel, recipient ``functions.{name}``, JSON content.

    Args:
        name: the tool's name (``get_weather``); a dotted name (``browser.search``) is the
            recipient as given.
        arguments: a dict (written as compact JSON) or the JSON text as is (e.g. deliberately
            broken JSON); ``None`` is ``{}``.
        namespace: recipient prefix for undotted names.
        content_type: ``<|constrain|>json`` as gpt-oss writes it; ``None`` for none.
    """
    recipient = name if "." in name else f"{namespace}.{name}"
    if arguments is None:
        arguments = {}
    content = arguments if isinstance(arguments, str) else _compact(arguments)
    return Message(channel="commentary", recipient=recipient, content_type=content_type, content=content)


# --------------------------------------------------------------------------- steps


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted answer (a YAML ``steps`` item): a completion (``messages``, optionally with a
    ``fault``, or ``raw`` Harmony text), or an HTTP ``error``; ``other`` keeps a ``pick`` or
    ``replay`` answer as its YAML data.

    Attributes:
        times: consecutive requests this step answers.
        note: shown in the request log and failure reports.
        optional: the step may go unused without failing ``assert_all_steps_used``.
        tool_mismatch_intended: the step calls a tool the request may not declare, or with
            arguments off its schema, on purpose (no tool-check warning).
        transport: timing and transport faults (:mod:`mockoss.scenario.transport`).
    """

    messages: tuple[Message, ...] = ()
    raw: str | None = None
    fault: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None
    other: Mapping[str, Any] | None = None
    times: int = 1
    note: str | None = None
    optional: bool = False
    tool_mismatch_intended: bool = False
    transport: Mapping[str, Any] | None = None

    def __add__(self, other: Message | Step) -> Step:
        if isinstance(other, Message):
            extra: tuple[Message, ...] = (other,)
        elif isinstance(other, Step) and other.messages and other.raw is other.error is other.other is None:
            extra = other.messages
        else:
            return NotImplemented
        if not self.messages or self.raw is not None or self.error is not None:
            raise TypeError("only steps made of messages can take more messages")
        return dataclasses.replace(self, messages=self.messages + extra)

    # -- with_* setters (copies) --------------------------------------------------------------

    def with_times(self, times: int) -> Step:
        """A copy answering ``times`` consecutive requests."""
        return dataclasses.replace(self, times=times)

    def with_note(self, note: str) -> Step:
        """A copy with a ``note`` for logs and reports."""
        return dataclasses.replace(self, note=note)

    def with_optional(self, optional: bool = True) -> Step:
        """A copy that may go unused (``optional: true``)."""
        return dataclasses.replace(self, optional=optional)

    def with_tool_mismatch_intended(self, intended: bool = True) -> Step:
        """A copy whose tool call is off the request's tools on purpose (no tool-check warning)."""
        return dataclasses.replace(self, tool_mismatch_intended=intended)

    def with_fault(self, kind: str, **params: Any) -> Step:
        """A copy whose messages go through fault ``kind`` (:data:`mockoss.harmony.faults.FAULTS`).

        Raises:
            mockoss.harmony.faults.FaultError: unknown kind or parameter.
        """
        from mockoss.harmony.faults import validate_fault

        spec = {"kind": kind, **params}
        validate_fault(spec)
        if not self.messages:
            raise TypeError("a fault applies to a step made of messages")
        return dataclasses.replace(self, fault=spec)

    def with_transport(self, **fields: Any) -> Step:
        """A copy with transport fields, e.g. ``ttft_ms=300`` or ``disconnect_after_frames=3``."""
        return dataclasses.replace(self, transport=dict(fields))

    # -- YAML data ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The YAML ``steps`` item."""
        data: dict[str, Any] = {}
        if self.note is not None:
            data["note"] = self.note
        if self.times != 1:
            data["times"] = self.times
        if self.optional:
            data["optional"] = True
        if self.tool_mismatch_intended:
            data["tool_mismatch_intended"] = True
        if self.other is not None:
            data.update(self.other)
        elif self.error is not None:
            data["error"] = dict(self.error)
        elif self.raw is not None:
            data["completion"] = {"raw": self.raw}
        else:
            completion: dict[str, Any] = {"messages": [m.to_dict() for m in self.messages]}
            if self.fault is not None:
                completion["fault"] = dict(self.fault)
            data["completion"] = completion
        if self.transport is not None:
            data["transport"] = dict(self.transport)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Step:
        """Read a YAML ``steps`` item (any answer kind; ``pick``/``replay`` are kept as data)."""
        data = dict(data)
        common = {
            "times": data.pop("times", 1),
            "note": data.pop("note", None),
            "optional": data.pop("optional", False),
            "tool_mismatch_intended": data.pop("tool_mismatch_intended", False),
            "transport": data.pop("transport", None),
        }
        completion = data.pop("completion", None)
        if "error" in data:
            return cls(error=data.pop("error"), **common, other=data or None)
        if completion is None:
            return cls(other=data, **common)
        if "raw" in completion:
            return cls(raw=completion["raw"], **common, other=data or None)
        messages = tuple(Message.from_dict(m) for m in completion.get("messages") or ())
        return cls(messages=messages, fault=completion.get("fault"), **common, other=data or None)

    def _python(self) -> str:
        if self.other is not None:
            return f"Step.from_dict({self.to_dict()!r})"
        if self.error is not None:
            args = [repr(self.error.get("status"))]
            if "message" in self.error:
                args.append(repr(self.error["message"]))
            if self.error.get("retry_after") is not None:
                args.append(f"retry_after={self.error['retry_after']!r}")
            text = f"error({', '.join(args)})"
        elif self.raw is not None:
            text = f"raw({self.raw!r})"
        else:
            text = " + ".join(m._python() for m in self.messages)
            if self.fault is not None or self._has_settings():
                text = f"Step(messages=({text},))" if len(self.messages) == 1 else f"({text})"
            if self.fault is not None:
                params = "".join(f", {k}={v!r}" for k, v in self.fault.items() if k != "kind")
                text += f".with_fault({self.fault['kind']!r}{params})"
        for name, value, default in (("times", self.times, 1), ("note", self.note, None),
                                     ("optional", self.optional, False),
                                     ("tool_mismatch_intended", self.tool_mismatch_intended, False)):
            if value != default:
                text += f".with_{name}({value!r})"
        if self.transport is not None:
            text += ".with_transport(" + ", ".join(f"{k}={v!r}" for k, v in self.transport.items()) + ")"
        return text

    def _has_settings(self) -> bool:
        return (self.times != 1 or self.note is not None or self.optional or self.tool_mismatch_intended
                or self.transport is not None)


def step_of(item: Message | Step) -> Step:
    if isinstance(item, Message):
        return Step(messages=(item,))
    if isinstance(item, Step):
        return item
    raise TypeError(f"expected a Message or a Step, got {type(item).__name__}: {item!r}")


def leak(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    form: str = "bare",
    thinking: str | None = None,
) -> Step:
    """A tool call leaked into the answer as text, in one of the forms real models emit
    (:data:`LEAK_FORMS`): ``bare`` (``to=functions.terminal {"command":"ls"}``, hermes-agent#84158),
    ``role`` (``assistant to=functions.…``), ``channel`` (``<|channel|>commentary to=functions.…``),
    ``json`` (``{"name": "terminal", …}``), ``stripped`` (every special token removed,
    ``…assistantcommentary to=functions.terminal json{…}``, oobabooga/textgen#7374).

    ``thinking`` adds an analysis message first. Built from :func:`tool_call` and the
    ``tool_call_as_text`` / ``special_tokens_stripped`` faults, so the YAML equivalent is a
    ``messages`` completion with that ``fault`` (steps with a fault are not tool-checked).

    Raises:
        ValueError: an unknown ``form`` (the message lists the forms).
    """
    if form not in LEAK_FORMS:
        raise ValueError(f"unknown leak form {form!r}; forms: {', '.join(LEAK_FORMS)}")
    messages = ((reasoning(thinking),) if thinking is not None else ()) + (tool_call(name, arguments),)
    return Step(messages=messages, fault=dict(LEAK_FORMS[form]))


def raw(text: str) -> Step:
    """A completion given as raw Harmony text, used verbatim (malformed output is possible), e.g.
    ``raw('<|channel|>final<|message|>Hi<|return|>')``."""
    return Step(raw=text)


def fault(kind: str, *messages: Message, **params: Any) -> Step:
    """``messages`` through fault ``kind`` (:data:`mockoss.harmony.faults.FAULTS`, ``mockoss faults``),
    e.g. ``fault("duplicate_recipient", tool_call("bash", {"command": "ls"}))``. Steps with a
    fault are not tool-checked (the mismatch is the point).

    Raises:
        mockoss.harmony.faults.FaultError: unknown kind or parameter.
        TypeError: no messages.
    """
    if not messages:
        raise TypeError("fault() takes the messages it applies to, e.g. fault('truncated', final('Hello'))")
    return Step(messages=tuple(messages)).with_fault(kind, **params)


def error(status: int, message: str = "Scripted error", *, retry_after: int | None = None) -> Step:
    """An HTTP error in the profile's error shape instead of a completion, e.g. ``error(429, retry_after=2)``."""
    data: dict[str, Any] = {"status": status, "message": message}
    if retry_after is not None:
        data["retry_after"] = retry_after
    return Step(error=data)
