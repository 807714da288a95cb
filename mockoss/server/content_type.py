"""The refusal a server gives a generation ``POST`` whose ``Content-Type`` is not ``application/json``
(``curl -d`` sends ``application/x-www-form-urlencoded``; ``text/plain``; no header at all).

The refusal is a property of each server, so each profile carries its own:
``content_type_refusal(endpoint, content_type, parsed, raw)`` (:class:`mockoss.profiles.base.Profile`),
with the sources of its rule. This module keeps what is shared: the fast path for the usual header,
the in-process call that has no headers, and the call to the profile. The FastAPI rules the
profiles share (what FastAPI parses, its default 422, the messages) are in
:mod:`mockoss.profiles.fastapi_body`, re-exported here.

Who refuses what (each profile's docstring has the sources):

- vLLM and SGLang (``validate_json_request`` on their generation routes): 400 for anything but
  ``application/json``, no header included; a body FastAPI parses and fails to parse gets the
  parse error first. ``strict_content_type`` (switch) is the FastAPI the deployment runs.
- TensorRT-LLM, vllm-mlx and the gpt-oss reference server (no such dependency): FastAPI hands the
  route's model the unparsed bytes, answered 400 (TensorRT-LLM's handler) or FastAPI's 422 (500
  for bytes that are not UTF-8). No header: parsed as JSON on TensorRT-LLM (pins fastapi <=
  0.121.3), refused as text on vllm-mlx (requires starlette >= 1.0.1, so fastapi >= 0.133), as the
  switch says on the reference server (fastapi >= 0.116.1: either).
- Ollama binds every body as JSON whatever its type (ollama/ollama server/routes.go
  ``ChatHandler``: gin's ``ShouldBindJSON``, read in an indexed copy); llama.cpp, LM Studio,
  mlx-lm and the openai profile were not checked: no method, every body is parsed whatever its
  type, as before.

A header map with no ``Content-Type``, ``Content-Length`` nor ``Transfer-Encoding`` is an
in-process call (``MockServer.handle(endpoint, raw, {})``), not HTTP: no check. An empty
``Content-Type`` is no header, as FastAPI reads it (``if not content_type_value``).
"""

from __future__ import annotations

from collections.abc import Mapping

from mockoss.profiles.base import Profile, Reply
from mockoss.profiles.fastapi_body import SGLANG_MESSAGE, VLLM_MESSAGE, fastapi_parses

__all__ = ["SGLANG_MESSAGE", "VLLM_MESSAGE", "content_type_reply", "fastapi_parses"]


def _is_http(headers: Mapping[str, str]) -> bool:
    return "content-type" in headers or "content-length" in headers or "transfer-encoding" in headers


def content_type_reply(
    profile: Profile, endpoint: str, headers: Mapping[str, str], parsed: bool, raw: bytes = b""
) -> Reply | None:
    """The refusal ``profile``'s server gives a request to ``endpoint`` whose ``Content-Type`` is
    not ``application/json`` (its ``content_type_refusal``: vLLM, SGLang, TensorRT-LLM: 400;
    vllm-mlx and the reference server: FastAPI's 422, or 500 for bytes that are not UTF-8), else
    ``None``: ``application/json`` (any case, any parameters), an in-process call, or a profile
    without the method (see the module docstring).

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
    refusal = getattr(profile, "content_type_refusal", None)  # not every profile class has one
    return None if refusal is None else refusal(endpoint, content_type or None, parsed, raw)  # type: ignore[no-any-return]
