"""Harmony messages and scripted steps, the building blocks of :mod:`mockoss.steps` (see there);
the builders that make them (``tool_call``, ``final``, ``fault``, …) are in :mod:`mockoss._steps_builders`."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mockoss.recipient_position import FAULT_DEFAULT, RECIPIENT_POSITIONS, check_message, check_under_fault

__all__ = ["FORMAT_VERSION", "RECIPIENT_POSITIONS", "Message", "Step", "step_of"]

FORMAT_VERSION = 1


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
        recipient_position: where `` to={recipient}`` goes in the header: ``None`` (unset: after
            the role, or as the step's fault renders it), ``"role"`` or ``"channel"``
            (:func:`tool_call`, :mod:`mockoss.recipient_position`).

    Raises:
        ValueError: (:class:`~mockoss.recipient_position.RecipientPositionError`) a
            ``recipient_position`` that is not a position, or ``"channel"`` without a channel or a
            recipient, in the words a scenario file gets (:func:`~mockoss.recipient_position.check_message`).
    """

    channel: str | None = None
    recipient: str | None = None
    content_type: str | None = None
    content: str = ""
    recipient_position: str | None = None

    def __post_init__(self) -> None:
        check_message(self.recipient_position, channel=self.channel, recipient=self.recipient)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """Read a YAML ``messages`` item (``recipient_position: null`` is unset).

        Raises:
            TypeError: an unknown field.
            ValueError: a bad ``recipient_position``.
        """
        known = ("channel", "recipient", "content_type", "content", "recipient_position")
        unknown = set(data) - set(known)
        if unknown:
            import difflib  # error path only

            hints = "".join(
                f" (did you mean {near[0]!r}?)"
                for name in sorted(unknown)
                if (near := difflib.get_close_matches(name, known, 1))
            )
            raise TypeError(f"Message: unknown field(s) {', '.join(sorted(unknown))}{hints}")
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

    def with_recipient_position(self, recipient_position: str | None) -> Message:
        """A copy whose recipient goes after the role (``"role"``) or the channel (``"channel"``),
        or unset (``None``)."""
        return dataclasses.replace(self, recipient_position=recipient_position)

    def to_dict(self) -> dict[str, Any]:
        """The YAML ``messages`` item: only the fields that are set, in Harmony header order
        (``recipient_position`` last, when set)."""
        data = {
            k: v
            for k, v in (("channel", self.channel), ("recipient", self.recipient), ("content_type", self.content_type))
            if v is not None
        }
        data["content"] = self.content
        if self.recipient_position is not None:
            data["recipient_position"] = self.recipient_position
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
        if self.recipient is None and self.content_type is None and self.recipient_position is None:
            helper = {"analysis": "reasoning", "final": "final", "commentary": "preamble"}.get(self.channel or "")
            if helper:
                return f"{helper}({self.content!r})"
        if (
            self.channel == "commentary"
            and self.content_type == "<|constrain|>json"
            and (self.recipient or "").startswith("functions.")
        ):
            name = self.recipient.removeprefix("functions.")  # type: ignore[union-attr]
            position = "" if self.recipient_position is None else f", recipient_position={self.recipient_position!r}"
            return f"tool_call({name!r}, {_arguments_python(self.content)}{position})"
        return f"Message.from_dict({self.to_dict()!r})"


def _arguments_python(content: str) -> str:
    try:
        value = json.loads(content)
    except ValueError:
        return repr(content)
    return repr(value) if isinstance(value, dict) and _compact(value) == content else repr(content)


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

    def __post_init__(self) -> None:
        # Every way to a step with a fault (with_fault, +, from_dict, Step(...)) refuses a message
        # position the fault contradicts, as the YAML schema does (CompletionSpec).
        if isinstance(self.fault, Mapping) and self.messages:
            wanted = self.fault.get("recipient_position", FAULT_DEFAULT)
            if wanted in RECIPIENT_POSITIONS:  # else validate_fault names the bad value
                check_under_fault([m.recipient_position for m in self.messages], wanted)

    def __add__(self, other: Message | Step) -> Step:
        if isinstance(other, Message):
            extra: tuple[Message, ...] = (other,)
        elif isinstance(other, Step) and other.messages and other.raw is other.error is other.other is None:
            if not other._messages_only():  # a fault, times, note, transport...: whose?
                raise TypeError(
                    "a step with settings (fault, times, note, optional, transport, tool mismatch) cannot be added "
                    "to another step: its settings would be lost; add the messages first, then set them on the sum, "
                    "e.g. (final('a') + final('b')).with_fault('truncated')"
                )
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

        The fault renders every header with its own ``recipient_position`` (default ``channel``);
        a message's unset position follows it.

        Raises:
            mockoss.harmony.faults.FaultError: unknown kind or parameter.
            TypeError: the step has no messages.
            ValueError: a message sets a ``recipient_position`` other than the fault's (the words
                a scenario file gets: :func:`mockoss.recipient_position.check_under_fault`).
        """
        from mockoss.harmony.faults import validate_fault

        spec = {"kind": kind, **params}
        validate_fault(spec)
        if not self.messages:
            raise TypeError("a fault applies to a step made of messages")
        return dataclasses.replace(self, fault=spec)  # __post_init__ checks the positions

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
        for name, value, default in (
            ("times", self.times, 1),
            ("note", self.note, None),
            ("optional", self.optional, False),
            ("tool_mismatch_intended", self.tool_mismatch_intended, False),
        ):
            if value != default:
                text += f".with_{name}({value!r})"
        if self.transport is not None:
            text += ".with_transport(" + ", ".join(f"{k}={v!r}" for k, v in self.transport.items()) + ")"
        return text

    def _messages_only(self) -> bool:
        """Whether the step is messages and nothing else (no fault, setting, raw text or error):
        what a sum of messages gives, and what :meth:`__add__` and ``fault()`` take as messages."""
        return bool(self.messages) and self == Step(messages=self.messages)

    def _has_settings(self) -> bool:
        return (
            self.times != 1
            or self.note is not None
            or self.optional
            or self.tool_mismatch_intended
            or self.transport is not None
        )


def step_of(item: Message | Step) -> Step:
    if isinstance(item, Message):
        return Step(messages=(item,))
    if isinstance(item, Step):
        return item
    raise TypeError(f"expected a Message or a Step, got {type(item).__name__}: {item!r}")
