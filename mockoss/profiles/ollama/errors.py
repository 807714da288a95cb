"""Ollama's error replies: native, OpenAI-compatible, and gin's route errors.

* Native routes (``/api/*``) answer ``c.JSON(status, gin.H{"error": message})``: the body
  ``{"error":"…"}`` (Go JSON, no trailing newline), ``Content-Type: application/json; charset=utf-8``.
* OpenAI-compatible routes (``/v1/*``) pass that through ``middleware.BaseWriter.writeError``:
  ``{"error":{"message":"…","type":"invalid_request_error"|"not_found_error"|"api_error",
  "param":null,"code":null}}`` plus a newline (``json.Encoder``), ``Content-Type: application/json``
  (``openai.NewError``: 400 → ``invalid_request_error``, 404 → ``not_found_error``, else
  ``api_error``).
* Unknown routes: gin's ``404 page not found``; a known path with another method:
  ``405 method not allowed`` with an ``Allow`` header (``HandleMethodNotAllowed`` is on), both
  ``Content-Type: text/plain``.

Sources: ``ollama/ollama:server/routes.go``, ``openai/openai.go``, ``middleware/openai.go@fb307609``;
``gin-gonic/gin:gin.go,render/json.go@v1.10.0``.
"""

from __future__ import annotations

from mockoss.profiles.base import JSON_MEDIA_TYPE, Reply
from mockoss.profiles.ollama.gojson import quote

__all__ = [
    "GO_JSON",
    "native_error",
    "openai_error",
    "openai_error_body",
    "plain",
]

#: gin's ``c.JSON`` content type.
GO_JSON = (("content-type", "application/json; charset=utf-8"),)


def _openai_type(status: int) -> str:
    return {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")


def native_error(status: int, message: str) -> Reply:
    """``c.JSON(status, gin.H{"error": message})``."""
    return Reply(status=status, body=('{"error":' + quote(message) + "}").encode(), headers=GO_JSON)


def openai_error_body(status: int, message: str) -> bytes:
    """``openai.NewError(status, message)`` as ``json.Encoder`` writes it (newline included)."""
    return (
        f'{{"error":{{"message":{quote(message)},"type":"{_openai_type(status)}","param":null,"code":null}}}}\n'
    ).encode()


def openai_error(status: int, message: str) -> Reply:
    """An OpenAI-compatible route's error reply."""
    return Reply(status=status, media_type=JSON_MEDIA_TYPE, body=openai_error_body(status, message))


def plain(status: int, text: str, *, content_type: str = "text/plain", allow: str | None = None) -> Reply:
    """A plain-text reply (gin's ``404 page not found``/``405 method not allowed``, ``c.String``)."""
    headers: tuple[tuple[str, str], ...] = (("content-type", content_type),)
    if allow is not None:
        headers += (("allow", allow),)
    return Reply(status=status, body=text.encode(), headers=headers)
