"""mockoss's bound on a refusal's echo of the request body (``fastapi_body.ECHO_BYTES``, issue 9:
memory bounded in bytes): TensorRT-LLM's ``str(exc)`` of FastAPI's error list (the body's
``repr``, NVIDIA/TensorRT-LLM ``openai_server.py`` ``validation_exception_handler``) and FastAPI's
own 422 (``jsonable_encoder`` of the text, fastapi 0.121.3-0.165.0 run in
``tools/fastapi_body_diff.py``) echo the whole body on the real servers; mockoss echoes its first
bytes and says so. Under the bound the reply is the server's byte for byte."""

from __future__ import annotations

import json

import pytest

from mockoss.profiles import fastapi_body
from mockoss.profiles.fastapi_body import NOT_AN_OBJECT
from mockoss.server.core import MockServer


def _send(profile: str, raw: bytes, content_type: str = "text/plain") -> tuple[int, bytes]:
    server = MockServer(scenario="clean-answer", profile=profile)
    reply = server.handle("chat", raw, {"content-type": content_type, "content-length": str(len(raw))})
    return reply.status, reply.body


def _trtllm_message(raw: bytes) -> str:
    return str([{"type": "model_attributes_type", "loc": ("body",), "msg": NOT_AN_OBJECT, "input": raw}])


def test_trtllm_echoes_an_8_mib_body_cut_with_a_marker() -> None:
    raw = b"\x01" * (8 * 1024 * 1024)  # repr '\x01', then JSON '\\x01': 5 bytes a byte (a 40 MiB reply)
    status, body = _send("trtllm", raw)
    assert status == 400
    assert len(body) < 5 * fastapi_body.ECHO_BYTES + 1024
    reply = json.loads(body)
    assert (
        reply["type"] == "BadRequestError"
        and reply["code"] == 400
        and set(reply)
        == {
            "object",
            "message",
            "type",
            "param",
            "code",
        }
    )
    cut = _trtllm_message(raw[: fastapi_body.ECHO_BYTES])
    assert reply["message"].startswith(cut + " [mockoss: echo cut to the first 1048576 of 8388608 bytes")
    assert "the server echoes it whole]" in reply["message"]


def test_trtllm_at_the_bound_is_the_server_s_reply() -> None:
    raw = b"\x01'" * (fastapi_body.ECHO_BYTES // 2)
    status, body = _send("trtllm", raw)
    assert status == 400 and json.loads(body)["message"] == _trtllm_message(raw)


@pytest.mark.parametrize("profile", ["vllm-mlx"])
def test_fastapi_422_echoes_a_long_text_cut_with_a_marker(profile: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastapi_body, "ECHO_BYTES", 10)
    status, body = _send(profile, "abcdefghi\u00e9xyz".encode())  # the é spans bytes 9-10: cut before it
    assert status == 422
    entry = json.loads(body)["detail"][0]
    assert entry["input"].startswith("abcdefghi [mockoss: echo cut to the first 9 of 14 bytes")
    status, body = _send(profile, b"abcdefghi")
    assert json.loads(body)["detail"][0]["input"] == "abcdefghi"


def test_fastapi_422_a_long_body_not_utf8_past_the_bound_is_still_the_500(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastapi_body, "ECHO_BYTES", 10)
    status, body = _send("vllm-mlx", b"a" * 20 + b"\xff")
    assert (status, body) == (500, b"Internal Server Error")


def test_fastapi_422_an_8_mib_body_of_control_characters_is_bounded() -> None:
    status, body = _send("vllm-mlx", b"\x01" * (8 * 1024 * 1024))  # '\u0001': 6 bytes a byte (a 48 MiB reply)
    assert status == 422 and len(body) < 6 * fastapi_body.ECHO_BYTES + 1024
    assert json.loads(body)["detail"][0]["input"].endswith("the server echoes it whole]")
