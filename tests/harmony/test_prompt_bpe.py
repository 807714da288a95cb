"""The piece-by-piece BPE count of :mod:`mockoss.harmony.prompt.bpe` against openai-harmony's own
encode (the reference: ``len(encoding.encode(text, disallowed_special=()))``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.prompt import bpe
from mockoss.harmony.prompt.caches import cache_size, clear_caches

#: Characters at every boundary of the split's classes: upper and lower letters, digits, the
#: contraction letters in both cases, each ASCII White_Space character, the ASCII characters
#: Python's ``\s`` takes but Unicode White_Space does not (0x1c-0x1f), and punctuation the
#: pattern names (``/``, ``'``) or does not.
ALPHABET = "aZsStTrReEvVmMlLdD09 \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x00\x7f'/.,;:-_()[]{}\"<|>!?\\#@"


def library_count(text: str) -> int:
    return len(load_encoding().encode(text, disallowed_special=()))


def test_random_ascii_texts_count_as_the_library_counts() -> None:
    rng = random.Random(20261202)
    for _ in range(6000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
        assert bpe.text_tokens(text) == library_count(text), repr(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "   x",
        "x   ",
        "a  \n  b",
        "\r\n\r\n  x",
        "\n \n \t",
        "I'LL do it, they're here, DON'T, it's, we'Ve, 'd 'S",
        "1234567 + 89 = 1234656",
        "path/to/file.py\n/usr/bin\r\n//",
        "<|end|><|start|>assistant<|channel|>final<|message|>",
        "to=functions.get_weather <|constrain|>json",
        "    def f(x):\n        return x ** 2  # comment\n",
        "A" * 200 + "b" * 200,
        " " * 500 + "x",
        "=" * 300,
    ],
)
def test_edge_cases_count_as_the_library_counts(text: str) -> None:
    assert bpe.text_tokens(text) == library_count(text)


def test_prose_and_code_count_as_the_library_counts() -> None:
    root = Path(__file__).resolve().parents[2]
    for path in (
        root / "README.md",
        root / "mockoss" / "harmony" / "prompt" / "bpe.py",
        root / "mockoss" / "server" / "core.py",
    ):
        text = "".join(c for c in path.read_text(encoding="utf-8") if c.isascii())
        assert bpe.text_tokens(text) == library_count(text), path


@pytest.mark.parametrize("text", ["é日本語 \n\n  x", "naïve café", "emoji 🙂 here", "Ǆungla ǅ"])
def test_other_text_is_counted_by_the_library(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Non-ASCII text takes the library path: one encode of the whole text, no piece cached."""
    clear_caches()
    library = bpe.encoder()
    calls: list[str] = []
    monkeypatch.setattr(bpe, "encoder", lambda: lambda t, allowed: calls.append(t) or library(t, allowed))
    assert bpe.text_tokens(text) == library_count(text)
    assert calls == [text] and len(bpe._pieces) == 0


def test_a_lone_surrogate_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        bpe.text_tokens("a\ud800b")


def test_the_piece_cache_is_bounded_and_emptied_by_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_caches()
    monkeypatch.setattr(bpe, "PIECE_ENTRIES", 50)
    text = " ".join(f"w{i}x" for i in range(400))  # 400 distinct short pieces
    assert bpe.text_tokens(text) == library_count(text)
    assert 0 < len(bpe._pieces) <= 50
    assert bpe.text_tokens("x" * 100) == library_count("x" * 100)
    assert "x" * 100 not in bpe._pieces  # a long piece is counted, not kept
    assert cache_size() >= bpe.cache_bytes() > 0
    clear_caches()
    assert len(bpe._pieces) == 0 and bpe.cache_bytes() == 0
