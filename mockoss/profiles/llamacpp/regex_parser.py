"""llama.cpp's late-2025 regex parser for gpt-oss (``common_chat_parse_gpt_oss``), reimplemented.

Source: ``ggml-org/llama.cpp:common/chat.cpp``, ``common_chat_parse_gpt_oss`` of the
``COMMON_CHAT_FORMAT_GPT_OSS`` era (ggml-org/llama.cpp#15181, b6100-era builds, before the PEG
parser), with ``common_chat_parse``'s fallback and ``try_parse_reasoning`` (the function's text
read from a stored copy of ``common/chat.cpp``; its commit is not pinned: the repository is over
the size the 2026-12 session could fetch, and the search index gives no commit for that copy;
``try_consume_json`` and ``try_consume_json_with_dumped_args`` were read at
``ggml-org/llama.cpp@1d232c2c38b4e3167369bf3233615b7770b9d610:common/chat-parser.cpp``).

Loop over messages: read the header up to ``<|message|>``; a header that fully matches
``(?: to=functions\\.([^<\\s]+))<|channel|>(analysis|commentary)`` + optional constraint, or
``<|channel|>(analysis|commentary)(?: to=functions\\.([^<\\s]+))`` + optional constraint, is a
tool call (JSON arguments, kept only when the request enables tool calls; non-JSON arguments are
skipped; a raw control character inside a JSON string makes the message incomplete, see
:func:`_strict`); ``<|channel|>analysis`` is reasoning (stripped; with ``reasoning_format: none`` the
message with its markup and ``<|end|>`` goes to content); ``<|channel|>final`` (optionally
constrained) and ``<|channel|>commentary`` are content. Any other header is skipped (the message is
dropped) and parsing resumes at the next ``<|start|>assistant``; text after the last message is
dropped. A header with no ``<|message|>`` is "incomplete": a final parse then falls back to the
content-only parse, appending the whole output to content and dropping tool calls.

Simplification (documented, unverified): while streaming, a tool call appears only once its
JSON arguments are complete; upstream streams "healed" partial arguments. Markers are found
whole (``str.find``); upstream's ``common_chat_msg_parser::try_find_literal``
(``common/chat-parser.cpp``, read at ``05e5139a``) also takes a prefix of the marker at the end
of a partial text as found (``string_find_partial_stop``), so a streamed ``<|en`` would not be
sent as content first: not reproduced (unverified for the b6100 era; with real tokens the
markers are single special tokens, so only a model writing a marker's prefix as text sees it).

One loop iteration is a *round* (:func:`round_at`): what one message adds and where the next
round starts. :mod:`.regex_incremental` resumes the per-token parses after the rounds that are
settled for good; :func:`round_at` reports, for that, whether its outcome can change when the
text grows (``stable``) and, for the last round, what a longer text must contain to change it
(:class:`Watch`).
"""

from __future__ import annotations

import json
import re
from contextlib import nullcontext
from dataclasses import dataclass

from mockoss.profiles.llamacpp import peg
from mockoss.profiles.llamacpp.gptoss import ChatMsg
from mockoss.profiles.wire import dumps as _dump

__all__ = ["END", "MESSAGE", "SPACES", "START", "Round", "Watch", "parse_regex", "round_at"]

_CONSTRAINT = r"(?: (<\|constrain\|>)?([a-zA-Z0-9_-]+))"
_RECIPIENT = r"(?: to=functions\.([^<\s]+))"
_TOOL_CALL1 = re.compile(_RECIPIENT + r"<\|channel\|>(analysis|commentary)" + _CONSTRAINT + "?")
_TOOL_CALL2 = re.compile(r"<\|channel\|>(analysis|commentary)" + _RECIPIENT + _CONSTRAINT + "?")
_ANALYSIS = re.compile(r"<\|channel\|>analysis")
_FINAL = re.compile(r"<\|channel\|>final" + _CONSTRAINT + "?")
_PREAMBLE = re.compile(r"<\|channel\|>commentary")
START = "<|start|>assistant"
MESSAGE = "<|message|>"
END = "<|end|>"
#: the characters ``consume_spaces``, ``string_strip`` and the skip after ``<|end|>`` drop
SPACES = " \t\n\r\v\f"
_LEADING = re.compile(f"[{re.escape(SPACES)}]*")


