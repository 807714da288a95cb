"""mlx-lm's own server tests, converted: ``tests/test_server.py`` at
ml-explore/mlx-lm@d78bf58e217c904ec282ed8da9b947491f78c022 (``TestServer``).

mlx-lm has no gpt-oss-specific test (``tests/test_models.py::test_gpt_oss`` checks the model's
layers, not what the server returns). Upstream, ``TestServer`` serves the real ``APIHandler`` with
a small Hugging Face model (``DummyModelProvider``) and checks the HTTP surface; here the same
requests go over HTTP to the ``mlx-lm`` profile, every request answered with a gpt-oss completion,
and each upstream assertion is kept.

Left out: the ``TextStateMachine`` tests (``test_strips_control_sequences`` …) and
``test_make_state_machine_empty_tool_call_end``, which exercise reasoning and tool markers of other
model families (gpt-oss has none in mlx-lm; ``tools/mlxlm_diff.py`` runs that machine on gpt-oss
text); ``test_keepalive_callback``, which tests a copy of the callback inside the test itself; the
draft-model, prompt-cache and LRU tests, which test the engine, not the wire.
"""

from __future__ import annotations

import json

import httpx
import pytest

SERVER = "mlx-lm"
SRC = "ml-explore/mlx-lm@d78bf58e217c904ec282ed8da9b947491f78c022:tests/test_server.py"

pytestmark = pytest.mark.mockoss(profile=SERVER)

CHAT = {"model": "chat_model", "max_tokens": 10, "temperature": 0.7, "top_p": 0.85, "repetition_penalty": 1.2}


def upstream(test: str) -> pytest.MarkDecorator:
    return pytest.mark.upstream(SERVER, f"{SRC}::TestServer::{test}")


@pytest.fixture
def client(mockoss):
    mockoss.use({"when_exhausted": "repeat_last", "steps": [{"completion": {"raw": "<|channel|>analysis<|message|>Say hi.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>"}}]})
    with httpx.Client(base_url=mockoss.url, timeout=30) as client:
        yield client


@upstream("test_handle_completions")
def test_handle_completions(client):
    post_data = {
        "model": "default_model", "prompt": "Once upon a time", "max_tokens": 10, "temperature": 0.5, "top_p": 0.9,
        "repetition_penalty": 1.1, "repetition_context_size": 20, "seed": 999, "stop": "stop sequence",
    }
    response_body = json.loads(client.post("/v1/completions", json=post_data).text)
    assert "id" in response_body
    assert "choices" in response_body
    first_text = response_body["choices"][0]["text"]
    assert first_text == json.loads(client.post("/v1/completions", json=post_data).text)["choices"][0]["text"]


@upstream("test_handle_chat_completions")
def test_handle_chat_completions(client):
    body = {**CHAT, "messages": [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Hello!"}]}
    response_body = client.post("/v1/chat/completions", json=body).text
    assert "id" in response_body
    assert "choices" in response_body


@upstream("test_handle_chat_completions_with_content_fragments")
def test_handle_chat_completions_with_content_fragments(client):
    body = {**CHAT, "messages": [
        {"role": "system", "content": [{"type": "text", "text": "You are a helpful assistant."}]},
        {"role": "user", "content": [{"type": "text", "text": "Hello!"}]},
    ]}
    response_body = client.post("/v1/chat/completions", json=body).text
    assert "id" in response_body
    assert "choices" in response_body


@upstream("test_handle_chat_completions_with_null_tool_content")
def test_handle_chat_completions_with_null_tool_content(client):
    body = {**CHAT, "messages": [
        {"role": "user", "content": "what is 2+3?"},
        {"role": "assistant", "content": None, "tool_calls": [{"type": "function", "id": "123", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]},
        {"role": "tool", "content": "5", "tool_call_id": "123"},
    ]}
    response_body = client.post("/v1/chat/completions", json=body).text
    assert "id" in response_body
    assert "choices" in response_body


@upstream("test_handle_models")
def test_handle_models(client):
    response = client.get("/v1/models")
    assert response.status_code == 200
    response_body = json.loads(response.text)
    assert response_body["object"] == "list"
    assert isinstance(response_body["data"], list)
    assert len(response_body["data"]) > 0
    model = response_body["data"][0]
    assert "id" in model
    assert model["object"] == "model"
    assert "created" in model
