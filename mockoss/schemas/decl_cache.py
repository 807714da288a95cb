"""Shared (frozen) :class:`~mockoss.profiles.base.ToolDecl` instances by key, bounded in bytes:
the caches of declared tools that the chat and Responses request schemas keep
(:data:`mockoss.schemas.chat._DECLS`, :data:`mockoss.schemas.responses._DECLS`).

Split out of :mod:`mockoss.schemas.chat` (a pure move; chat re-exports :class:`DeclCache` and the
limits). A hit is the same plain ``dict`` lookup as before; a miss reads this module's globals as it
read chat's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from mockoss.profiles.base import ToolDecl

__all__ = ["TOOL_DECL_CACHE_BYTES", "TOOL_DECL_CACHE_CHARS", "DeclCache"]


#: Longest key (characters: a tool's name, or its type and name) whose :class:`ToolDecl` is kept
#: by a :class:`DeclCache`. Real tool names are short (OpenAI allows 64 characters; agents' run
#: to ~40): one over it gets a new instance each time instead of holding its megabytes in the
#: cache (issue 9 review, the breaker's finding 3: 500 requests declaring one 1 MB name each
#: grew a server by ~600 MB that reset did not free).
TOOL_DECL_CACHE_CHARS = 256
#: Byte budget of each :class:`DeclCache` (the keys' strings, the instances, the slots).
TOOL_DECL_CACHE_BYTES = 1024 * 1024
#: What an entry costs beyond its key's characters: the dict slot, the str and tuple headers, the
#: :class:`ToolDecl` (CPython 3.11, 64-bit, rounded up; a non-ASCII key is counted 4 bytes a character).
_DECL_ENTRY_BYTES = 320


class DeclCache(dict):  # type: ignore[type-arg]
    """Shared (frozen) :class:`ToolDecl` instances by key, bounded in bytes: ``cache[key]`` is
    ``make(key)``, kept when ``chars(key)`` is at most :data:`TOOL_DECL_CACHE_CHARS`.

    A hit is a plain ``dict`` lookup (``tuple(map(cache.__getitem__, names))``, no Python call
    per name); a miss (``__missing__``) makes the instance and stores it if its key is short,
    first emptying the whole cache when the entry would pass :data:`TOOL_DECL_CACHE_BYTES`
    (a request's tools are re-made once then, ~0.3 us each). ``size`` is the bytes held (an
    estimate: :data:`_DECL_ENTRY_BYTES` plus 4 bytes a character). ``clear`` (``MockServer.reset``,
    through :func:`mockoss.harmony.prompt.caches.clear_caches`) empties it.
    """

    __slots__ = ("_chars", "_make", "limit", "size")

    def __init__(self, make: Callable[[Any], ToolDecl], chars: Callable[[Any], int], limit: int = TOOL_DECL_CACHE_BYTES) -> None:
        super().__init__()
        self._make, self._chars, self.limit, self.size = make, chars, limit, 0

    def __missing__(self, key: Any) -> ToolDecl:
        decl = self._make(key)
        chars = self._chars(key)
        if chars > TOOL_DECL_CACHE_CHARS:
            return decl
        cost = _DECL_ENTRY_BYTES + 4 * chars
        with _decl_lock:
            if self.size + cost > self.limit:
                super().clear()
                self.size = 0
            found = self.setdefault(key, decl)
            if found is decl:
                self.size += cost
        return found  # type: ignore[no-any-return]

    def clear(self) -> None:
        """Drop every entry."""
        with _decl_lock:
            super().clear()
            self.size = 0



_decl_lock = threading.Lock()
