"""Every body whose pre-tokenizer pieces are costly goes off the event loop, whatever they are made
of (issue 9 review, findings 1 and 11).

Finding 1: :func:`~mockoss.server.offload.has_long_run` only caught a 4 KiB window all ASCII
whitespace or without a space. A run mixing a space with ``\\n`` (escaped in the JSON) or with
non-ASCII whitespace (U+00A0, U+3000, raw or ``\\u`` escaped) passed, yet openai-harmony's
pre-tokenizer makes it one ``\\s+`` piece, quadratic to merge: ``" \\n" * 87000`` in a Responses
``input`` (261 KB) held another client 9.4 s; ``" \\n" * 40000`` ~2 s on vLLM chat, ``/tokenize``,
Ollama ``/api/chat``, SGLang ``/v1/completions``; ``"\\u00a0 " * 40000`` 4.5 s; ``"\\u3000 " *
20000`` 1.9 s. Finding 11: 60 tool names of 3,900 letters, each under the window, added up to 283
ms (vLLM) / 273 ms (llama.cpp).

The reference for what one piece is: o200k's pattern as openai-harmony compiles it
(openai/harmony@55dc3228:src/tiktoken_ext/public_encodings.rs, the same string in the installed
binary), emulated here with :mod:`re` and classes built from :mod:`unicodedata`, and checked
against openai-harmony itself (encoding each piece alone gives the ids of the whole text).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import random
import sys
import threading
import time
import unicodedata
from pathlib import Path

import httpx
import pytest

from mockoss.server import offload
from mockoss.server.core import MockServer
from mockoss.server.longpieces import PIECE_BUDGET, may_hold_long_pieces
from mockoss.server.offload import has_long_run, is_heavy
from mockoss.server.run import ThreadedServer

#: vLLM and SGLang refuse a body not sent as application/json (mockoss.server.content_type).
JSON_TYPE = {"content-type": "application/json"}

MODEL = "openai/gpt-oss-20b"
WHITE_SPACE = [
    *range(0x09, 0x0E),
    0x20,
    0x85,
    0xA0,
    0x1680,
    *range(0x2000, 0x200B),
    0x2028,
    0x2029,
    0x202F,
    0x205F,
    0x3000,
]

# -- the reference: o200k's pre-tokenizer ------------------------------------------------------


def _class(codes: list[int]) -> str:
    out, index = [], 0
    while index < len(codes):
        end = index
        while end + 1 < len(codes) and codes[end + 1] == codes[end] + 1:
            end += 1
        first, last = codes[index], codes[end]
        out.append(f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}")
        index = end + 1
    return "".join(out)


@functools.cache
def _o200k():
    import re

    categories: dict[str, list[int]] = {}
    for code in range(sys.maxunicode + 1):
        if not 0xD800 <= code <= 0xDFFF:
            categories.setdefault(unicodedata.category(chr(code)), []).append(code)

    def of(*names: str) -> str:
        return _class(sorted(code for name in names for code in categories.get(name, [])))

    letters, marks, numbers, space = (
        of("Lu", "Ll", "Lt", "Lm", "Lo"),
        of("Mn", "Mc", "Me"),
        of("Nd", "Nl", "No"),
        _class(WHITE_SPACE),
    )
    upper, lower = of("Lu", "Lt", "Lm", "Lo") + marks, of("Ll", "Lm", "Lo") + marks
    contraction = "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    return re.compile(
        "|".join(
            [
                f"[^\\r\\n{letters}{numbers}]?[{upper}]*[{lower}]+{contraction}",
                f"[^\\r\\n{letters}{numbers}]?[{upper}]+[{lower}]*{contraction}",
                f"[{numbers}]{{1,3}}",
                f" ?[^{space}{letters}{numbers}]+[\\r\\n/]*",
                f"[{space}]*[\\r\\n]+",
                f"[{space}]+(?![^{space}])",
                f"[{space}]+",
            ]
        )
    )


def _cost(text: str) -> int:
    """What merging ``text``'s pieces costs, in bytes² (~0.31 ns each, measured)."""
    return sum(len(piece.encode("utf-8", "surrogatepass")) ** 2 for piece in _o200k().findall(text))


