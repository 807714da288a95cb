"""llama-server's wire details shared by its endpoints: ids, JSON, error bodies, timings.

Sources (ggml-org/llama.cpp): ``tools/server/server-common.cpp@006639c3`` (``format_error_response``,
``random_string``, ``gen_chatcmplid``), ``tools/server/server-task.cpp@00efb3e1``
(``result_timings::to_json``), ``tools/server/server.cpp`` (``ex_wrapper``: an exception becomes
``{"error": format_error_response(...)}`` with ``code`` as the HTTP status).
"""

from __future__ import annotations

from typing import Any

from mockoss.profiles.base import JSON_MEDIA_TYPE, IdSource, Reply
from mockoss.profiles.replay import IdRecorder
from mockoss.profiles.wire import dumps  # safe_json_to_str: nlohmann dump(-1)

__all__ = ["ERROR_TYPES", "dumps", "error_object", "error_reply", "random_string", "timings"]

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

#: HTTP status → ``format_error_response`` type. Statuses llama-server never produces get
#: ``invalid_request_error`` (4xx) or ``server_error`` (5xx).
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    500: "server_error",
    501: "not_supported_error",
    503: "unavailable_error",
}

def random_string(ids: IdSource) -> str:
    """``random_string()``: 32 characters from ``[0-9A-Za-z]``, drawn deterministically from ``ids``
    (from an :class:`~mockoss.profiles.replay.IdRecorder`: its marker, drawn when replayed)."""
    if ids.__class__ is IdRecorder:
        return ids.call(random_string)  # type: ignore[attr-defined]
    number = int(ids.next() + ids.next(), 16)
    out = []
    for _ in range(32):
        number, digit = divmod(number, 62)
        out.append(_ALPHABET[digit])
    return "".join(out)


def error_object(status: int, message: str) -> dict[str, Any]:
    """``format_error_response``: ``{"code": status, "message": …, "type": …}``."""
    kind = ERROR_TYPES.get(status) or ("invalid_request_error" if status < 500 else "server_error")
    return {"code": status, "message": message, "type": kind}


def error_reply(status: int, message: str) -> Reply:
    """A non-streamed error: ``{"error":{"code":N,"message":…,"type":…}}`` with status ``N``."""
    return Reply(status=status, media_type=JSON_MEDIA_TYPE, body=dumps({"error": error_object(status, message)}).encode())


def timings(prompt_n: int, predicted_n: int, prompt_per_second: float, predicted_per_second: float) -> dict[str, Any]:
    """``result_timings::to_json`` from token counts and fixed rates (tokens/s), so output is
    deterministic: ``prompt_ms = prompt_n / prompt_per_second * 1000`` (ms), and so on."""
    prompt_ms = prompt_n / prompt_per_second * 1e3
    predicted_ms = predicted_n / predicted_per_second * 1e3
    return {
        "cache_n": 0,
        "prompt_n": prompt_n,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_ms / prompt_n if prompt_n else 0.0,
        "prompt_per_second": prompt_per_second,
        "predicted_n": predicted_n,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_ms / predicted_n if predicted_n else 0.0,
        "predicted_per_second": predicted_per_second,
    }
