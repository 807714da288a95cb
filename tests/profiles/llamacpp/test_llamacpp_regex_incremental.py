"""The regex parser's per-token partial parses (``mockoss.profiles.llamacpp.regex_incremental``)
against llama-server's own method, a full re-parse of the whole text after every token
(``common_chat_parse_gpt_oss`` of ggml-org/llama.cpp ``common/chat.cpp``, ggml-org/llama.cpp#15181,
run per token by ``update_chat_msg``): the old implementation, kept verbatim as
``regex_reference.py``, is the oracle. Every token's ChatMsg, the final parse and the stream plan
must be equal, for every text, while the work per token must stay flat as the answer grows."""

from __future__ import annotations

import json
import random
import sys
from itertools import product

import pytest
import regex_reference
from test_llamacpp_incremental import _completion_texts, _random_split, _token_pieces

from mockoss.harmony import Completion
from mockoss.profiles.llamacpp import LlamacppProfile, peg, regex_incremental, regex_parser
from mockoss.profiles.llamacpp import plan as plan_module
from mockoss.profiles.llamacpp.gptoss import ChatMsg
from mockoss.profiles.llamacpp.incremental import Extend, materialize
from mockoss.profiles.llamacpp.regex_incremental import regex_partials
from mockoss.profiles.llamacpp.regex_parser import parse_regex

FLAGS = tuple(product((True, False), (True, False)))  # (extract_reasoning, tool_calls)


class Tally:
    texts = 0
    tokens = 0
    extended = 0


def check(extract: bool, calls: bool, pieces: list[str]) -> None:
    """Every per-token ChatMsg, the final parse and the stream plan equal to the reference's."""
    stream = regex_incremental._Stream(extract, calls)
    results = list(regex_partials(pieces, extract_reasoning=extract, tool_calls=calls, stream=stream))
    got = list(materialize(results))
    text, expected = "", []
    for piece in pieces:
        text += piece
        expected.append(regex_reference.parse_regex(text, extract_reasoning=extract, tool_calls=calls, partial=True))
    assert got == expected, (extract, calls, pieces)
    for before, result in zip([ChatMsg(), *got], results, strict=False):
        assert not isinstance(result, Extend) or not before.empty, (pieces, result)  # plan._replay's rule
    for partial in (True, False):
        assert parse_regex(
            text, extract_reasoning=extract, tool_calls=calls, partial=partial
        ) == regex_reference.parse_regex(text, extract_reasoning=extract, tool_calls=calls, partial=partial)
    numbered = list(enumerate(pieces, 1))
    old_parse = lambda t, p: regex_reference.parse_regex(t, extract_reasoning=extract, tool_calls=calls, partial=p)
    new_parse = lambda t, p: parse_regex(t, extract_reasoning=extract, tool_calls=calls, partial=p)
    new = plan_module._replay(
        new_parse, numbered, lambda p: regex_partials(p, extract_reasoning=extract, tool_calls=calls)
    )
    assert new == plan_module._replay(old_parse, numbered)  # steps, stream error, final diffs, stream message
    Tally.texts += 1
    Tally.tokens += len(pieces)
    Tally.extended += sum(1 for r in results if isinstance(r, Extend))


