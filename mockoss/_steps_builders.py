"""Step builders beyond plain messages: leaked calls, raw text, faults, HTTP errors (see :mod:`mockoss.steps`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockoss._steps_core import Message, Step, reasoning, tool_call

__all__ = ["LEAK_FORMS", "error", "fault", "leak", "raw"]

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
        ValueError: a message's ``recipient_position`` differs from the fault's (:meth:`Step.with_fault`).
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
