"""mlx-lm's streaming detokenizer for gpt-oss, reproduced over o200k_harmony.

mlx-lm picks ``BPEStreamingDetokenizer`` for a ``tokenizer.json`` whose decoder is ``ByteLevel``
(``ml-explore/mlx-lm@v0.32.2:mlx_lm/tokenizer_utils.py``, ``load`` / ``_is_bpe_decoder``); gpt-oss's
Hugging Face tokenizer is byte-level BPE. Its token map is ``convert_ids_to_tokens``: a normal token
is its bytes in GPT-2's byte-to-unicode alphabet, a special token its literal text (``<|channel|>``),
whose characters are all printable ASCII and so decode to themselves. So special tokens are not
skipped: **the Harmony markup reaches the text verbatim**.

Rules reproduced (``BPEStreamingDetokenizer.add_token`` / ``finalize`` / ``_maybe_trim_space`` /
``_decode_bytes``):

* a token's text is held while the pending bytes end inside a UTF-8 character (``\\ufffd``), and
  while the token is exactly one space (``Ġ``), until the next token;
* the first text flushed loses one leading space (``_maybe_trim_space`` when ``text`` is empty);
* a byte 0 in a token comes out as ``"Ā"`` (its map character), not NUL: ``_decode_bytes`` tests the
  byte value for truth (``if res:``);
* ``finalize`` flushes what is held, undecodable bytes as U+FFFD.

Checked by ``tools/mlxlm_diff.py`` against mlx-lm 0.32.2's own class (see :mod:`mockoss.profiles.mlxlm`).
"""

from __future__ import annotations

import base64
import functools

from mockoss.harmony.encoding import FIRST_SPECIAL, VOCABULARY_FILE, load_encoding, vocabulary_dir

__all__ = ["FIRST_SPECIAL", "StreamingDetokenizer", "step_texts", "token_string", "token_strings"]

VOCAB_SIZE = 201088


@functools.lru_cache(maxsize=1)
def _byte_to_char() -> dict[int, str]:
    """GPT-2's reversible byte → printable character map (``bytes_to_unicode``)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


@functools.lru_cache(maxsize=1)
def _char_to_byte() -> dict[str, int]:
    return {c: b for b, c in _byte_to_char().items()}


@functools.lru_cache(maxsize=1)
def token_strings() -> tuple[str, ...]:
    """``convert_ids_to_tokens(range(201088))`` of gpt-oss's tokenizer, rebuilt from o200k_base
    (ranks → bytes → byte-level characters) plus the Harmony special tokens' literal text."""
    to_char = _byte_to_char()
    table: list[str] = [""] * VOCAB_SIZE
    with (vocabulary_dir() / VOCABULARY_FILE).open("rb") as fh:
        for line in fh:
            token, rank = line.split()
            table[int(rank)] = "".join(to_char[b] for b in base64.b64decode(token))
    encoding = load_encoding()
    for token_id in range(FIRST_SPECIAL, VOCAB_SIZE):
        table[token_id] = encoding.decode([token_id])
    return tuple(table)


#: Each token's string, filled on first use (``None``: not yet): what :func:`token_strings` holds,
#: one token at a time. Building the whole table costs ~0.25 s (the 200,000-line vocabulary file
#: decoded): the first request of a process paid it, even on a two-token answer (issue 9); a
#: token's string costs ~2 us now, once per process.
_PIECES: list[str | None] = [None] * VOCAB_SIZE


def token_string(token: int) -> str:
    """``token_strings()[token]`` without building the table: the token's bytes in the byte-level
    alphabet (a special token: its literal text); an id past the vocabulary reads as ``"!"``
    (mlx-lm's fallback)."""
    if not 0 <= token < VOCAB_SIZE:
        return "!"
    piece = _PIECES[token]
    if piece is None:
        encoding = load_encoding()
        if token >= FIRST_SPECIAL:
            piece = encoding.decode([token])
        else:
            to_char = _byte_to_char()
            piece = "".join(to_char[b] for b in encoding.decode([token], errors="surrogateescape").encode("utf-8", "surrogateescape"))
        _PIECES[token] = piece
    return piece


def _decode(chars: str) -> str:
    decoder = _char_to_byte()
    out = bytearray()
    for c in chars:
        value = decoder.get(c, False)
        if value:  # mlx-lm tests the byte for truth: byte 0 falls through to the character itself
            out.append(value)
        else:
            out.extend(c.encode("utf-8"))
    return out.decode("utf-8", "replace")


class StreamingDetokenizer:
    """One request's detokenizer: :meth:`add_token` then read :meth:`last_segment`; :meth:`finalize`
    flushes what is held back."""

    __slots__ = ("_offset", "_unflushed", "text")

    def __init__(self) -> None:
        self.text = ""
        self._unflushed = ""
        self._offset = 0

    def _trim(self, text: str) -> str:
        return text[1:] if text[:1] == " " and not self.text else text

    def add_token(self, token: int) -> None:
        """Consume one token id (an id past the vocabulary reads as ``"!"``, mlx-lm's fallback)."""
        piece = token_string(token)
        self._unflushed += piece
        text = _decode(self._unflushed)
        if not text.endswith("\ufffd") and not (len(piece) == 1 and _char_to_byte().get(piece) == 32):
            self.text += self._trim(text)
            self._unflushed = ""

    def finalize(self) -> None:
        """Flush the held text (invalid UTF-8 as U+FFFD)."""
        decoder = _char_to_byte()
        text = bytes(decoder[c] for c in self._unflushed).decode("utf-8", "replace")
        self.text += self._trim(text)
        self._unflushed = ""

    def last_segment(self) -> str:
        """The text added since the last call."""
        segment = self.text[self._offset :]
        self._offset = len(self.text)
        return segment


def step_texts(tokens: tuple[int, ...] | list[int], finish: str, eos: frozenset[int]) -> list[str]:
    """The text each generated token contributes to the reply, as ``mlx_lm.server`` assembles it.

    One entry per token in ``tokens`` (the emitted tokens, the stop token included when ``finish``
    is ``"stop"``). ``stream_generate`` breaks on an EOS token before decoding it, finalizes, and
    its last response carries the flushed rest; ``handle_completion`` *discards* that text when the
    finish reason is ``"stop"`` (``TextStateMachine.discard``), so a held-back trailing space or
    partial character is lost. On ``"length"`` the last token is decoded and flushed.
    """
    detok = StreamingDetokenizer()
    out: list[str] = []
    last = len(tokens) - 1
    for i, token in enumerate(tokens):
        if i == last and finish == "stop" and token in eos:
            out.append("")  # finalize()'s text is dropped with the stop
            break
        detok.add_token(token)
        if i == last and finish == "length":
            detok.finalize()
        out.append(detok.last_segment())
    return out
