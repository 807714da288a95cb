"""The openai SDK's agent loop on ``previous_response_id`` against the ``gptoss-reference`` profile over HTTP.

The reference server (openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py, ``responses_store``)
keeps a ``store: true`` response, so a loop that sends only the tool's output with
``previous_response_id`` gets its answer; before mockoss kept responses, that request was a 500
(``Function call … not found``) and the SDK raised ``InternalServerError``. The bytes are checked
against the real server in tests/profiles/test_gptoss_reference_store.py; here, the HTTP server's
path (the server's store reached from the request it answers) and the fixture's reset.
"""

from __future__ import annotations

import openai
import pytest

MODEL = "gpt-oss-120b"
WEATHER = [{"type": "function", "name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}]


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


def _loop(client: openai.OpenAI, *, stream: bool) -> tuple[object, object]:
    call = client.responses.create(model=MODEL, input="Weather in San Francisco?", tools=WEATHER, store=True)
    function = call.output[1]
    output = [{"type": "function_call_output", "call_id": function.call_id, "output": '{"sky":"sunny"}'}]
    if not stream:
        return call, client.responses.create(model=MODEL, input=output, tools=WEATHER, previous_response_id=call.id)
    events = list(client.responses.create(model=MODEL, input=output, tools=WEATHER, previous_response_id=call.id, stream=True))
    assert events[-1].type == "response.completed"
    return call, events[-1].response


@pytest.mark.mockoss(profile="gptoss-reference", scenario="clean-tool-call")
@pytest.mark.parametrize("stream", [False, True], ids=["nostream", "stream"])
def test_tool_output_by_previous_response_id_alone(mockoss, client, stream):
    call, answer = _loop(client, stream=stream)
    assert answer.status == "completed" and answer.output_text == "It is sunny in San Francisco at 20 °C."
    assert answer.previous_response_id == call.id
    # the earlier turn is in the prompt: its user message, reasoning and call, then the output
    assert answer.usage.input_tokens > call.usage.input_tokens + 20


@pytest.mark.mockoss(profile="gptoss-reference", scenario="clean-tool-call")
def test_without_store_the_call_is_not_found(mockoss, client):
    call = client.responses.create(model=MODEL, input="Weather in San Francisco?", tools=WEATHER)  # store defaults to false
    output = [{"type": "function_call_output", "call_id": call.output[1].call_id, "output": "{}"}]
    with pytest.raises(openai.InternalServerError):
        client.responses.create(model=MODEL, input=output, tools=WEATHER, previous_response_id=call.id)
