"""vLLM's error bodies, non-streamed and as a chat stream's error chunk.

Current vLLM (2026) answers ``ErrorResponse(error=ErrorInfo(message, type, param, code))``:
``{"error":{"message":…,"type":"BadRequestError","param":null,"code":400}}``.
"""

from __future__ import annotations

import json

from mockoss.profiles.base import JSON_MEDIA_TYPE, Reply

__all__ = ["ERROR_TYPES", "error_object", "error_reply", "stream_error_frame"]

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


def error_object(status: int, message: str, *, param: str | None = None) -> dict[str, object]:
    """Return ``{"error": {"message", "type", "param", "code"}}`` as vLLM builds it."""
    return {
        "error": {
            "message": message,
            "type": ERROR_TYPES.get(status, "InternalServerError"),
            "param": param,
            "code": status,
        }
    }


def error_reply(status: int, message: str, *, param: str | None = None) -> Reply:
    """A non-streamed error reply with vLLM's body and the given HTTP status."""
    body = json.dumps(error_object(status, message, param=param), separators=(",", ":")).encode()
    return Reply(status=status, media_type=JSON_MEDIA_TYPE, body=body)


def stream_error_frame(status: int, message: str) -> bytes:
    """The SSE frame vLLM writes when a chat stream fails after HTTP 200 was sent.

    ``create_streaming_error_response`` serialises with ``json.dumps`` defaults, so the frame is
    ``data: {"error": {"message": "…", "type": "…", "param": null, "code": N}}\\n\\n``; the stream
    then ends with ``data: [DONE]\\n\\n``.
    """
    return f"data: {json.dumps(error_object(status, message))}\n\n".encode()
