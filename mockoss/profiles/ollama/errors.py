"""Ollama's error replies: native, OpenAI-compatible, and gin's route errors.

* Native routes (``/api/*``) answer ``c.JSON(status, gin.H{"error": message})``: the body
  ``{"error":"…"}`` (Go JSON, no trailing newline), ``Content-Type: application/json; charset=utf-8``.
* OpenAI-compatible routes (``/v1/*``) pass that through ``middleware.BaseWriter.writeError``:
  ``{"error":{"message":"…","type":"invalid_request_error"|"not_found_error"|"api_error",
  "param":null,"code":null}}`` plus a newline (``json.Encoder``), ``Content-Type: application/json``
  (``openai.NewError``: 400 → ``invalid_request_error``, 404 → ``not_found_error``, else
  ``api_error``).
* A ``/v1`` stream that a failed tool-call parse cuts short ends without its finish chunk or
  ``[DONE]`` (``response.completed`` on ``/v1/responses``), and the error text never reaches the
  client; Ollama logs nothing about it (only gin's ``200`` access line), so the request log carries
  :func:`stream_cut_note`, a ``mockoss:`` line that says why the answer stopped.
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
    "stream_cut_note",
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


def stream_cut_note(error: str, missing: str) -> str:
    """The request-log line (``RecordedRequest.server_log``) of a ``/v1`` stream that a failed
    tool-call parse (or, with ``token_repeat="100-error"``, the runner's repeat abort) cut short;
    ``error`` is the parser's ``error parsing tool call: …`` (or the abort's), ``missing``
    what the client never gets (``"a finish_reason chunk or data: [DONE]"``).

    Ollama writes nothing to its log here: the harmony parser returns the error
    (``harmony/harmonyparser.go`` ``HarmonyMessageHandler.Add``), ``ChatHandler`` sends it down
    its channel as ``gin.H{"error": …}`` without a log call, ``streamResponse`` encodes it as the
    stream's last NDJSON line (it logs only when that encoding fails), and ``ChatWriter`` decodes
    the line as an empty ``api.ChatResponse`` (``middleware/openai.go``; all at
    ollama/ollama@fb307609). The line is mockoss's, so that a failure report explains an empty
    answer. A newline in the error (the raw arguments') is written ``\\n``, so the note is one line."""
    error = error.replace("\n", "\\n")
    cause = "Ollama's parser failed on the tool call"
    if error.startswith("prediction aborted"):  # ollama/ollama#18374: the runner's repeat abort
        cause = "Ollama's runner aborted a repeating generation"
    return (
        f"mockoss: the stream stops here without {missing}: {cause} "
        f"({error}); its /v1 layer reads the error line as an empty chunk, so the client never sees "
        "the error, and Ollama logs nothing but the 200 (server/routes.go streamResponse, "
        "middleware/openai.go ChatWriter, ollama/ollama@fb307609)"
    )