FRAGMENTS = (
    "<|start|>assistant",
    "<|start|>",
    "assistant",
    "<|channel|>",
    "analysis",
    "final",
    "commentary",
    "foo",
    " to=functions.get_weather",
    " to=functions.get",
    " to=assistant",
    " to=",
    "<|constrain|>",
    "json",
    " ",
    "\n",
    "\t",
    "\r\n",
    "<|message|>",
    "<|end|>",
    "<|end",
    "<|",
    "<",
    "|>",
    "end|>",
    "<|mess",
    "age|>",
    "hello world",
    "a<b",
    "caf\u00e9 \u65e5\u672c\u8a9e \U0001f600",
    '{"city":',
    '"Paris"',
    "}",
    "{",
    "[1, 2.5e-3, true, null]",
    '"\\u00',
    'e9"',
    "\\",
    '"',
    ",",
    ":",
    "-0",
    "12",
    "x" * 40,
)
MESSAGES = (
    "<|channel|>analysis<|message|>Think about {i}: a < b, caf\u00e9 \U0001f600.  <|end|>",
    "<|channel|>analysis<|message|>  \n <|end|>",
    "<|channel|>commentary<|message|>Calling {i} <|en now.<|end|>",
    '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{{"city":"P\\u00e9ris {i}","n":[{i}, 2.5]}}<|end|>',
    ' to=functions.get<|channel|>commentary json<|message|>  {{"q": "a\\"b {i}"}}',
    "<|channel|>commentary to=functions.bash<|message|>not json {i}<|end|>",
    "<|channel|>final<|message|>Part {i} \u65e5\u672c\u8a9e<|end|>",
    "<|channel|>foo<|message|>unknown channel {i}<|end|>",
    " to=assistant<|channel|>analysis<|message|>x{i}<|end|>",
    '<|channel|>final <|constrain|>json<|message|>{{"ok": {i}}}<|end|>',
    "junk {i} without a header",
)
TAILS = (
    "<|channel|>final<|message|>The answer: if (a < b) {{ c <<= 2; }} <|e",
    "<|channel|>analysis<|message|>  still thinking {i} \t",
    '<|channel|>commentary to=functions.write_file json<|message|>{{"content": "line \\"{i}\\"\\n caf\\u00e9',
    '<|channel|>commentary to=functions.get_weather<|message|>{{"n": 1',
    "<|channel|>anal",
    "",
)


def _messages(count: int, rng: random.Random) -> str:
    """``count`` Harmony messages of every kind the parser tells apart, then an open tail."""
    parts = [rng.choice(MESSAGES).format(i=i) for i in range(count)]
    return "<|start|>assistant".join(parts) + "<|start|>assistant" + rng.choice(TAILS).format(i=count)


def _random_texts(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        if rng.random() < 0.5:
            out.append("".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 16))))
        else:
            text = _messages(rng.randint(1, 4), rng)
            out.append(text[: rng.randint(0, len(text))] if rng.random() < 0.5 else text)
    return out


def test_every_partial_parse_equals_the_full_reparse():
    """Shipped scenarios, the fault library and 800 random texts (unknown channels, markers and
    escapes cut anywhere, Unicode), under every flag pair, split into real tokens, into random
    pieces and (short texts) into single characters."""
    rng = random.Random(12)
    Tally.texts = Tally.tokens = Tally.extended = 0
    library = _completion_texts()
    assert len(library) > 150
    for text in library:
        pieces = _token_pieces(text)
        for extract, calls in FLAGS:
            check(extract, calls, pieces)
        check(*rng.choice(FLAGS), _random_split(text, rng))
    for text in _random_texts(rng, 800):
        check(*rng.choice(FLAGS), _random_split(text, rng))
        check(*rng.choice(FLAGS), _token_pieces(text) if text else [])
        if len(text) < 120:
            check(*rng.choice(FLAGS), list(text))
    assert Tally.texts > 2_500
    assert Tally.extended > Tally.tokens // 4  # the watches carry a real share of the tokens (no parse)


def test_many_messages_equal_the_full_reparse():
    """Completions of 30-60 messages of every kind (tool calls, non-JSON arguments, unknown
    channels, text outside messages) and an open tail, cut anywhere, in real tokens, random
    pieces and single characters: equal to the full re-parse (resumed after settled rounds)."""
    rng = random.Random(13)
    for round_ in range(12):
        text = _messages(rng.randint(30, 60), rng)
        if round_ % 3 == 2:
            text = text[: rng.randint(len(text) // 2, len(text))]
        extract, calls = FLAGS[round_ % 4]
        check(extract, calls, _token_pieces(text))
        check(extract, calls, _random_split(text, rng))
        if round_ == 0:
            check(extract, calls, list(text[:1500]))


def _work_per_token(make, n: int) -> tuple[float, float, int]:
    """While the first streamed request's plan of ``make(n)`` is computed through the profile,
    as a request does: per token, the calls made by the parser's code (its functions, and the
    builtins and PEG functions they call: ``find``, ``fullmatch``, ``join``...), and the
    characters the per-token parses start from (a partial ``parse_regex`` reads its whole text,
    a resumed round the text from its start on); and the number of tokens."""
    completion = Completion.from_text(make(n))
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "get"}}],
    }
    files = {regex_parser.__file__, regex_incremental.__file__, peg.__file__}
    calls = chars = 0

    def count(frame, event, _arg):
        nonlocal calls, chars
        code = frame.f_code
        if event in ("call", "c_call") and code.co_filename in files:
            calls += 1
        if event == "call" and code.co_name == "parse_regex" and frame.f_locals.get("partial"):
            chars += len(frame.f_locals["text"])
        elif event == "call" and code.co_name == "round_at" and frame.f_back.f_code.co_name == "_parse":
            chars += len(frame.f_locals["text"]) - frame.f_locals["pos"]

    sys.setprofile(count)
    try:
        plan = LlamacppProfile(parser="regex").plan(completion, body, ("get",), None, stream=True)
    finally:
        sys.setprofile(None)
    return calls / plan.n_decoded, chars / plan.n_decoded, plan.n_decoded


