"""The ``web_search_call`` output item of a ``browser.*`` call, as SGLang and TensorRT-LLM map it.

Both servers carry the same early copy of vLLM's ``parse_output_message``
(sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/harmony_utils.py, the same function at
sgl-project/sglang@2aa2e2d0ffda0a44ed9a022fdd9d5d042f365eee;
NVIDIA/TensorRT-LLM@83ab45a50d169b08e29e9bf2f46fc66b3838cc37:tensorrt_llm/serve/responses_utils.py,
the version whose ``process_streaming_events`` takes the ``harmony_adapter``, which
:mod:`mockoss.profiles.trtllm.responses` follows), checked against each by running them:
``tools/sglang_serving_diff.py``, ``tools/trtllm_responses_diff.py``. The call's one text is read as
JSON (orjson in SGLang, whose parse-failure wording differs from the Python wording used here;
Python's ``json.loads`` in TensorRT-LLM, the same wording), then, in the servers' order: ``search``
and ``open`` read ``query``/``url`` with ``.get`` (a JSON value that is not an object fails there
with ``AttributeError``); ``find`` reads ``["pattern"]`` first (``str(KeyError)`` when absent; a
non-object fails with that subscript's ``TypeError``), then ``url``; another ``browser.*`` action
fails with ``Unknown browser action`` whatever the JSON. Each action gets a ``cursor:`` prefix.
vLLM's own later version differs (an invalid-JSON placeholder, ``find_in_page``):
:mod:`mockoss.profiles.vllm.responses`.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["web_search_item"]


def web_search_item(recipient: str, texts: list[str], ids: Any, error: type[Exception]) -> dict[str, Any]:
    """``{"id": "ws_…", "action": {…}, "status": "completed", "type": "web_search_call"}`` for a
    call to ``recipient`` (``browser.search``/``open``/``find``) with content ``texts``; ``ids``
    gives the id (``ids.next("ws_")``).

    Raises:
        error: (the caller's exception class) not exactly one text, text not a JSON object,
            ``browser.find`` without ``pattern``, or another ``browser.*`` action; the message is
            the server's.
    """
    if len(texts) != 1:
        raise error("Invalid number of contents in browser message")
    try:
        call = json.loads(texts[0])
    except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser recurses
        raise error(str(exc)) from None
    if recipient not in ("browser.search", "browser.open", "browser.find"):
        raise error(f"Unknown browser action: {recipient}")  # the servers' else branch: the JSON is not read
    if recipient == "browser.find":
        if not isinstance(call, dict):
            raise error(_subscript_error(call))  # browser_call["pattern"], read before .get("url")
        if "pattern" not in call:
            raise error("'pattern'")
        action = {"pattern": call["pattern"], "type": "find", "url": f"cursor:{call.get('url', '')}"}
    elif not isinstance(call, dict):
        raise error(f"'{type(call).__name__}' object has no attribute 'get'")
    elif recipient == "browser.search":
        action = {"query": f"cursor:{call.get('query', '')}", "type": "search", "sources": None}
    else:
        action = {"type": "open_page", "url": f"cursor:{call.get('url', '')}"}
    return {"id": ids.next("ws_"), "action": action, "status": "completed", "type": "web_search_call"}


def _subscript_error(value: Any) -> str:
    """``str()`` of the ``TypeError`` of ``value["pattern"]`` for a JSON value that is not an
    object, in CPython 3.11+'s wording (which Python the servers' images run is not known; 3.10
    writes ``string indices must be integers`` for a string)."""
    if isinstance(value, list):
        return "list indices must be integers or slices, not str"
    if isinstance(value, str):
        return "string indices must be integers, not 'str'"
    return f"'{type(value).__name__}' object is not subscriptable"
