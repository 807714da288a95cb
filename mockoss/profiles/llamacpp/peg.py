"""A small PEG engine with llama.cpp's partial-input semantics, for :mod:`.gptoss`.

Reproduces the parser executor of ``ggml-org/llama.cpp:common/peg-parser.cpp@0243c56a`` as
``common_chat_peg_parse`` (``common/chat.cpp``) runs it: with ``COMMON_PEG_PARSE_FLAG_LENIENT``,
so running out of input is never a failure (a literal cut by the end of the input, an unclosed
JSON string, a short character run all answer ``NEED``), while a character that does not match
still fails. The grammar is not anchored at the end of the input: text after a successful match
is ignored.

A parser is a function ``(text, pos) -> (kind, end, nodes)``: ``kind`` is :data:`OK`,
:data:`NEED` (matched so far, wants more input) or :data:`FAIL`; ``nodes`` are the tags matched,
pre-order, as ``(tag, start, end)`` with ``end`` exclusive. Ordered choice returns its first
alternative that does not fail (so a ``NEED`` wins over a later ``OK``), repetition is greedy and
possessive, exactly as upstream.

End observations (for :mod:`.incremental`): every check whose outcome depends on where the input
ends, and only those, calls :func:`_saw_end` (a literal cut by the end, a repetition stopping at
the end, an ``until`` that found no delimiter, a character run reaching the end, a JSON string
left open). Under :func:`first_end_observation` the first such check of a parse is recorded; a
check that did not see the end gives the same answer on any longer text that starts with this
one, which is what lets the stream's re-parse skip most of the work. After it, the first check
that fails (a literal, a character run or a repetition too short, a bad JSON escape: every
failure starts at one of these) is recorded too, as ``("fail", pos, pos, "")``: a parse with no
failure after its first end observation never went back before it (:mod:`.held`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = [
    "FAIL",
    "NEED",
    "OK",
    "Node",
    "Parser",
    "Result",
    "atomic",
    "chars",
    "choice",
    "first_end_observation",
    "json_string_scan",
    "json_value",
    "literal",
    "memo",
    "optional",
    "remembering",
    "repeat",
    "sequence",
    "space",
    "tag",
    "until",
]

OK, NEED, FAIL = 0, 1, 2

Node = tuple[str, int, int]
Result = tuple[int, int, list[Node]]
Parser = Callable[[str, int], Result]

_NO_NODES: list[Node] = []

#: ``(what, pos, end, detail)`` of a parse's first end observation, when one is being recorded:
#: the check's name, where it started, what it answered; ``detail`` is an ``until``'s delimiter,
#: or the text of a JSON escape cut by the end.
EndObservation = tuple[str, int, int, str]


class _Observations(list[EndObservation]):
    """The first end observation (then the first failure after it); ``ends`` counts them all."""

    __slots__ = ("ends",)

    def __init__(self) -> None:
        super().__init__()
        self.ends = 0


_SINK: ContextVar[_Observations | None] = ContextVar("llamacpp_peg_end_sink", default=None)
#: Results that saw no end, by ``(parser, pos)``, while :func:`remembering` (see there).
_MEMO: ContextVar[dict | None] = ContextVar("llamacpp_peg_memo", default=None)


def _saw_end(what: str, pos: int, end: int, detail: str = "") -> None:
    """Note that a check at ``pos`` (answering ``end``) depended on where the input ends."""
    sink = _SINK.get()
    if sink is not None:
        sink.ends += 1
        if not sink:
            sink.append((what, pos, end, detail))


def _failed(pos: int) -> None:
    """Note a check failing at ``pos``, when it is the first failure after the first end observation."""
    sink = _SINK.get()
    if sink is not None and len(sink) == 1:
        sink.append(("fail", pos, pos, ""))


@contextmanager
def first_end_observation() -> Iterator[list[EndObservation]]:
    """Within the block, the first end observation of the parses run in this context is appended
    to the yielded list (empty if no check saw the end), then the first failure after it."""
    sink = _Observations()
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


@contextmanager
def remembering(table: dict) -> Iterator[None]:
    """Inside :func:`first_end_observation`: :func:`memo` parsers keep in ``table`` their results
    that saw no end, unbounded repetitions their state after rounds that saw no end, and reuse
    them. Exact while each text parsed with ``table`` extends the previous one: such a result is
    the result on every longer text (stability, for one call). Reused failures are not recorded."""
    token = _MEMO.set(table)
    try:
        yield
    finally:
        _MEMO.reset(token)


def memo(part: Parser) -> Parser:
    """``part``, its results reused under :func:`remembering`."""

    def parse(text: str, pos: int) -> Result:
        table, sink = _MEMO.get(), _SINK.get()
        if table is None or sink is None:
            return part(text, pos)
        key = (parse, pos)
        known = table.get(key)
        if known is not None:
            return known  # type: ignore[no-any-return]
        ends = sink.ends
        result = part(text, pos)
        if sink.ends == ends:
            table[key] = result
        return result

    return parse


def literal(word: str) -> Parser:
    """``p.literal`` / ``p.token``: ``word`` verbatim; a proper prefix of it at the end is ``NEED``."""

    def parse(text: str, pos: int) -> Result:
        if text.startswith(word, pos):
            return OK, pos + len(word), _NO_NODES
        if len(text) - pos < len(word) and word.startswith(text[pos:]):
            _saw_end("literal", pos, len(text))
            return NEED, len(text), _NO_NODES
        _failed(pos)
        return FAIL, pos, _NO_NODES

    return parse


def sequence(*parts: Parser) -> Parser:
    """Each part in turn; stops at the first failure or at the first part that needs more input."""

    def parse(text: str, pos: int) -> Result:
        nodes: list[Node] = []
        for part in parts:
            kind, end, found = part(text, pos)
            if kind == FAIL:
                return FAIL, end, _NO_NODES
            nodes.extend(found)
            if kind == NEED:
                return NEED, end, nodes
            pos = end
        return OK, pos, nodes

    return parse


def choice(*options: Parser) -> Parser:
    """Ordered choice: the first option that does not fail."""

    def parse(text: str, pos: int) -> Result:
        for option in options:
            result = option(text, pos)
            if result[0] != FAIL:
                return result
        return FAIL, pos, _NO_NODES

    return parse


def repeat(part: Parser, minimum: int = 0, maximum: int = -1) -> Parser:
    """``common_peg_repetition_parser``: greedy, possessive, stops at the end of the input or on
    an empty match; fewer than ``minimum`` matches at the end of the input is ``NEED``."""

    def parse(text: str, pos: int) -> Result:
        nodes: list[Node] = []
        count = 0
        size = len(text)
        # under remembering(), an unbounded repetition resumes after its rounds that saw no end
        table = _MEMO.get() if maximum == -1 else None
        sink = _SINK.get()
        if table is not None and sink is not None:
            key = (parse, pos)
            saved = table.get(key)
            if saved is not None:
                pos, count, kept, size_kept = saved
                nodes = kept[:size_kept]
            ends = sink.ends
        else:
            table = None
        while maximum == -1 or count < maximum:
            if pos >= size:
                _saw_end("repeat", pos, pos)
                break
            kind, end, found = part(text, pos)
            if kind == OK:
                if end == pos:
                    break
                nodes.extend(found)
                pos = end
                count += 1
                if table is not None:
                    if sink.ends == ends:  # type: ignore[union-attr]
                        table[key] = (pos, count, nodes, len(nodes))
                    else:
                        table = None  # this round saw the end: it and the rounds after it are not kept
                continue
            if kind == NEED:
                nodes.extend(found)
                return NEED, end, nodes
            break
        if count < minimum:
            if pos >= size:
                _saw_end("repeat", pos, pos)
                return NEED, pos, nodes
            _failed(pos)
            return FAIL, pos, _NO_NODES
        return OK, pos, nodes

    return parse


def optional(part: Parser) -> Parser:
    """``p.optional``: zero or one."""
    return repeat(part, 0, 1)


def until(delimiter: str) -> Parser:
    """``p.until``: everything before ``delimiter``, or before a prefix of it that ends the input,
    or to the end of the input. Never fails."""
    size_d = len(delimiter)

    def parse(text: str, pos: int) -> Result:
        found = text.find(delimiter, pos)
        if found != -1:  # the loop below is empty then: found <= len(text) - size_d
            return OK, found, _NO_NODES
        stop = len(text)
        for start in range(max(pos, stop - size_d + 1), stop):
            if delimiter.startswith(text[start:]):
                _saw_end("until", pos, start, delimiter)
                return OK, start, _NO_NODES
        _saw_end("until", pos, stop, delimiter)
        return OK, stop, _NO_NODES

    return parse


def chars(pattern: str, minimum: int = 1, maximum: int = -1) -> Parser:
    """``p.chars``: a run of characters of class ``pattern`` (regex character-class syntax)."""
    run = re.compile(f"{pattern}*" if maximum == -1 else f"{pattern}{{0,{maximum}}}")

    def parse(text: str, pos: int) -> Result:
        end = run.match(text, pos).end()  # type: ignore[union-attr]
        if end >= len(text):
            _saw_end("chars", pos, end)
        if end - pos < minimum:
            if end >= len(text):
                return NEED, end, _NO_NODES
            _failed(end)
            return FAIL, end, _NO_NODES
        return OK, end, _NO_NODES

    return parse


def space() -> Parser:
    """``p.space``: any run of ``' '``, ``'\\t'``, ``'\\n'`` (possibly empty)."""
    run = re.compile(r"[ \t\n]*")

    def parse(text: str, pos: int) -> Result:
        end = run.match(text, pos).end()  # type: ignore[union-attr]
        if end >= len(text):
            _saw_end("space", pos, end)
        return OK, end, _NO_NODES

    return parse


def tag(name: str, part: Parser) -> Parser:
    """``p.tag`` (``p.content``, ``p.reasoning``, ``p.tool_name``, …): a node spanning what
    ``part`` matched, also when it only matched a prefix (``NEED``)."""

    def parse(text: str, pos: int) -> Result:
        kind, end, found = part(text, pos)
        if kind == FAIL:
            return kind, end, found
        return kind, end, [(name, pos, end), *found]

    return parse


def atomic(part: Parser) -> Parser:
    """``p.atomic``: like ``part``, but a partial match (``NEED``) reports no nodes."""

    def parse(text: str, pos: int) -> Result:
        kind, end, found = part(text, pos)
        return (kind, end, _NO_NODES) if kind == NEED else (kind, end, found)

    return parse


def _json_string_content(text: str, pos: int) -> Result:
    """``common_peg_json_string_parser``: string content up to (not including) the closing quote.
    Its end observations: ``"escape"`` (an escape cut by the end), ``"string"`` (the end reached
    between characters: the string is open, and the scan would go on from the same state)."""
    start = pos
    size = len(text)
    while pos < size:
        c = text[pos]
        if c == '"':
            return OK, pos, _NO_NODES
        if c == "\\":
            escape = pos
            pos += 1
            if pos >= size:
                _saw_end("escape", start, pos, text[escape:])
                return NEED, pos, _NO_NODES
            e = text[pos]
            if e in '"\\/bfnrt':
                pos += 1
            elif e == "u":
                for _ in range(4):
                    pos += 1
                    if pos >= size:
                        _saw_end("escape", start, pos, text[escape:])
                        return NEED, pos, _NO_NODES
                    if text[pos] not in "0123456789abcdefABCDEF":
                        _failed(pos)
                        return FAIL, pos, _NO_NODES
                pos += 1
            else:
                _failed(pos)
                return FAIL, pos, _NO_NODES
        else:
            pos += 1
    _saw_end("string", start, pos)
    return NEED, pos, _NO_NODES


def json_string_scan(text: str) -> str | None:
    """The JSON string scanner, started between characters of an open string, over ``text``:
    ``None`` when it stops before the end (a closing quote, a bad escape), else the escape it
    is in the middle of at the end (``""``: none)."""
    with first_end_observation() as seen:
        kind = _json_string_content(text, 0)[0]
    if kind != NEED:
        return None
    return seen[0][3]


def _build_json() -> Parser:
    """``common_peg_parser_builder::json`` (object, array, string, number, bool, null)."""
    ws = space()
    digits = chars("[0-9]")

    def value(text: str, pos: int) -> Result:
        return json_any(text, pos)

    string = sequence(literal('"'), _json_string_content, literal('"'))
    number = sequence(
        optional(literal("-")),
        choice(literal("0"), sequence(chars("[1-9]", 1, 1), chars("[0-9]", 0, -1))),
        optional(sequence(literal("."), digits)),
        optional(sequence(choice(literal("e"), literal("E")), optional(chars("[+-]", 1, 1)), digits)),
    )
    member = sequence(string, ws, literal(":"), ws, value)
    members = sequence(member, repeat(sequence(ws, literal(","), ws, member)))
    obj = choice(sequence(literal("{"), ws, literal("}")), sequence(literal("{"), ws, members, ws, literal("}")))
    elements = sequence(value, repeat(sequence(ws, literal(","), ws, value)))
    arr = choice(sequence(literal("["), ws, literal("]")), sequence(literal("["), ws, elements, ws, literal("]")))
    json_any = memo(choice(obj, arr, string, number, choice(literal("true"), literal("false")), literal("null")))
    return json_any


#: A JSON value, as ``p.json()`` (no leading whitespace; whitespace allowed inside).
json_value: Parser = _build_json()

