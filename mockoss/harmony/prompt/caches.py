"""The prompt count's caches (:mod:`mockoss.harmony.prompt.count`): what is kept between requests,
its byte budgets, and how it is emptied and measured.

Every cache here is bounded in bytes (:data:`MESSAGE_CACHE_BYTES` and fractions of it) and holds
counts that depend only on content, so an entry is never stale: :func:`clear_caches`
(``MockServer.reset``, tests) starts them afresh, it corrects nothing. What each cache's
keys are, and why a count found under one is exact, is the count module's docstring; the prefix
caches' keys are :mod:`mockoss.harmony.prompt.prefix`'s. Also here: the shared values of plain
messages' counts (:func:`_plain`), so a new turn leaves fewer new objects behind.

Split from the count module (which keeps re-exporting these names) so that the counting and the
state it keeps read apart; nothing here counts.
"""

from __future__ import annotations

import functools
import sys

from mockoss.harmony.lru import ClockCache
from mockoss.harmony.prompt import bpe
from mockoss.harmony.prompt.pieces import Counted, _heads, _preamble_parts
from mockoss.harmony.prompt.prefix import PrefixCache, RecentKeys

__all__ = ["MESSAGE_CACHE_BYTES", "cache_size", "clear_caches"]

#: Byte budget of the per-message count cache (keys hold the messages' text).
MESSAGE_CACHE_BYTES = 32 * 1024 * 1024

_messages: ClockCache[Counted] = ClockCache(MESSAGE_CACHE_BYTES * 3 // 4)
#: Counts of plain user and assistant messages (``{"role", "content": <string>}`` only, most of a
#: short conversation), keyed by the text alone, one cache per role, within the same total budget
#: as before: no key tuple to build and hash, nor to leave for the garbage collector (a new short
#: chat turn left one; each object a request leaves costs ~0.3 us over HTTP, issue 9).
_user_texts: ClockCache[Counted] = ClockCache(MESSAGE_CACHE_BYTES // 8)
_assistant_texts: ClockCache[Counted] = ClockCache(MESSAGE_CACHE_BYTES // 8)
_preambles: ClockCache[int] = ClockCache(MESSAGE_CACHE_BYTES // 8)
_prefixes = PrefixCache(MESSAGE_CACHE_BYTES // 4)
#: Preamble and suffix counts of chat requests without instructions, tools or reasoning effort, by
#: start date (a handful of entries: the date is a server setting).
_plain_preambles: dict[str, int] = {}
_item_prefixes = PrefixCache(MESSAGE_CACHE_BYTES // 8)  # of Responses input items
#: The marshal bytes of tools lists that accepted chat requests held (:mod:`mockoss.harmony.prompt.seen`).
_valid_tools = RecentKeys(MESSAGE_CACHE_BYTES // 32)


#: Caches outside the prompt count keyed by request data, emptied with it (issue 9 review, the
#: breaker's findings 3, 4 and 9: each survived reset): (module, what empties it). Looked up
#: in ``sys.modules``, never imported: a module not loaded has nothing to clear, and the Harmony
#: layer imports nothing above it (``MockServer.reset`` does the same for Ollama's context cache).
_REQUEST_CACHES = (
    ("mockoss.schemas.chat", "_DECLS.clear"),  # declared tools of chat requests
    ("mockoss.schemas.responses", "_DECLS.clear"),  # of Responses requests
    ("mockoss.scenario.transport", "clear_header_cache"),  # parsed X-Mockoss-Transport values
    ("mockoss.profiles.llamacpp.gptoss", "clear_grammar_cache"),  # llama.cpp's per-request grammars
    ("mockoss.profiles.vllm.responses_echo", "_ECHO_TEMPLATES.clear"),  # vLLM Responses echo templates (by body)
    ("mockoss.upstream.scrub", "_scans.clear"),  # secret scans of recorded texts
    ("mockoss.profiles.ollama.native", "clear_context_cache"),  # Ollama /api/generate context prompt ids
    ("mockoss.jsonbody", "SPLICE.clear"),  # recent request bodies, parsed (mockoss.jsonsplice)
)


def _clear_request_caches() -> None:
    """Clear each listed cache of a module imported already. A module another thread is importing
    right now is in ``sys.modules`` before its caches exist (nothing to clear yet): it is skipped,
    where ``reset()`` raised ``AttributeError: partially initialized module`` (issue 9, eighth
    session's review: a test thread resetting while the server's thread answered its first request)."""
    modules = sys.modules
    for name, path in _REQUEST_CACHES:
        module = modules.get(name)
        if module is None:
            continue
        try:
            clear = functools.reduce(getattr, path.split("."), module)
        except AttributeError:
            if getattr(getattr(module, "__spec__", None), "_initializing", False):
                continue  # being imported by another thread: its caches are not made yet
            raise
        clear()


def clear_caches() -> None:
    """Forget every cached count (``MockServer.reset`` calls this), and empty the caches of
    request data listed in :data:`_REQUEST_CACHES` (declared tools, transport headers, llama.cpp
    grammars, vLLM's Responses echo templates, the recorder's secret scans, Ollama's ``context``
    prompt ids) and the BPE piece counts (:mod:`mockoss.harmony.prompt.bpe`)."""
    _clear_request_caches()
    _messages.clear()
    _user_texts.clear()
    _assistant_texts.clear()
    _preambles.clear()
    _plain_preambles.clear()
    _prefixes.clear()
    _item_prefixes.clear()
    _valid_tools.clear()
    _heads.clear()
    _preamble_parts.clear()
    bpe.clear()


def cache_size() -> int:
    """Bytes held by the count caches."""
    return (
        _messages.size
        + _user_texts.size
        + _assistant_texts.size
        + _preambles.size
        + _prefixes.size
        + _item_prefixes.size
        + _valid_tools.size
        + _heads.size
        + _preamble_parts.size
        + bpe.cache_bytes()
    )


#: The cache values of plain user / assistant messages of up to this many tokens are shared.
_SHARED_COUNTS = 4096
_USER_TURNS: list[Counted | None] = [None] * _SHARED_COUNTS
_FINAL_TURNS: list[Counted | None] = [None] * _SHARED_COUNTS


def _plain(n: int, shared: list[Counted | None], assistant: bool, channel: str | None) -> Counted:
    """``(n, False, ((n, assistant, channel),))``, the cached count of a plain message of ``n``
    tokens, one object per ``n`` below :data:`_SHARED_COUNTS` (immutable, so shared): a new
    conversation turn left three new tuples in the message cache, each walked by the garbage
    collector's next pass (issue 9: ~0.3 us per object a request leaves, over HTTP)."""
    if n < _SHARED_COUNTS:
        found = shared[n]
        if found is None:
            found = shared[n] = (n, False, ((n, assistant, channel),))
        return found
    return (n, False, ((n, assistant, channel),))
