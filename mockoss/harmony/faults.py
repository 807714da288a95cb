"""The Harmony fault library: named, parameterised ways gpt-oss output goes wrong.

A fault turns a well-formed structured completion (assistant :class:`openai_harmony.Message` objects)
into the raw Harmony text a misbehaving gpt-oss model emits, starting after ``<|start|>assistant``
like ``Completion.from_messages(...).text``. Clean parts are rendered by openai-harmony's renderer;
every fault is deterministic. Each kind documents its params, the text it produces, what the real
parser does with it, and the public report it reproduces (``FAULTS[name].doc``, ``.sources``).

Spec: ``{"kind": NAME, **params}``. Every kind takes ``recipient_position`` (``channel``, the default:
``<|channel|>commentary to=functions.x <|constrain|>json``, as gpt-oss writes it; or ``role``:
``<|start|>assistant to=functions.x<|channel|>commentary <|constrain|>json``, as openai-harmony's
renderer writes it). Kinds that edit one message take ``message`` (an index; default: the last tool
call, else the last final message, else the last message).

Example::

    text = apply_fault(messages, {"kind": "duplicate_recipient"})
    Completion.from_text(text).trace().error
    # 'unexpected tokens remaining in message header: Some("to=functions.bash")'

Kinds (see :data:`FAULTS`): invented_recipient, duplicate_recipient, space_after_constrain,
extra_content_type, constrain_as_recipient, control_tokens_in_recipient, doubled_channel,
empty_channel, tool_call_as_text, stray_token_after_end, missing_end, missing_start,
return_instead_of_call, arguments_not_json, analysis_only, truncated, special_tokens_stripped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from openai_harmony import Message

from mockoss.harmony import faults_header, faults_stream, faults_tokens  # noqa: F401  (register the kinds)
from mockoss.harmony.faults_core import (
    REGISTRY,
    FaultError,
    FaultKind,
    Job,
    RecipientPosition,
    join,
    render_segments,
)

__all__ = [
    "FAULTS",
    "FaultError",
    "FaultKind",
    "apply_fault",
    "fault_json_schema",
    "render_completion_text",
    "validate_fault",
]

#: Read-only registry: fault kind name → :class:`FaultKind` (name, summary, sources, params, doc).
FAULTS: Mapping[str, FaultKind] = MappingProxyType(REGISTRY)


def _kinds() -> str:
    return ", ".join(FAULTS)


def validate_fault(spec: Any) -> dict[str, Any]:
    """Check a fault spec and return a new dict with every parameter, defaults filled in.

    Raises:
        FaultError: ``str()`` names the field first: ``kind: unknown fault kind 'x'; valid kinds: …``,
            ``colour: unknown parameter of truncated; valid parameters: at, tokens, message,
            recipient_position``, ``at: expected one of 'header', 'content', got 'middle'``.
    """
    if not isinstance(spec, Mapping):
        raise FaultError("fault", f"expected a mapping with 'kind' (one of: {_kinds()}), got {type(spec).__name__}")
    name = spec.get("kind")
    if name is None:
        raise FaultError("kind", f"missing; valid kinds: {_kinds()}")
    if not isinstance(name, str) or name not in FAULTS:
        raise FaultError("kind", f"unknown fault kind {name!r}; valid kinds: {_kinds()}")
    kind = FAULTS[name]
    params = {p.name: p for p in kind.all_params}
    for key in spec:
        if key != "kind" and key not in params:
            valid = ", ".join(params) or "none"
            raise FaultError(str(key), f"unknown parameter of {name}; valid parameters: {valid}")
    result: dict[str, Any] = {"kind": name}
    for param in kind.all_params:
        result[param.name] = param.validate(spec[param.name]) if param.name in spec else param.default
    return result


def apply_fault(messages: Sequence[Message], spec: Mapping[str, Any]) -> str:
    """Return the raw completion text (after ``<|start|>assistant``) with the fault applied.

    ``messages`` are assistant messages, left unchanged. Feed the result to
    ``Completion.from_text``.

    Raises:
        FaultError: the spec is invalid (see :func:`validate_fault`), or the fault cannot apply to
            these messages, e.g. ``message: duplicate_recipient: message 1 (channel 'final') has no
            recipient; this fault needs a tool call``.
    """
    checked = validate_fault(spec)
    kind = FAULTS[checked.pop("kind")]
    target = checked.pop("message", None)
    job = Job(kind.name, messages, target, checked.pop("recipient_position"))
    return kind.apply(job, **checked)


def render_completion_text(messages: Sequence[Message], recipient_position: RecipientPosition = "channel") -> str:
    """The clean completion text, no fault: ``recipient_position="role"`` equals ``Completion.from_messages(messages).text``.

    Raises:
        FaultError: no messages, or a message not from the assistant.
    """
    if not messages:
        raise FaultError("messages", "a completion needs at least one message")
    return join(render_segments(messages, recipient_position))


def fault_json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) fragment for a fault spec: one ``oneOf`` branch per kind.

    Each branch is a closed object whose ``kind`` is a ``const``, with every parameter's type,
    ``enum``, ``minimum``, ``default`` and ``description``; its ``description`` is the kind's summary
    and ``x-sources`` lists the public reports it reproduces.
    """
    branches = []
    for kind in FAULTS.values():
        properties: dict[str, Any] = {"kind": {"const": kind.name}}
        properties.update((p.name, p.json_schema()) for p in kind.all_params)
        branches.append(
            {
                "title": kind.name,
                "description": kind.summary,
                "x-sources": list(kind.sources),
                "type": "object",
                "properties": properties,
                "required": ["kind"],
                "additionalProperties": False,
            }
        )
    return {
        "title": "Harmony fault",
        "description": "A named fault applied to the structured messages of a completion (mockoss.harmony.faults).",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": list(FAULTS)}},
        "oneOf": branches,
    }
