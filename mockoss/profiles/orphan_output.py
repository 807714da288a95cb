"""The first Responses ``function_call_output`` whose call the request's ``input`` does not hold.

The OpenAI API refuses such an item (:mod:`mockoss.profiles.openai.responses_input` says how and
why): it looks for a ``function_call`` item with the same ``call_id`` before the output, in
``input`` order. A server that finds fewer calls than are there passes its own test of which
``function_call`` items count as ``is_call``; the search is the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["first_orphan_output"]


def first_orphan_output(items: Any, *, is_call: Callable[[dict[str, Any]], bool] | None = None) -> str | None:
    """The ``call_id`` of the first ``function_call_output`` item of ``items`` (a Responses
    ``input``; anything but a list holds none) with no ``function_call`` item of that ``call_id``
    before it, else ``None``. Items that are not objects, and ids that are not strings, are
    passed over (the request's validation answers them).

    ``is_call``: whether the server finds a ``function_call`` item (a ``dict`` with a string
    ``call_id``) as a call; default: every one is found. trtllm-serve finds only those pydantic
    reads as the SDK's model (:mod:`mockoss.profiles.trtllm.responses_input`)."""
    if type(items) is not list:
        return None
    calls: set[str] = set()
    for item in items:
        if type(item) is not dict:
            continue
        kind, call_id = item.get("type"), item.get("call_id")
        if kind == "function_call" and type(call_id) is str and (is_call is None or is_call(item)):
            calls.add(call_id)
        elif kind == "function_call_output" and type(call_id) is str and call_id not in calls:
            return call_id
    return None
