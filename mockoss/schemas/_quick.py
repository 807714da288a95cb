"""What the quick request validators (:func:`mockoss.schemas.chat.quick_validate`,
:func:`mockoss.schemas.responses.quick_validate`, :func:`mockoss.schemas.ollama.quick_validate_chat`)
share: which bodies may take the quick path, and the key check their ``TypedDict`` items need."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic import ValidationError

__all__ = ["keys_are_str", "lists_fit", "quick_or_none", "valid_or_none"]

_STR_ONLY = frozenset((str,))


def lists_fit(body: Any, max_items: int, lists: tuple[str, ...]) -> bool:
    """Whether ``body`` is a ``dict`` whose ``lists`` fields are each absent, ``None`` or a
    ``list`` of at most ``max_items`` (the bodies the quick path takes; longer lists are validated
    by the model a slice at a time: :mod:`mockoss.server.validation`). Only lists take this path:
    the models also accept tuples and iterators, and validating an iterator twice would find it
    consumed."""
    if type(body) is not dict:
        return False
    for key in lists:
        items = body.get(key)
        if items is not None and (type(items) is not list or len(items) > max_items):
            return False
    return True


def valid_or_none(body: Any, validate: Callable[[Any], Any]) -> Any:
    """``validate(body)``, or ``None`` if it raises a :class:`ValidationError`."""
    try:
        return validate(body)
    except ValidationError:
        return None


def quick_or_none(body: Any, max_items: int, lists: tuple[str, ...], validate: Callable[[Any], Any]) -> Any:
    """``validate(body)`` when :func:`lists_fit` and ``validate`` accepts it; else ``None`` (the
    caller validates with the model)."""
    return valid_or_none(body, validate) if lists_fit(body, max_items, lists) else None


def keys_are_str(dicts: Iterable[Any]) -> bool:
    """Whether every key of every dict in ``dicts`` is a ``str`` (a model refuses any other key,
    ``invalid_key``, where a ``TypedDict`` ignoring unknown keys would not look). The distinct keys
    are gathered first: a set union reads a dict's keys with their stored hashes (~1.5 us for 50
    messages, half the time of checking each key's type). So a key is checked once per distinct
    value: exact for JSON (whose keys are all ``str``); only Python code could build a non-``str``
    key that hashes and compares equal to a ``str`` key of another item and slips by."""
    return _STR_ONLY.issuperset(map(type, set().union(*dicts)))