@dataclass(frozen=True, slots=True)
class Watch:
    """What a longer text must contain for the last round's outcome to change.

    ``kind`` ``"find"``: the round searched for ``delimiter`` from a point on and did not find
    it; ``tail`` is the text from ``max(that point, len(text) - len(delimiter) + 1)`` on (an
    occurrence in a longer text overlaps the new characters, so it lies in ``tail`` + them).
    ``field``: ``"content"`` or ``"reasoning"`` when the round's open message runs to the end
    of the text and that field grows with it, else ``""``. ``spaces``: for ``"reasoning"``, the
    trailing whitespace the strip removed. ``kind`` ``"json"``: tool arguments whose first end
    observation is an open JSON string (``tail``: the escape cut by the end, ``""``: none)."""

    kind: str
    delimiter: str = ""
    tail: str = ""
    field: str = ""
    spaces: str = ""


@dataclass(frozen=True, slots=True)
class Round:
    """One message of the parse loop, started at a position of the text.

    Attributes:
        content: the text the round appends to ``content`` (``""``: none).
        reasoning: the text it appends to ``reasoning_content`` (stripped; ``""``: none).
        call: ``(name, arguments)`` it appends to the tool calls, else ``None``.
        incomplete: the round raised ``common_chat_msg_partial_exception`` (no ``<|message|>``,
            or tool arguments cut by the end): the parse stops, the round adds nothing.
        next: where the next round starts (after the next ``<|start|>assistant``), or -1 when
            the loop ends after this round.
        stable: no check of the round depended on where the text ends, so every longer text
            gives this round the same outcome and ``next``.
        watch: for a round the loop ends on (``next == -1`` or ``incomplete``), how a longer text
            can change it (:class:`Watch`), or ``None``: parse again.
    """

    content: str = ""
    reasoning: str = ""
    call: tuple[str, str] | None = None
    incomplete: bool = False
    next: int = -1
    stable: bool = True
    watch: Watch | None = None


def _tail(text: str, start: int, delimiter: str) -> str:
    return text[max(start, len(text) - len(delimiter) + 1) :]


def _ending(text: str, pos: int, round_: dict, stable: bool) -> Round:
    """The round's last step: the search for the next ``<|start|>assistant`` from ``pos``."""
    nxt = text.find(START, pos)
    if nxt != -1:
        return Round(**round_, next=nxt + len(START), stable=stable)
    return Round(**round_, stable=stable, watch=Watch("find", START, _tail(text, pos, START)) if stable else None)


def _tool_call(text: str, pos: int, name: str, tool_calls: bool, memo: dict | None) -> Round:
    """``handle_tool_call``: JSON arguments after optional spaces (``consume_json``)."""
    start = _LEADING.match(text, pos).end()  # type: ignore[union-attr]
    with peg.first_end_observation() as seen, nullcontext() if memo is None else peg.remembering(memo):
        kind, used, _ = peg.json_value(text, start)
    if kind == peg.NEED:
        watch = Watch("json", tail=seen[0][3]) if seen and seen[0][0] in ("string", "escape") else None
        return Round(incomplete=True, stable=False, watch=watch)
    call = None
    if kind == peg.OK:
        value = _strict(text[start:used])
        if value is _HEALED:
            return Round(incomplete=True, stable=False)
        if value is not _SKIPPED:
            pos = used
            if tool_calls:
                call = (name, _dump(value))
    return _ending(text, pos, {"call": call}, not seen)


_HEALED = object()
_SKIPPED = object()
_CONTROL = re.compile("[\x00-\x1f]")


def _strict(raw: str) -> object:
    """The JSON value ``raw`` (a whole :data:`.peg.json_value` match) as nlohmann's strict lexer
    reads it: the value, or for a raw control character (U+0000-U+001F) inside a string, which
    ``peg.json_value`` accepts but nlohmann rejects ("invalid string: control character ... must
    be escaped"), what ``common_json_parse`` makes of that error: inside an object or array it
    "heals" the text cut at that character (``_HEALED``: ``try_consume_json`` then raises
    ``common_chat_msg_partial_exception`` on a final parse, and ``handle_tool_call`` does on a
    partial one, since the healed arguments are partial), a top-level string is not healed
    (``_SKIPPED``: no JSON, the arguments are skipped). Sources:
    ``ggml-org/llama.cpp@1d232c2c38b4e3167369bf3233615b7770b9d610:common/chat-parser.cpp``
    (``try_consume_json``, ``try_consume_json_with_dumped_args``), ``common_chat_parse_gpt_oss``'s
    ``handle_tool_call`` (the stored copy above) and ``common/json-partial.cpp``'s
    ``common_json_parse`` as stored in the search index (no commit given; it heals at the lexer's
    error position, not only at the end, and leaves "unclosed top-level primitive" a TODO).
    Unverified for the b6100 era: ``json-partial.cpp`` at
    ``5af9d618d3c6a23829c39eee1d00be8faa5c3f6f`` also heals a top-level string."""
    if _CONTROL.search(raw) is None:
        return json.loads(raw)
    try:
        return json.loads(raw)
    except json.JSONDecodeError:  # the only strict-mode error on a peg.json_value match
        return _SKIPPED if raw[0] == '"' else _HEALED


