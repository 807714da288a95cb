"""Malformed, empty and non-object JSON bodies on ``vllm-mlx`` and ``trtllm``, as FastAPI and
their handlers answer them (session 13, task C; before, both gave mockoss's generic "the body is
not a JSON object", a 422 ``value_error`` on vllm-mlx and a 400 on trtllm).

Sources: fastapi ``fastapi/routing.py`` ``get_request_handler`` (0.115.4, 0.121.3, 0.136.0 read
in the fastapi/fastapi mirror); the answers were recorded by running a FastAPI app with one
pydantic body route under fastapi 0.121.3 (starlette 0.49.3) and 0.136.0
(``tools/fastapi_body_diff.py``; see :mod:`mockoss.profiles.fastapi_body`). vllm-mlx: no exception handler
(waybarrios/vllm-mlx@v0.6.0:vllm_mlx/server.py, and the 0.4.0/0.4.1/0.5.0 wheels), so FastAPI's
default 422; its answers are compared here with the installed FastAPI itself. TensorRT-LLM:
``validation_exception_handler`` -> ``create_error_response(message=str(exc))``, 400, under the
fastapi <= 0.121.3 it pins (NVIDIA/TensorRT-LLM@000867d9:requirements.txt), where ``str(exc)`` is
``str()`` of the error list: the expected messages below are that run's bytes.
"""

from __future__ import annotations

import json

import httpx
import pytest
from pydantic import BaseModel

from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

_JSON = {"content-type": "application/json"}
_ENDPOINTS = ("chat", "completions", "responses")
_NOT_AN_OBJECT = "Input should be a valid dictionary or object to extract fields from"


def _send(profile: str, endpoint: str, raw: bytes) -> tuple[int, bytes]:
    server = MockServer(scenario="clean-answer", profile=profile)
    reply = server.handle(endpoint, raw, {**_JSON, "content-length": str(len(raw))})
    return reply.status, reply.body


#: body -> the ``message`` of TensorRT-LLM's 400, recorded from fastapi 0.121.3 with its handler.
TRTLLM = {
    b"{": "[{'type': 'json_invalid', 'loc': ('body', 1), 'msg': 'JSON decode error', 'input': {}, "
    "'ctx': {'error': 'Expecting property name enclosed in double quotes'}}]",
    b'{"a":}': "[{'type': 'json_invalid', 'loc': ('body', 5), 'msg': 'JSON decode error', 'input': {}, 'ctx': {'error': 'Expecting value'}}]",
    b"[1,2": "[{'type': 'json_invalid', 'loc': ('body', 4), 'msg': 'JSON decode error', 'input': {}, "
    "'ctx': {'error': \"Expecting ',' delimiter\"}}]",
    b"{} x": "[{'type': 'json_invalid', 'loc': ('body', 3), 'msg': 'JSON decode error', 'input': {}, 'ctx': {'error': 'Extra data'}}]",
    b"": "[{'type': 'missing', 'loc': ('body',), 'msg': 'Field required', 'input': None}]",
    b"null": "[{'type': 'missing', 'loc': ('body',), 'msg': 'Field required', 'input': None}]",
    b"[1]": f"[{{'type': 'model_attributes_type', 'loc': ('body',), 'msg': '{_NOT_AN_OBJECT}', 'input': [1]}}]",
    b'"hi"': f"[{{'type': 'model_attributes_type', 'loc': ('body',), 'msg': '{_NOT_AN_OBJECT}', 'input': 'hi'}}]",
}


@pytest.mark.parametrize("endpoint", _ENDPOINTS)
@pytest.mark.parametrize("raw", list(TRTLLM))
def test_trtllm_answers_with_its_handler_over_str_of_fastapis_errors(endpoint: str, raw: bytes) -> None:
    expected = {"object": "error", "message": TRTLLM[raw], "type": "BadRequestError", "param": None, "code": 400}
    assert _send("trtllm", endpoint, raw) == (400, json.dumps(expected, separators=(",", ":")).encode())


