"""Ollama's ids, drawn from mockoss's deterministic :class:`~mockoss.profiles.base.IdSource`.

Ollama draws them from ``math/rand``: tool calls ``call_`` + 8 of ``[a-z0-9]``
(``server/routes.go`` ``toolCallId``), chat completions ``chatcmpl-`` + ``rand.Intn(999)``,
responses ``resp_``/``msg_``/``rs_`` + ``rand.Intn(999999)`` and function-call items
``fc_<n>_<i>`` (``middleware/openai.go``, ``openai/responses.go@fb307609``): decimal numbers of
varying length, not zero-padded.
"""

from __future__ import annotations

from mockoss.profiles.base import IdSource

__all__ = ["rand_int", "tool_call_id"]

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def rand_int(ids: IdSource, bound: int) -> int:
    """``rand.Intn(bound)``: an integer in ``[0, bound)``."""
    return int(ids.digits(18)) % bound


def tool_call_id(ids: IdSource) -> str:
    """``call_`` + 8 characters of ``[a-z0-9]``."""
    value = int(ids.next(), 16)
    chars = []
    for _ in range(8):
        value, index = divmod(value, 36)
        chars.append(_ALPHABET[index])
    return "call_" + "".join(chars)
