"""SGLang's answers to chat and completions requests that do not fit ``--context-length``
(mockoss.profiles.sglang.context_length), over HTTP with the prompt count usage reports.

Sources (the sglang 0.5.23 wheel from the package index, read here):
sgl-project/sglang@v0.5.23:python/sglang/srt/managers/tokenizer_manager.py (``_validate_one_request``),
:python/sglang/srt/managers/scheduler.py (``init_req_max_new_tokens``),
:python/sglang/srt/managers/utils.py (``validate_input_length``),
:python/sglang/srt/managers/tp_worker.py (``max_req_len``, ``max_req_input_len``),
:python/sglang/srt/entrypoints/openai/serving_chat.py (``_handle_streaming_request``: the first chunk
is awaited before HTTP 200), :python/sglang/srt/entrypoints/openai/serving_base.py
(``create_error_response``: the flat body).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from mockoss.profiles import sglang as sglang_profile
from mockoss.server.app import create_app
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hello there"}]}
COMPLETIONS = {"model": MODEL, "prompt": " ".join(["word"] * 40), "max_tokens": 5}


def post(path: str, body: dict[str, Any], **switches: Any) -> tuple[int, Any]:
    server = MockServer(scenario="clean-answer", profile="sglang", switches=switches)
    with TestClient(create_app(server), base_url="http://127.0.0.1:8000") as client:
        reply = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    if reply.headers["content-type"].startswith("text/event-stream"):
        return reply.status_code, reply.text
    return reply.status_code, reply.json()


@functools.cache
def chat_p() -> int:
    status, data = post("/v1/chat/completions", CHAT)
    assert status == 200
    return data["usage"]["prompt_tokens"]


def error(message: str) -> dict[str, Any]:
    return {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}


@pytest.mark.parametrize("stream", [False, True])
def test_prompt_of_context_length_or_more_is_refused_before_http_200(stream):
    p = chat_p()
    status, body = post("/v1/chat/completions", {**CHAT, "stream": stream}, context_length=p)
    assert (status, body) == (
        400,
        error(f"The input ({p} tokens) is longer than the model's context length ({p} tokens)."),
    )


def test_prompt_plus_max_tokens_over_context_length():
    p = chat_p()
    status, body = post("/v1/chat/completions", {**CHAT, "max_tokens": 10}, context_length=p + 5)
    message = (
        f"Requested token count exceeds the model's maximum context length of {p + 5} tokens. You requested a total "
        f"of {p + 10} tokens: {p} tokens from the input messages and 10 tokens for the completion. Please reduce the "
        "number of tokens in the input messages or the completion to fit within the limit."
    )
    assert (status, body) == (400, error(message))


def test_prompt_within_six_tokens_of_the_limit_is_aborted_by_the_scheduler():
    p = chat_p()
    status, body = post("/v1/chat/completions", CHAT, context_length=p + 6)
    message = f"Input length ({p} tokens) exceeds the maximum allowed length ({p} tokens). Use a shorter input or enable --allow-auto-truncate."
    assert (status, body) == (400, error(message))


def test_prompt_just_under_is_answered_with_the_schedulers_bound():
    p = chat_p()
    status, body = post("/v1/chat/completions", CHAT, context_length=p + 7)
    assert status == 200  # max_new_tokens = max_req_len - P - 1 = (M - 1) - P - 1 = 5
    assert body["usage"]["completion_tokens"] == 5 and body["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("extra", [0, 1, 1000])
def test_chat_that_fits_is_answered_as_before(monkeypatch, extra):
    """A chat whose whole output fits the room left (``context_length`` = P + the output's tokens + 2 + ``extra``,
    the stop token counted: the scheduler's bound ``M - P - 2`` then never cuts) gets the reply of the same server with
    the context check switched off (``fit_context`` the identity): the same status and body."""
    p = chat_p()
    status, unlimited = post("/v1/chat/completions", CHAT)
    assert status == 200 and unlimited["choices"][0]["finish_reason"] == "stop"
    switches = {"context_length": p + unlimited["usage"]["completion_tokens"] + 2 + extra}  # bound M - P - 2
    checked = post("/v1/chat/completions", CHAT, **switches)
    monkeypatch.setattr(
        sglang_profile, "fit_context", lambda profile, endpoint, completion, request, prompt_tokens: request
    )
    assert checked == post("/v1/chat/completions", CHAT, **switches)


def test_completions_prompt_plus_max_tokens_over_context_length():
    status, body = post("/v1/completions", COMPLETIONS, context_length=42)
    message = (
        "Requested token count exceeds the model's maximum context length of 42 tokens. You requested a total of "
        "45 tokens: 40 tokens from the input messages and 5 tokens for the completion. Please reduce the number of "
        "tokens in the input messages or the completion to fit within the limit."
    )
    assert (status, body) == (400, error(message))
    assert post("/v1/completions", COMPLETIONS, context_length=47)[0] == 200
