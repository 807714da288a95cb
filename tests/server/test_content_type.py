"""A generation POST not sent as ``application/json`` (breaker session 12, finding 3), and the
message of an integer literal past Python's digit limit (finding 8).

Sources: vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/api_utils.py
``validate_json_request`` and serve/exception_handling/handlers/validation.py (read in the 0.33.0
wheel); sgl-project/sglang@v0.5.23:python/sglang/srt/entrypoints/http_server.py
``validate_json_request`` and ``validation_exception_handler`` (0.5.23 wheel); fastapi 0.165.0
``fastapi/routing.py`` (the body is parsed before the dependency runs) and ``fastapi/exceptions.py``
(``ValidationException.__str__``); the FastAPI-default answer to an unparsed body (422
``model_attributes_type``) run here with fastapi 0.165.0, as vllm-mlx (waybarrios/vllm-mlx@4b654c0:
vllm_mlx/server.py, no handler) and the reference server (openai/gpt-oss@7b58334:
gpt_oss/responses_api/api_server.py) answer it; TensorRT-LLM's 400 (NVIDIA/TensorRT-LLM@00057725:
tensorrt_llm/serve/openai_server.py ``validation_exception_handler``). See :mod:`mockoss.server.content_type`.
"""

from __future__ import annotations

import json

import httpx
import pytest
from fastapi.exceptions import RequestValidationError

from mockoss.server.content_type import SGLANG_MESSAGE, VLLM_MESSAGE, fastapi_parses
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

CHAT = b'{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"hi"}]}'
RESPONSES = b'{"model":"openai/gpt-oss-20b","input":"hi"}'
_REFUSAL = "Unsupported Media Type: Only 'application/json' is allowed"


def _post(server: MockServer, path: str, body: bytes, content_type: str | None) -> httpx.Response:
    running = ThreadedServer(server).start()
    try:
        headers = {"Content-Type": content_type} if content_type is not None else {}
        return httpx.post(running.url + path, content=body, headers=headers)
    finally:
        running.stop()


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", None, "application/json ; charset=utf-8"]
)
@pytest.mark.parametrize("profile", ["vllm", "vllm-2025", "vllm@0.18.0"])
def test_vllm_refuses_a_body_not_sent_as_json(profile: str, content_type: str | None) -> None:
    """vLLM 0.33.0: 400, ``Bad Request``, ``param`` null, the one-string error list's message
    (0.11.0 and 0.18.0 have the same 400 dependency; the message is 0.33.0's on every release)."""
    reply = _post(MockServer(scenario="clean-answer", profile=profile), "/v1/chat/completions", CHAT, content_type)
    assert reply.status_code == 400
    error = reply.json()["error"] if "error" in reply.json() else reply.json()
    assert (error["message"], error["type"], error["param"], error["code"]) == (VLLM_MESSAGE, "Bad Request", None, 400)


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions", "/v1/responses"])
def test_vllm_refuses_on_every_generation_route(path: str) -> None:
    body = b'{"model":"openai/gpt-oss-20b","prompt":"hi","input":"hi","messages":[{"role":"user","content":"hi"}]}'
    reply = _post(MockServer(scenario="clean-answer", profile="vllm"), path, body, "text/plain")
    assert reply.status_code == 400 and reply.json()["error"]["message"] == VLLM_MESSAGE


@pytest.mark.parametrize("content_type", ["application/json", "Application/JSON", "application/json; charset=utf-8"])
def test_vllm_accepts_application_json_in_any_case_with_parameters(content_type: str) -> None:
    assert (
        _post(
            MockServer(scenario="clean-answer", profile="vllm"), "/v1/chat/completions", CHAT, content_type
        ).status_code
        == 200
    )


def test_vllm_message_is_its_handlers_rendering() -> None:
    """``validation_exception_handler`` (0.33.0): ``f"{count} validation {label}:\\n"`` + ``"  {err}\\n"``
    per error, stripped; FastAPI's own ``str()`` of that exception gives the same text."""
    assert VLLM_MESSAGE == str(RequestValidationError(errors=[_REFUSAL]))


def test_sglang_message_is_fastapis_str_and_error_list() -> None:
    """SGLang's handler: ``f"{str(exc)} {str(exc.errors())}"`` of its dict error."""
    exc = RequestValidationError(errors=[{"loc": ["header", "content-type"], "msg": _REFUSAL, "type": "value_error"}])
    assert SGLANG_MESSAGE == f"{exc} {exc.errors()}"


