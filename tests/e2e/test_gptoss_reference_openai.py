"""The official openai SDK against the ``gptoss-reference`` profile (the gpt-oss reference Responses server).

What the SDK sees here is what it sees against openai/gpt-oss@7b58334's ``gpt_oss.responses_api``:
the profile's bytes equal the real server's on the goldens (tests/golden/test_gptoss_reference_goldens.py),
and the same SDK calls were made against the real server (uvicorn, scripted backend) with the same
outcomes (mockoss.profiles.gptoss_ref's module docstring).
"""

from __future__ import annotations

import httpx
import openai
import pytest

MODEL = "gpt-oss-120b"
WEATHER = [{"type": "function", "name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}]

pytestmark = pytest.mark.mockoss(profile="gptoss-reference")


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


@pytest.mark.mockoss(profile="gptoss-reference", scenario="clean-tool-call")
def test_tool_call_then_answer_non_streamed(mockoss, client):
    call = client.responses.create(model="any-name-is-accepted", input="Weather in San Francisco?", tools=WEATHER)
    assert call.model == MODEL  # types.MODEL_IDENTIFIER, whatever the request named
    assert [item.type for item in call.output] == ["reasoning", "function_call"]
    function = call.output[1]
    assert (function.name, function.arguments) == ("get_weather", '{"location":"San Francisco"}')
    assert function.id.startswith("fc_") and len(function.id) == 35 and function.call_id.startswith("call_")
    assert call.output[0].content[0].text == "Need to use function get_weather."
    assert call.id.startswith("resp_") and call.status == "completed"
    # the kept tokens: the completion less its <|call|>
    assert call.usage.output_tokens == 31 and call.usage.total_tokens == call.usage.input_tokens + 31
    answer = client.responses.create(model=MODEL, input="Weather in San Francisco?", tools=WEATHER)
    assert answer.output_text == "It is sunny in San Francisco at 20 °C."
    assert answer.output[1].id.startswith("item_")


@pytest.mark.mockoss(profile="gptoss-reference", scenario="clean-answer", assert_all_steps_used=False)
def test_stream_events_first_item_at_output_index_minus_one(mockoss, client):
    events = list(client.responses.create(model=MODEL, input="2+2?", stream=True))
    added = [(e.output_index, e.item.type) for e in events if e.type == "response.output_item.added"]
    done = [(e.output_index, e.item.type) for e in events if e.type == "response.output_item.done"]
    assert added == [(-1, "reasoning"), (0, "message")]
    assert done == [(0, "reasoning"), (1, "message")]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == events[-1].response.output_text == "2 + 2 = 4."
    assert events[-1].type == "response.completed"


@pytest.mark.mockoss(profile="gptoss-reference", scenario="clean-answer", assert_all_steps_used=False)
def test_responses_stream_helper_rejects_the_shifted_output_index(mockoss, client):
    # The message's deltas say output_index 0 and its done events 1: the SDK's stream accumulator
    # (openai 3.57) refuses a content event for an index it has no item for. Against the real server
    # (uvicorn, the same completion) the same call raises the same RuntimeError.
    with (
        pytest.raises(RuntimeError, match="Received a content event for output index 1 before receiving its output item"),
        client.responses.stream(model=MODEL, input="2+2?") as stream,
    ):
        for _ in stream:
            pass


@pytest.mark.mockoss(profile="gptoss-reference", scenario="clean-tool-call")
def test_streamed_function_call_has_only_an_output_item_done(mockoss, client):
    with client.responses.stream(model=MODEL, input="Weather?", tools=WEATHER) as stream:
        events = list(stream)
        final = stream.get_final_response()
    calls = [e for e in events if "function_call" in e.type or getattr(getattr(e, "item", None), "type", None) == "function_call"]
    assert [e.type for e in calls] == ["response.output_item.done"]
    streamed = calls[0].item
    completed = final.output[1]
    assert (completed.name, completed.arguments) == ("get_weather", '{"location":"San Francisco"}')
    assert (completed.id, completed.call_id) == (streamed.id, streamed.call_id)


@pytest.mark.mockoss(profile="gptoss-reference", scenario="malformed-header-duplicate-recipient")
def test_malformed_header_cuts_the_stream_after_the_events_so_far(mockoss, client):
    # The stream's parser swallows the HarmonyError; the final parse of the kept tokens
    # (parse_messages_from_completion_tokens) raises it and the generator dies after HTTP 200.
    seen = []
    with (
        pytest.raises((openai.APIConnectionError, httpx.RemoteProtocolError)),
        client.responses.stream(model=MODEL, input="hi", tools=[{**WEATHER[0], "name": "x"}]) as stream,
    ):
        for event in stream:
            seen.append(event.type)
    assert seen[:2] == ["response.created", "response.in_progress"]
    assert "response.completed" not in seen and "error" not in seen
    assert mockoss.requests[-1].status == 200


@pytest.mark.mockoss(profile="gptoss-reference", scenario="malformed-header-duplicate-recipient")
def test_malformed_header_non_streamed_is_a_plain_500(mockoss, client):
    with pytest.raises(openai.InternalServerError) as caught:
        client.responses.create(model=MODEL, input="hi")
    assert caught.value.status_code == 500
    assert caught.value.response.text == "Internal Server Error"
    assert caught.value.response.headers["content-type"].startswith("text/plain")


@pytest.mark.mockoss(profile="gptoss-reference", scenario="clean-answer", assert_all_steps_used=False)
def test_validation_errors_and_routes(mockoss, client):
    with pytest.raises(openai.UnprocessableEntityError) as caught:
        client.responses.create(model=MODEL, input="hi", tool_choice="required")
    assert caught.value.response.json()["detail"] == [{"type": "literal_error", "loc": ["body", "tool_choice"], "msg": "Input should be 'auto' or 'none'",
                                  "input": "required", "ctx": {"expected": "'auto' or 'none'"}}]
    with pytest.raises(openai.NotFoundError) as missing:
        client.models.list()
    assert missing.value.response.json() == {"detail": "Not Found"}
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    with httpx.Client(base_url=mockoss.url) as http:
        wrong = http.get("/v1/responses")
    assert (wrong.status_code, wrong.json(), wrong.headers["allow"]) == (405, {"detail": "Method Not Allowed"}, "POST")


@pytest.mark.mockoss(profile="gptoss-reference", scenario="clean-answer", assert_all_steps_used=False)
def test_bad_input_gets_the_reference_servers_answers_over_http(mockoss, client):
    # Seen from openai/gpt-oss@7b58334's server (mockoss.profiles.gptoss_ref.prompt / .request):
    # a lone surrogate in the prompt is Starlette's plain 500 (the SDK cannot send one: raw bytes);
    # a wrong role FastAPI's 422; tools/tool_choice null are accepted.
    with httpx.Client(base_url=mockoss.url) as http:
        lone = http.post("/v1/responses", content=rb'{"input":"\ud800"}', headers={"content-type": "application/json"})
        switched = http.post("/v1/responses", json={"input": "hi"}, headers={"X-Mockoss-Switch": "harmony_library=bogus"})
        nulls = http.post("/v1/responses", json={"input": "2 + 2?", "tools": None, "tool_choice": None})
    assert (lone.status_code, lone.text, lone.headers["content-type"]) == (500, "Internal Server Error", "text/plain; charset=utf-8")
    assert switched.status_code == 422 and "'openai-harmony-0.0.8' or 'oss-harmony'" in switched.text
    assert nulls.status_code == 200 and nulls.json()["status"] == "completed"
    with pytest.raises(openai.UnprocessableEntityError) as wrong:
        client.responses.create(model=MODEL, input=[{"role": "wizard", "content": "x"}])  # type: ignore[list-item]
    assert {"Item", "role"} <= set(wrong.value.response.json()["detail"][1]["loc"])
