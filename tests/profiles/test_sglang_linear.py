"""The SGLang string parser without re-parsing its held text per chunk (issue 9, "linear").

SGLang's own ``HarmonyParser.parse`` appends each chunk to its buffer and re-tokenizes and
re-parses all of it (sgl-project/sglang@v0.5.23:python/sglang/srt/parser/harmony_parser.py, read
in the 0.5.23 wheel), so an open tool call, an unknown channel, or undecided plain text costs time
quadratic in its length. ``mockoss.profiles.sglang.harmony_scan.MarkScan`` and
``harmony_text.CanonicalFeed`` give the same events without that cost. Here the previous code, a
full re-parse per chunk, is kept as the reference (``_OldParser``, ``_old_scan``,
``_OldToolCallStream``: the functions as they were at c25797f) and compared event for event, held
text included, after every chunk: shipped scenarios, the fault library, and random Harmony-like
texts, split at every token (the detokenizer's steps) and at random points. Structural tests pin
that the work per chunk no longer grows with what is held.
"""

from __future__ import annotations

import random
import re
from itertools import pairwise, product

import pytest
from openai_harmony import Message, Role

from mockoss.harmony import Completion
from mockoss.harmony.faults import FAULTS, FaultError, apply_fault
from mockoss.profiles.sglang import detectors, harmony_scan, harmony_text
from mockoss.profiles.sglang.detectors import ToolCallStream, _extract
from mockoss.profiles.sglang.detokenizer import stream_deltas
from mockoss.profiles.sglang.harmony_text import (
    MARKERS,
    Marker,
    SglangHarmonyParser,
    canonical_parse,
    scan_markers,
    text_parse,
)
from mockoss.scenario.loader import builtin_names, load_scenario

_GUARDS = tuple(MARKERS)


def _old_scan(text: str) -> list[Marker]:
    """``scan_markers`` as it was: one pass over the whole text."""
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


_TEXT_FORMAT = re.compile(r"(?:^|\s)(?:assistant)?\s*(analysis|commentary|assistantfinal)", re.IGNORECASE)


class _OldParser(SglangHarmonyParser):
    """``SglangHarmonyParser.feed`` as it was: the whole held text searched and parsed again on
    every chunk (the filler filter after it is unchanged, and shared)."""

    def feed(self, chunk: str) -> list:
        self._held += chunk
        if self._parse is None:
            if "<|channel|>" in self._held or "<|start|>" in self._held:
                self._parse = lambda text: canonical_parse(text, _old_scan(text))
            elif _TEXT_FORMAT.search(self._held):
                self._parse = text_parse
            else:
                return []
        ends_in_call = self._held.rstrip().endswith("<|call|>")
        events, self._held = self._parse(self._held)
        return self._filtered(events, ends_in_call)


class _OldToolCallStream:
    """``ToolCallStream.feed`` as it was (the whole buffer searched every step)."""

    def __init__(self, tools: frozenset[str], passthrough: bool) -> None:
        self.tools, self.passthrough = tools, passthrough
        self.parser, self.buffer, self.next_index = _OldParser(), "", -1

    def feed(self, text: str):
        self.buffer += text
        events = self.parser.feed(text)
        if self.passthrough and not events and not any(m in self.buffer for m in detectors._MARKERS):
            out, self.buffer = self.buffer, ""
            return out, []
        if "<|channel|>commentary to=" not in self.buffer:
            normal = "".join(e.content for e in events if e.kind == "normal")
            if normal or events:
                self.buffer = ""
            return normal, []
        if not events:
            return "", []
        calls, normal = [], ""
        for event in events:
            if event.kind == "tool_call":
                call = _extract(event.raw or event.content, self.tools, max(self.next_index, 0), False)
                if call is not None:
                    self.next_index = max(self.next_index, 0) + 1
                    calls.append(call)
            elif event.kind == "normal":
                normal += event.content
        self.buffer = ""
        return normal, calls


TOOLS = frozenset({"get_weather", "bash", "write_file", "get"})


def _remaining(events) -> str:
    return "".join(e.content if e.kind == "normal" else (e.raw or e.content) for e in events if e.kind != "reasoning")


