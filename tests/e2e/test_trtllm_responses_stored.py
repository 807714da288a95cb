"""``GET`` and ``DELETE /v1/responses/{response_id}`` on the ``trtllm`` profile over HTTP, with the openai
SDK's own calls (``client.responses.retrieve`` / ``.delete``). Before: FastAPI's 404 ``Not Found`` for both
at every release, though trtllm-serve's store is on by default.

Sources: NVIDIA/TensorRT-LLM#9937 (the routes; switch ``responses_retrieve``, on from ``trtllm@2025.12.12``);
NVIDIA/TensorRT-LLM@00057725d9a6591f033e44f31c219e2426827bb7:tensorrt_llm/serve/openai_server.py
(``register_routes``, ``openai_responses_get_response``, ``openai_responses_delete_response``,
``_create_invalid_response_id_error``, ``_create_response_id_not_found_error``, ``openai_responses``'
``load_response`` of ``previous_response_id``); NVIDIA/TensorRT-LLM@e7f7345e31e574b5d0918b756b871882c7346b3c
(same file: ``/v1/responses`` for POST only); NVIDIA/TensorRT-LLM@83ab45a50d169b08e29e9bf2f46fc66b3838cc37:
tensorrt_llm/serve/responses_utils.py (``create_response`` stores the ``ResponsesResponse`` a stream also
builds). The first tests convert TensorRT-LLM's own
NVIDIA/TensorRT-LLM@65b31db1b401d3752b8ebe7c29093cbfb6af04b7:tests/unittest/llmapi/apps/_test_openai_responses_entrypoint.py
(test_get, test_get_invalid_response_id, test_get_non_existent_response_id, test_delete,
test_delete_invalid_response_id, test_delete_non_existent_response_id). See mockoss.profiles.trtllm.stored.
"""

from __future__ import annotations

import json

import httpx
import openai
import pytest

MODEL = "openai/gpt-oss-20b"
TRTLLM = pytest.mark.mockoss(profile="trtllm", scenario="clean-answer")
NO_STORE = pytest.mark.mockoss(profile="trtllm", scenario="clean-answer", switches={"responses_store": False})
BEFORE = pytest.mark.mockoss(profile="trtllm@2025.09.19", scenario="clean-answer")


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


def _error(status: int, message: str) -> dict:
    """``create_error_response``'s ``ErrorResponse`` dump."""
    return {"object": "error", "message": message, "type": "InvalidRequestError", "param": None, "code": status}


# --- TensorRT-LLM's _test_openai_responses_entrypoint.py ---------------------------------------------


@TRTLLM
def test_get(mockoss, client):
    response = client.responses.create(
        model=MODEL, input="Which one is larger as numeric, 9.9 or 9.11?", max_output_tokens=1024
    )
    response_get = client.responses.retrieve(response.id)
    assert response_get.id == response.id
    assert response_get.model_dump() == response.model_dump()


@TRTLLM
@pytest.mark.parametrize("call", ["retrieve", "delete"])
def test_invalid_response_id(mockoss, client, call):
    with pytest.raises(openai.BadRequestError) as caught:
        getattr(client.responses, call)("invalid_response_id")
    message = "Invalid 'response_id': 'invalid_response_id'. Expected an ID that begins with 'resp'."
    assert caught.value.response.json() == _error(400, message)


@TRTLLM
@pytest.mark.parametrize("call", ["retrieve", "delete"])
def test_non_existent_response_id(mockoss, client, call):
    with pytest.raises(openai.NotFoundError) as caught:
        getattr(client.responses, call)("resp_non_existent_response_id")
    message = "Response with id 'resp_non_existent_response_id' not found."
    assert caught.value.response.json() == _error(404, message)