def test_sglang_refuses_in_its_two_shapes() -> None:
    server = MockServer(scenario="clean-answer", profile="sglang")
    chat = _post(server, "/v1/chat/completions", CHAT, None)
    assert chat.status_code == 400
    assert chat.json() == {
        "object": "error",
        "message": SGLANG_MESSAGE,
        "type": "Bad Request",
        "param": None,
        "code": 400,
    }
    responses = _post(server, "/v1/responses", RESPONSES, "text/plain")
    assert responses.status_code == 400
    assert responses.json() == {"error": {"message": SGLANG_MESSAGE, "type": "Bad Request", "param": None, "code": 400}}


def test_a_json_parse_error_comes_first_under_a_json_media_type() -> None:
    """FastAPI parses ``application/*+json`` bodies before the dependency: a bad one gets the parse
    error; a good one the media-type 400 (vLLM accepts only ``application/json`` itself)."""
    server = MockServer(scenario="clean-answer", profile="vllm")
    bad = server.handle("chat", b"{", {"content-type": "application/vnd.x+json"})
    assert bad.status == 400 and VLLM_MESSAGE not in bad.body.decode()
    good = server.handle("chat", CHAT, {"content-type": "application/vnd.x+json"})
    assert json.loads(good.body)["error"]["message"] == VLLM_MESSAGE
    assert (
        fastapi_parses("application/json; charset=utf-8")
        and not fastapi_parses("text/plain")
        and not fastapi_parses(None)
    )


def _body_for(server: MockServer, profile: str) -> tuple[str, bytes]:
    if profile == "gptoss-reference":
        return "/v1/responses", RESPONSES
    return "/v1/chat/completions", CHAT.replace(b"openai/gpt-oss-20b", server._base_profile.default_model.encode())


@pytest.mark.parametrize("profile", ["vllm-mlx", "gptoss-reference"])
def test_fastapis_default_handler_refuses_a_text_body(profile: str) -> None:
    """No dependency, no handler of their own for this: FastAPI validates the unparsed bytes (422
    ``model_attributes_type``, the text echoed); not UTF-8: Starlette's 500 (``jsonable_encoder``).
    No header: refused the same (vllm-mlx's releases require starlette>=1.0.1, so fastapi >=
    0.133: ``strict_content_type``; the reference server's switch ``strict_content_type``, on by
    default, what ``pip install gpt-oss`` resolves today: see tests/server/test_content_type_fastapi.py)."""
    server = MockServer(scenario="clean-answer", profile=profile)
    path, body = _body_for(server, profile)
    reply = _post(server, path, body, "application/x-www-form-urlencoded")
    assert reply.status_code == 422
    msg = "Input should be a valid dictionary or object to extract fields from"
    assert reply.json() == {
        "detail": [{"type": "model_attributes_type", "loc": ["body"], "msg": msg, "input": body.decode()}]
    }
    broken = _post(server, path, b"\xff\xfe", "text/plain")
    assert (broken.status_code, broken.text) == (500, "Internal Server Error")
    no_header = _post(server, path, body, None)
    assert (no_header.status_code, no_header.json()) == (422, reply.json())


def test_trtllm_refuses_a_text_body_with_its_validation_400() -> None:
    server = MockServer(scenario="clean-answer", profile="trtllm")
    path, body = _body_for(server, "trtllm")
    reply = _post(server, path, body, "text/plain")
    assert reply.status_code == 400 and reply.json()["type"] == "BadRequestError"
    assert "Input should be a valid dictionary" in reply.json()["message"]
    assert _post(server, path, body, None).status_code == 200


@pytest.mark.parametrize("profile", ["llamacpp", "ollama", "lmstudio", "mlx-lm"])
def test_unchecked_profiles_are_left_as_they_were(profile: str) -> None:
    server = MockServer(scenario="clean-answer", profile=profile)
    path, body = _body_for(server, profile)
    assert _post(server, path, body, "text/plain").status_code == 200


def test_an_in_process_call_without_headers_is_not_checked() -> None:
    assert MockServer(scenario="clean-answer", profile="vllm").handle("chat", CHAT, {}).status == 200


def test_an_integer_past_the_digit_limit_is_named() -> None:
    """``json.loads`` refuses an integer literal over 4300 digits with a ``ValueError``; the reply
    said "the body is not a JSON object" (finding 8). FastAPI answers it "There was an error
    parsing the body" (fastapi 0.165.0 ``fastapi/routing.py``); mockoss names the cause."""
    server = MockServer(scenario="clean-answer", profile="vllm")
    body = b'{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"hi"}],"seed":' + b"9" * 5000 + b"}"
    reply = server.handle("chat", body, {"content-type": "application/json"})
    message = json.loads(reply.body)["error"]["message"]
    assert reply.status == 400 and "not a JSON object" not in message
    assert "integer of more than 4300 digits" in message
    assert "not a JSON object" in json.loads(server.handle("chat", b"[1]", {}).body)["error"]["message"]