@pytest.mark.parametrize("profile", ["trtllm", "vllm-mlx"])
@pytest.mark.parametrize("raw", [b"\xff", b'{"input":"\xff"}', b"[" * 100_000 + b"]" * 100_000, b"9" * 5000])
def test_a_body_json_cannot_read_is_fastapis_parse_error(profile: str, raw: bytes) -> None:
    """Not UTF-8, nested past the recursion limit, an integer past 4300 digits: Starlette's
    ``Request.json()`` raises something other than ``JSONDecodeError``: FastAPI's
    ``HTTPException(400)``, which neither server handles itself."""
    assert _send(profile, "chat", raw) == (400, b'{"detail":"There was an error parsing the body"}')


_REFERENCE_BODIES = [
    b"{",
    b'{"a":}',
    b"[1,2",
    b'{"messages": [}',
    b"{} x",
    b" ",
    b"nan",
    b"",
    b"[1]",
    b'"hi"',
    b"null",
    b"\xff",
    b'{"a": "\xc3\xa9" x}',
    b'["\\ud800"]',  # the 422 cannot be written: 500
    b"[NaN]",  # idem (allow_nan=False)
    b"[1e400]",
    b"\xef\xbb\xbf[1]",
    "[1]".encode("utf-16"),
    b"[" * 900 + b"]" * 900,
]


class ChatCompletionRequest(BaseModel):
    """A body model (module level: the route's annotation is resolved in the module's globals)."""

    messages: list[dict[str, str]]


@pytest.fixture(scope="module")
def fastapi_default() -> object:
    """FastAPI itself (the installed version), a route with one pydantic body model and no
    exception handler: what vllm-mlx's ``create_chat_completion`` is to FastAPI."""
    fastapi = pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    app = fastapi.FastAPI()

    @app.post("/v1/chat/completions")
    async def create_chat_completion(request: ChatCompletionRequest) -> dict[str, bool]:
        return {"ok": True}

    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize("endpoint", _ENDPOINTS)
@pytest.mark.parametrize("raw", _REFERENCE_BODIES)
def test_vllm_mlx_answers_as_fastapi_itself(fastapi_default: object, endpoint: str, raw: bytes) -> None:
    real = fastapi_default.post("/v1/chat/completions", content=raw, headers=_JSON)  # type: ignore[attr-defined]
    assert _send("vllm-mlx", endpoint, raw) == (real.status_code, real.content)


def test_vllm_mlx_empty_body_is_missing_not_value_error() -> None:
    """The brief's case: an empty body is ``missing`` at ``["body"]`` (was mockoss's ``value_error``)."""
    status, body = _send("vllm-mlx", "chat", b"")
    assert (status, json.loads(body)) == (
        422,
        {"detail": [{"type": "missing", "loc": ["body"], "msg": "Field required", "input": None}]},
    )


@pytest.mark.parametrize("profile", ["trtllm", "vllm-mlx"])
def test_over_http_status_body_and_content_type(profile: str) -> None:
    """Through uvicorn, on every route: the same status and bytes as the core, JSON, and Starlette's
    plain-text 500 where FastAPI cannot write its 422 (vllm-mlx, a non-finite number)."""
    running = ThreadedServer(MockServer(scenario="clean-answer", profile=profile)).start()
    try:
        for path, endpoint in (
            ("/v1/chat/completions", "chat"),
            ("/v1/completions", "completions"),
            ("/v1/responses", "responses"),
        ):
            for raw in (b'{"a":}', b""):
                reply = httpx.post(f"{running.url}{path}", content=raw, headers=_JSON)
                assert reply.headers["content-type"].startswith("application/json")
                assert (reply.status_code, reply.content) == _send(profile, endpoint, raw)
                assert (b"json_invalid" if raw else b"missing") in reply.content
        reply = httpx.post(f"{running.url}/v1/chat/completions", content=b"[NaN]", headers=_JSON)
    finally:
        running.stop()
    if profile == "vllm-mlx":
        assert (reply.status_code, reply.content) == (500, b"Internal Server Error")
        assert reply.headers["content-type"].startswith("text/plain")
    else:
        assert reply.status_code == 400 and "'input': [nan]" in reply.json()["message"]


@pytest.mark.parametrize("profile", ["vllm", "sglang", "openai", "ollama"])
def test_other_profiles_keep_their_answer(profile: str) -> None:
    status, body = _send(profile, "chat", b"{")
    assert b"json_invalid" not in body and status == 400
