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

SGLang re-parses the text it holds with every chunk (``HarmonyParser.parse`` hands its whole
buffer to ``CanonicalStrategy.parse``, which re-tokenizes it; still so in the FSM rewrite at
sgl-project/sglang@0a1a7d5919edc8492b8986856567d0ff71c69eb7, same path), so an open tool call, a block with an unknown
channel or undecided plain text costs it time quadratic in its length. The events depend only on
the text, not on how it is parsed: :class:`CanonicalFeed` and :mod:`.harmony_scan` give the same
ones while looking at each character a bounded number of times (the argument is in their
docstrings; ``tests/profiles/test_sglang_linear.py`` compares them with the re-parse chunk by
chunk). Measured on a streamed chat's plan build (in process, old and new code alternated in one
run, 2 shared cores): a 42,698-token tool call 15.4 s → 0.46 s; a 42,678-token final answer with
tools declared (the tool-call detector's parser held the undecided answer) 294 s → 1.4 s, and
6,412 tokens 4.0 s → 0.13 s; per step of a long analysis 13 µs → 7 µs. The text fallback
(:mod:`.harmony_fallback`) holds little, except everything after ``assistantfin`` not followed by
``al``; there only what each chunk adds is searched (:meth:`SglangHarmonyParser._text`).

Checked against SGLang 0.5.23's own module (loaded from the wheel, no GPU needed) by
``tools/sglang_parser_diff.py``; see :mod:`mockoss.profiles.sglang` for what was compared.
"""

from __future__ import annotations

from mockoss.profiles.sglang.harmony_fallback import FINAL_WORD as _FINAL_WORD
from mockoss.profiles.sglang.harmony_fallback import TEXT_FORMAT as _TEXT_FORMAT
from mockoss.profiles.sglang.harmony_fallback import holds_all, text_parse
from mockoss.profiles.sglang.harmony_scan import GUARDS, MARKERS, Event, Marker, MarkScan, hold_partial, scan_markers
from mockoss.profiles.sglang.harmony_scan import channel_word as _channel_word

__all__ = ["Event", "Marker", "SglangHarmonyParser", "canonical_parse", "hold_partial", "scan_markers", "text_parse"]

_GUARDS = GUARDS


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


def canonical_parse(text: str, marks: list[Marker] | None = None) -> tuple[list[Event], str]:
    """Parse marker-delimited Harmony text: ``(events, rest to keep for the next chunk)``.
    ``marks``: ``scan_markers(text)`` when the caller has it."""
    if marks is None:
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


_BLOCK_OPENERS = ("<|start|>", "<|channel|>")


class CanonicalFeed:
    """``canonical_parse(held + chunk)`` chunk after chunk, ``held`` being the previous call's
    rest, in time linear in the text overall (SGLang re-parses the held text every time; see
    :mod:`.harmony_scan`). Gives exactly what :func:`canonical_parse` gives.

    Why it is exact. A rest that is not ``""`` or a held partial marker (at most 12 characters)
    starts with ``<|start|>`` or ``<|channel|>``: block 0 of the next parse starts at its offset 0,
    and the parse of ``rest + chunk`` returns ``([], everything)`` for as long as block 0 is
    incomplete and is not an open ``analysis`` (``_block`` and ``_open_analysis`` both give
    ``None``). Block 0 waits in one of these states, each settled only by a marker (a text span
    never settles anything, and every marker is a settled span of :class:`MarkScan`, so each
    marker is looked at once):

    * ``message``: no ``<|message|>`` yet (the first ``<|channel|>`` is noted on the way).
    * ``close``: the header names ``commentary`` (or no channel: a tool's answer); it waits for
      ``<|end|>``/``<|call|>`` (a tool's answer also ``<|return|>``).
    * ``dead``: the header's channel word is unknown: no later text completes it.
    * ``analysis``: an open analysis; the rest is its header, and each chunk without
      ``<|end|>``/``<|call|>`` (scanned on its own: the header ends at a settled
      ``<|message|>``) is one ``reasoning`` event with the chunk's text, partial markers
      included, as SGLang streams it.

    When the awaited marker arrives (or the header names ``final``, or a rest starts otherwise),
    the whole text is parsed once by :func:`canonical_parse`; what it settles is dropped from the
    held text, so each character is parsed whole a bounded number of times.
    """

    __slots__ = ("_channel", "_closers", "_header", "_look", "_mode", "_scan")

    def __init__(self) -> None:
        self._mode: str | None = None
        self._scan = MarkScan()
        self._look, self._channel, self._closers, self._header = 0, None, ("END", "CALL"), ""

    def parse(self, text: str) -> tuple[list[Event], str]:
        """``canonical_parse(text)``, where ``text`` is the last rest plus a chunk."""
        mode = self._mode
        if mode == "dead":
            return [], text
        if mode == "analysis":
            body = len(self._header)
            content = text[body:]
            if not any(m.kind in ("END", "CALL") for m in scan_markers(content)):
                return [Event("reasoning", content)], self._header
        elif mode is not None:
            self._scan.extend(text)
            if self._advance(text) == "wait":
                return [], text
        events, rest = canonical_parse(text)
        self._settle(rest)
        return events, rest

    def _settle(self, rest: str) -> None:
        """The state block 0 of ``rest`` waits in (``None``: parse the next text whole)."""
        self._mode = None
        if not rest.startswith(_BLOCK_OPENERS):
            return
        self._scan = MarkScan()
        self._scan.extend(rest)
        self._mode, self._channel, self._closers = "message", None, ("END", "CALL")
        self._look = 1 if rest.startswith("<|start|>") else 0
        outcome = self._advance(rest)
        if outcome == "analysis" and self._scan.marks[self._look].end == len(rest):
            self._mode, self._header = "analysis", rest
        elif outcome != "wait":
            self._mode = None

    def _advance(self, text: str) -> str:
        """Look at the settled markers not seen yet: ``"wait"`` while block 0 stays incomplete
        and not an open analysis, else ``"analysis"`` (``_look`` at its ``<|message|>``) or
        ``"parse"``."""
        marks, i = self._scan.marks, self._look
        if self._mode == "message":
            while i < len(marks) and marks[i].kind != "MESSAGE":
                if marks[i].kind == "CHANNEL" and self._channel is None:
                    self._channel = i
                i += 1
            self._look = i
            if i == len(marks):
                return "wait"
            if self._channel is None:
                self._closers = ("END", "CALL", "RETURN")
            else:
                word = _channel_word(text[marks[self._channel + 1].start : marks[i].start])
                if word is None:
                    self._mode = "dead"
                    return "wait"
                if word != "commentary":
                    return "analysis" if word == "analysis" else "parse"
            self._mode, i = "close", i + 1
        while i < len(marks) and marks[i].kind not in self._closers:
            i += 1
        self._look = i
        return "wait" if i == len(marks) else "parse"


def _ends_in_call(text: str) -> bool:
    """``text.rstrip().endswith("<|call|>")``, without copying a long text."""
    tail = text[-72:].rstrip()
    if len(tail) >= 8 or len(text) <= 72:
        return tail.endswith("<|call|>")
    return text.rstrip().endswith("<|call|>")  # 64 or more trailing whitespace characters


class SglangHarmonyParser:
    """The stateful facade: feed text chunks, get events; ``feed("")`` re-parses what is held.

    The strategy is chosen once, on the first chunk that settles it: markers (``<|channel|>`` or
    ``<|start|>``) pick :func:`canonical_parse`, a header word picks :func:`text_parse`; until
    then everything is held. After a tool call (or a chunk ending in ``<|call|>``), ``normal``
    events spelling ``commentary`` (possibly across chunks) are dropped.

    Each step costs what it adds, not what is held: undecided text is searched from where the
    last search could not have matched, the canonical strategy goes through
    :class:`CanonicalFeed`, and the held text is appended to in place.
    """

    def __init__(self) -> None:
        self._held = ""
        self._parse = None
        self._after_call = False
        self._partial_word = ""
        self._holding = False  # text fallback: held whole (see _text)
        self._canonical = CanonicalFeed()

    def feed(self, chunk: str) -> list[Event]:
        """Add ``chunk`` and return the events it completes."""
        held, self._held = self._held, ""
        before = len(held)  # the last search's (undecided) or the last rest's (text) length
        held += chunk  # in place: nothing else refers to the held text (CPython appends without copying)
        self._held = held
        if self._parse is None:
            # A marker or header word that the held text did not have must end in what was just
            # added, so each search starts that far back: the longest marker, or a header word's
            # longest match without a whitespace run inside (1 + len("assistant") + 14 characters;
            # a match with such a run also starts at the run's last character).
            if held.find("<|channel|>", max(0, before - 10)) >= 0 or held.find("<|start|>", max(0, before - 8)) >= 0:
                self._parse = canonical_parse
            elif _TEXT_FORMAT.search(held, max(0, before - 24)):
                self._parse = text_parse
            else:
                return []
        ends_in_call = _ends_in_call(held)
        del held
        if self._parse is canonical_parse:
            events, self._held = self._canonical.parse(self._held)
        else:  # text_parse, the only other strategy
            events, self._held = self._text(self._held, before)
        return self._filtered(events, ends_in_call)

    def _text(self, text: str, before: int) -> tuple[list[Event], str]:
        """``text_parse(text)``, ``text`` being the last rest (``before`` characters) plus a chunk.

        Once it holds everything for want of ``assistantfinal``
        (:func:`.harmony_fallback.holds_all`), it does so until that word (matched as ``_BOTH``
        matches it, ignoring case) appears; a new one ends in the chunk, so only the chunk and the
        13 characters before it are searched. Exact: the
        other two conditions (a header word, ``assistantfin``) stay true of a longer text, and
        ``_BOTH``'s header is already settled inside the held text (it holds ``assistantfin``, which
        no header can reach across), so ``_BOTH`` can only start to match with a new
        ``assistantfinal``; a lower-cased one is also one ``re.IGNORECASE`` finds.
        """
        if self._holding and _FINAL_WORD.search(text, max(0, before - 13)) is None:
            return [], text
        events, rest = text_parse(text)
        self._holding = not events and rest == text and holds_all(rest)
        return events, rest

    def _filtered(self, events: list[Event], ends_in_call: bool) -> list[Event]:
        """``events`` without the ``commentary`` filler after a call (``ends_in_call``: the held
        text plus the chunk ended in ``<|call|>``)."""
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
