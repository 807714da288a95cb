"""The streamed chat's per-token partial parse (``mockoss.profiles.llamacpp.incremental``) against
llama-server's own method, a full re-parse of the whole text after every token
(``common_chat_peg_parse`` per ``update_chat_msg``; ggml-org/llama.cpp
``tools/server/server-task.cpp@00efb3e1``): every token's ChatMsg, the final parse and the stream
plan must be equal, for every text, while the shortcut must actually carry long answers."""

from __future__ import annotations

import json
import random
from itertools import pairwise, product
from typing import ClassVar

import pytest
from openai_harmony import Message, Role

from mockoss.harmony import Completion
from mockoss.harmony.faults import FAULTS, FaultError, apply_fault
from mockoss.profiles.llamacpp import held, incremental
from mockoss.profiles.llamacpp import plan as plan_module
from mockoss.profiles.llamacpp.gptoss import GENERATION_PROMPT, ChatMsg, build_grammar
from mockoss.profiles.llamacpp.incremental import Extend, materialize, partial_parses
from mockoss.profiles.llamacpp.options import continuation
from mockoss.profiles.llamacpp.pieces import token_pieces
from mockoss.scenario.loader import builtin_names, load_scenario

TOOLSETS = ((), ("get_weather",), ("get", "get_weather", "bash"), ("write_file",))
#: (tools, tool_choice, extract_reasoning, response_format)
SHAPES = tuple(
    (tools, choice, extract, schema)
    for tools, choice, extract, schema in product(TOOLSETS, ("auto", "required", "none"), (True, False), (False, True))
    if not (schema and choice != "auto")
)
PREFILLS = ("", continuation({"messages": [{"role": "assistant", "content": "So far"}]}),
            continuation({"messages": [{"role": "assistant", "reasoning_content": "Thinking"}]}))


def _old(grammar, prefill: str, pieces: list[str]) -> list[ChatMsg]:
    text, out = prefill, []
    for piece in pieces:
        text += piece
        out.append(grammar.parse(text, partial=True))
    return out


class Tally:
    texts = 0
    tokens = 0
    extended = 0


def check(shape, prefill: str, pieces: list[str]) -> None:
    """Every per-token ChatMsg and the stream plan equal to the full re-parse's."""
    grammar = build_grammar(*shape)
    results = list(partial_parses(grammar, prefill, pieces))
    assert not results or not isinstance(results[0], Extend)
    expected = _old(grammar, prefill, pieces)
    got = list(materialize(results))
    assert got == expected, (shape, prefill, pieces)
    Tally.texts += 1
    Tally.tokens += len(pieces)
    Tally.extended += sum(1 for r in results if isinstance(r, Extend) and r.field)
    numbered = list(enumerate(pieces, 1))
    parse = lambda text, partial: grammar.parse(prefill + text, partial=partial)
    old = plan_module._replay(parse, numbered)
    new = plan_module._replay(parse, numbered, lambda p: partial_parses(grammar, prefill, p))
    assert new == old  # steps, stream error, final diffs (the final parse), stream message


def _message(channel: str, content: str, recipient: str | None = None, ctype: str | None = None) -> Message:
    message = Message.from_role_and_content(Role.ASSISTANT, content).with_channel(channel)
    if recipient:
        message = message.with_recipient(recipient)
    if ctype:
        message = message.with_content_type(ctype)
    return message


BASES = (
    [_message("analysis", "Need the weather."), _message("commentary", '{"city":"Paris"}', "functions.get_weather", "<|constrain|>json")],
    [_message("analysis", "Plan: <b>bold</b> a<|e"), _message("final", "It is sunny <|en not really. <|end")],
    [_message("analysis", "List files."), _message("commentary", '{"command":["ls","-R"],"q":"a\\"b\\u00e9"}', "functions.bash", "json")],
    [_message("commentary", "Calling now."), _message("commentary", "{}", "functions.get", "<|constrain|>json")],
)


def _completion_texts() -> list[str]:
    texts: list[str] = []
    for name in builtin_names():
        scenario = load_scenario(name)
        for step in scenario.steps:
            if step.completion is not None:
                texts.append(step.completion.text)
    for base, (kind, fault) in product(BASES, FAULTS.items()):
        choices = [{}] + [{p.name: c} for p in fault.params for c in p.choices]
        for params in choices:
            try:
                texts.append(apply_fault(base, {"kind": kind, **params}))
            except FaultError:
                continue
    for base in BASES:
        texts.append(Completion.from_messages(base).text)
    return texts


def _token_pieces(text: str) -> list[str]:
    return [piece for _, piece in token_pieces(Completion.from_text(text).tokens)]


