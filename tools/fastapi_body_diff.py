"""Differential check: the ``vllm-mlx`` and ``trtllm`` answers to a body that is not a JSON object
(malformed, empty, other JSON, not UTF-8, too deep) against FastAPI itself.

Usage: ``PYTHONPATH=FASTAPI_DIR .venv/bin/python tools/fastapi_body_diff.py MODE`` where
``FASTAPI_DIR`` holds an unzipped fastapi wheel (and, for fastapi < 0.133, a starlette it allows:
``pip download --no-deps fastapi==0.121.3 starlette==0.49.3``) and ``MODE`` is:

- ``default``: no exception handler (vllm-mlx: waybarrios/vllm-mlx@v0.6.0:vllm_mlx/server.py);
  compared with the ``vllm-mlx`` profile (``null`` differs below fastapi 0.151.0, see
  :mod:`mockoss.profiles.fastapi_body`).
- ``trtllm``: TensorRT-LLM's ``validation_exception_handler`` of the Harmony period,
  ``create_error_response(message=str(exc))`` (400 ``ErrorResponse``); compared with the ``trtllm``
  profile under fastapi 0.121.3 (the newest its pins allow; 0.133 on words ``str(exc)`` otherwise).

The app has one route whose one parameter is a pydantic body model, as each server's generation
routes. Prints one line per body and the count of differences; exit status 1 if any differ.
Session 13: ``trtllm`` under 0.121.3 and ``default`` under 0.151.0 and 0.165.0: 16 bodies, 0 differ;
``default`` under 0.136.0: 1 differs, ``null`` (``missing`` there).
"""

from __future__ import annotations

import sys

import fastapi
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient
from pydantic import BaseModel

from mockoss.server.core import MockServer

BODIES = [
    b"{",
    b'{"a":}',
    b"[1,2",
    b"",
    b"{} x",
    b" ",
    b"nan",
    b"null",
    b"[1]",
    b'"hi"',
    b"\xff",
    b'["\\ud800"]',
    b"[NaN]",
    b"\xef\xbb\xbf[1]",
    b"[" * 900 + b"]" * 900,
    b"[" * 100_000 + b"]" * 100_000,
]


class ChatCompletionRequest(BaseModel):
    messages: list


class ErrorResponse(BaseModel):
    """TensorRT-LLM's ``openai_protocol.ErrorResponse`` fields, in order."""

    object: str = "error"
    message: str
    type: str
    param: str | None = None
    code: int


def build(mode: str) -> TestClient:
    app = FastAPI()
    if mode == "trtllm":

        @app.exception_handler(RequestValidationError)
        async def validation_exception_handler(_: Request, exc: RequestValidationError) -> JSONResponse:
            err = ErrorResponse(message=str(exc), type="BadRequestError", code=400)
            return JSONResponse(content=err.model_dump(), status_code=400)

    @app.post("/v1/chat/completions")
    async def chat(request: ChatCompletionRequest, raw_request: Request) -> dict[str, bool]:
        return {"ok": True}

    return TestClient(app, raise_server_exceptions=False)


def main(mode: str) -> int:
    client = build(mode)
    server = MockServer(scenario="clean-answer", profile="trtllm" if mode == "trtllm" else "vllm-mlx")
    differ = 0
    print(f"fastapi {fastapi.__version__}, mode {mode}")
    for raw in BODIES:
        real = client.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
        mock = server.handle("chat", raw, {"content-type": "application/json", "content-length": str(len(raw))})
        same = (real.status_code, real.content) == (mock.status, mock.body)
        differ += not same
        print(
            "same  " if same else "DIFFER",
            raw[:16],
            real.status_code,
            real.content[:120],
            "" if same else (mock.status, mock.body[:120]),
        )
    print(f"{len(BODIES)} bodies, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "default"))