def _strings(value, out: list[str]) -> list[str]:
    """Every string of a JSON value, keys included, in order: their concatenation is the most a
    renderer can join into one piece (mockoss joins text parts with nothing between them)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            out.append(key)
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)
    return out


def test_the_reference_splits_as_openai_harmony_does():
    from mockoss.harmony.encoding import load_encoding

    encoding = load_encoding()
    rng = random.Random(7)
    alphabet = [" ", "\n", "\t", "\r", "\u00a0", "\u3000", "a", "B", "é", "漢", "1", "!", "'", "s", "/", "\u0301", "、"]
    texts = [
        "Hello world, it's a test!\n\n  indented\tcode()  \n",
        " \n" * 50,
        "\u00a0 " * 30 + "x",
        "漢字、かな。カタカナ！ABC def",
    ]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(200)]
    for text in texts:
        pieces = _o200k().findall(text)
        assert "".join(pieces) == text
        whole = list(encoding.encode(text, disallowed_special=()))
        assert whole == [token for piece in pieces for token in encoding.encode(piece, disallowed_special=())], text


# -- the review's reproducers ------------------------------------------------------------------


def _chat(content: str, ensure_ascii: bool = True) -> bytes:
    return json.dumps(
        {"model": MODEL, "messages": [{"role": "user", "content": content}]}, ensure_ascii=ensure_ascii
    ).encode()


def _tools(names: list[str]) -> bytes:
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}} for name in names]
    return json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "tools": tools}).encode()


REPRODUCERS = {
    "responses space-newline 87000 (f1)": ("responses", json.dumps({"model": MODEL, "input": " \n" * 87_000}).encode()),
    "chat space-newline 40000 (f1b)": ("chat", _chat(" \n" * 40_000)),
    "tokenize space-newline (f1c)": ("", json.dumps({"model": MODEL, "prompt": " \n" * 40_000}).encode()),
    "completions space-newline (f1c)": ("completions", json.dumps({"model": MODEL, "prompt": " \n" * 40_000}).encode()),
    "ollama chat space-newline (f1c)": (
        "ollama.chat",
        json.dumps(
            {"model": "gpt-oss:20b", "messages": [{"role": "user", "content": " \n" * 40_000}], "stream": False}
        ).encode(),
    ),
    "nbsp-space raw UTF-8 (f1)": ("chat", _chat("\u00a0 " * 40_000, ensure_ascii=False)),
    "nbsp-space escaped": ("chat", _chat("\u00a0 " * 20_000)),
    "ideographic-space raw UTF-8 (f1)": ("chat", _chat("\u3000 " * 20_000, ensure_ascii=False)),
    "ideographic-space escaped": ("chat", _chat("\u3000 " * 10_000)),
    "tab-space": ("chat", _chat(" \t" * 20_000)),
    "60 tool names of 3,900 letters (f11)": ("chat", _tools([f"t{i} " + "y" * 3_900 for i in range(60)])),
    "500 words of 1,000 letters": ("chat", _chat(" ".join("y" * 1_000 for _ in range(200)))),
    "CJK sentences of 1,500 characters": (
        "chat",
        _chat("。".join("漢" * 1_500 for _ in range(20)), ensure_ascii=False),
    ),
}


@pytest.mark.parametrize("name", list(REPRODUCERS))
def test_the_reviews_reproducers_go_off_the_loop(name):
    endpoint, raw = REPRODUCERS[name]
    assert len(raw) < offload.OFFLOAD_BYTES  # under the byte threshold: only the piece check sends it
    assert has_long_run(raw)
    assert is_heavy(endpoint, raw)


# -- what stays on the loop, and what the check costs -------------------------------------------


def _load(name: str):
    """A script of ``benchmarks/`` as a module (its bodies are the benchmarks' own)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_prompt = _load("bench_prompt")
bench_http = _load("bench_http")
WORDS = bench_prompt.WORDS
_text = bench_prompt._text


def _agent_turn(length: int = 50) -> bytes:
    """benchmarks/bench_prompt.py's ``agent 50+20`` body (23 KB; ``length`` messages): a coding
    agent's conversation and 20 tools, compact JSON."""
    return bench_prompt.agent(length - 2, bench_prompt.TOOLS)(7)


def _unique_chat(n: int) -> bytes:
    """benchmarks/bench_http.py's ``chat unique`` body ``n``."""
    return bench_http.unique_body("chat", n)


USUAL = {
    "short chat": _unique_chat(12345),
    "agent turn 23 KB": _agent_turn(),
    "agent history 200 messages": _agent_turn(200),
    "100 KB of words": _chat(_text(100_000, 3)),
    "200 KB of words, pretty-printed": json.dumps(json.loads(_chat(_text(200_000, 5))), indent=2).encode(),
    "Russian, escaped": _chat("привет мир, как дела? " * 1_000),
    "Russian, UTF-8": _chat("привет мир, как дела? " * 1_000, ensure_ascii=False),
    # Text without spaces is read again (with CJK punctuation as breaks) up to 32 KiB, then sent
    # off the loop unread (a false positive, by design: reading costs ~3 us a KB).
    "Japanese with punctuation": _chat("漢字仮名交じり文です、とても長い文章。" * 400, ensure_ascii=False),
    "Chinese, escaped": _chat("这是一个很长的句子，我们测试一下。" * 250),
    "code with indentation": _chat("def f(x):\n    if x:\n        return x + 1\n    return 0\n\n" * 600),
}


@pytest.mark.parametrize("name", list(USUAL))
def test_usual_bodies_stay_on_the_loop(name):
    raw = USUAL[name]
    assert len(raw) < offload.OFFLOAD_BYTES
    assert not has_long_run(raw)
    assert not is_heavy("chat", raw)


def test_usual_bodies_are_decided_by_the_fast_pass(monkeypatch):
    """What keeps the check cheap on the request path (measured in ``benchmarks/``, not timed
    here): a short body is not read at all (nothing below 8 KiB can cost more than the budget),
    and the compact 23 KB agent turn is decided by the fast pass alone, one ``bytes.find`` per
    window: the second reading (:func:`~mockoss.server.longpieces.piece_cost`) never runs."""
    from mockoss.server import longpieces

    def second_pass(*args, **kwargs):
        raise AssertionError("the second reading ran")

    monkeypatch.setattr(longpieces, "piece_cost", second_pass)
    monkeypatch.setattr(longpieces, "_BREAK", None)  # any regex search of the body would fail
    for raw in (_unique_chat(7), _agent_turn()):
        assert not longpieces.may_hold_long_pieces(raw)
    assert len(_unique_chat(7)) ** 2 <= longpieces.PIECE_BUDGET  # not read: below the budget's square root


# -- no false negative ------------------------------------------------------------------------


_WHITE = [" ", "\n", "\t", "\r", "\u00a0", "\u3000", "\u2003", "\u0085", "\u202f", "\x0c"]


def _run(rng: random.Random, size: int, alphabet) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


_KINDS = [
    lambda rng, k: _run(rng, k, _WHITE),
    lambda rng, k: _run(rng, k, [" ", "\n"]),
    lambda rng, k: _run(rng, k, [" ", "\u00a0"]),
    lambda rng, k: "y" * k,
    lambda rng, k: "Y" * k,
    lambda rng, k: _run(rng, k // 3, ["漢", "字", "か"]),
    lambda rng, k: _run(rng, k, "!#$%&()*+,./:;<=>?@[]^_`{|}~-\"\\'"),
    lambda rng, k: _run(rng, k, ["a", "\u0301"]),
    lambda rng, k: "ab'" * (k // 3),
    lambda rng, k: " ".join(rng.choice(WORDS) for _ in range(k // 5)),
    lambda rng, k: _run(rng, k, ["y", "\u00a0"]),
    lambda rng, k: _run(rng, k, ["t", "true", " ", "null", "e"]),
    lambda rng, k: _run(rng, k // 2, ["п", "р", "и", " "]),
    lambda rng, k: _run(rng, k, ["\\", "n", "u", "0", "a", '"', " "]),
]


def _random_body(rng: random.Random) -> tuple[bytes, object]:
    lengths = rng.choice([[50, 100, 200, 400], [300, 600, 900, 1200, 1500], [700, 900], [1000, 2000, 3000, 4000, 6000]])
    total, parts, size = rng.choice([9_000, 30_000, 120_000, 240_000]), [], 0
    words = rng.choice([0.0, 0.5, 0.8, 0.95])
    while size < total:
        kind = _KINDS[9] if rng.random() < words else rng.choice(_KINDS)  # words, or any kind
        part = kind(rng, rng.choice(lengths))
        parts.append(part)
        size += len(part.encode())
    layout = rng.randrange(5)
    if layout == 0:
        body: object = {"model": MODEL, "messages": [{"role": "user", "content": "".join(parts)}]}
    elif layout == 1:
        body = {"model": MODEL, "messages": [{"role": "user", "content": [{"type": "text", "text": p} for p in parts]}]}
    elif layout == 2:
        body = {
            "model": MODEL,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": p, "parameters": {"type": "object"}}} for p in parts],
        }
    elif layout == 3:
        body = {"model": MODEL, "input": "".join(parts)}
    else:
        body = {
            "model": MODEL,
            "messages": [{"role": "user", "content": p, "n": 1, "flag": True, "x": None} for p in parts],
        }
    options = rng.choice([{}, {"separators": (",", ":")}, {"indent": 2}])
    return json.dumps(body, ensure_ascii=rng.random() < 0.5, **options).encode(), body


def test_no_body_left_on_the_loop_costs_more_than_the_bound():
    """Random bodies of pieces of every kind and length, in five layouts, three spacings and both
    escapings: each one the check leaves on the loop costs at most 1.5 x PIECE_BUDGET (the fast
    pass's bound plus what it reads again), counting every string of the body joined."""
    rng = random.Random(20261202)
    kept = 0
    for _ in range(80):
        raw, body = _random_body(rng)
        if len(raw) >= offload.OFFLOAD_BYTES or may_hold_long_pieces(raw):
            continue
        kept += 1
        assert _cost("".join(_strings(body, []))) <= 1.5 * PIECE_BUDGET, raw[:300]
    assert kept >= 20  # the property was exercised


@pytest.mark.parametrize("length", [500, 1_000, 2_000, 3_000, 4_000, 6_000])
@pytest.mark.parametrize("kind", ["letters", "spaces and newlines", "nbsp escaped", "CJK"])
def test_many_pieces_just_under_any_window_add_up(length, kind):
    """Finding 11's shape for every piece length: pieces of ``length`` bytes, separated by one
    word, filling ~240 KB. Heavy exactly when their cost is above the budget, give or take the
    check's margin (never light above 1.5 x the budget)."""
    piece = {
        "letters": "y" * length,
        "spaces and newlines": " \n" * (length // 2),
        "nbsp escaped": "\u00a0 " * (length // 6),
        "CJK": "漢" * (length // 3),
    }[kind]
    count = 240_000 // (len(json.dumps(piece)) + 4)
    raw = _chat(" a ".join([piece] * count), ensure_ascii=kind != "CJK")
    cost = _cost(" a ".join([piece] * count))
    if cost > 1.5 * PIECE_BUDGET:
        assert has_long_run(raw), (cost, PIECE_BUDGET)


# -- over HTTP --------------------------------------------------------------------------------


@pytest.fixture
def url():
    threaded = ThreadedServer(MockServer("clean-answer")).start()
    yield threaded.url
    threaded.stop()


@pytest.mark.timeout(120)
def test_a_mixed_whitespace_run_does_not_hold_up_another_client(url):
    """Ordering only, no timing: ``" \\n" * 30000`` (90 KB, ~1 s of merging) is counted off the
    loop, so the small request sent meanwhile finishes first; its count is the same as in process."""
    big = _chat(" \n" * 30_000)
    done: list[str] = []
    answers: dict[str, int] = {}
    with httpx.Client(timeout=120) as first, httpx.Client(timeout=120) as second:
        assert first.post(url + "/v1/chat/completions", headers=JSON_TYPE, content=_chat("hello")).status_code == 200
        assert second.post(url + "/v1/chat/completions", headers=JSON_TYPE, content=_chat("hello")).status_code == 200

        def send_big() -> None:
            reply = first.post(url + "/v1/chat/completions", headers=JSON_TYPE, content=big)
            answers["big"] = reply.json()["usage"]["prompt_tokens"]
            done.append("big")

        thread = threading.Thread(target=send_big)
        thread.start()
        time.sleep(0.3)
        small = second.post(url + "/v1/chat/completions", headers=JSON_TYPE, content=_chat("hi"))
        assert small.status_code == 200
        done.append("small")
        thread.join()
    assert done == ["small", "big"]
    in_process = json.loads(MockServer("clean-answer").handle("chat", big, {}).body)["usage"]["prompt_tokens"]
    assert answers["big"] == in_process
