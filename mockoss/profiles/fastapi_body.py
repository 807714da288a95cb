"""What FastAPI does with a request body before a route runs, for the profiles of FastAPI servers
(vLLM, SGLang, TensorRT-LLM, vllm-mlx, the gpt-oss reference server) that answer a generation
``POST`` not sent as ``application/json`` (their ``content_type_refusal``, called by
:mod:`mockoss.server.content_type`).

FastAPI reads the body and parses it as JSON only under ``application/json`` or
``application/*+json`` (parameters ignored; the header read with ``email.message.Message``), and
only when the body is not empty; a parse error is answered first, as a ``RequestValidationError``
(``json_invalid``). A body it does not parse is handed to the route's pydantic model as its
bytes, which pydantic refuses (``model_attributes_type`` at ``["body"]``, the text as ``input``).
A request with no ``Content-Type`` (or an empty one: ``if not content_type_value``) was parsed as
JSON up to fastapi 0.131.0 and is not from 0.132.0 (``strict_content_type``, default true,
fastapi/fastapi#14978, released 2026-02-23). Read in the fastapi 0.131.0, 0.132.0 and 0.165.0
wheels (``fastapi/routing.py`` ``get_request_handler``); the 422 run here with fastapi 0.165.0.

Which FastAPI a server runs is its own: see each profile's ``content_type_refusal`` and its
``strict_content_type`` switch where the server's pins allow both sides of 0.132.
Profiles layer: no server import (the server core imports this module through
:mod:`mockoss.server.content_type`).
"""

from __future__ import annotations

import email.message

from mockoss.profiles.base import Reply
from mockoss.profiles.wire import dumps

__all__ = [
    "MEDIA_TYPE_REFUSAL",
    "NOT_AN_OBJECT",
    "SGLANG_MESSAGE",
    "VLLM_MESSAGE",
    "fastapi_parses",
    "fastapi_text_reply",
    "parse_error_first",
    "unparsed_body",
]

#: The error of vLLM's and SGLang's ``validate_json_request`` dependency.
MEDIA_TYPE_REFUSAL = "Unsupported Media Type: Only 'application/json' is allowed"
#: vLLM 0.33.0's message (``validation_exception_handler`` over a one-string error list), see
#: :meth:`mockoss.profiles.vllm.VllmProfile.content_type_refusal`.
VLLM_MESSAGE = f"1 validation error:\n  {MEDIA_TYPE_REFUSAL}"
_SGLANG_ERROR = repr({"loc": ["header", "content-type"], "msg": MEDIA_TYPE_REFUSAL, "type": "value_error"})
#: SGLang 0.5.23's message: FastAPI's ``str(exc)``, a space, ``str(exc.errors())``, see
#: :meth:`mockoss.profiles.sglang.SglangProfile.content_type_refusal`.
SGLANG_MESSAGE = f"1 validation error:\n  {_SGLANG_ERROR} [{_SGLANG_ERROR}]"
#: pydantic's ``model_attributes_type`` message (a model given bytes).
NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from"


def fastapi_parses(content_type: str | None, strict: bool = True) -> bool:
    """Whether FastAPI parses a (non-empty) body sent with this ``Content-Type`` as JSON before the
    route's dependencies run: ``application/json`` or ``application/*+json``, parameters ignored;
    no header (``None`` or ``""``): only when ``strict`` is false (fastapi <= 0.131)."""
    if not content_type:
        return not strict
    message = email.message.Message()
    message["content-type"] = content_type
    if message.get_content_maintype() != "application":
        return False
    subtype = message.get_content_subtype()
    return subtype == "json" or subtype.endswith("+json")


def parse_error_first(content_type: str | None, parsed: bool, raw: bytes, strict: bool) -> bool:
    """Whether FastAPI answers the request with its JSON parse error before any dependency runs:
    a non-empty body (``raw``) that does not parse (``parsed`` false) sent with a type FastAPI
    parses (:func:`fastapi_parses`). mockoss's usual check then answers it."""
    return bool(raw) and not parsed and fastapi_parses(content_type, strict)


def unparsed_body(content_type: str | None, raw: bytes, strict: bool) -> bool:
    """Whether FastAPI hands the route's model the body's bytes (a non-empty body of a type it
    does not parse), which pydantic refuses (``model_attributes_type``)."""
    return bool(raw) and not fastapi_parses(content_type, strict)


def fastapi_text_reply(raw: bytes) -> Reply:
    """FastAPI's default answer to a body it handed the route as bytes (no exception handler of
    the server's own): 422 ``{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":…,
    "input":<the text>}]}``; bytes that are not UTF-8: Starlette's 500 ``Internal Server Error``
    as ``text/plain`` (``jsonable_encoder``'s ``bytes.decode()`` raises, ``ServerErrorMiddleware``)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Reply(
            status=500, body=b"Internal Server Error", headers=(("content-type", "text/plain; charset=utf-8"),)
        )
    entry = {"type": "model_attributes_type", "loc": ["body"], "msg": NOT_AN_OBJECT, "input": text}
    return Reply(status=422, body=dumps({"detail": [entry]}).encode())