def round_at(text: str, pos: int, *, extract_reasoning: bool, tool_calls: bool, memo: dict | None = None) -> Round:
    """One iteration of ``common_chat_parse_gpt_oss``'s loop over ``text`` from ``pos`` (the
    start, or just after a ``<|start|>assistant``). ``memo``: :func:`.peg.remembering`'s table for
    tool arguments, valid while each ``text`` given with it extends the previous one."""
    header_start = pos
    found = text.find(MESSAGE, pos)
    if found == -1:
        return Round(incomplete=True, stable=False, watch=Watch("find", MESSAGE, _tail(text, pos, MESSAGE)))
    header = text[pos:found]
    pos = found + len(MESSAGE)
    match = _TOOL_CALL1.fullmatch(header) or _TOOL_CALL2.fullmatch(header)
    if match is not None:
        name = match.group(1) if match.re is _TOOL_CALL1 else match.group(2)
        return _tool_call(text, pos, name, tool_calls, memo)
    if _ANALYSIS.fullmatch(header):
        end = text.find(END, pos)  # none inside "<|channel|>analysis<|message|>" before pos
        if not extract_reasoning:
            if end == -1:
                watch = Watch("find", END, _tail(text, pos, END), "content")
                return Round(text[header_start:], stable=False, watch=watch)
            return _ending(text, end + len(END), {"content": text[header_start : end + len(END)]}, True)
        if end == -1:
            body = text[pos:]
            reasoning = body.strip(SPACES)
            watch = None
            if reasoning:  # the field then grows by what follows, trailing whitespace held back
                spaces = body[len(body.rstrip(SPACES)) :]
                watch = Watch("find", END, _tail(text, pos, END), "reasoning", spaces)
            return Round(reasoning=reasoning, stable=False, watch=watch)
        reasoning = text[pos:end].strip(SPACES)
        return _ending(text, _LEADING.match(text, end + len(END)).end(), {"reasoning": reasoning}, True)  # type: ignore[union-attr]
    if _FINAL.fullmatch(header) or _PREAMBLE.fullmatch(header):
        end = text.find(END, pos)
        if end == -1:
            return Round(text[pos:], stable=False, watch=Watch("find", END, _tail(text, pos, END), "content"))
        return _ending(text, end + len(END), {"content": text[pos:end]}, True)
    return _ending(text, header_start, {}, True)  # unknown header: LOG_DBG, back to its start


def parse_regex(text: str, *, extract_reasoning: bool, tool_calls: bool, partial: bool) -> ChatMsg:
    """``common_chat_parse`` with the gpt-oss regex parser over the generated text.

    Args:
        text: the generated text (no generation prompt in front).
        extract_reasoning: ``reasoning_format != none``.
        tool_calls: ``parse_tool_calls`` (tools declared and ``tool_choice != none``).
        partial: a streaming (partial) parse: an incomplete message keeps what was parsed so far;
            a final parse instead falls back to content-only (whole output appended to content,
            tool calls dropped).
    """
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[tuple[str, str]] = []
    pos = 0
    while True:
        round_ = round_at(text, pos, extract_reasoning=extract_reasoning, tool_calls=tool_calls)
        if round_.incomplete:
            if not partial:
                calls = []
                content.append(text)
            break
        content.append(round_.content)
        if round_.reasoning:
            reasoning.append(round_.reasoning)
        if round_.call is not None:
            calls.append(round_.call)
        if round_.next == -1:
            break
        pos = round_.next
    return ChatMsg("".join(content), "".join(reasoning), tuple(calls))