@TRTLLM
def test_delete(mockoss, client):
    response = client.responses.create(
        model=MODEL, input="Which one is larger as numeric, 9.9 or 9.11?", max_output_tokens=1024
    )
    client.responses.delete(response.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(response.id)


# --- the shapes, and what the handlers read ----------------------------------------------------------


@TRTLLM
def test_get_returns_the_created_body_byte_for_byte(mockoss):
    created = httpx.post(f"{mockoss.base_url}/responses", json={"model": MODEL, "input": "hi"})
    got = httpx.get(f"{mockoss.base_url}/responses/{created.json()['id']}")
    assert got.status_code == 200 and got.content == created.content


@TRTLLM
def test_streamed_response_is_retrieved_in_the_non_streamed_shape(mockoss, client):
    completed = list(client.responses.create(model=MODEL, input="hi", stream=True))[-1].response
    got = httpx.get(f"{mockoss.base_url}/responses/{completed.id}").json()
    assert (
        isinstance(got["created_at"], int) and "conversation" not in got
    )  # ResponsesResponse, not the event's SDK dump
    assert client.responses.retrieve(completed.id).model_dump() == completed.model_dump()


@TRTLLM
def test_delete_body_then_gone_for_retrieve_delete_and_continuation(mockoss, client):
    created = client.responses.create(model=MODEL, input="hi")
    deleted = httpx.delete(f"{mockoss.base_url}/responses/{created.id}")
    assert deleted.status_code == 200
    assert (
        deleted.content
        == json.dumps({"id": created.id, "object": "response", "deleted": True}, separators=(",", ":")).encode()
    )
    gone = _error(404, f"Response with id '{created.id}' not found.")
    with pytest.raises(openai.NotFoundError) as again:
        client.responses.delete(created.id)
    assert again.value.response.json() == gone
    with pytest.raises(openai.NotFoundError) as continued:  # openai_responses: load_response finds nothing
        client.responses.create(model=MODEL, input="more", previous_response_id=created.id)
    assert continued.value.response.json() == gone


@TRTLLM
def test_continuation_of_a_kept_response_still_works(mockoss, client):
    first = client.responses.create(model=MODEL, input="hi")
    second = client.responses.create(model=MODEL, input="more", previous_response_id=first.id)
    assert client.responses.retrieve(second.id).previous_response_id == first.id


@TRTLLM
def test_store_false_is_not_kept(mockoss, client):
    created = client.responses.create(model=MODEL, input="hi", store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(created.id)


@NO_STORE
@pytest.mark.parametrize("call", ["retrieve", "delete"])
def test_store_disabled(mockoss, client, call):
    created = client.responses.create(model=MODEL, input="hi")
    for rid in (created.id, "invalid_response_id"):  # the store is checked first
        with pytest.raises(openai.BadRequestError) as caught:
            getattr(client.responses, call)(rid)
        assert caught.value.response.json() == _error(400, "Response storage is disabled")


@TRTLLM
def test_other_methods_and_paths_are_fastapis(mockoss):
    base = f"{mockoss.base_url}/responses/resp_x"
    for method in ("POST", "PUT", "PATCH"):
        reply = httpx.request(method, base)
        assert (reply.status_code, reply.json()) == (405, {"detail": "Method Not Allowed"})
    for path in ("/cancel", "/input_items"):
        reply = httpx.request("GET", base + path)
        assert (reply.status_code, reply.json()) == (404, {"detail": "Not Found"})


@BEFORE
@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_before_pr_9937_no_routes(mockoss, client, method):
    created = client.responses.create(model=MODEL, input="hi")
    reply = httpx.request(method, f"{mockoss.base_url}/responses/{created.id}")
    assert (reply.status_code, reply.json()) == (404, {"detail": "Not Found"})


# --- previous_response_id's prefix check: only with the store on --------------------------------------


@TRTLLM
def test_a_previous_response_id_without_resp_is_refused_with_the_store_on(mockoss, client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="hi", previous_response_id="abc")
    message = "Invalid 'response_id': 'abc'. Expected an ID that begins with 'resp'."
    assert caught.value.response.json() == _error(400, message)


@NO_STORE
def test_with_the_store_off_previous_response_id_is_not_looked_at(mockoss, client):
    """``openai_responses`` checks the id's prefix, then the store, only ``if self.enable_store``
    (NVIDIA/TensorRT-LLM ``tensorrt_llm/serve/openai_server.py``; mockoss.profiles.trtllm.responses_input's
    docstring): with ``TRTLLM_RESPONSES_API_DISABLE_STORE`` set, any id is answered (a review's finding,
    session 18: mockoss refused one without ``resp_`` with the store off too)."""
    response = client.responses.create(model=MODEL, input="hi", previous_response_id="abc")
    assert response.status == "completed"