class Tally:
    chunks = 0


def check(pieces: list[str]) -> None:
    """After every piece (and a final ``feed("")``): the same events and held text from the new
    parser as from the full re-parse; the same tool-call stream output fed directly and fed the
    reasoning detector's remaining text (as the chat route chains them), with plain-text
    passthrough on and off."""
    new, old = SglangHarmonyParser(), _OldParser()
    streams = [(ToolCallStream(TOOLS, plain_text_passthrough=p), _OldToolCallStream(TOOLS, p)) for p in (True, False)]
    chained = [(ToolCallStream(TOOLS, plain_text_passthrough=p), _OldToolCallStream(TOOLS, p)) for p in (True, False)]
    for piece in [*pieces, ""]:
        got, want = new.feed(piece), old.feed(piece)
        assert got == want, (pieces, piece)
        assert new._held == old._held
        for stream, reference in streams:
            assert stream.feed(piece) == reference.feed(piece), (pieces, piece)
        rest = _remaining(got)
        for stream, reference in chained:
            assert stream.feed(rest) == reference.feed(rest), (pieces, piece)
    Tally.chunks += len(pieces)


def _message(channel: str, content: str, recipient: str | None = None, ctype: str | None = None) -> Message:
    message = Message.from_role_and_content(Role.ASSISTANT, content).with_channel(channel)
    if recipient:
        message = message.with_recipient(recipient)
    return message.with_content_type(ctype) if ctype else message


BASES = (
    [_message("analysis", "Need the weather."), _message("commentary", '{"city":"Paris"}', "functions.get_weather", "<|constrain|>json")],
    [_message("analysis", "Plan: <b>bold</b> a<|e"), _message("final", "It is sunny <|en not really. <|end")],
    [_message("commentary", "Calling now."), _message("commentary", '{"command":["ls"]}', "functions.bash", "<|constrain|>json")],
)


def _library() -> list[str]:
    texts = []
    for name in builtin_names():
        for step in load_scenario(name).steps:
            if step.completion is not None:
                texts.append(step.completion.text)
    for base, (kind, fault) in product(BASES, FAULTS.items()):
        for params in [{}] + [{p.name: c} for p in fault.params for c in p.choices]:
            try:
                texts.append(apply_fault(base, {"kind": kind, **params}))
            except FaultError:
                continue
    return texts


def _token_steps(text: str, skip_special: bool) -> list[str]:
    """The detokenizer's steps over the text's tokens, the stop token kept (as after a call)."""
    tokens = Completion.from_text(text).emit(None).tokens
    return stream_deltas(tokens, skip_special=skip_special, trim_last=False)


def _random_split(text: str, rng: random.Random) -> list[str]:
    if len(text) < 2:
        return [text]
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(0, min(len(text) - 1, max(1, len(text) // 3)))))
    return [text[a:b] for a, b in pairwise([0, *cuts, len(text)])]


PIECES = (
    "<|start|>", "assistant", "<|channel|>", "analysis", "commentary", "final", "foo", " to=functions.get_weather",
    " to=functions.bash", " to=browser.search", "<|constrain|>", "json", "<|message|>", '{"a": 1}', "Hello", " world",
    "<|end|>", "<|call|>", "<|return|>", "assistantfinal", "assistantfin", "<|weird|>", "<|", "|>", "<", "|", " ",
    "\n", "commentary ", "x", " " * 70, "<|en", "<|cha", "nnel|>", "ASSISTANTFINAL", "a\u017f\u017fi\u017ftantfinal", "assistantfinish",
    "Analysis ", "\u212a\u03a3\u0130", "al",
)


def test_every_chunk_gives_the_full_reparse_s_events():
    rng = random.Random(11)
    Tally.chunks = 0
    library = _library()
    assert len(library) > 60
    for text in library:
        check(_token_steps(text, False))
        check(_random_split(text, rng))
    for text in library[::4]:
        check(_token_steps(text, True))  # skip_special_tokens: the text fallback and undecided text
        check(list(text))
    for _ in range(800):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 16)))
        check(_random_split(text, rng))
        check(list(text) if rng.random() < 0.15 else [text])
    assert Tally.chunks > 25_000