def tool_arguments(n: int) -> str:
    """A tool call whose JSON arguments hold ``n`` small objects."""
    args = json.dumps({"items": [{"id": i, "s": f'v "{i}"'} for i in range(n)]})
    return "<|channel|>commentary to=functions.get json<|message|>" + args


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda n: _messages(n, random.Random(5)), id="messages"),
        pytest.param(
            lambda n: "<|channel|>final<|message|>" + "".join(f"w{i} <b> a<|e " for i in range(n * 4)), id="final"
        ),
        pytest.param(
            lambda n: "<|channel|>analysis<|message|>" + "".join(f"w{i}  \n" for i in range(n * 4)), id="reasoning"
        ),
        pytest.param(tool_arguments, id="tool-arguments"),
        pytest.param(lambda n: "no header at all, " * (n * 2), id="no-header"),
    ],
)
def test_work_per_token_does_not_grow_with_the_answer(make):
    """The parser's work per token of the first streamed request stays flat: an answer four times
    as long (200 vs 50 messages, or as many words or argument members) costs at most 1.5x the
    calls and the characters parsed per token. The full re-parse per token (a5171e4) runs every
    message again each time (calls ~3-4x) and reads the whole text each time (characters 4x).
    Tool arguments are the exception for characters: a token outside a JSON string parses the
    open value again, from its text, but the PEG table keeps the calls flat."""
    (calls, chars, tokens), (calls4, chars4, tokens4) = _work_per_token(make, 50), _work_per_token(make, 200)
    assert tokens4 > 3 * tokens
    assert calls4 <= 1.5 * calls, (calls, calls4)
    assert chars4 <= 1.5 * chars or make is tool_arguments, (chars, chars4)


def test_a_long_answer_is_extended_not_reparsed():
    """A long analysis then a long final answer, ``<`` and prefixes of ``<|end|>`` in the text: a
    parse only where a marker completes, every other token an extension."""
    words = "".join(f"w{i} <b> a<|e  " for i in range(800))
    text = f"<|channel|>analysis<|message|>{words}<|end|><|start|>assistant<|channel|>final<|message|>{words}"
    pieces = _token_pieces(text)
    for extract in (True, False):
        stream = regex_incremental._Stream(extract, True)
        results = list(regex_partials(pieces, extract_reasoning=extract, tool_calls=True, stream=stream))
        assert len(pieces) > 5000
        assert stream.parses <= 12, stream.parses
        assert stream.parsed < 3 * len(text)
        assert sum(isinstance(r, ChatMsg) for r in results) <= 6
        check(extract, True, pieces)


def test_a_long_string_argument_needs_no_parse():
    """A tool call writing a long string (escapes, quotes, Unicode): the call appears whole once
    its JSON closes (this parser's simplification), and until then no token re-parses it."""
    body = "".join(f'line {i}  \n\t"quoted" \\ caf\u00e9 \U0001f600  ' for i in range(80))
    args = json.dumps({"path": "/x", "content": body, "mode": "w"})
    text = f"<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>{args}<|end|>"
    pieces = _token_pieces(text)
    stream = regex_incremental._Stream(True, True)
    results = list(regex_partials(pieces, extract_reasoning=True, tool_calls=True, stream=stream))
    assert len(pieces) > 600
    assert stream.parses < 40, stream.parses
    last = list(materialize(results))[-1]
    assert [name for name, _ in last.tool_calls] == ["write_file"]
    assert json.loads(last.tool_calls[0][1]) == json.loads(args)
    check(True, True, pieces)
