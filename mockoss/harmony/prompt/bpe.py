"""Exact BPE token counts of prompt texts, ASCII text counted piece by piece.

The prompt count (:mod:`mockoss.harmony.prompt.count`) adds up each new text's o200k_harmony BPE
count, which openai-harmony computes as tiktoken does: its pre-tokenizer regex splits the text into
pieces, and each piece is byte-pair encoded on its own (``CoreBPE::encode_ordinary``: a piece that
is a vocabulary entry is one token, else ``byte_pair_encode(piece)``). So a text's count is the sum
of its pieces' counts, and a piece's count depends on the piece alone. Piece counts are cached
here; a new text then costs one regex pass and a dictionary look-up per piece, instead of the
library's encode of the whole text (~0.3 us per character on this project's machines, and ~2 us a
call: 13-21 us for a 50-character turn, against 5-6 us here; 2.5x less for a 14 KB source file).

Exactness, for ASCII text (:func:`text_tokens` hands any other text to the library whole):

* The split. :data:`ASCII_SPLIT` is o200k_harmony's pattern (``Encoding::pattern``,
  ``openai/harmony@55dc322:src/tiktoken_ext/public_encodings.rs``, the same string as
  o200k_base's) with each class written out for ASCII: ``\\p{L}`` is ``[A-Za-z]``, ``\\p{Lu}``
  ``[A-Z]``, ``\\p{Ll}`` ``[a-z]``, ``\\p{N}`` ``[0-9]``; ``\\p{Lt}``, ``\\p{Lm}``, ``\\p{Lo}`` and
  ``\\p{M}`` have no ASCII member; ``\\s`` is Unicode ``White_Space``, whose ASCII members are tab,
  line feed, vertical tab, form feed, carriage return and space (not ``\\x1c``-``\\x1f``, which
  Python's own ``\\s`` and ``str.isspace`` include); ``(?i:'s|…)`` is spelled case by case (the
  Unicode case-fold partners of ``s`` and ``k``, U+017F and U+212A, are not ASCII). Python's ``re``
  and the library's regex engine both take the first alternative that matches, each quantifier
  greedy with backtracking, so on ASCII text they cut the same pieces. Both also skip nothing: every
  character starts some alternative.
* A piece counted alone. A piece cut from a text is cut whole again when it is the whole text, so
  ``encode(piece)`` is its BPE: the alternatives tried before the one that cut it failed on
  characters inside the piece, except through the one look-ahead, ``\\s+(?!\\S)``; that one can
  only succeed where it failed (at the end of the text, where a space followed by a letter was), and
  then it takes the whole piece, which is all white space, the same cut.
* Special-token strings (``<|end|>`` in a user's text) are text here, as the renderer reads them
  (``render_text_into``); the library is called with no allowed special tokens.

``tests/harmony/test_prompt_bpe.py`` compares :func:`text_tokens` with the library's encode on
random ASCII texts over every class boundary, on real prose and code, and on the library's own
fallback for other text.

Pieces up to :data:`PIECE_CHARS` characters are cached, at most :data:`PIECE_ENTRIES` of them
(about 3 MB when full); the cache is emptied when full, and by :func:`clear`
(``MockServer.reset``, through :func:`mockoss.harmony.prompt.caches.clear_caches`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from mockoss.harmony.encoding import load_encoding

__all__ = ["ASCII_SPLIT", "PIECE_CHARS", "PIECE_ENTRIES", "cache_bytes", "clear", "encoder", "text_tokens"]

_WHITE = "\\t\\n\\x0b\\x0c\\r "  # Unicode White_Space within ASCII
_CONTRACTION = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"

#: o200k_harmony's pre-tokenizer split for ASCII text (module docstring), alternative by
#: alternative in the library's order.
ASCII_SPLIT = re.compile(
    "|".join(
        (
            f"[^\\r\\nA-Za-z0-9]?[A-Z]*[a-z]+{_CONTRACTION}",
            f"[^\\r\\nA-Za-z0-9]?[A-Z]+[a-z]*{_CONTRACTION}",
            "[0-9]{1,3}",
            f" ?[^{_WHITE}A-Za-z0-9]+[\\r\\n/]*",
            f"[{_WHITE}]*[\\r\\n]+",
            f"[{_WHITE}]+(?![^{_WHITE}])",
            f"[{_WHITE}]+",
        )
    )
)

#: Pieces longer than this are counted every time (a long run of one class is rare, and would
#: hold memory for one text).
PIECE_CHARS = 32
#: The piece cache is emptied when it holds this many pieces.
PIECE_ENTRIES = 16384
#: Bytes one cached piece holds at most (a str of up to PIECE_CHARS ASCII characters, 73 bytes,
#: a small int, its dict slot): :func:`cache_bytes`.
_ENTRY_BYTES = 160


@functools.cache
def encoder() -> Callable[[str, list[str]], list[int]]:
    """openai-harmony's BPE, called as ``encode(text, disallowed_special=())`` calls it.

    ``HarmonyEncoding.encode`` (``python/openai_harmony/__init__.py`` as oss-harmony 0.0.11
    installs it) checks the text for disallowed special tokens (none when ``disallowed_special``
    is empty) and then calls its Rust core, ``self._inner.encode(text, list(allowed_special))``,
    with an empty list. The core is called directly when it is there (0.3 us a call less), else
    the wrapper; ``tests/harmony/test_prompt_prefix.py`` checks both give the same tokens."""
    encoding = load_encoding()
    inner = getattr(encoding, "_inner", None)
    if inner is not None and callable(getattr(inner, "encode", None)):
        return inner.encode  # type: ignore[no-any-return]
    return lambda text, allowed: encoding.encode(text, disallowed_special=())


class _PieceCounts(dict[str, int]):
    """Piece -> its BPE token count; a missing piece is encoded by the library (and kept when it
    is short)."""

    def __missing__(self, piece: str) -> int:
        count = len(encoder()(piece, []))
        if len(piece) <= PIECE_CHARS:
            if len(self) >= PIECE_ENTRIES:
                self.clear()
            self[piece] = count
        return count


_pieces = _PieceCounts()


def text_tokens(text: str) -> int:
    """The number of o200k_harmony tokens of ``text`` encoded as ordinary text (special-token
    strings read as text), as ``len(encoding.encode(text, disallowed_special=()))`` gives it.

    ASCII text is split here and counted piece by piece (module docstring: why it is exact);
    other text is encoded by the library whole.

    Raises:
        UnicodeEncodeError: ``text`` holds a lone surrogate (a ``ValueError``: the caller's
            repairing path, as when the library refuses the text).
    """
    if text.isascii():
        return sum(map(_pieces.__getitem__, ASCII_SPLIT.findall(text)))
    text.encode("utf-8")  # a lone surrogate: UnicodeEncodeError
    return len(encoder()(text, []))


def clear() -> None:
    """Forget every cached piece count."""
    _pieces.clear()


def cache_bytes() -> int:
    """Bytes the piece cache holds at most for its current entries."""
    return len(_pieces) * _ENTRY_BYTES
