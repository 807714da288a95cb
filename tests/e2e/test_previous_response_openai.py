"""The official openai SDK continuing a Responses conversation (``previous_response_id``) and
sending a ``function_call_output`` without its call, against the openai, lmstudio, llamacpp and
ollama profiles over HTTP: what a client's tool loop sees from each server. Sources: the modules
named in tests/profiles/test_responses_conversation_refusals.py."""

from __future__ import annotations

import openai
import pytest

OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
USER = {"role": "user", "content": "Weather in Paris?"}


@pytest.mark.mockoss(profile="openai", scenario="clean-answer")
def test_openai_chains_a_stored_response_and_refuses_an_unknown_one(client):
    first = client.responses.create(model="openai/gpt-oss-20b", input="2 + 2?")
    second = client.responses.create(model="openai/gpt-oss-20b", input="and 3 + 3?", previous_response_id=first.id)
    assert second.status == "completed"
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="openai/gpt-oss-20b", input="and now?", previous_response_id="resp_gone")
    assert caught.value.code == "previous_response_not_found" and caught.value.param == "previous_response_id"
    assert caught.value.body["message"] == "Previous response with id 'resp_gone' not found."
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="openai/gpt-oss-20b", input=[USER, OUTPUT])
    assert caught.value.body == {
        "message": "No tool call found for function call output with call_id call_1.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }


@pytest.mark.mockoss(profile="lmstudio", scenario="clean-answer")
def test_lmstudio_refuses_an_id_it_did_not_store(client):
    first = client.responses.create(model="openai/gpt-oss-20b", input="2 + 2?", store=False)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="openai/gpt-oss-20b", input="and 3 + 3?", previous_response_id=first.id)
    assert caught.value.code == "previous_response_not_found"
    node = first.id.removeprefix("resp_")
    assert caught.value.body["message"].startswith(f"Prediction history node with id '{node}' not found")


@pytest.mark.mockoss(profile="llamacpp", scenario="clean-answer")
def test_llamacpp_output_without_a_call_is_a_500_the_sdk_raises(client):
    with pytest.raises(openai.InternalServerError) as caught:
        client.responses.create(model="ggml-org/gpt-oss-20b-GGUF", input=[USER, OUTPUT])
    assert caught.value.status_code == 500
    # llama.cpp's Jinja engine (b7756 on) decorates the template's message with its source position
    # (mockoss.profiles.llamacpp.template_checks; the bare message is llamacpp@b7755's).
    message = (
        "\n------------\nWhile executing CallExpression at line 319, column 32 in source:\n"
        '... none %}↵            {{- raise_exception("Message has tool role, but there was n...\n'
        + " " * 43
        + "^\nError: Jinja Exception: Message has tool role, but there was no previous assistant message with a tool call!"
    )
    assert caught.value.body == {"code": 500, "message": message, "type": "server_error"}


@pytest.mark.mockoss(profile="ollama", scenario="clean-answer")
def test_ollama_ignores_previous_response_id(client):
    reply = client.responses.create(model="gpt-oss:20b", input=[USER, OUTPUT], previous_response_id="resp_gone")
    assert reply.status == "completed" and reply.previous_response_id is None
