"""The request headers of an ASGI scope as the request path reads them (:func:`header_map`).

Split out of :mod:`mockoss.server.control` (which re-exports :func:`header_map`) with the cache of
header blocks it gained.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

from starlette.types import Scope

from mockoss.scenario.conversation import SharedHeaders
from mockoss.server.records import header_items

__all__ = ["header_map"]

#: Header maps by the raw header block they were made from, its ``content-length`` value left out
#: (:func:`header_map`), with that value and the map's index of it: at most :data:`_BLOCKS_MAX`
#: blocks of up to :data:`_BLOCK_PAIRS` pairs and :data:`_BLOCK_BYTES` bytes each, emptied when
#: full. A pair costs ~200 B kept besides its bytes (the raw pair and its two bytes objects, the
#: map's entry and two strings, the log's pair): full, 128 blocks of 32 pairs hold 0.6-0.9 MB
#: (one-byte names) and 1.1 MB (2 KB in each; tracemalloc): under 1.5 MB, which
#: tests/server/test_header_blocks.py bounds under 2 MB. 512 blocks and no cap on pairs held
#: 34.7 MB in 512 blocks of 500 short pairs (issue 9, eleventh-session review, finding 4).
_BLOCKS: dict[tuple[Any, ...], tuple[SharedHeaders, Any, int]] = {}
_BLOCKS_MAX = 128
_BLOCK_PAIRS = 32
_BLOCK_BYTES = 2048
_LENGTH = b"content-length"
#: What stands for the ``content-length`` pair in a block's key.
_LENGTH_KEY = (_LENGTH, None)
#: Where the last block had its ``content-length`` (a client puts it at the same place every time).
_at = [0]


def header_map(scope: Scope) -> dict[str, str]:
    """The request headers as a dict (lower-case names; for a repeated header the first value
    wins, as ``Headers.get`` does), built once per request and kept in ``scope["state"]``.

    A client sends the same header block request after request (its host, content type, user
    agent, authorization), but ``content-length`` follows the body: an agent's conversation grows,
    so its length differs every turn. The map of a block seen before (looked up by the raw
    ``(name, value)`` byte pairs but ``content-length``'s value, so equal only for the same bytes
    in the same order) is a read-only :class:`~mockoss.scenario.conversation.SharedHeaders` whose
    ``pairs`` the request log takes as they are (:func:`mockoss.server.logentry._record`): the
    block's when the length is the same too, else a copy of it with the new length (a dict copy
    and one pair), which the block keeps for its next request. Decoding and lower-casing each
    header and the log's pairs cost ~1.5 us a request before (3 headers, timeit). Keyed by the
    whole block, a new length cost more than that (issue 9, eleventh-session review, finding 5);
    6 headers, a new length every request, map and log pairs (callgrind, same run): 39.3k
    instructions in the build before 831991d, 51.3k keyed by the whole block, 21.7k now; the same
    block every time: 9.6k keyed by the whole block, 9.1k now.
    """
    state = scope.get("state")
    cached = state.get("mockoss.headers") if state is not None else None
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    raw = scope.get("headers", ())
    headers = None
    key: Any = None
    if type(raw) is list:
        at = _at[0]
        if not (at < len(raw) and raw[at][0] == _LENGTH):
            at = _length_at(raw)
        try:
            if at < 0:
                key = tuple(raw)
            else:
                length = raw[at][1]
                key = raw.copy()
                key[at] = _LENGTH_KEY
                key = tuple(key)
            entry = _BLOCKS.get(key)
        except TypeError:  # pairs that are lists (not hashable): made afresh every time
            key = entry = None
        if entry is not None:
            headers, sent, index = entry
            if at >= 0 and length != sent:
                headers = _with_length(headers, index, length)
                if len(length) <= 32:
                    _BLOCKS[key] = (headers, length, index)
    if headers is None:
        headers = SharedHeaders()
        for name, value in raw:
            dict.setdefault(headers, name.decode("latin-1").lower(), value.decode("latin-1"))
        headers.pairs = header_items(headers)
        if key is not None:
            _keep(key, raw, at, headers)
    scope.setdefault("state", {})["mockoss.headers"] = headers
    return headers


def _length_at(raw: list[Any]) -> int:
    """The index of ``raw``'s first ``content-length`` pair, -1 if none (and where to look first next time)."""
    for at, pair in enumerate(raw):
        if pair[0] == _LENGTH:
            _at[0] = at
            return at
    return -1


def _with_length(headers: SharedHeaders, index: int, length: bytes) -> SharedHeaders:
    """``headers`` with another ``content-length`` value (its ``index``-th header)."""
    value = length.decode("latin-1")
    made = SharedHeaders(headers)
    dict.__setitem__(made, "content-length", value)
    pairs = headers.pairs
    made.pairs = (*pairs[:index], ("content-length", value), *pairs[index + 1 :])
    return made


def _keep(key: tuple[Any, ...], raw: list[Any], at: int, headers: SharedHeaders) -> None:
    """Keep ``headers`` for ``key`` if the block is small enough, and if its ``content-length``
    is the map's (no earlier pair is named so in other case)."""
    if len(key) > _BLOCK_PAIRS or sum(map(len, chain.from_iterable(raw))) > _BLOCK_BYTES:
        return
    index = -1
    if at >= 0:
        if any(name.lower() == _LENGTH for name, _ in raw[:at]):
            return
        index = list(headers).index("content-length")
    if len(_BLOCKS) >= _BLOCKS_MAX:
        _BLOCKS.clear()
    _BLOCKS[key] = (headers, raw[at][1] if at >= 0 else None, index)
