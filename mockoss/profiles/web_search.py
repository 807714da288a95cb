"""The ``web_search_call`` output item of a ``browser.*`` call, as SGLang and TensorRT-LLM map it.

Both servers carry the same early copy of vLLM's ``parse_output_message``
(sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/harmony_utils.py,
NVIDIA/TensorRT-LLM ``tensorrt_llm/serve/responses_utils.py``, checked against each by running
them: ``tools/sglang_serving_diff.py``, ``tools/trtllm_responses_diff.py``): the call's one text is
read as JSON (orjson there; a parse failure's wording here is Python's), the action gets a
``cursor:`` prefix, ``browser.find`` without ``pattern`` fails with ``str(KeyError)``. vLLM's own
later version differs (an invalid-JSON placeholder, ``find_in_page``): :mod:`mockoss.profiles.vllm.responses`.
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
    except ValueError as exc:
        raise error(str(exc)) from None
    if not isinstance(call, dict):
        raise error(f"'{type(call).__name__}' object has no attribute 'get'")
    if recipient == "browser.search":
        action = {"query": f"cursor:{call.get('query', '')}", "type": "search", "sources": None}
    elif recipient == "browser.open":
        action = {"type": "open_page", "url": f"cursor:{call.get('url', '')}"}
    elif recipient == "browser.find":
        if "pattern" not in call:
            raise error("'pattern'")
        action = {"pattern": call["pattern"], "type": "find", "url": f"cursor:{call.get('url', '')}"}
    else:
        raise error(f"Unknown browser action: {recipient}")
    return {"id": ids.next("ws_"), "action": action, "status": "completed", "type": "web_search_call"}
