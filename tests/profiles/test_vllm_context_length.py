"""vLLM's answers to requests that do not fit ``--max-model-len`` (mockoss.profiles.vllm.context_length),
over HTTP with the prompt count usage reports.

Sources (the releases' wheels from the package index, read here):
- 0.33.0 (``clamp``): vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/api_utils.py
  (``get_max_tokens``), :vllm/renderers/params.py (``TokenizeParams``),
  :vllm/entrypoints/openai/responses/serving.py (``_validate_generator_input``),
  :vllm/sampling_params.py (``_verify_args``), :vllm/exceptions.py (``VLLMValidationError.__str__``).
- 0.18.0 (``reserve``): vllm-project/vllm@v0.18.0:vllm/renderers/params.py,
  :vllm/entrypoints/openai/responses/serving.py.
- 0.11.0 (``legacy``): vllm-project/vllm@v0.11.0:vllm/entrypoints/utils.py (``get_max_tokens``),
  :vllm/entrypoints/renderer.py (``_create_tokens_prompt``), :vllm/entrypoints/openai/serving_completion.py.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from mockoss.profiles import vllm as vllm_profile
from mockoss.server.app import create_app
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "hello there"}]}
RESPONSES = {"model": MODEL, "input": "hello there"}
TEXT = " ".join(["word"] * 40)  # 40 tokens of o200k
COMPLETIONS = {"model": MODEL, "prompt": TEXT, "max_tokens": 5}


def post(path: str, body: dict[str, Any], *, profile: str = "vllm", **switches: Any) -> tuple[int, Any]:
    server = MockServer(scenario="clean-answer", profile=profile, switches=switches)
    with TestClient(create_app(server), base_url="http://127.0.0.1:8000") as client:
        reply = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    return reply.status_code, reply.json()


@functools.cache
def prompt_of(path: str, body_json: str) -> int:
    """usage's prompt count of ``body`` under the default max_model_len (131072)."""
    status, data = post(path, json.loads(body_json))
    assert status == 200
    usage = data["usage"]
    return usage.get("prompt_tokens", usage.get("input_tokens"))


def error(message: str, param: str | None = None, kind: str = "BadRequestError") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": 400}}


def chat_p() -> int:
    return prompt_of("/v1/chat/completions", json.dumps(CHAT))


# --- 0.33.0 (the default): chat -------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_chat_prompt_over_max_model_len_is_get_max_tokens_value_error(stream):
    p = chat_p()
    status, body = post("/v1/chat/completions", {**CHAT, "stream": stream}, max_model_len=p - 1)
    assert status == 400  # raised before the stream starts: a JSON body either way
    assert body == error(f"Input length ({p}) exceeds model's maximum context length ({p - 1}).")


def test_chat_prompt_of_exactly_max_model_len_leaves_max_tokens_zero():
    p = chat_p()
    status, body = post("/v1/chat/completions", CHAT, max_model_len=p)
    assert (status, body) == (
        400,
        error("max_tokens must be at least 1, got 0. (parameter=max_tokens, value=0)", "max_tokens"),
    )


