"""Machinery behind :mod:`mockoss.harmony.faults`: parameters, the kind registry, rendering.

Import :mod:`mockoss.harmony.faults` instead; this module holds what the kind modules
(:mod:`~mockoss.harmony.faults_header`, :mod:`~mockoss.harmony.faults_stream`,
:mod:`~mockoss.harmony.faults_tokens`) share.

Faults edit what openai-harmony's renderer produces, never a hand-written rendering: each message
is rendered by ``HarmonyEncoding.render`` and split at its special tokens into a :class:`Segment`
(``<|start|>assistant`` + header + ``<|message|>`` + content + stop token), which a fault edits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openai_harmony import Message, Role, TextContent

from mockoss.harmony.completion import END, RETURN, START_ASSISTANT
from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.layout import RecipientPosition, render_assistant_message
from mockoss.recipient_position import FAULT_DEFAULT

__all__ = ["FaultError", "FaultKind", "Job", "Param", "Segment", "fault_kind", "render_segments"]

MESSAGE = 200008
CALL_TEXT, END_TEXT, RETURN_TEXT = "<|call|>", "<|end|>", "<|return|>"


class FaultError(ValueError):
    """A fault spec is invalid, or cannot apply to the given messages.

    Raised by ``validate_fault`` and ``apply_fault``. ``str()`` starts with the bad field, e.g.
    ``tokens: expected an integer >= 0, got 'x'``; :attr:`field` holds it alone (``kind``,
    ``message``, a parameter name, or ``fault`` for the spec as a whole) so that a scenario loader
    can prefix its own location (``steps[0].completion.fault.tokens``).
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem

    def __repr__(self) -> str:
        return f"FaultError({self.field!r}, {self.problem!r})"


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a fault kind: a string or integer, optionally ``None`` or from ``choices``."""

    name: str
    type: type[str | int]
    default: Any
    description: str
    choices: tuple[Any, ...] = ()
    minimum: int | None = None
    nullable: bool = False
    check: Callable[[Any], str | None] | None = None

    def expects(self) -> str:
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        text = "an integer" if self.type is int else "a string"
        if self.minimum is not None:
            text += f" >= {self.minimum}"
        return text + (" or null" if self.nullable else "")

    def validate(self, value: Any) -> Any:
        """Return ``value`` if acceptable, else raise :class:`FaultError` naming this parameter."""
        if value is None and self.nullable:
            return None
        ok = isinstance(value, self.type) and not isinstance(value, bool)
        ok = ok and (not self.choices or value in self.choices)
        ok = ok and (self.minimum is None or value >= self.minimum)
        if not ok:
            raise FaultError(self.name, f"expected {self.expects()}, got {value!r}")
        problem = self.check(value) if self.check else None
        if problem:
            raise FaultError(self.name, problem)
        return value

    def json_schema(self) -> dict[str, Any]:
        kind = "integer" if self.type is int else "string"
        schema: dict[str, Any] = {"type": [kind, "null"] if self.nullable else kind}
        if self.choices:
            schema["enum"] = list(self.choices) + ([None] if self.nullable else [])
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        schema["default"] = self.default
        schema["description"] = self.description
        return schema


#: Parameters every kind accepts. A scripted message's own recipient_position must agree with it
#: (:func:`mockoss.recipient_position.check_under_fault`, which reads the same default).
RECIPIENT_POSITION = Param(
    "recipient_position",
    str,
    FAULT_DEFAULT,
    "where ` to={recipient}` goes in every header: 'channel' (after `<|channel|>{channel}`, as "
    "gpt-oss emits it) or 'role' (after the role, as openai-harmony's renderer writes it)",
    choices=("channel", "role"),
)
MESSAGE_INDEX = Param(
    "message",
    int,
    None,
    "index of the message the fault targets (negative counts from the end); default: the last "
    "message with a recipient (the tool call), else the last final message, else the last message",
    nullable=True,
)


@dataclass(frozen=True, slots=True)
class FaultKind:
    """A registered fault kind (see :func:`fault_kind`).

    Attributes:
        name: the spec's ``kind``, e.g. ``duplicate_recipient``.
        summary: the first line of :attr:`doc`.
        sources: public reports (``owner/repo#N``) or code (``owner/repo:path@commit``) it reproduces.
        params: the kind's own parameters; :attr:`all_params` adds the shared ones.
        targets: whether it edits one message, chosen by the ``message`` parameter.
        apply: ``apply(job, **params) -> str``, the completion text.
        doc: the docstring: params, shapes, the parser's outcome, the source.
    """

    name: str
    summary: str
    sources: tuple[str, ...]
    params: tuple[Param, ...]
    targets: bool
    apply: Callable[..., str] = dataclasses.field(repr=False)
    doc: str = dataclasses.field(default="", repr=False)

    @property
    def all_params(self) -> tuple[Param, ...]:
        """The kind's own parameters, then ``message`` (if it targets one) and ``recipient_position``."""
        return self.params + ((MESSAGE_INDEX,) if self.targets else ()) + (RECIPIENT_POSITION,)


REGISTRY: dict[str, FaultKind] = {}


def fault_kind(
    name: str, *, sources: Sequence[str], params: Sequence[Param] = (), targets: bool = True
) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Register ``function(job, **params) -> str`` as fault kind ``name``; its docstring documents it.

    Raises:
        ValueError: ``name`` is already registered, or the function has no docstring.
    """

    def register(function: Callable[..., str]) -> Callable[..., str]:
        if name in REGISTRY:
            raise ValueError(f"fault kind {name!r} is already registered")
        doc = (function.__doc__ or "").strip()
        if not doc:
            raise ValueError(f"fault kind {name!r} needs a docstring")
        REGISTRY[name] = FaultKind(name, doc.splitlines()[0], tuple(sources), tuple(params), targets, function, doc)
        return function

    return register


@dataclass(frozen=True, slots=True)
class Segment:
    """One rendered assistant message, in completion text.

    Attributes:
        start: ``<|start|>assistant``, or ``""`` for the first message (the prompt ends with it).
        header: what follows the role up to ``<|message|>``, e.g.
            ``<|channel|>commentary to=functions.x <|constrain|>json``.
        content: the message text.
        stop: ``<|end|>``, ``<|call|>``, ``<|return|>``, or any text a fault puts there.
    """

    start: str
    header: str
    content: str
    stop: str

    @property
    def text(self) -> str:
        return f"{self.start}{self.header}<|message|>{self.content}{self.stop}"


def render_segment(message: Message, *, first: bool, recipient_position: RecipientPosition) -> Segment:
    """Render ``message`` (:func:`~mockoss.harmony.layout.render_assistant_message`) and split it into a :class:`Segment`.

    Like ``Completion.from_messages``: a final message without recipient ends with ``<|return|>``.
    With ``recipient_position="channel"``, ` to={recipient}` goes after ``<|channel|>{channel}``
    instead of after the role (only when the message has both; the layout module renders it).
    """
    encoding = load_encoding()
    tokens = render_assistant_message(message, recipient_position)  # one layout whichever Harmony library is installed
    if tuple(tokens[:2]) != START_ASSISTANT:
        raise FaultError("message", f"renders as {encoding.decode_utf8(tokens[:4])!r}…, not <|start|>assistant")
    split = tokens.index(MESSAGE)
    header = encoding.decode_utf8(tokens[2:split])
    stop = tokens[-1]
    if message.channel == "final" and stop == END:
        stop = RETURN
    return Segment(
        start="" if first else "<|start|>assistant",
        header=header,
        content=encoding.decode_utf8(tokens[split + 1 : -1]),
        stop=encoding.decode_utf8([stop]),
    )


def render_segments(messages: Sequence[Message], recipient_position: RecipientPosition) -> list[Segment]:
    """Render every message; the first one loses its ``<|start|>assistant``."""
    for index, message in enumerate(messages):
        if message.author.role != Role.ASSISTANT:
            raise FaultError(
                f"messages[{index}]",
                f"a completion holds assistant messages only, got role {message.author.role.value!r}",
            )
    return [render_segment(m, first=i == 0, recipient_position=recipient_position) for i, m in enumerate(messages)]


def text_of(message: Message) -> str:
    """The message's text content, its text parts joined."""
    return "".join(part.text for part in message.content if isinstance(part, TextContent))


def default_target(messages: Sequence[Message]) -> int:
    """The last message with a recipient, else the last final-channel message, else the last one."""
    for test in (lambda m: bool(m.recipient), lambda m: m.channel == "final"):
        for index in range(len(messages) - 1, -1, -1):
            if test(messages[index]):
                return index
    return len(messages) - 1


class Job:
    """One application of a fault: the messages, the target index and the recipient position.

    Public only for the type hints of the kind functions. Never mutates the caller's messages
    (openai-harmony's ``with_*`` setters mutate in place; :meth:`changed` returns copies).
    """

    def __init__(
        self, kind: str, messages: Sequence[Message], target: int | None, recipient_position: RecipientPosition
    ):
        if not messages:
            raise FaultError("messages", "a completion needs at least one message")
        self.kind = kind
        self.messages: tuple[Message, ...] = tuple(messages)
        self.recipient_position: RecipientPosition = recipient_position
        self.explicit = target is not None
        if target is None:
            self.target = default_target(self.messages)
        elif -len(self.messages) <= target < len(self.messages):
            self.target = target % len(self.messages)
        else:
            raise FaultError("message", f"index {target} is out of range for {len(self.messages)} message(s)")

    @property
    def message(self) -> Message:
        return self.messages[self.target]

    def fail(self, problem: str) -> FaultError:
        """A :class:`FaultError` about the target message."""
        return FaultError("message", f"{self.kind}: message {self.target} {problem}")

    def recipient(self) -> str:
        """The target's recipient, or a :class:`FaultError` if it is not a tool call."""
        if not self.message.recipient:
            raise self.fail(f"(channel {self.message.channel!r}) has no recipient; this fault needs a tool call")
        return self.message.recipient

    @staticmethod
    def changed(message: Message, **fields: Any) -> Message:
        """A copy of ``message`` with ``channel``/``recipient``/``content_type``/``content`` replaced."""
        if "content" in fields:
            fields["content"] = [TextContent(text=fields["content"])]
        return message.model_copy(update=fields)

    def segments(
        self, replace: Mapping[int, Message] | None = None, *, only: Sequence[int] | None = None
    ) -> list[Segment]:
        """Render the messages (``replace`` swaps some by index; ``only`` keeps the listed indexes)."""
        swap = dict(replace or {})
        chosen = [swap.get(i, m) for i, m in enumerate(self.messages) if only is None or i in only]
        return render_segments(chosen, self.recipient_position)

    def render_target(self, **fields: Any) -> list[Segment]:
        """Render all messages with the target's fields replaced (see :meth:`changed`)."""
        return self.segments({self.target: self.changed(self.message, **fields)})


def join(segments: Sequence[Segment]) -> str:
    return "".join(segment.text for segment in segments)
