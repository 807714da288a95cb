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

A body FastAPI parses and that is not a JSON object (:func:`body_errors`, answered by
:func:`default_reply` or a server's own handler): empty: ``missing`` at ``["body"]``; not JSON:
``json_invalid`` at ``["body", <position>]``; not UTF-8, or nested past the parser's recursion,
or an integer over ``sys.get_int_max_str_digits()``: ``HTTPException(400, "There was an error
parsing the body")``; other JSON: ``model_attributes_type`` with the value as ``input``, except
``null``, which is ``missing`` up to fastapi 0.150.0 (0.151.0 on: ``model_attributes_type``).
Run here: a FastAPI app with one pydantic body route (``tools/fastapi_body_diff.py``) under
fastapi 0.121.3 (starlette 0.49.3), 0.136.0, 0.140.0, 0.151.0 and 0.165.0; the ``null`` boundary
bisected over the released wheels (0.150.0 ``missing``, 0.151.0 not).
A refusal that echoes the request's bytes (a body FastAPI hands the route unparsed:
:func:`fastapi_text_reply`, TensorRT-LLM's ``repr`` of them) echoes at most :data:`ECHO_BYTES` of
them (:func:`echo_cut`): mockoss's bound, not the servers' (they echo it whole), so that memory stays
bounded in bytes: TensorRT-LLM's ``repr`` and JSON escaping write up to 5 bytes per byte, FastAPI's
JSON escaping of a control character 6. A longer body's echo is its first bytes and a marker saying
mockoss cut it; under the bound the reply is the server's byte for byte.
Profiles layer: no server import (the server core imports this module through
:mod:`mockoss.server.content_type`).
"""

from __future__ import annotations

import codecs
import email.message
import json
import math
from typing import Any

from mockoss.profiles.base import Reply
from mockoss.profiles.wire import any_leaf, dumps

__all__ = [
    "ECHO_BYTES",
    "MEDIA_TYPE_REFUSAL",
    "NOT_AN_OBJECT",
    "PARSE_ERROR",
    "SGLANG_MESSAGE",
    "VLLM_MESSAGE",
    "body_errors",
    "default_reply",
    "echo_cut",
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
#: The detail of FastAPI's ``HTTPException(400)`` for a body ``Request.json()`` fails on with
#: anything but a ``JSONDecodeError`` (``get_request_handler``'s ``except Exception``).
PARSE_ERROR = "There was an error parsing the body"
_PLAIN = (("content-type", "text/plain; charset=utf-8"),)
#: Bytes of a request body a refusal echoes (:func:`echo_cut`; mockoss's bound, the servers echo it
#: whole). 1 MiB: a body of that size (a long agent turn is ~0.5 MiB) is echoed as the server echoes
#: it; the reply to a longer one stays under ~5 MiB (TensorRT-LLM's ``repr``, then JSON: at most 5
#: bytes per byte; FastAPI's JSON of control characters: 6) instead of growing with the body (an
#: 8 MiB body was a 40 MiB reply). Read per call: a test may lower it with ``monkeypatch``.
ECHO_BYTES = 1024 * 1024


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


def echo_cut(raw: bytes) -> tuple[bytes, str]:
    """The part of ``raw`` a refusal echoes, and the marker to append after it.

    Returns:
        ``(raw, "")`` when ``raw`` is at most :data:`ECHO_BYTES` long (the server's echo, unchanged);
        else its first :data:`ECHO_BYTES` bytes, backed off to the start of a UTF-8 character (at
        most 3 bytes) so that text that decodes whole still decodes cut, and the marker
        ``" [mockoss: echo cut to the first N of M bytes: mockoss bounds a refusal's echo of the body
        (fastapi_body.ECHO_BYTES); the server echoes it whole]"``.
    """
    limit = ECHO_BYTES
    if len(raw) <= limit:
        return raw, ""
    end = limit
    while end > limit - 3 and raw[end] & 0xC0 == 0x80:  # a continuation byte
        end -= 1
    marker = (
        f" [mockoss: echo cut to the first {end} of {len(raw)} bytes: mockoss bounds a refusal's echo of "
        f"the body (fastapi_body.ECHO_BYTES); the server echoes it whole]"
    )
    return raw[:end], marker


def _valid_utf8(raw: bytes) -> bool:
    """Whether ``raw`` decodes as UTF-8, checked 1 MiB at a time (no copy of the whole body)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(raw), 1 << 20):
            decoder.decode(raw[start : start + (1 << 20)])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def fastapi_text_reply(raw: bytes) -> Reply:
    """FastAPI's default answer to a body it handed the route as bytes (no exception handler of
    the server's own): 422 ``{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":…,
    "input":<the text>}]}``; bytes that are not UTF-8: Starlette's 500 ``Internal Server Error``
    as ``text/plain`` (``jsonable_encoder``'s ``bytes.decode()`` raises, ``ServerErrorMiddleware``).
    A body over :data:`ECHO_BYTES` is echoed cut, :func:`echo_cut`'s marker at the end of ``input``
    (mockoss's bound; the whole body decides the 500)."""
    echoed, marker = echo_cut(raw)
    if not _valid_utf8(raw):
        return Reply(status=500, body=b"Internal Server Error", headers=_PLAIN)
    text = echoed.decode("utf-8") + marker
    entry = {"type": "model_attributes_type", "loc": ["body"], "msg": NOT_AN_OBJECT, "input": text}
    return Reply(status=422, body=dumps({"detail": [entry]}).encode())


def _missing() -> dict[str, Any]:
    return {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}


def body_errors(body: Any, raw: bytes | None, *, null_missing: bool = False) -> list[dict[str, Any]] | str | None:
    """FastAPI's refusal of a body it parsed as JSON (or found empty) that is not a JSON object,
    before the route runs, for a route whose one body parameter is a pydantic model.

    Args:
        body: the parsed body (``None`` when ``raw`` did not parse); read only when ``raw`` is
            ``None`` (an in-process call).
        raw: the body's bytes, parsed again here with :func:`json.loads` (what Starlette's
            ``Request.json()`` runs), so the error position and message are ``json``'s.
        null_missing: a JSON ``null`` is ``missing`` (fastapi <= 0.150.0; see the module).

    Returns:
        ``RequestValidationError.errors()``: a list of one entry ``{type, loc, msg, input[,
        ctx]}``, ``loc`` a tuple as FastAPI builds it: ``missing`` (``raw`` empty), ``json_invalid``
        (``loc ("body", pos)``, ``input {}``, ``ctx {"error": msg}``) or ``model_attributes_type``
        (``input`` the parsed value); or the string :data:`PARSE_ERROR` (a 400 ``HTTPException``:
        not UTF-8, too deep, a too long integer); or ``None`` when ``raw`` is ``None`` and
        ``body`` is ``None`` (nothing known: the caller answers).

    Source: fastapi 0.115.4-0.165.0 ``fastapi/routing.py`` ``get_request_handler`` and
    ``fastapi/dependencies/utils.py`` ``request_body_to_args``, run (see the module).
    """
    if raw is not None:
        if not raw:
            return [_missing()]
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as exc:
            return [
                {
                    "type": "json_invalid",
                    "loc": ("body", exc.pos),
                    "msg": "JSON decode error",
                    "input": {},
                    "ctx": {"error": exc.msg},
                }
            ]
        except (ValueError, RecursionError):
            return PARSE_ERROR
    elif body is None:
        return None
    if body is None and null_missing:
        return [_missing()]
    return [{"type": "model_attributes_type", "loc": ("body",), "msg": NOT_AN_OBJECT, "input": body}]


def default_reply(errors: list[dict[str, Any]] | str) -> Reply:
    """FastAPI's default handlers' answer to :func:`body_errors` (a server with no handler of its
    own): 422 ``{"detail":[<entries, loc as lists>]}`` or 400 ``{"detail":"There was an error
    parsing the body"}``; Starlette's 500 ``Internal Server Error`` (``text/plain``) when the 422
    cannot be written: a lone surrogate echoed as ``input`` (``UnicodeEncodeError``) or a
    non-finite number (``NaN``, ``1e400``: ``JSONResponse`` dumps with ``allow_nan=False``), both
    compared with fastapi 0.165.0 run here."""
    if isinstance(errors, str):
        return Reply(status=400, body=dumps({"detail": errors}).encode())
    if any(_holds_nonfinite(entry["input"]) for entry in errors):
        return Reply(status=500, body=b"Internal Server Error", headers=_PLAIN)
    detail = [{**entry, "loc": list(entry["loc"])} for entry in errors]
    try:
        return Reply(status=422, body=dumps({"detail": detail}).encode())
    except UnicodeEncodeError:
        return Reply(status=500, body=b"Internal Server Error", headers=_PLAIN)


def _holds_nonfinite(value: Any) -> bool:
    """Whether parsed JSON ``value`` holds ``NaN``, ``Infinity`` or an overflowed float anywhere:
    ``json``'s C encoder says no at C speed (an 8 MiB array of 1M numbers: ~1.2 s walked in Python
    on the event loop, a breaker's finding, 14th session); only when it cannot tell (it refused, or
    the value nests past its recursion) is the value walked, :func:`any_leaf`."""
    try:
        json.dumps(value, allow_nan=False, check_circular=False)
    except (ValueError, RecursionError):
        return any_leaf(value, _nonfinite)
    return False


def _nonfinite(item: Any) -> bool:
    return isinstance(item, float) and not math.isfinite(item)
