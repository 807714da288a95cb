"""SGLang's string-level Harmony parser, reproduced: the parser behind ``--reasoning-parser gpt-oss``
and ``--tool-call-parser gpt-oss``.

SGLang does not parse gpt-oss output with openai-harmony. It detokenizes with special tokens kept
and splits the *text* on the markers ``<|start|>``, ``<|channel|>``, ``<|message|>``,
``<|constrain|>``, ``<|end|>``, ``<|call|>``, ``<|return|>``
(sgl-project/sglang@v0.5.23:python/sglang/srt/parser/harmony_parser.py). Its failure modes follow
from that, and this module keeps them:

* text outside a channel block, and any unknown ``<|…|>`` marker, is passed through as ``normal``
  text (it ends up in ``content``);
* a block whose channel word is not ``analysis``/``commentary``/``final`` is never closed: the
  parser holds everything from it on (the rest of the output is lost);
* an ``analysis`` or ``commentary`` block without ``<|end|>``/``<|call|>`` is held too (only
  ``analysis`` content streams while open); a ``final`` block ends at ``<|return|>`` or the end;
* a ``<|call|>`` block on either channel is a ``tool_call`` event whose ``raw`` is the block's
  markup from its first marker;
* a ``commentary`` word between a ``<|call|>`` and the next ``<|channel|>`` (or anywhere right
  after one) is dropped as filler;
* text with no ``<|channel|>``/``<|start|>`` but a word ``analysis``/``commentary``/
  ``assistantfinal`` is parsed by the text fallback (what output looks like when special tokens
  were stripped): ``analysis…assistantfinal…``.

Checked against SGLang 0.5.23's own module (loaded from the wheel, no GPU needed) by
``tools/sglang_parser_diff.py``; see :mod:`mockoss.profiles.sglang` for what was compared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Event", "Marker", "SglangHarmonyParser", "canonical_parse", "hold_partial", "scan_markers", "text_parse"]

#: The markers SGLang's parser recognises, by kind.
MARKERS: dict[str, str] = {
    "<|start|>": "START",
    "<|channel|>": "CHANNEL",
    "<|message|>": "MESSAGE",
    "<|constrain|>": "CONSTRAIN",
    "<|end|>": "END",
    "<|call|>": "CALL",
    "<|return|>": "RETURN",
}
_GUARDS = tuple(MARKERS)


@dataclass(frozen=True, slots=True)
class Event:
    """One parsed piece: ``kind`` is ``"normal"``, ``"reasoning"`` or ``"tool_call"``; ``content``
    its text; ``raw`` the block's markup for a ``tool_call`` (else ``None``)."""

    kind: str
    content: str
    raw: str | None = None


@dataclass(frozen=True, slots=True)
class Marker:
    """A span of the text: ``kind`` is a :data:`MARKERS` value or ``"TEXT"``; ``start``/``end``
    are character offsets."""

    kind: str
    start: int
    end: int


def hold_partial(text: str, guards: tuple[str, ...] | list[str]) -> tuple[str, str]:
    """Split ``text`` into ``(emit, hold)`` where ``hold`` is the longest suffix that is a proper
    prefix of one of ``guards`` (it may still grow into a marker)."""
    held = 0
    length = len(text)
    for guard in guards:
        limit = min(len(guard) - 1, length)
        if limit <= held:
            continue
        # Only a suffix starting with the guard's first character can be its prefix: those
        # positions are found in C, longest suffix first (a step's text rarely holds one).
        first = guard[0]
        at = text.find(first, length - limit)
        while at != -1 and length - at > held:
            if guard.startswith(text[at:]):
                held = length - at
                break
            at = text.find(first, at + 1)
    return (text[:-held], text[-held:]) if held else (text, "")


