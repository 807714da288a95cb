"""vLLM's error bodies, non-streamed and as a chat stream's error chunk.

Two body shapes, chosen by the profile's ``error_body`` switch:

* ``"nested"`` (vLLM ≥ 0.10.1, vllm-project/vllm#22099):
  ``{"error":{"message":…,"type":"BadRequestError","param":null,"code":400}}``.
* ``"flat"`` (before #22099, also the ``0.10.1+gptoss`` launch build, e.g. infiniflow/ragflow#9432):
  ``{"object":"error","message":…,"type":"BadRequestError","param":null,"code":400}``.

``type`` is the exception class name vLLM's ``create_error_response`` gives (``BadRequestError``,
``InternalServerError``, …) or, for an exception that escaped the handler and was turned into an
``HTTPException`` by the API router, the HTTP reason phrase (``Internal Server Error``).
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Literal

from mockoss.profiles.base import JSON_MEDIA_TYPE, Reply

__all__ = ["ERROR_TYPES", "ErrorBody", "error_object", "error_reply", "http_exception_reply", "stream_error_frame"]

#: ``"nested"`` or ``"flat"``; see the module docstring.
ErrorBody = Literal["nested", "flat"]

#: HTTP status → the ``type`` vLLM puts in the error body (the ``HTTPStatus`` phrase in CamelCase,
#: ``Error`` appended), e.g. 400 → ``BadRequestError``, 500 → ``InternalServerError``.
ERROR_TYPES = {
    400: "BadRequestError",
    401: "UnauthorizedError",
    404: "NotFoundError",
    405: "MethodNotAllowedError",
    413: "RequestEntityTooLargeError",
    422: "UnprocessableEntityError",
    429: "TooManyRequestsError",
    500: "InternalServerError",
    501: "NotImplementedError",
    503: "ServiceUnavailableError",
}


def error_object(
    status: int, message: str, *, param: str | None = None, body: ErrorBody = "nested", err_type: str | None = None
) -> dict[str, object]:
    """Return the error body as vLLM builds it (``ErrorResponse.model_dump()``).

    ``err_type`` overrides the class-name type (e.g. ``"Internal Server Error"``).
    """
    kind = err_type or ERROR_TYPES.get(status, "InternalServerError")
    if body == "flat":
        return {"object": "error", "message": message, "type": kind, "param": param, "code": status}
    return {"error": {"message": message, "type": kind, "param": param, "code": status}}


def error_reply(
    status: int, message: str, *, param: str | None = None, body: ErrorBody = "nested", err_type: str | None = None
) -> Reply:
    """A non-streamed error reply with vLLM's body and the given HTTP status (``err_type``: as
    :func:`error_object`)."""
    data = json.dumps(error_object(status, message, param=param, body=body, err_type=err_type), separators=(",", ":")).encode()
    return Reply(status=status, media_type=JSON_MEDIA_TYPE, body=data)


def http_exception_reply(message: str, *, body: ErrorBody = "nested") -> Reply:
    """HTTP 500 for an exception that escaped ``create_chat_completion``.

    vLLM's API router wraps the handler in ``except Exception as e: raise
    HTTPException(500, detail=str(e))`` and its ``http_exception_handler`` answers
    ``ErrorResponse(message=detail, type=HTTPStatus(500).phrase, code=500)``, so ``type`` is
    ``"Internal Server Error"`` (with spaces), not ``InternalServerError``.
    """
    phrase = HTTPStatus(500).phrase
    data = json.dumps(error_object(500, message, body=body, err_type=phrase), separators=(",", ":")).encode()
    return Reply(status=500, media_type=JSON_MEDIA_TYPE, body=data)


def stream_error_frame(status: int, message: str, *, body: ErrorBody = "nested") -> bytes:
    """The SSE frame vLLM writes when a chat stream fails after HTTP 200 was sent.

    ``create_streaming_error_response`` serialises with ``json.dumps`` defaults, so the frame is
    ``data: {"error": {"message": "…", "type": "…", "param": null, "code": N}}\\n\\n`` (flat:
    ``data: {"object": "error", "message": "…", …}``); the stream then ends with
    ``data: [DONE]\\n\\n``.
    """
    return f"data: {json.dumps(error_object(status, message, body=body))}\n\n".encode()
