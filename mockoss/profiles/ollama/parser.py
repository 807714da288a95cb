"""Ollama's own Harmony parser: a string-level state machine over the detokenised completion.

Ollama does not use openai-harmony's parser. Its ``harmony`` parser
(``ollama/ollama:harmony/harmonyparser.go@fb307609``) reads the text llama-server streams back, in
which ``<|start|>``, ``<|end|>``, ``<|message|>``, ``<|channel|>`` and ``<|constrain|>`` are kept as
literal tags and ``<|return|>``/``<|call|>`` never appear (they end generation). This module is a
behavioural reimplementation in Python (read, not copied); differences from openai-harmony that
clients see:

* ``<|start|>assistant`` is prepended before the first piece (``AddImplicitStart``), or a
  ``<|channel|>final``/``analysis`` prefill when the request ends with an assistant message.
* Text between ``<|end|>`` and the next ``<|start|>`` is dropped (a warning is logged if a
  ``<|start|>`` follows; if none does, the text is simply lost).
* Header rules: a space is inserted before the first ``<|constrain|>``; the channel runs from
  ``<|channel|>`` to the next whitespace; the first field is the role, or ``to=X`` (role ``tool``,
  recipient ``X``); otherwise the recipient is the next field only if it starts with ``to=``. A bare
  recipient is not recognised and ``<|constrain|>json`` is never a recipient.
* Mapping: ``analysis`` + recipient → tool call, ``analysis`` → thinking; ``commentary`` + recipient
  → tool call, ``commentary`` → content; ``final`` → content; any other channel leaves the state as
  it was (content after a message end, ``HarmonyMessageHandler.AddContent``).
* Tool calls are parsed only when generation is done: one per turn (generation stops at
  ``<|call|>``); the accumulated text of *every* tool-addressed message is decoded as one JSON
  value, the name is the last recipient with ``functions.`` trimmed and mapped back through
  :class:`FunctionNameMap`.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from mockoss.profiles.ollama.arguments import parse_arguments

__all__ = ["FunctionNameMap", "Header", "MessageHandler", "ParsedToolCall", "StringParser", "ToolCallError"]

MESSAGE_START = "<|start|>"
HEADER_END = "<|message|>"
MESSAGE_END = "<|end|>"
CHANNEL = "<|channel|>"
CONSTRAIN = "<|constrain|>"

#: Go's ``unicode.IsSpace`` (``strings.Fields``/``TrimSpace``): narrower than ``str.isspace``,
#: which also counts U+001C–U+001F.
_GO_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(
    chr(c) for c in range(0x2000, 0x200B)
)


def _trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in _GO_SPACE:
        start += 1
    while end > start and text[end - 1] in _GO_SPACE:
        end -= 1
    return text[start:end]


def _fields(text: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for char in text:
        if char in _GO_SPACE:
            if current:
                out.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        out.append("".join(current))
    return out


def _overlap(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a prefix of ``tag``."""
    for size in range(min(len(tag), len(text)), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


@dataclass(frozen=True, slots=True)
class Header:
    """A parsed message header. Empty strings mean absent (Go zero values)."""

    role: str = ""
    channel: str = ""
    recipient: str = ""


def parse_header(raw: str, log: list[str] | None = None) -> Header:
    """``HarmonyParser.parseHeader``: the text between ``<|start|>`` and ``<|message|>``.

    ``assistant<|channel|>commentary to=functions.get_weather <|constrain|>json`` → role
    ``assistant``, channel ``commentary``, recipient ``functions.get_weather``;
    ``assistant<|channel|>commentary <|constrain|>json`` → no recipient;
    ``assistant<|channel|>commentary functions.x`` → no recipient (bare names are not recipients).
    """
    if CONSTRAIN in raw:
        raw = _trim(raw.replace(CONSTRAIN, " " + CONSTRAIN, 1))
    channel = ""
    at = raw.find(CHANNEL)
    if at != -1:
        before, after = raw[:at], raw[at + len(CHANNEL) :]
        end = next((i for i, char in enumerate(after) if char in _GO_SPACE), len(after))
        channel = after[:end]
        raw = _trim(before + after[end:])
    parts = _fields(raw)
    if not parts:
        if log is not None:
            log.append(f"harmony parser: missing role in header: {raw!r}")
        return Header(channel=channel)
    role, rest = parts[0], parts[1:]
    recipient = ""
    if role.startswith("to="):
        role, recipient = "tool", role[3:]
    if not recipient and rest and rest[0].startswith("to="):
        recipient = rest[0][3:]
    return Header(role=role, channel=channel, recipient=recipient)


class _State(enum.Enum):
    LOOKING_FOR_MESSAGE_START = "LookingForMessageStart"
    PARSING_HEADER = "ParsingHeader"
    PARSING_CONTENT = "ParsingContent"


#: Parser events: ``("start", None)``, ``("header", Header)``, ``("content", str)``, ``("end", None)``.
Event = tuple[str, "Header | str | None"]


@dataclass
class StringParser:
    """``HarmonyParser``: turns streamed text into message events, holding back only what may be the
    start of ``<|end|>`` (so ``"<"`` at the end of a piece waits for the next piece).

    Attributes:
        log: the warnings Ollama would log (``slog.Warn``), for tests and debugging.
    """

    log: list[str] = field(default_factory=list)
    _state: _State = _State.LOOKING_FOR_MESSAGE_START
    _acc: str = ""

    def prefill(self, text: str) -> None:
        """Prepend ``text`` to what the parser reads (``AddImplicitStart`` and the prefills)."""
        self._acc += text

    def add(self, text: str) -> list[Event]:
        """Feed one piece; return the events it completes, in order."""
        self._acc += text
        events: list[Event] = []
        while True:
            found, again = self._eat()
            events.extend(found)
            if not again:
                return events

    def _eat(self) -> tuple[list[Event], bool]:
        acc = self._acc
        if self._state is _State.LOOKING_FOR_MESSAGE_START:
            if MESSAGE_START not in acc:
                return [], False
            before, after = acc.split(MESSAGE_START, 1)
            if before:
                self.log.append(f"harmony parser: found message start tag in the middle of the content: {acc!r}")
            self._acc, self._state = after, _State.PARSING_HEADER
            return [("start", None)], True
        if self._state is _State.PARSING_HEADER:
            if HEADER_END not in acc:
                return [], False
            header, after = acc.split(HEADER_END, 1)
            self._acc, self._state = after, _State.PARSING_CONTENT
            return [("header", parse_header(header, self.log))], True
        if MESSAGE_END in acc:
            content, after = acc.split(MESSAGE_END, 1)
            self._acc, self._state = after, _State.LOOKING_FOR_MESSAGE_START
            return ([("content", content)] if content else []) + [("end", None)], True
        held = _overlap(acc, MESSAGE_END)
        content = acc[: len(acc) - held]
        if not content:
            return [], False
        self._acc = acc[len(acc) - held :]
        return [("content", content)], False


# --------------------------------------------------------------------------- tool names


def _go_letter(char: str) -> bool:
    return unicodedata.category(char)[0] == "L"


def _go_digit(char: str) -> bool:
    return unicodedata.category(char) == "Nd"


@dataclass
class FunctionNameMap:
    """``FunctionNameMap``: tool names as the prompt shows them, and back.

    Names become TypeScript-like identifiers for the prompt: space, ``-`` and ``.`` become ``_``;
    letters, digits, ``_`` and ``$`` stay; anything else is dropped; nothing left → ``unnamed``; a
    leading ASCII digit gets ``_``; a name already taken gets ``_2``, ``_3``…
    ``browser.open``/``browser.search``/``browser.find``/``python`` are kept as they are.
    """

    to_prompt: dict[str, str] = field(default_factory=dict)
    to_user: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_tools(cls, names: Iterable[str]) -> FunctionNameMap:
        """The map after ``Init`` converted each non-empty declared name, in order."""
        mapping = cls()
        for name in names:
            if name:
                mapping.add(name)
        return mapping

    @staticmethod
    def _valid_chars(name: str) -> str:
        kept = "".join(
            "_" if char in " -." else char for char in name if char in " -._$" or _go_letter(char) or _go_digit(char)
        )
        if not kept:
            return "unnamed"
        return "_" + kept if kept[0] in "0123456789" else kept

    def add(self, name: str) -> str:
        """``ConvertAndAdd``: register ``name``; return its prompt name."""
        base = candidate = self._valid_chars(name)
        count = 2
        while candidate in self.to_user:
            candidate = f"{base}_{count}"
            count += 1
        if name in ("browser.open", "browser.search", "browser.find", "python"):
            candidate = name
        self.to_prompt[name] = candidate
        self.to_user[candidate] = name
        return candidate

    def original(self, prompt_name: str, log: list[str] | None = None) -> str:
        """``OriginalFromConverted``: the declared name, else ``prompt_name`` itself (logged)."""
        found = self.to_user.get(prompt_name)
        if found is None:
            if log is not None:
                log.append(f"harmony parser: no reverse mapping found for function name: {prompt_name!r}")
            return prompt_name
        return found


# --------------------------------------------------------------------------- message handler


@dataclass(frozen=True, slots=True)
class ParsedToolCall:
    """A tool call Ollama parsed: ``name`` as the client declared it, ``arguments`` as Ollama
    writes them (Go JSON: ``{"location":"Paris"}``, or ``null``)."""

    name: str
    arguments: str


class ToolCallError(Exception):
    """The tool call's arguments did not decode; ``str()`` is Ollama's message
    ``error parsing tool call: raw='…', err=…``, :attr:`cause` the bare Go error text."""

    def __init__(self, raw: str, cause: str) -> None:
        super().__init__(f"error parsing tool call: raw='{raw}', err={cause}")
        self.raw = raw
        self.cause = cause


class _Mode(enum.Enum):
    NORMAL = 0
    THINKING = 1
    TOOL_CALLING = 2


@dataclass
class MessageHandler:
    """``HarmonyMessageHandler`` with its tool-call accumulator: pieces in, (content, thinking,
    tool calls) out, per piece, as Ollama's ``Add(s, done)`` returns them."""

    names: FunctionNameMap = field(default_factory=FunctionNameMap)
    parser: StringParser = field(default_factory=StringParser)
    _mode: _Mode = _Mode.NORMAL
    _tool_name: str | None = None
    _tool_text: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.parser.prefill(MESSAGE_START + "assistant")

    @classmethod
    def for_request(cls, tool_names: Iterable[str] = (), prefill: str | None = None) -> MessageHandler:
        """A handler as ``Init`` leaves it: the declared tool names mapped, and the parser primed
        with ``<|start|>assistant`` or, when the request ends with an assistant message, with
        ``<|start|>assistant<|channel|>final<|message|>`` (``prefill="final"``, it has content) or
        ``…analysis<|message|>`` (``prefill="analysis"``, only thinking)."""
        parser = StringParser()
        handler = cls(names=FunctionNameMap.from_tools(tool_names), parser=parser)
        if prefill in ("final", "analysis"):
            parser.prefill(f"{CHANNEL}{prefill}{HEADER_END}")
        return handler

    @property
    def log(self) -> list[str]:
        return self.parser.log

    def add(self, piece: str, done: bool) -> tuple[str, str, ParsedToolCall | None]:
        """``Add``: the content and thinking this piece completes, and at ``done`` the tool call.

        Raises:
            ToolCallError: at ``done``, when the tool-addressed text is not a JSON object/null.
        """
        content: list[str] = []
        thinking: list[str] = []
        for kind, value in self.parser.add(piece):
            if kind == "header":
                assert isinstance(value, Header)
                if value.channel in ("analysis", "commentary"):
                    if value.recipient:
                        self._mode = _Mode.TOOL_CALLING
                        self._tool_name = value.recipient
                    else:
                        self._mode = _Mode.THINKING if value.channel == "analysis" else _Mode.NORMAL
                elif value.channel == "final":
                    self._mode = _Mode.NORMAL
            elif kind == "content":
                assert isinstance(value, str)
                if self._mode is _Mode.NORMAL:
                    content.append(value)
                elif self._mode is _Mode.THINKING:
                    thinking.append(value)
                else:
                    self._tool_text.append(value)
            elif kind == "end":
                self._mode = _Mode.NORMAL
        call = None
        if done and self._tool_name is not None:
            raw = "".join(self._tool_text)
            self._tool_text.clear()
            name = self._tool_name.removeprefix("functions.")
            name = self.names.original(name, self.log)
            decoded = parse_arguments(raw)
            if decoded.error is not None:
                raise ToolCallError(raw, decoded.error)
            assert decoded.json is not None
            call = ParsedToolCall(name, decoded.json)
        return "".join(content), "".join(thinking), call