def scan_markers(text: str) -> list[Marker]:
    """The text split into markers and text spans, left to right.

    A trailing ``<|`` that may still become a marker is one text span. An unknown ``<|x|>`` is a
    text span ``<|`` plus a text span reaching to the next ``<|``; when that happens and the text
    ends with a marker, an empty text span closes the list (SGLang's quirk, kept).
    """
    out: list[Marker] = []
    pos, length, unknown = 0, len(text), False
    while pos < length:
        at = text.find("<|", pos)
        if at < 0:
            break
        if at > pos:
            out.append(Marker("TEXT", pos, at))
        literal = next((m for m in MARKERS if text.startswith(m, at)), None)
        if literal is not None:
            out.append(Marker(MARKERS[literal], at, at + len(literal)))
            pos = at + len(literal)
            continue
        if any(m.startswith(text[at:]) for m in MARKERS):
            out.append(Marker("TEXT", at, length))
            pos = length
            break
        unknown = True
        out.append(Marker("TEXT", at, at + 2))
        close = text.find("|>", at + 2)
        if close < 0:
            pos = at + 2
            continue
        following = text.find("<|", close + 2)
        stop = following if following >= 0 else length
        out.append(Marker("TEXT", at + 2, stop))
        pos = stop
        if following < 0:
            break
    if pos < length:
        out.append(Marker("TEXT", pos, length))
    elif unknown and text.endswith(_GUARDS):
        out.append(Marker("TEXT", length, length))
    return out


def _channel_word(header: str) -> str | None:
    lowered = header.strip().lower()
    return next((word for word in ("analysis", "commentary", "final") if lowered.startswith(word)), None)


def _header(text: str, marks: list[Marker], first: int) -> tuple[int | None, int | None]:
    """Indexes of the first ``<|channel|>`` and the first ``<|message|>`` from ``first`` on."""
    channel = None
    for i in range(first, len(marks)):
        if marks[i].kind == "CHANNEL" and channel is None:
            channel = i
        elif marks[i].kind == "MESSAGE":
            return channel, i
    return channel, None


def _channel_of(text: str, marks: list[Marker], channel: int, message: int) -> str | None:
    begin = marks[channel + 1].start if channel + 1 < len(marks) else marks[channel].end
    return _channel_word(text[begin : marks[message].start])


def _block(text: str, marks: list[Marker], first: int) -> tuple[Event | None, int] | None:
    """The block starting at ``marks[first]`` as ``(event, next index)``, or ``None`` when it is
    not complete (or its channel is unknown)."""
    channel, message = _header(text, marks, first + (marks[first].kind == "START"))
    if message is None:
        return None
    body = marks[message].end
    if channel is None:  # a tool's answer: no channel, ended by any stop marker
        end = next((i for i in range(message + 1, len(marks)) if marks[i].kind in ("END", "CALL", "RETURN")), None)
        return None if end is None else (Event("normal", text[body : marks[end].start]), end + 1)
    word = _channel_of(text, marks, channel, message)
    if word is None:
        return None
    closers = ("RETURN",) if word == "final" else ("END", "CALL")
    end = next((i for i in range(message + 1, len(marks)) if marks[i].kind in closers), len(marks))
    if end == len(marks):
        return (Event("normal", text[body:]), end) if word == "final" else None
    content, closer = text[body : marks[end].start], marks[end]
    if closer.kind == "CALL":
        return Event("tool_call", content.strip(), text[marks[first].start : closer.end]), end + 1
    if word == "analysis":
        return Event("reasoning", content), end + 1
    if word == "final" and end + 1 < len(marks) and marks[end + 1].kind == "TEXT":
        tail = marks[end + 1]
        return Event("normal", content + text[tail.start : tail.end]), end + 2
    return Event("normal", content), end + 1


def _open_analysis(text: str, marks: list[Marker], first: int) -> tuple[Event, str] | None:
    """An ``analysis`` block still open: its content so far as reasoning, and the header to keep."""
    channel, message = _header(text, marks, first + (marks[first].kind == "START"))
    if channel is None or message is None or _channel_of(text, marks, channel, message) != "analysis":
        return None
    body = marks[message].end
    return Event("reasoning", text[body:]), text[marks[first].start : body]


def _is_filler(text: str, marks: list[Marker], i: int) -> bool:
    """A ``commentary`` word or a ``<|message|>`` right after ``<|call|>`` is dropped."""
    if i == 0 or marks[i - 1].kind != "CALL":
        return False
    mark = marks[i]
    return mark.kind == "MESSAGE" or (mark.kind == "TEXT" and text[mark.start : mark.end].strip().lower() == "commentary")


