"""The first Responses ``function_call_output`` whose call the request's ``input`` does not hold.

Two servers refuse such an item, each in its own words (their modules say how and why): the
OpenAI API (:mod:`mockoss.profiles.openai.responses_input`) and trtllm-serve
(:mod:`mockoss.profiles.trtllm.responses_input`, NVIDIA/TensorRT-LLM@83ab45a5
``responses_utils.py`` ``parse_response_input``). Both look for a ``function_call`` item with the
same ``call_id`` before the output, in ``input`` order; what each answers is theirs.
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