def test_scan_markers_resumed_is_the_one_pass_scan():
    """``MarkScan`` extended piece by piece gives, after each piece, the one-pass scan's spans."""
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        scan, so_far = harmony_scan.MarkScan(), ""
        for piece in _random_split(text, rng) if text else [""]:
            so_far += piece
            assert scan.marks + scan.extend(so_far) == _old_scan(so_far), so_far
        assert scan_markers(text) == _old_scan(text)


WORDS = " ".join(f"w{i % 13} x" for i in range(1500))
LONG_SHAPES = {
    "tool_call": f'<|channel|>analysis<|message|>Go.<|end|><|start|>assistant<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>{{"content":"{WORDS}"}}<|call|>',
    "unknown_channel": f"<|channel|>analysis<|message|>Go.<|end|><|start|>assistant<|channel|>thoughts<|message|>{WORDS}<|end|><|start|>assistant<|channel|>final<|message|>{WORDS}",
    "no_message_yet": f"<|channel|>analysis {WORDS}<|message|>x<|end|>",
    "tool_answer": f"<|start|>functions.get to=assistant<|message|>{WORDS}<|end|>",
}


def test_text_held_for_want_of_assistantfinal_is_not_parsed_again_per_chunk(monkeypatch: pytest.MonkeyPatch):
    """The text fallback holds everything after ``assistantfin`` not followed by ``al`` (SGLang's
    rule): the chunks after it are searched, not parsed whole, until ``assistantfinal`` comes."""
    sizes: list[int] = []
    original = harmony_text.text_parse

    def counted(text: str):
        sizes.append(len(text))
        return original(text)

    monkeypatch.setattr(harmony_text, "text_parse", counted)
    pieces = ["analysis", " Think", " assistantfin", "ish"] + [f" w{i % 9}" for i in range(3000)] + [" assistant", "final", " Done."]
    parser, reference, events, expected = SglangHarmonyParser(), _OldParser(), [], []
    for piece in pieces:
        events += parser.feed(piece)
        expected += reference.feed(piece)
    assert events == expected
    assert [e.kind for e in events] == ["reasoning", "reasoning", "normal"]
    assert sum(sizes) <= 3 * len("".join(pieces)) + 200, (len(sizes), sum(sizes))


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sizes: list[int] = []
    original = harmony_text.canonical_parse

    def counted(text: str, marks=None):
        sizes.append(len(text))
        return original(text, marks)

    monkeypatch.setattr(harmony_text, "canonical_parse", counted)
    return sizes


@pytest.mark.parametrize("shape", sorted(LONG_SHAPES))
def test_a_held_block_is_not_parsed_again_per_chunk(monkeypatch: pytest.MonkeyPatch, shape: str):
    """Token by token through an open block: the full parse runs a bounded number of times, on
    text whose total length is a small multiple of the answer's (the re-parse per chunk: ~n²/2)."""
    text = LONG_SHAPES[shape]
    steps = _token_steps(text, False)
    assert len(steps) > 3000
    sizes = _counting(monkeypatch)
    parser = SglangHarmonyParser()
    for step in steps:
        parser.feed(step)
    parser.feed("")
    assert sum(sizes) <= 3 * len(text), (len(sizes), sum(sizes))


def test_the_scan_re_walks_only_what_follows_the_last_marker(monkeypatch: pytest.MonkeyPatch):
    """Spans made by the scanner over a long held tool call, token by token: a few per chunk,
    not all of the block's again."""
    made = [0]
    original = harmony_scan.Marker

    def counted(*args):
        made[0] += 1
        return original(*args)

    monkeypatch.setattr(harmony_scan, "Marker", counted)
    steps = _token_steps(LONG_SHAPES["tool_call"], False)
    parser = SglangHarmonyParser()
    for step in steps:
        parser.feed(step)
    assert made[0] <= 4 * len(steps)


class _CountingHits(harmony_scan._Hits):
    __slots__ = ("looked",)

    def __init__(self, needle: str) -> None:
        super().__init__(needle)
        self.looked = 0

    def find(self, pos: int) -> int:
        self.looked += 1
        return super().find(pos)