def _random_split(text: str, rng: random.Random) -> list[str]:
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(0, max(1, len(text) // 3))))) if len(text) > 1 else []
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in pairwise(bounds)]
    if pieces and rng.random() < 0.2:
        pieces.insert(rng.randrange(len(pieces)), "")  # a token that sends nothing
    return pieces


FRAGMENTS = (
    "<|start|>", "assistant", "<|channel|>", "analysis", "final", "commentary", " to=functions.get_weather",
    " to=functions.get", " to=functions.bash", " to=assistant", " to=", "<|constrain|>", "json", " ", "\n",
    "<|message|>", "<|end|>", "<|end", "<|", "<", "|>", "end|>", "hello world", "a<b", '{"city":', '"Paris"', "}", "{",
    "[1, 2.5e-3, true, null]", '"\\u00', 'e9"', "\\", '"', ",", ":", "-0", "x" * 40,
)
HARMONY_TAILS = (
    "<|channel|>analysis<|message|>think <|end|>",
    "<|start|>assistant<|channel|>final<|message|>the answer is < 5 and <|en",
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Pa',
    "<|start|>assistant to=functions.bash<|channel|>commentary json<|message|>[\"ls\"]",
    "<|start|>assistant<|channel|>commentary<|message|>preamble<|end|>",
    '<|start|>assistant<|channel|>final <|constrain|>json<|message|>{"ok": true, "list": [1, "two"]}',
    '<|start|>assistant<|channel|>commentary to=functions.write_file json<|message|>{"content":"one  \n two\\n \\"q\\" \\u00e9   x  ',
    '<|start|>assistant to=functions.get<|channel|>commentary <|constrain|>json<|message|>{"a": "  <|end|> \\', 
)


def _random_texts(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        mode = rng.random()
        if mode < 0.4:
            out.append("".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 14))))
        else:
            parts = [rng.choice(HARMONY_TAILS) for _ in range(rng.randint(1, 4))]
            text = "".join(parts)
            text = text.removeprefix("<|start|>assistant")
            if rng.random() < 0.5:
                text = text[: rng.randint(0, len(text))]
            out.append(text)
    return out


def test_every_partial_parse_equals_the_full_reparse():
    """Shipped scenarios, the fault library on four bases, and 1,500 random texts, each under
    every request shape (tools declared and not, tool_choice, reasoning_format, response_format),
    split into real tokens and into random pieces (splitting special tokens too)."""
    rng = random.Random(9)
    Tally.texts = Tally.tokens = Tally.extended = 0
    library = _completion_texts()
    assert len(library) > 150
    for text in library:
        pieces = _token_pieces(text)
        for shape in SHAPES:
            check(shape, "", pieces)
        check(rng.choice(SHAPES), rng.choice(PREFILLS), _random_split(text, rng))
    for text in _random_texts(rng, 1500):
        shape = rng.choice(SHAPES)
        check(shape, rng.choice(PREFILLS), _random_split(text, rng))
        check(shape, "", _token_pieces(text) if text else [])
    assert Tally.texts > 8_000
    assert Tally.extended > Tally.tokens // 10  # the shortcut carries a real share of the tokens


@pytest.mark.parametrize("reasoning", [True, False])
def test_a_long_answer_is_extended_not_reparsed(reasoning):
    """A long final answer after a long analysis: a full parse near each message boundary and a
    probe per held suffix (held.py) per certificate; every other token, those that leave a prefix
    of ``<|end|>`` at the end (llama-server holds it back) included, is an extension. (c25797f
    parsed once per held piece; the bound of ``held + 20`` parses, 1,220 here, let that come back
    unseen: issue 9, eleventh-session review of the incremental parsers, finding 4.)"""
    words = " ".join(f"w{i} <b> a<c" for i in range(600))
    text = f"<|channel|>analysis<|message|>Think {words}<|end|><|start|>assistant<|channel|>final<|message|>{words}"
    pieces = _token_pieces(text)
    grammar = build_grammar((), "auto", reasoning)
    parse = incremental._Resumed(grammar, GENERATION_PROMPT)
    results = list(partial_parses(grammar, "", pieces, parse))
    so_far = ""
    held = 0
    for piece in pieces:
        so_far += piece
        held += any("<|end|>".startswith(so_far[-k:]) for k in range(1, 7))
    assert len(pieces) > 3000
    assert 0 < held < len(pieces) // 2
    assert parse.parses <= 20, (parse.parses, held)
    assert list(materialize(results)) == _old(grammar, "", pieces)


class _Recorded(incremental.Open):
    __slots__ = ()
    made: ClassVar[list] = []

    def __init__(self, *args) -> None:
        super().__init__(*args)
        _Recorded.made.append(self)


