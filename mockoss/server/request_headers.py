"""The request headers of an ASGI scope as the request path reads them (:func:`header_map`).

Split out of :mod:`mockoss.server.control` (which re-exports :func:`header_map`) with the cache of
header blocks it gained.
"""

from __future__ import annotations

from typing import Any

from starlette.types import Scope

from mockoss.scenario.conversation import SharedHeaders
from mockoss.server.records import header_items

__all__ = ["header_map"]

#: Header maps by the raw header block they were made from (:func:`header_map`): at most
#: :data:`_BLOCKS_MAX` blocks of up to :data:`_BLOCK_BYTES` bytes each (~2 MB at most, emptied when full).
_BLOCKS: dict[tuple[Any, ...], SharedHeaders] = {}
_BLOCKS_MAX = 512
_BLOCK_BYTES = 2048


def header_map(scope: Scope) -> dict[str, str]:
    """The request headers as a dict (lower-case names; for a repeated header the first value
    wins, as ``Headers.get`` does), built once per request and kept in ``scope["state"]``.

    A client sends the same header block request after request (its host, content type, user
    agent, authorization; ``content-length`` over a few values): the map of a block seen before
    is that block's :class:`~mockoss.scenario.conversation.SharedHeaders` (read-only, looked up by
    the raw ``(name, value)`` byte pairs, so equal only for the same bytes in the same order),
    whose ``pairs`` the request log takes as they are (:func:`mockoss.server.logentry._record`).
    Decoding and lower-casing each header and the log's pairs cost ~1.5 us a request before
    (3 headers, timeit); a known block costs a hash of its bytes."""
    state = scope.get("state")
    cached = state.get("mockoss.headers") if state is not None else None
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    raw = scope.get("headers", ())
    key: tuple[Any, ...] | None = tuple(raw) if type(raw) is list else None
    headers = None
    if key is not None:
        try:
            headers = _BLOCKS.get(key)
        except TypeError:  # pairs that are lists (not hashable): made afresh every time
            key = None
    if headers is None:
        headers = SharedHeaders()
        for name, value in raw:
            dict.setdefault(headers, name.decode("latin-1").lower(), value.decode("latin-1"))
        headers.pairs = header_items(headers)
        if key is not None and sum(len(name) + len(value) for name, value in key) <= _BLOCK_BYTES:
            if len(_BLOCKS) >= _BLOCKS_MAX:
                _BLOCKS.clear()
            _BLOCKS[key] = headers
    scope.setdefault("state", {})["mockoss.headers"] = headers
    return headers
