"""The official openai SDK against ``MockServer(profile="llamacpp")`` over HTTP."""

from __future__ import annotations

import openai
import pytest
from profile_e2e_support import use_raw

MODEL = "ggml-org/gpt-oss-20b-GGUF"  # LlamacppProfile.default_model
USER = [{"role": "user", "content": "Weather in Paris?"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
PEG = {"code": 500, "message": "The model produced output that does not match the expected peg-native format", "type": "server_error"}


# The suite's own pytest plugin serves these tests (one session server, reset per test).
pytestmark = pytest.mark.mockoss(profile="llamacpp")


def use(server, *raw: str) -> None:
    use_raw(server, *raw, name="llamacpp-e2e")


def test_clean_answer_and_tool_call_with_reasoning_content(server, client):
    server.server.use_scenario("clean-tool-call")
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    message = reply.choices[0].message
    assert (reply.choices[0].finish_reason, message.content) == ("tool_calls", "")
    assert message.model_extra["reasoning_content"] == "Need to use function get_weather."
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == [("get_weather", '{"location":"San Francisco"}')]
    assert len(message.tool_calls[0].id) == 32 and reply.id.startswith("chatcmpl-")
    assert reply.model_extra["timings"]["predicted_n"] == reply.usage.completion_tokens
    answer = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    assert answer.choices[0].message.content == "It is sunny in San Francisco at 20 °C."


def test_bare_final_is_a_500_the_sdk_raises(server, client):
    use(server, "It is sunny.<|return|>")
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model=MODEL, messages=USER)
    assert caught.value.status_code == 500
    assert caught.value.body == PEG


def test_streamed_malformed_header_ends_with_an_error_event(server, client):
    server.server.use_scenario("malformed-header-duplicate-recipient")
    stream = client.chat.completions.create(model=MODEL, messages=USER, tools=[{"type": "function", "function": {"name": "x"}}], stream=True)
    reasoning = ""
    with pytest.raises(openai.APIError) as caught:
        for chunk in stream:
            reasoning += chunk.choices[0].delta.model_extra.get("reasoning_content") or ""
    assert reasoning == "Need to call x."
    assert caught.value.message == PEG["message"]
    stream.close()


def test_stream_tool_call_and_reasoning_format_none(server, client):
    server.server.use_scenario("clean-tool-call")
    names, arguments, finish = [], "", None
    with client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER, stream=True) as stream:
        for chunk in stream:
            for call in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
                names += [call.function.name] if call.function and call.function.name else []
                arguments += call.function.arguments or "" if call.function else ""
            finish = (chunk.choices[0].finish_reason if chunk.choices else None) or finish
    assert (names, arguments, finish) == (["get", "get_weather"], '{"location":"San Francisco"}', "tool_calls")
    answer = client.chat.completions.create(model=MODEL, messages=USER, extra_body={"reasoning_format": "none"})
    assert answer.choices[0].message.content == (
        "<|channel|>analysis<|message|>The tool says it is sunny and 20 degrees.<|end|>It is sunny in San Francisco at 20 °C."
    )


def test_responses_endpoint(server, client):
    server.server.use_scenario("clean-answer")
    response = client.responses.create(model=MODEL, input="What is 2 + 2?")
    assert response.output_text == "2 + 2 = 4."
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.id.startswith("resp_") and response.status == "completed"


def test_identity_routes_and_404(http):
    assert http.get("/health").json() == {"status": "ok"}
    assert http.get("/v1/models").json()["data"][0]["owned_by"] == "llamacpp"
    assert http.get("/props").json()["model_alias"] == MODEL
    for reply in (http.get("/nope"), http.get("/v1/chat/completions")):
        assert reply.status_code == 404
        assert reply.json() == {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}