def test_chat_prompt_just_under_the_limit_is_answered_with_the_room_left():
    p = chat_p()
    status, body = post("/v1/chat/completions", {**CHAT, "max_tokens": 1000}, max_model_len=p + 3)
    assert status == 200  # get_max_tokens: min(max_model_len - P, max_tokens), no error
    assert body["usage"]["completion_tokens"] == 3
    assert body["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("extra", [0, 1, 1000])
def test_chat_that_fits_is_answered_as_before(monkeypatch, extra):
    """A chat whose whole output fits the room left (``max_model_len`` = P + the output's tokens + ``extra``,
    the stop token counted: the clamped limit then never cuts) gets the reply of the same server with
    the context check switched off (``fit_context`` the identity): the same status and body."""
    p = chat_p()
    status, unlimited = post("/v1/chat/completions", CHAT)
    assert status == 200 and unlimited["choices"][0]["finish_reason"] == "stop"
    switches = {"max_model_len": p + unlimited["usage"]["completion_tokens"] + extra}
    checked = post("/v1/chat/completions", CHAT, **switches)
    monkeypatch.setattr(
        vllm_profile, "fit_context", lambda profile, endpoint, completion, request, prompt_tokens: request
    )
    assert checked == post("/v1/chat/completions", CHAT, **switches)


# --- 0.33.0: completions --------------------------------------------------------------------


def test_completions_text_prompt_over_the_limit_counts_at_least_max_plus_one():
    p = prompt_of("/v1/completions", json.dumps(COMPLETIONS))
    assert p == 40
    status, body = post("/v1/completions", COMPLETIONS, max_model_len=30)
    message = (
        "This model's maximum context length is 30 tokens. However, your prompt contains at least 31 input tokens, "
        "which exceeds this limit even without any output tokens. Please reduce the length of the input prompt. "
        "(parameter=input_tokens, value=31)"
    )
    assert (status, body) == (400, error(message, "input_tokens"))


def test_completions_token_id_prompt_over_the_limit_counts_them_all():
    status, body = post("/v1/completions", {**COMPLETIONS, "prompt": list(range(1000, 1040))}, max_model_len=30)
    message = (
        "This model's maximum context length is 30 tokens. However, your prompt contains 40 input tokens, "
        "which exceeds this limit even without any output tokens. Please reduce the length of the input prompt. "
        "(parameter=input_tokens, value=40)"
    )
    assert (status, body) == (400, error(message, "input_tokens"))


def test_completions_max_tokens_over_max_model_len_is_refused_before_the_prompt():
    status, body = post("/v1/completions", {**COMPLETIONS, "max_tokens": 50}, max_model_len=45)
    message = "max_tokens=50 cannot be greater than max_model_len=45. Please request fewer output tokens. (parameter=max_tokens, value=50)"
    assert (status, body) == (400, error(message, "max_tokens"))


def test_completions_text_longer_than_the_character_bound_is_refused_untokenized():
    status, body = post("/v1/completions", {**COMPLETIONS, "prompt": "a" * 1281, "max_tokens": 1}, max_model_len=10)
    message = (
        "This model's maximum context length is 10 tokens. However, your prompt contains 1281 characters (more than "
        "1280 characters, which is the upper bound for 10 input tokens). Please reduce the length of the input prompt. "
        "(parameter=input_text, value=1281)"
    )
    assert (status, body) == (400, error(message, "input_text"))


def test_completions_prompt_plus_max_tokens_over_the_limit_is_clamped():
    status, body = post("/v1/completions", COMPLETIONS, max_model_len=42)
    assert status == 200
    assert body["usage"] == {
        "prompt_tokens": 40,
        "total_tokens": 42,
        "completion_tokens": 2,
        "prompt_tokens_details": None,
    }
    assert body["choices"][0]["finish_reason"] == "length"


# --- 0.33.0: Responses ----------------------------------------------------------------------


def test_responses_prompt_over_the_limit_is_token_len_check():
    p = prompt_of("/v1/responses", json.dumps(RESPONSES))
    status, body = post("/v1/responses", RESPONSES, max_model_len=p - 5)
    message = (
        f"This model's maximum context length is {p - 5} tokens. However, your prompt contains {p} input tokens, "
        "which exceeds this limit even without any output tokens. Please reduce the length of the input prompt. "
        f"(parameter=input_tokens, value={p})"
    )
    assert (status, body) == (400, error(message, "input_tokens"))


def test_responses_prompt_of_exactly_max_model_len_is_validate_generator_input():
    p = prompt_of("/v1/responses", json.dumps(RESPONSES))
    status, body = post("/v1/responses", {**RESPONSES, "stream": True}, max_model_len=p)
    message = f"The engine prompt length {p} exceeds the max_model_len {p}. Please reduce prompt."
    assert (status, body) == (400, error(message, "input", "invalid_request_error"))


def test_responses_max_output_tokens_over_max_model_len():
    p = prompt_of("/v1/responses", json.dumps(RESPONSES))
    status, body = post("/v1/responses", {**RESPONSES, "max_output_tokens": p + 100}, max_model_len=p + 50)
    message = (
        f"max_output_tokens={p + 100} cannot be greater than max_model_len={p + 50}. Please request fewer output tokens. "
        f"(parameter=max_output_tokens, value={p + 100})"
    )
    assert (status, body) == (400, error(message, "max_output_tokens"))


def test_responses_just_under_the_limit_is_clamped_and_incomplete():
    p = prompt_of("/v1/responses", json.dumps(RESPONSES))
    status, body = post("/v1/responses", {**RESPONSES, "max_output_tokens": 40}, max_model_len=p + 2)
    assert status == 200
    assert body["max_output_tokens"] == 2 and body["usage"]["output_tokens"] == 2
    assert body["incomplete_details"] == {"reason": "max_output_tokens"}


def test_responses_request_checks_come_before_the_length_check():
    p = prompt_of("/v1/responses", json.dumps(RESPONSES))
    body = {
        **RESPONSES,
        "previous_input_messages": [{"role": "user", "content": "x"}],
        "previous_response_id": "resp_1",
    }
    status, answer = post("/v1/responses", body, max_model_len=p - 1)
    assert status == 400 and answer["error"]["param"] == "previous_response_id"


# --- earlier eras (the timeline) ------------------------------------------------------------


def test_reserve_era_completions_refuse_prompt_plus_max_tokens():
    status, body = post("/v1/completions", COMPLETIONS, profile="vllm@0.18.0", max_model_len=42)
    message = (
        "This model's maximum context length is 42 tokens. However, you requested 5 output tokens and your prompt "
        "contains at least 38 input tokens, for a total of at least 43 tokens. Please reduce the length of the input "
        "prompt or the number of requested output tokens. (parameter=input_tokens, value=38)"
    )
    assert (status, body) == (400, error(message, "input_tokens"))


def test_reserve_era_max_tokens_message_keeps_its_f_string_slip():
    status, body = post("/v1/completions", {**COMPLETIONS, "max_tokens": 50}, profile="vllm@0.18.0", max_model_len=45)
    message = (
        "max_tokens=50cannot be greater than max_model_len=max_total_tokens=45. Please request fewer output tokens. "
        "(parameter=max_tokens, value=50)"
    )
    assert (status, body) == (400, error(message, "max_tokens"))


def test_reserve_era_responses_refuse_with_validate_generator_input():
    p = prompt_of("/v1/responses", json.dumps(RESPONSES))
    status, body = post("/v1/responses", RESPONSES, profile="vllm@0.18.0", max_model_len=p - 5)
    message = f"The engine prompt length {p} exceeds the max_model_len {p - 5}. Please reduce prompt."
    assert (status, body) == (400, error(message, "input", "invalid_request_error"))


def test_legacy_era_chat_is_a_negative_max_tokens():
    p = chat_p()
    status, body = post("/v1/chat/completions", CHAT, profile="vllm@0.11.0", max_model_len=p - 4)
    assert (status, body) == (400, error("max_tokens must be at least 1, got -4."))


def test_legacy_era_completions_report_the_context_less_max_tokens():
    status, body = post("/v1/completions", COMPLETIONS, profile="vllm@0.11.0", max_model_len=42)
    message = "This model's maximum context length is 37 tokens. However, your request has 40 input tokens. Please reduce the length of the input messages."
    assert (status, body) == (400, error(message))


def test_legacy_era_completions_just_under_pass():
    status, body = post("/v1/completions", COMPLETIONS, profile="vllm@0.11.0", max_model_len=45)
    assert status == 200 and body["usage"]["completion_tokens"] == 5
