"""Validate a request body in slices, so that a huge one does not hold the GIL for its whole length.

pydantic-core validates a model in one call that holds the GIL: 20,000 chat messages take
~120 ms, during which no other thread (the event loop included) runs, even when the request is
answered on a worker thread (:mod:`mockoss.server.offload`). :func:`validate_request` validates
the items of each long ``list[Model]`` field a slice at a time (the interpreter can switch
threads between slices), then the model with those items already built (pydantic does not
validate an instance of the field's own model class again: ``revalidate_instances='never'``, its
default). The result is the same object :meth:`BaseModel.model_validate` gives; on any error the
body is validated whole again, so the error and its location are exactly pydantic's.

A schema with a ``quick_validate(body, max_items)``
(:meth:`mockoss.schemas.chat.ChatCompletionRequest.quick_validate`) is asked first: it gives a
request only when the schema certainly accepts the body and no list is longer than ``max_items``
(a lighter model of the same fields, without a model instance per item), else ``None`` and the
schema validates as above, so decisions and errors are the schema's.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

__all__ = ["SLICE_ITEMS", "validate_request"]

#: Items validated per call (~3 ms of GIL for chat messages).
SLICE_ITEMS = 500


@functools.cache
def _long_fields(schema: type[BaseModel]) -> tuple[tuple[str, TypeAdapter[Any]], ...]:
    """``(body key, adapter of list[item])`` for each field annotated ``list[SomeModel]`` or
    ``list[SomeModel] | None`` (a chat request's ``tools``: 100,000 of them held the GIL ~1.4 s in
    one call, ``benchmarks/bench_isolation.py`` case ``tools100k``)."""
    found = []
    for name, field in schema.model_fields.items():
        annotation = field.annotation
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            lists = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            annotation = lists[0] if len(lists) == 1 else None
        if typing.get_origin(annotation) is list:
            (item,) = typing.get_args(annotation) or (None,)
            if isinstance(item, type) and issubclass(item, BaseModel) and item.model_config.get("revalidate_instances", "never") == "never":
                found.append((field.alias or name, TypeAdapter(list[item])))  # type: ignore[valid-type]
    return tuple(found)


@functools.cache
def _quick(schema: type[BaseModel]) -> Callable[[Any, int], BaseModel | None] | None:
    """The schema's ``quick_validate``, if it has one."""
    return getattr(schema, "quick_validate", None)


def validate_request(schema: type[BaseModel], body: Mapping[str, Any]) -> BaseModel:
    """``schema.model_validate(body)``, long item lists validated :data:`SLICE_ITEMS` at a time;
    or, when ``schema.quick_validate(body, SLICE_ITEMS)`` accepts the body (it declines longer
    lists), its lighter request (e.g. :class:`mockoss.schemas.chat.QuickChatRequest`: the same
    fields and ``view``).

    Raises:
        ValidationError: exactly as ``schema.model_validate(body)`` raises it.
    """
    quick = _quick(schema)
    if quick is not None and (request := quick(body, SLICE_ITEMS)) is not None:
        return request
    long = [(key, adapter) for key, adapter in _long_fields(schema) if isinstance(body.get(key), list) and len(body[key]) > SLICE_ITEMS]
    if not long:
        # schema.model_validate(body) without its keyword handling: ~0.3 us less, the same result or error
        return schema.__pydantic_validator__.validate_python(body)  # type: ignore[no-any-return]
    patched = dict(body)
    try:
        for key, adapter in long:
            items = body[key]
            built: list[Any] = []
            for start in range(0, len(items), SLICE_ITEMS):
                built += adapter.validate_python(items[start : start + SLICE_ITEMS])
            patched[key] = built
        return schema.model_validate(patched)
    except ValidationError:
        return schema.model_validate(body)  # pydantic's own error, with its locations
