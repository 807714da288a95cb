"""The ``openai`` profile's routes on stored responses over HTTP, with the openai SDK's own calls
(``client.responses.retrieve``, ``.input_items.list``, ``.cancel``, ``.delete``): breaker report t18,
finding 2 (before: 404 ``Invalid URL (GET /v1/responses/resp_…)`` for all four, though the profile
continues those ids with ``previous_response_id``).

Shapes: developers.openai.com/api/reference, responses methods retrieve, delete, cancel and
input_items/list (the delete body ``{"id","object":"response","deleted":true}``; input items listed
``desc`` by default, ``limit`` 20). The error bodies are mockoss's choice (see
mockoss.profiles.openai.stored).
"""

from __future__ import annotations

import httpx
import openai
import pytest

MODEL = "openai/gpt-oss-20b"
OPENAI = pytest.mark.mockoss(profile="openai", scenario="clean-answer")


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


@OPENAI
@pytest.mark.parametrize("stream", [False, True], ids=["nostream", "stream"])
def test_retrieve_and_input_items(mockoss, client, stream):
    given = [
        {"role": "user", "content": "first"},
        {"role": "user", "content": [{"type": "input_text", "text": "second"}]},
    ]
    if stream:
        created = list(client.responses.create(model=MODEL, input=given, stream=True))[-1].response
    else:
        created = client.responses.create(model=MODEL, input=given)
    got = client.responses.retrieve(created.id)
    assert got.model_dump() == created.model_dump()
    items = list(client.responses.input_items.list(created.id))
    assert [item.content[0].text for item in items] == ["second", "first"]  # desc by default
    assert all(item.id.startswith("msg_") and item.type == "message" for item in items)
    page = client.responses.input_items.list(created.id, order="asc", limit=1)
    assert [item.content[0].text for item in page.data] == ["first"] and page.has_more


@OPENAI
def test_delete_then_404_and_no_continuation(mockoss, client):
    created = client.responses.create(model=MODEL, input="hi")
    deleted = httpx.delete(f"{mockoss.base_url}/responses/{created.id}")
    assert deleted.json() == {"id": created.id, "object": "response", "deleted": True}
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(created.id)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input="more", previous_response_id=created.id)
    assert caught.value.code == "previous_response_not_found"


@OPENAI
def test_store_false_and_unknown_are_404(mockoss, client):
    unstored = client.responses.create(model=MODEL, input="hi", store=False)
    for rid in (unstored.id, "resp_nope"):
        with pytest.raises(openai.NotFoundError) as caught:
            client.responses.retrieve(rid)
        assert caught.value.response.json()["error"]["message"] == f"Response with id '{rid}' not found."
        with pytest.raises(openai.NotFoundError):
            client.responses.delete(rid)


@OPENAI
def test_cancel(mockoss, client):
    plain = client.responses.create(model=MODEL, input="hi")
    with pytest.raises(openai.BadRequestError):
        client.responses.cancel(plain.id)
    background = client.responses.create(model=MODEL, input="hi", background=True)
    assert client.responses.cancel(background.id).model_dump() == background.model_dump()  # answered at once: final


@OPENAI
def test_background_stream_resumes_after_starting_after(mockoss, client):
    events = list(client.responses.create(model=MODEL, input="hi", stream=True, background=True))
    rid = events[0].response.id
    resumed = list(client.responses.retrieve(rid, stream=True, starting_after=events[2].sequence_number))
    assert [e.sequence_number for e in resumed] == [e.sequence_number for e in events[3:]]
