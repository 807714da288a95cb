"""The first Responses ``function_call_output`` whose call the request's ``input`` does not hold.

The OpenAI API refuses such an item (:mod:`mockoss.profiles.openai.responses_input` says how and
why): it looks for a ``function_call`` item with the same ``call_id`` before the output, in
``input`` order. trtllm-serve refuses one too, but finds fewer calls than are there (pydantic
reads a hand-written call as a TypedDict its ``isinstance`` check misses), so it has its own
search (:func:`mockoss.profiles.trtllm.responses_input.first_unfound_output`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["first_orphan_output"]


def first_orphan_output(items: Any) -> str | None:
    """The ``call_id`` of the first ``function_call_output`` item of ``items`` (a Responses
    ``input``; anything but a list holds none) with no ``function_call`` item of that ``call_id``
    before it, else ``None``. Items that are not objects, and ids that are not strings, are
    passed over (the request's validation answers them)."""
    if type(items) is not list:
        return None
    calls: set[str] = set()
    for item in items:
        if type(item) is not dict:
            continue
        kind, call_id = item.get("type"), item.get("call_id")
        if kind == "function_call" and type(call_id) is str:
            calls.add(call_id)
        elif kind == "function_call_output" and type(call_id) is str and call_id not in calls:
            return call_id
    return None