def test_a_certificate_keeps_nothing_per_piece(monkeypatch: pytest.MonkeyPatch):
    """A certificate's state stays bounded while an open answer grows token by token: no list of
    the pieces since its parse (issue 9, eleventh-session review of the incremental parsers,
    finding 2: c25797f appended every piece to one, read only by a fallback that the probe never
    takes for these grammars)."""
    from mockoss.profiles.llamacpp import certificate as certificate_module

    monkeypatch.setattr(certificate_module, "Open", _Recorded)
    monkeypatch.setattr(_Recorded, "made", [])
    words = " ".join(f"w{i} <b> a<c" for i in range(300))
    pieces = _token_pieces(f"<|channel|>final<|message|>{words}")
    grammar = build_grammar((), "auto", True)
    results = list(partial_parses(grammar, "", pieces))
    assert list(materialize(results)) == _old(grammar, "", pieces)
    assert len(pieces) > 1000 and _Recorded.made
    for made in _Recorded.made:
        sizes = {slot: len(value) for slot in dir(made) if not slot.startswith("_")
                 if isinstance(value := getattr(made, slot), (list, str, dict))}
        assert max(sizes.values()) <= 16, sizes


@pytest.mark.parametrize("reasoning", [True, False])
def test_a_piece_that_closes_the_run_is_parsed_in_full(reasoning):
    """A piece that completes ``<|end|>`` gets a parse; one that only leaves a prefix of it at the
    end (held back) is an extension once the probe (held.py) has shown how such texts parse."""
    grammar = build_grammar(("get_weather",), "auto", reasoning)
    head = ["<|channel|>", "analysis", "<|message|>", "Think", " more"]
    for tail in (["<|end|>"], ["<|en"], ["<", "|end|>"], ["a<|", "end|>"], ["<|e", "x"], ["<", "<", "|e", "x", "<|end|>"]):
        parse = incremental._Resumed(grammar, GENERATION_PROMPT)
        results, parses = [], []
        for result in partial_parses(grammar, "", head + tail, parse):
            results.append(result)
            parses.append(parse.parses)
        closes = tail[-1].endswith("end|>")
        assert parses[-1] > parses[-2] or not closes, tail
        text, suffixes = "".join(head), set()
        for piece in tail[: -1 if closes else None]:
            text += piece
            suffixes.add(held.held_suffix(text[-6:], "<|end|>"))
        # the pieces before: one probe per held suffix (held.py), no parse
        assert parses[-2 if closes else -1] - parses[len(head) - 1] == len(suffixes - {""}), tail
        assert list(materialize(results)) == _old(grammar, "", head + tail)


@pytest.mark.parametrize("choice", ["auto", "required"])
def test_a_long_string_argument_is_extended(choice):
    """A tool call writing a long string (escapes, quotes, runs of spaces that the mapper strips
    until a later character follows): equal to the full re-parse, and once the string is open
    nearly every token is an extension of the call's arguments."""
    grammar = build_grammar(("write_file",), choice, True)
    body = "".join(f'line {i}  \n\t"quoted" \\ caf\u00e9   ' for i in range(300))
    args = json.dumps({"path": "/x", "content": body, "mode": "w"})
    text = f"<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>{args}"
    pieces = _token_pieces(text)
    results = list(partial_parses(grammar, "", pieces))
    assert list(materialize(results)) == _old(grammar, "", pieces)
    numbered = list(enumerate(pieces, 1))
    parse = lambda text, partial: grammar.parse(text, partial=partial)
    assert plan_module._replay(parse, numbered, lambda p: partial_parses(grammar, "", p)) == plan_module._replay(parse, numbered)
    full = [r for r in results if not isinstance(r, Extend)]
    grew = [r for r in results if isinstance(r, Extend) and r.field == "tool"]
    assert len(pieces) > 2000
    assert len(full) < len(pieces) // 10
    assert len(grew) > len(pieces) // 2


def _short_messages(count: int, rng: random.Random | None = None) -> str:
    """``count`` short Harmony messages: analysis and preambles, some with ``<`` and prefixes of
    ``<|end|>`` in their text (a random mix with ``rng``, else a fixed cycle)."""
    kinds = ("<|channel|>analysis<|message|>Step {i}: a <b> c<|e d.", "<|channel|>commentary<|message|>Calling {i} < now.",
             "<|channel|>analysis<|message|>  ", "<|channel|>commentary to=assistant<|channel|>analysis<|message|>x{i}<")
    parts = [(rng.choice(kinds) if rng else kinds[i % 2]).format(i=i) + "<|end|><|start|>assistant" for i in range(count)]
    return "".join(parts)


def _arguments(count: int, rng: random.Random | None = None) -> str:
    """Tool-call arguments with ``count`` small members: numbers, short strings, escapes, nesting."""
    items = []
    for i in range(count):
        value = rng.choice(('"a\\"b"', "[1.5e3, true, null]", '{"k": -0}', "42", '"\\u00e9"')) if rng else str(i)
        items.append(f'{{"id": {i}, "name": "n{i}", "v": {value}}}')
    return '{"items": [' + ", ".join(items) + '], "q": "x < y"}'


