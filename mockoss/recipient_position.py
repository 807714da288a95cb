"""Where `` to={recipient}`` goes in a scripted message's header, and when a message may ask.

One set of rules for both ways of scripting a message: :mod:`mockoss.steps` (``tool_call(…,
recipient_position=…)``, ``Step.with_fault``) and the YAML format (:mod:`mockoss.scenario.schema`,
``recipient_position:`` on a ``messages`` item). Both raise :class:`RecipientPositionError`, whose
text is the same in both: ``FIELD: problem`` in Python, ``FILE:LINE: …FIELD: problem`` when a
scenario loads.

A message's ``recipient_position``:

* unset (``None``): ``"role"`` (:data:`DEFAULT`) in a step without a fault; in a step with a fault,
  the fault's own ``recipient_position`` (:data:`FAULT_DEFAULT` unless the fault sets it), which
  renders every header of the step (:mod:`mockoss.harmony.faults`);
* ``"role"``: after the role, openai-harmony 0.0.8's renderer
  (``<|start|>assistant to=functions.x<|channel|>commentary <|constrain|>json<|message|>``);
* ``"channel"``: after ``<|channel|>{channel}``, as gpt-oss writes a call
  (``<|start|>assistant<|channel|>commentary to=functions.x <|constrain|>json<|message|>``,
  openai/harmony@ec7606d:docs/format.md, "Receiving tool calls"). It needs a channel and a
  rendered recipient (:mod:`mockoss.harmony.layout` renders neither ``None``, ``""`` nor ``all``):
  without one it would change nothing, so it is refused (:func:`check_message`).

A message that sets a position in a step with a fault must agree with the fault
(:func:`check_under_fault`): the fault renders every header with one position.

A top-level module that imports nothing of mockoss's: the builders and the scenario schema load
without openai-harmony, and the fault library loads only for a step with a fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = [
    "DEFAULT",
    "FAULT_DEFAULT",
    "RECIPIENT_POSITIONS",
    "RecipientPosition",
    "RecipientPositionError",
    "check_message",
    "check_under_fault",
    "check_value",
]

#: ``"role"``: after the role (openai-harmony 0.0.8's renderer); ``"channel"``: after the channel.
RecipientPosition = Literal["role", "channel"]
RECIPIENT_POSITIONS: tuple[RecipientPosition, ...] = ("role", "channel")
#: A message whose position is unset, in a step without a fault.
DEFAULT: RecipientPosition = "role"
#: A fault's ``recipient_position`` when the fault does not set it (the ``recipient_position``
#: parameter of every fault kind, :data:`mockoss.harmony.faults_core.RECIPIENT_POSITION`).
FAULT_DEFAULT: RecipientPosition = "channel"

FIELD = "recipient_position"


class RecipientPositionError(ValueError):
    """A ``recipient_position`` that cannot apply. ``str()`` is ``f"{field}: {problem}"``.

    Attributes:
        field: ``recipient_position`` (the message's own field) or
            ``messages[N].recipient_position`` (the step's message N, 0-based).
        problem: why, and what to do instead.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def check_value(position: object, *, unset: bool = True) -> None:
    """Refuse a position that is neither ``"role"`` nor ``"channel"`` (nor ``None``, when ``unset``).

    Raises:
        RecipientPositionError: ``recipient_position: expected 'role' or 'channel', got 'header'``.
    """
    if (position is not None or not unset) and position not in RECIPIENT_POSITIONS:
        raise RecipientPositionError(FIELD, f"expected 'role' or 'channel', got {position!r}")


def check_message(position: str | None, *, channel: str | None, recipient: str | None) -> None:
    """Refuse a message's ``position`` that is not a position, or ``"channel"`` on a message
    that has no channel or no rendered recipient (``None``, ``""``, or ``all``, which Harmony
    leaves out of the header: openai/harmony@ec7606d:src/encoding.rs, ``impl Render<Message>``).

    Raises:
        RecipientPositionError: field ``recipient_position``, e.g. ``'channel' puts ' to={recipient}'
            after the channel, and this message has no recipient: give it one (a tool call's, e.g.
            functions.get_weather), or leave recipient_position unset``.
    """
    check_value(position)
    if position != "channel":
        return
    lead = "'channel' puts ' to={recipient}' after the channel, and this message"
    if recipient is None or recipient == "":
        why = "has no recipient: give it one (a tool call's, e.g. functions.get_weather)"
    elif recipient == "all":
        why = "is addressed to 'all', which Harmony does not write in the header: give it a recipient"
    elif channel is None or channel == "":
        why = "has no channel: give it one (a tool call is on 'commentary')"
    else:
        return
    raise RecipientPositionError(FIELD, f"{lead} {why}, or leave recipient_position unset")


def check_under_fault(positions: Sequence[str | None], fault_position: str) -> None:
    """Refuse a message position (one per message, ``None`` when unset) that differs from the
    fault's (``fault_position``, which renders every header of the step).

    Raises:
        RecipientPositionError: field ``messages[N].recipient_position``, e.g. ``'role', but the
            fault renders every header with its recipient_position 'channel': leave it unset here,
            or set the fault's recipient_position to 'role'``.
    """
    for index, position in enumerate(positions):
        if position is not None and position != fault_position:
            raise RecipientPositionError(
                f"messages[{index}].{FIELD}",
                f"{position!r}, but the fault renders every header with its recipient_position "
                f"{fault_position!r}: leave it unset here, or set the fault's recipient_position to {position!r}",
            )
