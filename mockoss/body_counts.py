"""The whole-body prompt count cache: a count kept under a request body's exact bytes.

One cache, bounded in bytes (:data:`BODY_CACHE_BYTES`), for every count that is a function of a
body's bytes: mockoss's own count of an endpoint's prompt (:func:`mockoss.endpoints.prompt_tokens`,
keyed by the endpoint's name) and a profile's own count (:func:`body_count`, keyed by a kind the
profile names: SGLang's chat template, Ollama's OpenAI layer). A body is kept from its second
sighting on (:meth:`~mockoss.harmony.lru.BytesLRU.offer`: most bodies come once), and
:func:`mockoss.endpoints.clear_prompt_caches` (``MockServer.reset``) empties it.

Its own module, below :mod:`mockoss.endpoints` (issue 9 item 3: caches bounded in bytes, cleared
by reset): a profile module that :mod:`mockoss.endpoints` imports for its renderers
(:mod:`mockoss.profiles.ollama.prompt`) can keep its counts here without importing
:mod:`mockoss.endpoints` back (``tests/test_import_layers.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from mockoss.harmony.lru import BytesLRU

__all__ = ["BODY_CACHE_BYTES", "COUNTS", "body_count"]

#: Byte budget of the whole-body count cache (a repeated body costs one lookup).
BODY_CACHE_BYTES = 16 * 1024 * 1024
#: The cache: ``(kind or endpoint name, raw body bytes)`` → prompt tokens.
COUNTS: BytesLRU[int] = BytesLRU(BODY_CACHE_BYTES)


def body_count(kind: str, raw: bytes, count: Callable[[], int]) -> int:
    """A profile's own prompt count of the raw body ``raw`` (``kind`` names it, e.g.
    ``"sglang.chat.no-tools"``; never an endpoint's name, which :func:`mockoss.endpoints.prompt_tokens`
    keys its counts by), kept in :data:`COUNTS`: the same byte budget, admission (a body's second
    sending) and reset. ``count()`` computes it on a miss (what it raises propagates, nothing kept)."""
    key = (kind, raw)
    cached = COUNTS.get(key)
    if cached is not None:
        return cached
    return COUNTS.offer(key, count(), raw.__sizeof__())
