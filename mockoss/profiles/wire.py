"""JSON as the emulated servers write it on the wire."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]

_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def dumps(value: Any) -> str:
    """Compact JSON with UTF-8 kept, keys in insertion order: what pydantic's
    ``model_dump_json``, Starlette's ``JSONResponse`` (vLLM) and nlohmann's ``dump(-1)``
    (llama.cpp) write. Same output as ``json.dumps(value, separators=(",", ":"),
    ensure_ascii=False)``, with one shared encoder instead of one per call."""
    return _ENCODE(value)