TAILS = (
    "<|channel|>final<|message|>The answer: if (a < b) {{ c <<= 2; }} <|e",
    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{args}",
    " to=functions.bash<|channel|>commentary json<|message|>{args}",
    "<|channel|>final <|constrain|>json<|message|>{args}",
)


def test_many_messages_equal_the_full_reparse():
    """Completions of 30-60 short messages then a final answer, a tool call with many small
    argument members, or a JSON answer, cut anywhere, in real tokens and random pieces: every
    per-token ChatMsg and the stream plan equal to the full re-parse's (resumed parses,
    remembered JSON values and repetitions, held-back suffixes)."""
    rng = random.Random(11)
    for round_ in range(12):
        args = _arguments(rng.randint(3, 25), rng)
        text = _short_messages(rng.randint(30, 60), rng) + rng.choice(TAILS).format(args=args)
        if round_ % 3 == 2:
            text = text[: rng.randint(len(text) // 2, len(text))]
        shape = rng.choice(SHAPES)
        check(shape, rng.choice(PREFILLS), _token_pieces(text))
        check(shape, "", _random_split(text, rng))


def _peg_calls(grammar, pieces: list[str]) -> int:
    """Calls into the PEG engine's parsers while the per-token partial parses run."""
    import sys

    from mockoss.profiles.llamacpp import peg

    calls = 0

    def count(frame, event, _arg):
        nonlocal calls
        if event == "call" and frame.f_code.co_filename == peg.__file__:
            calls += 1

    sys.setprofile(count)
    try:
        for _ in partial_parses(grammar, "", pieces):
            pass
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize(
    ("shape", "make"),
    [
        pytest.param(((), "auto", True), lambda n: _short_messages(n) + "<|channel|>final<|message|>Done.", id="messages"),
        pytest.param((("bash",), "auto", False), lambda n: _short_messages(n) + "<|channel|>final<|message|>ok", id="messages-no-reasoning"),
        pytest.param(
            (("get_weather",), "auto", True),
            lambda n: "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + _arguments(n // 5),
            id="tool-arguments",
        ),
    ],
)
def test_work_per_token_does_not_grow_with_the_completion(shape, make):
    """Parser work per token is flat: a completion four times as long (500 vs 125 messages, 100
    vs 25 argument members) costs at most 1.5x the parser calls per token. A full re-parse per
    token near message boundaries or inside JSON arguments (c25797f) grows linearly instead."""
    grammar = build_grammar(*shape)
    per_token = []
    for n in (125, 500):
        pieces = _token_pieces(make(n))
        per_token.append(_peg_calls(grammar, pieces) / len(pieces))
    assert per_token[1] <= 1.5 * per_token[0], per_token


@pytest.mark.parametrize("reasoning", [True, False])
def test_held_back_prefixes_need_no_parse(reasoning):
    """A code-like answer with a ``<`` (held back by ``until`` as a possible start of ``<|end|>``)
    every few tokens, after a few messages: a handful of parses (probes of held.py included)
    however many pieces are held back; c25797f parsed the whole text once per such piece."""
    import dataclasses

    grammar = build_grammar((), "auto", reasoning)
    parses = []
    counted = dataclasses.replace(grammar, root=lambda text, pos: parses.append(len(text) - pos) or grammar.root(text, pos))
    body = "if (a < b && c<d) x <<= 2; // <|b <|en\n" * 150
    pieces = _token_pieces(_short_messages(3) + "<|channel|>final<|message|>" + body)
    results = list(partial_parses(counted, "", pieces))
    so_far, held = "", 0
    for piece in pieces:
        so_far += piece
        held += any("<|end|>".startswith(so_far[-k:]) for k in range(1, 7))
    assert held > 400
    assert len(parses) < 60
    assert list(materialize(results)) == _old(grammar, "", pieces)


@pytest.mark.parametrize("reasoning", [True, False])
def test_parses_after_completed_messages_do_not_rebuild_the_message(reasoning):
    """250 short messages then a tool call: each parse's message reaches the stream as an
    extension of the previous one (the text since its completed messages compared, not the
    answer), so whole messages, which copy the answer, are built a handful of times (the empty
    ones before any text, the first text, a call appearing or renamed while its name is written);
    c25797f built one per parse (3,771 for 500 messages)."""
    grammar = build_grammar(("get_weather",), "auto", reasoning)
    text = _short_messages(250) + '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"a": [1, 2]}'
    pieces = _token_pieces(text)
    parse = incremental._Resumed(grammar, GENERATION_PROMPT)
    results = list(partial_parses(grammar, "", pieces, parse))
    assert parse.parses > 1000
    assert sum(isinstance(result, ChatMsg) for result in results) <= 8
    assert list(materialize(results)) == _old(grammar, "", pieces)
