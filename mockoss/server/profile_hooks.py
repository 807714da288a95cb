"""Two optional profile hooks the server core calls on a request's path: its refusal and its count.

* :func:`refusal`: the profile's ``request_refusal(endpoint, body)`` (a refusal before
  generating: llamacpp's message checks, SGLang's chat template), given the body's bytes as the
  keyword ``raw`` when the profile's method takes it (SGLang: its chat template's outcome is kept
  under the bytes, so a resent body is a lookup, not a recount). Methods without ``raw`` are called
  as before.
* :func:`prompt_count`: ``ctx.prompt_tokens`` of a request. A profile whose server counts a
  prompt otherwise than the Harmony render (SGLang's chat template, Ollama's OpenAI layer) may
  define ``own_prompt_tokens(endpoint, body, raw, harmony)`` (``harmony()``: the Harmony count,
  :func:`mockoss.endpoints.prompt_tokens`, computed only when called); without it, or for an
  endpoint it leaves to Harmony, the Harmony count is made as before. The profile's ``surface``
  still replaces a ``ctx.prompt_tokens`` it is handed by a direct caller, which then finds the
  same count kept (by body or by bytes): the core no longer counts the Harmony prompt for a
  count the profile throws away (issue 9: ~40 us of a short SGLang chat request).

Both are looked up per profile class once (:func:`functools.cache` on the type).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from mockoss.endpoints import prompt_tokens

__all__ = ["prompt_count", "refusal"]


@functools.cache
def _refusal_takes_raw(kind: type) -> bool:
    method = getattr(kind, "request_refusal", None)
    try:
        return method is not None and "raw" in inspect.signature(method).parameters
    except (TypeError, ValueError):  # no signature to read: called without raw
        return False


def refusal(profile: Any, endpoint: str, body: Any, raw: bytes) -> Any:
    """``profile.request_refusal(endpoint, body[, raw=raw])`` (a :class:`~mockoss.profiles.base.Reply`
    or ``None``); ``None`` for a profile without the method."""
    own_refusal = getattr(profile, "request_refusal", None)
    if own_refusal is None:
        return None
    if _refusal_takes_raw(type(profile)):
        return own_refusal(endpoint, body, raw=raw)
    return own_refusal(endpoint, body)


@functools.cache
def _own_counter(kind: type) -> Callable[..., int] | None:
    return getattr(kind, "own_prompt_tokens", None)


def prompt_count(profile: Any, endpoint: str, raw: bytes, body: Any, seen: Any) -> int:
    """The request's ``ctx.prompt_tokens``: the profile's ``own_prompt_tokens`` when it has one,
    else the Harmony count (:func:`mockoss.endpoints.prompt_tokens`, ``seen`` as there)."""
    own = _own_counter(type(profile))
    if own is None:
        return prompt_tokens(endpoint, raw, body, seen)
    return own(profile, endpoint, body, raw, lambda: prompt_tokens(endpoint, raw, body, seen))