def canonical_parse(text: str) -> tuple[list[Event], str]:
    """Parse marker-delimited Harmony text: ``(events, rest to keep for the next chunk)``."""
    marks = scan_markers(text)
    events: list[Event] = []
    i = 0
    while i < len(marks):
        mark = marks[i]
        if mark.kind in ("START", "CHANNEL"):
            block = _block(text, marks, i)
            if block is None:
                partial = _open_analysis(text, marks, i)
                if partial is not None:
                    events.append(partial[0])
                    return events, partial[1]
                return events, text[mark.start :]
            if block[0] is not None:
                events.append(block[0])
            i = block[1]
            continue
        if mark.kind == "TEXT" and i == len(marks) - 1:
            emit, hold = hold_partial(text[mark.start : mark.end], _GUARDS)
            if emit:
                events.append(Event("normal", emit))
            return events, hold
        if not _is_filler(text, marks, i):
            piece = text[mark.start : mark.end]
            if piece.strip() not in MARKERS:
                events.append(Event("normal", piece))
        i += 1
    return events, ""


_FLAGS = re.IGNORECASE | re.DOTALL
_BOTH = re.compile(r"^\s*(?:assistant)?\s*(analysis|commentary)(.*?)\s*assistantfinal\s*(.*)\s*$", _FLAGS)
_FINAL = re.compile(r"^\s*assistantfinal\s*(.*)\s*$", _FLAGS)
_OPEN = re.compile(r"^\s*(?:assistant)?\s*(analysis|commentary)(.*)\s*$", _FLAGS)
_HEADER_WORD = re.compile(r"(?:^|\s)(?:assistant)?\s*(analysis|commentary)", re.IGNORECASE)
_TEXT_FORMAT = re.compile(r"(?:^|\s)(?:assistant)?\s*(analysis|commentary|assistantfinal)", re.IGNORECASE)


def text_parse(text: str) -> tuple[list[Event], str]:
    """Parse the fallback form without markers (``analysis…assistantfinal…``):
    ``(events, rest to keep)``."""
    both = _BOTH.match(text)
    if both:
        channel, thought, answer = both.groups()
        events = []
        if thought.strip():
            events.append(Event("reasoning" if channel.lower() == "analysis" else "normal", thought.strip()))
        if answer.strip():
            events.append(Event("normal", answer.strip()))
        return events, ""
    lowered = text.lower()
    if _HEADER_WORD.search(text) and "assistantfin" in lowered and "assistantfinal" not in lowered:
        return [], text
    final = _FINAL.match(text)
    if final:
        return ([Event("normal", final.group(1).strip())] if final.group(1).strip() else []), ""
    opened = _OPEN.match(text)
    if opened:
        channel, body = opened.groups()
        emit, hold = hold_partial(body, ("assistantfinal",))
        kept = text[: opened.start(2)] + hold
        if emit and channel.lower() == "analysis":
            return [Event("reasoning", emit)], (kept if hold else channel)
        if emit:
            return [Event("normal", emit if hold else emit.strip())], (kept if hold else "")
        return [], kept
    emit, hold = hold_partial(text, ("analysis", "commentary", "assistantfinal"))
    return ([Event("normal", emit)] if emit else []), hold


class SglangHarmonyParser:
    """The stateful facade: feed text chunks, get events; ``feed("")`` re-parses what is held.

    The strategy is chosen once, on the first chunk that settles it: markers (``<|channel|>`` or
    ``<|start|>``) pick :func:`canonical_parse`, a header word picks :func:`text_parse`; until
    then everything is held. After a tool call (or a chunk ending in ``<|call|>``), ``normal``
    events spelling ``commentary`` (possibly across chunks) are dropped.
    """

    def __init__(self) -> None:
        self._held = ""
        self._parse = None
        self._after_call = False
        self._partial_word = ""

    def feed(self, chunk: str) -> list[Event]:
        """Add ``chunk`` and return the events it completes."""
        self._held += chunk
        if self._parse is None:
            if "<|channel|>" in self._held or "<|start|>" in self._held:
                self._parse = canonical_parse
            elif _TEXT_FORMAT.search(self._held):
                self._parse = text_parse
            else:
                return []
        ends_in_call = self._held.rstrip().endswith("<|call|>")
        events, self._held = self._parse(self._held)
        kept: list[Event] = []
        for event in events:
            if event.kind == "normal" and (self._after_call or self._partial_word):
                word = self._partial_word + event.content.strip().lower()
                if word == "commentary":
                    self._partial_word, self._after_call = "", False
                    continue
                if "commentary".startswith(word):
                    self._partial_word = word
                    continue
                self._partial_word, self._after_call = "", False
            elif event.kind == "normal":
                self._partial_word = ""
            if event.kind == "tool_call":
                self._after_call, self._partial_word = True, ""
            elif ends_in_call:
                self._after_call = True
            kept.append(event)
        return kept
