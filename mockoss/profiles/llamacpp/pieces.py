"""The text llama-server generates, token by token, for a completion.

llama-server detokenises each sampled token with ``common_token_to_piece(ctx, tok, special)``
where ``special`` is true only for the chat format's preserved tokens
(``common/parsers/gpt-oss.cpp@2629d7b5``: ``<|channel|> <|constrain|> <|message|> <|start|>
<|end|>``). Other control tokens render as nothing; ``<|return|>``, ``<|call|>`` and
``<|endoftext|>`` are end-of-generation tokens (the vocabulary drops ``<|end|>`` from that set for
o200k_harmony), so generation stops there and they add no text. A token that leaves an incomplete
UTF-8 sequence sends nothing; its bytes go out with the next token that completes it
(``process_token``, ``validate_utf8``).
"""

from __future__ import annotations

from collections.abc import Sequence

from openai_harmony import HarmonyError

from mockoss.harmony import load_encoding
from mockoss.harmony.encoding import FIRST_SPECIAL

__all__ = ["EOG_TOKENS", "PRESERVED_TOKENS", "token_pieces"]

#: Preserved special tokens and the text they render as.
PRESERVED_TOKENS = {
    200003: "<|constrain|>",
    200005: "<|channel|>",
    200006: "<|start|>",
    200007: "<|end|>",
    200008: "<|message|>",
}
#: ``<|return|>``, ``<|call|>``, ``<|endoftext|>``.
EOG_TOKENS = frozenset({200002, 200012, 199999})


def token_pieces(tokens: Sequence[int]) -> list[tuple[int, str]]:
    """``(n_decoded, text_to_send)`` for each token after which llama-server sends a partial
    result: every token except those that leave UTF-8 incomplete. ``n_decoded`` is the 1-based
    count of tokens sampled so far; an end-of-generation token sends ``""``."""
    encoding = load_encoding()
    out: list[tuple[int, str]] = []
    pending: list[int] = []
    for index, token in enumerate(tokens, 1):
        if token in PRESERVED_TOKENS or token >= FIRST_SPECIAL:
            # bytes left incomplete before a special token go out with it, lossily decoded
            head = encoding.decode(pending) if pending else ""
            pending = []
            out.append((index, head + PRESERVED_TOKENS.get(token, "")))
            continue
        pending.append(token)
        try:
            text = encoding.decode_utf8(pending)
        except HarmonyError:
            continue
        pending = []
        out.append((index, text))
    if pending:
        out.append((len(tokens), encoding.decode(pending)))
    return out
