"""A parse's certificate: how the next pieces follow from it without a parse (:mod:`.incremental`).

The argument is :mod:`.incremental`'s module docstring (open runs) and :mod:`.held`'s (held-back
suffixes); this module holds the bookkeeping: :func:`certificate` reads a parse's first end
observation and open node, :meth:`Open.extend` answers each following piece.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, Protocol

from mockoss.profiles.llamacpp import held, peg
from mockoss.profiles.llamacpp.gptoss import _TRAILING_SPACE, ChatMsg, Grammar


class _Resumed(Protocol):
    """What this module reads of :class:`.incremental._Resumed` (a protocol, so that this module
    does not import the one that imports it: tests/test_import_layers.py)."""

    grammar: Grammar
    parses: int
    parsed: int


class _Parsed(Protocol):
    """What this module reads of :class:`.incremental._Parsed`."""

    thinks: bool
    calls: list

__all__ = ["SAME", "Extend", "Open", "certificate", "grown"]

_TOOL_OPEN, _TOOL_NAME, _TOOL_ARGS = "tool-open", "tool-name", "tool-args"
_OPEN_FIELDS = ("content", "reasoning", _TOOL_ARGS)


class Extend(NamedTuple):
    """A partial parse equal to the previous one with ``field`` extended by ``piece``:
    ``"content"``, ``"reasoning"``, or ``"tool"`` (the arguments of the last tool call, number
    ``index``); ``field == ""``: equal to the previous one."""

    field: str
    piece: str
    index: int = -1


SAME = Extend("", "")


class Open:
    """A parse's certificate (:mod:`.incremental`'s docstring): its first end observation was an open run.

    ``kind`` ``"until"`` (``delimiter``, and ``tail``: the text after
    ``max(pos, len(t) - len(delimiter) + 1)``), ``"string"`` (a JSON string; ``tail``: the
    escape the end cut, whose scan resumes with the next piece) or ``"stable"`` (no check saw
    the end); ``field`` the message field that grows (``""``: none); for ``"tool"``, ``index``
    of the call and ``spaces``, the open node's trailing whitespace, which the mapper strips
    until a later character follows. For ``"until"``: ``probe`` what :func:`.held.probe` needs
    (the parser that gave it first, which counts the probes) and ``modes`` its answers by held
    suffix; ``pending`` the held suffix left out of the last result.

    A held suffix the probe cannot place answers ``None``: a full parse, which gives a new
    certificate. (Until 2026-12 the certificate stayed and, once the run reached the end again,
    gave the whole message grown by every piece since, which it kept for that: a list appended on
    every token of an open answer, read only there. That branch never ran for the grammars
    :func:`.gptoss.build_grammar` builds: every ``until("<|end|>")`` is followed by
    ``literal("<|end|>")`` or the end, which answers ``NEED`` on every held prefix, so the probe
    always places it: 6,700 probes, 0 ``None``, in issue 9's eleventh-session review, finding 2.)
    """

    __slots__ = (
        "delimiter",
        "field",
        "index",
        "kind",
        "modes",
        "pending",
        "probe",
        "spaces",
        "tail",
    )

    def __init__(self, kind: str, delimiter: str, tail: str) -> None:
        self.kind, self.delimiter, self.tail = kind, delimiter, tail
        self.field, self.index, self.spaces = "", -1, ""
        self.probe: tuple = ()
        self.modes: dict[str, str | None] = {}
        self.pending = ""

    def extend(self, piece: str) -> Extend | None:
        """The result after ``piece`` (non-empty): an :class:`Extend` of the previous one, or
        ``None`` when it needs a full parse (which gives a new certificate)."""
        if self.kind == "stable":
            return SAME
        if self.kind == "until":
            return self._until(piece)
        escape = peg.json_string_scan(self.tail + piece)
        if escape is None:
            return None
        self.tail = escape
        if self.field != "tool":
            return Extend(self.field, piece) if self.field else SAME
        kept = piece.rstrip(_TRAILING_SPACE)
        if not kept:
            self.spaces += piece
            return SAME
        added, self.spaces = self.spaces + kept, piece[len(kept) :]
        return Extend("tool", added, self.index)

    def _until(self, piece: str) -> Extend | None:
        window = self.tail + piece
        if self.delimiter in window:
            return None
        keep = len(self.delimiter) - 1
        self.tail = window[-keep:] if keep else ""
        suffix = held.held_suffix(window, self.delimiter)
        if suffix:
            # U now stops before that prefix. No delimiter since the certificate's parse, so the
            # message follows from the certificate's (held.py), when the probe proves how.
            mode = self.modes[suffix] if suffix in self.modes else self.modes.setdefault(suffix, self._probe(suffix))
            if mode is None:
                return None  # the probe cannot place it (class docstring): a full parse
            if mode == held.KEPT:
                suffix = ""
        added = held.growth(self.pending, piece, suffix)
        self.pending = suffix
        return Extend(self.field, added) if self.field and added else SAME

    def _probe(self, suffix: str) -> str | None:
        if self.field not in ("", "content", "reasoning"):
            return None
        owner, text, *rest = self.probe
        owner.parses += 1
        owner.parsed += len(text) + len(suffix)
        return held.probe(owner.grammar, text, *rest, suffix)


def certificate(
    owner: _Resumed, text: str, nodes: list[peg.Node], seen: list[peg.EndObservation], msg: _Parsed
) -> Open | None:
    """The shortcut's condition for the parse of ``text`` (module docstring), or ``None``."""
    if not seen:
        return Open("stable", "", "")  # no check saw the end: every longer text parses the same
    what, pos, end, delimiter = seen[0]
    size = len(text)
    if end != size or pos >= size:
        return None
    if what == "until" and delimiter:
        certificate = Open("until", delimiter, text[max(pos, size - len(delimiter) + 1) :])
    elif what == "string" or what == "escape":
        certificate = Open("string", "", delimiter)
    else:
        return None
    opened = [i for i, (name, start, stop) in enumerate(nodes) if stop == size and start < size and name != _TOOL_OPEN]
    if what == "until":
        certificate.probe = (owner, text, nodes, opened[0] if opened else -1, pos, delimiter)
    if not opened:
        return certificate
    if len(opened) > 1 or nodes[opened[0]][0] not in _OPEN_FIELDS:
        return None
    name, start, _stop = nodes[opened[0]]
    if name == "reasoning" and not msg.thinks:
        return None  # whitespace-only reasoning is dropped: a piece could make it appear
    if name != _TOOL_ARGS:
        certificate.field = name
        return certificate
    if opened[0] != len(nodes) - 1:
        return None
    raw = text[start:size]
    args = raw.rstrip(_TRAILING_SPACE)
    if not args:
        return None
    called = None  # the mapper's current call: None, or its name so far
    for name, start, stop in nodes:
        if name == _TOOL_OPEN:
            called = ""
        elif name == _TOOL_NAME and called is not None:
            called = text[start:stop].rstrip(_TRAILING_SPACE)
    if called and args.startswith("{"):  # the mapper sets the arguments (else they stay as they are)
        certificate.field, certificate.index, certificate.spaces = "tool", len(msg.calls) - 1, raw[len(args) :]
    return certificate


def grown(msg: ChatMsg, results: Iterable[Extend]) -> ChatMsg:
    """``msg`` with the extensions ``results`` applied in order (each field joined once)."""
    added: dict[tuple[str, int], list[str]] = {}
    for result in results:
        if result.field:
            added.setdefault((result.field, result.index), []).append(result.piece)
    content = msg.content + "".join(added.pop(("content", -1), ()))
    reasoning = msg.reasoning_content + "".join(added.pop(("reasoning", -1), ()))
    calls = list(msg.tool_calls)
    for (_field, index), pieces in added.items():
        name, args = calls[index]
        calls[index] = (name, args + "".join(pieces))
    return ChatMsg(content, reasoning, tuple(calls))