def test_unknown_opens_without_a_close_are_walked_once():
    """An open tool call whose arguments hold many ``<|`` with no ``|>`` after them (F#/Elm's
    ``<|``): each chunk walks only the ``<|`` it added, not every one again (issue 9,
    eleventh-session review of the incremental parsers, finding 1: 2,003 chunks with 500 such
    ``<|`` took 1.15 s). The spans stay the one-pass scan's."""
    head = "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>"
    pieces = [head] + [f"x <| y{i} " for i in range(400)] + ["|> z", " <|end|>", " tail"]
    scan, text = harmony_scan.MarkScan(), ""
    scan._open = opens = _CountingHits("<|")
    per_chunk = []
    for piece in pieces:
        text += piece
        before = opens.looked
        tail = scan.extend(text)
        per_chunk.append(opens.looked - before)
        if len(text) < 2000 or piece in ("|> z", " <|end|>", " tail"):
            assert scan.marks + tail == _old_scan(text)
    assert max(per_chunk[:-3]) <= 4, per_chunk[:20]
    assert sum(per_chunk) <= 6 * len(pieces), sum(per_chunk)


class _CountingPattern:
    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.searched = pattern, 0

    def search(self, text: str, pos: int = 0):
        self.searched += len(text) - pos
        return self.pattern.search(text, pos)


def test_undecided_plain_text_is_searched_once(monkeypatch: pytest.MonkeyPatch):
    """The tool-call detector's inner parser holds plain text (a final answer passed on by the
    reasoning detector) while no marker or header word decides its strategy; each step searches
    only what it added, and the buffer checks likewise."""
    counting = _CountingPattern(harmony_text._TEXT_FORMAT)
    monkeypatch.setattr(harmony_text, "_TEXT_FORMAT", counting)
    stream = ToolCallStream(TOOLS)
    pieces = [f"word{i % 7} " for i in range(4000)]
    out = "".join(stream.feed(piece)[0] for piece in pieces)
    assert out == "".join(pieces)
    assert counting.searched <= 40 * len(pieces)


@pytest.mark.parametrize("shape", ["plain", "open call"])
def test_the_buffer_checks_search_only_what_each_step_added(monkeypatch: pytest.MonkeyPatch, shape: str):
    """The detector's own buffer grows while nothing is passed on (plain text without passthrough,
    as before 0.5.3; an open call): its marker and call-header checks read only what each step
    added, with the overlap a straddling marker needs (issue 9, eleventh-session review of the
    incremental parsers, finding 3: the test above counts only the inner parser, whose buffer
    passthrough empties every step; searching the buffer whole passed it)."""
    markers = _CountingPattern(detectors._ANY_MARKER)
    header = _CountingPattern(detectors._CALL_HEADER_AT)
    monkeypatch.setattr(detectors, "_ANY_MARKER", markers)
    monkeypatch.setattr(detectors, "_CALL_HEADER_AT", header)
    stream = ToolCallStream(TOOLS, plain_text_passthrough=shape != "plain")
    pieces = [f"word{i % 7} " for i in range(4000)]
    if shape == "open call":
        pieces = ["<|channel|>commentary to=functions.bash <|constrain|>json<|message|>{\"cmd\": \""] + pieces
    for piece in pieces:
        assert stream.feed(piece) == ("", [])
    assert len(stream._buffer) > 20_000
    assert markers.searched + header.searched <= 60 * len(pieces), (markers.searched, header.searched)


def test_ends_in_call_is_rstrip_endswith():
    """The call check reads a bounded tail, and the whole text only behind 64 or more trailing
    whitespace characters; it must agree with ``text.rstrip().endswith("<|call|>")``."""
    rng = random.Random(3)
    parts = ("<|call|>", "<|call|", "x", " ", "\n", "\u3000", " " * 40, "<|end|>", "call|>")
    for _ in range(5000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 9)))
        assert harmony_text._ends_in_call(text) == text.rstrip().endswith("<|call|>"), repr(text)
