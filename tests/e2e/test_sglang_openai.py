"""The official openai SDK against the ``sglang`` profile over HTTP, through the project's pytest
marker. Each expectation is what SGLang 0.5.23's serving code gives for the scripted text (see
:mod:`mockoss.profiles.sglang`); a test names the rule it pins."""

from __future__ import annotations

import httpx
import openai
import pytest
from profile_e2e_support import stream_chat, use_raw

MODEL = "openai/gpt-oss-20b"
USER = [{"role": "user", "content": "Weather in Paris?"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": {"type": "object"}}}]
ANALYSIS = "<|channel|>analysis<|message|>Need the weather.<|end|>"
CALL = '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
FIRST_CALL = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'

pytestmark = pytest.mark.mockoss(profile="sglang")


def use(server, *raw: str) -> None:
    use_raw(server, *raw, name="sglang-e2e")


def streamed(client, **kwargs) -> tuple[str, str, list[tuple[str, str]], str | None, list]:
    """(content, reasoning_content, calls, finish_reason, chunks) of a streamed chat completion."""
    return stream_chat(client, MODEL, USER, "reasoning_content", **kwargs)


@pytest.mark.mockoss(scenario="clean-answer")
def test_clean_answer_with_reasoning_content_and_matched_stop(client):
    reply = client.chat.completions.create(model=MODEL, messages=USER)
    choice = reply.choices[0]
    assert (choice.message.content, choice.finish_reason) == ("2 + 2 = 4.", "stop")
    assert choice.message.model_extra["reasoning_content"] == "User asks: What is 2 + 2? Simple arithmetic. Provide answer."
    assert choice.model_extra["matched_stop"] == 200002  # <|return|>, cut from the text
    assert len(reply.id) == 32 and int(reply.id, 16) >= 0  # the bare request id, no chatcmpl-
    assert reply.to_dict()["metadata"] == {"weight_version": "default"}
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_tool_call_arguments_are_reserialised_by_python_json(server, client):
    use(server, ANALYSIS + CALL)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    choice = reply.choices[0]
    assert (choice.finish_reason, choice.message.content, choice.model_extra["matched_stop"]) == ("tool_calls", "", None)
    [call] = choice.message.tool_calls
    assert (call.function.name, call.function.arguments) == ("get_weather", '{"city": "Paris"}')
    assert call.id.startswith("call_") and len(call.id) == 29


def test_streamed_tool_call_arrives_whole_in_one_delta(server, client):
    use(server, ANALYSIS + CALL)
    content, reasoning, calls, finish, chunks = streamed(client, tools=WEATHER, stream_options={"include_usage": True})
    assert (content, reasoning, calls, finish) == ("", "Need the weather.", [("get_weather", '{"city": "Paris"}')], "tool_calls")
    assert chunks[0].choices[0].delta.role == "assistant" and chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0
    assert chunks[-2].choices[0].model_extra["matched_stop"] == 200012  # the stream keeps the stop token id


def test_first_message_call_is_raw_markup_in_content_but_parsed_when_streamed(server, client):
    # Non-streamed, GptOssDetector.has_tool_call needs "<|start|>assistant<|channel|>commentary";
    # streamed, parse_streaming_increment does not check it.
    use(server, FIRST_CALL, FIRST_CALL)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    assert (reply.choices[0].message.content, reply.choices[0].message.tool_calls, reply.choices[0].finish_reason) == (FIRST_CALL, None, "stop")
    _, _, calls, finish, _ = streamed(client, tools=WEATHER)
    assert (calls, finish) == ([("get_weather", '{"city": "Paris"}')], "tool_calls")


def test_recipient_before_the_channel_leaks_unstreamed_and_vanishes_streamed(server, client):
    # "<|start|>assistant to=functions.get_weather<|channel|>commentary …" (the form the
    # clean-tool-call scenario renders): the detector's pattern wants
    # "to=NAME <|constrain|>json<|message|>", so no call is found either way.
    role_form = '<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
    use(server, ANALYSIS + role_form, ANALYSIS + role_form)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    assert reply.choices[0].message.tool_calls is None
    assert reply.choices[0].message.content.startswith("<|start|>assistant to=functions.get_weather<|channel|>commentary")
    content, _, calls, finish, _ = streamed(client, tools=WEATHER)
    assert (content, calls, finish) == ("", [], "stop")


def test_call_to_an_undeclared_tool_is_dropped_without_a_trace(server, client):
    use(server, ANALYSIS + CALL.replace("get_weather", "get_time"))
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    assert (reply.choices[0].message.content, reply.choices[0].message.tool_calls, reply.choices[0].finish_reason) == ("", None, "stop")


@pytest.mark.mockoss(scenario="clean-answer", switches={"reasoning_parser": None})
def test_without_reasoning_parser_the_markup_is_content(client):
    reply = client.chat.completions.create(model=MODEL, messages=USER)
    assert reply.choices[0].message.content == (
        "<|channel|>analysis<|message|>User asks: What is 2 + 2? Simple arithmetic. Provide answer.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4."
    )
    assert reply.choices[0].message.model_extra["reasoning_content"] is None


@pytest.mark.mockoss(scenario="clean-answer")
def test_separate_reasoning_false_per_request(client):
    reply = client.chat.completions.create(model=MODEL, messages=USER, extra_body={"separate_reasoning": False})
    assert reply.choices[0].message.content.startswith("<|channel|>analysis<|message|>User asks")


@pytest.mark.mockoss(switches={"tool_call_parser": None})
def test_without_tool_parser_the_trimmed_call_never_closes_and_vanishes(server, client):
    # --tool-call-parser unset: <|call|> is cut like any stop token, the block has no end marker,
    # and the string parser holds it to the end.
    use(server, ANALYSIS + CALL)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    message = reply.choices[0].message
    assert (message.content, message.model_extra["reasoning_content"], message.tool_calls) == ("", "Need the weather.", None)


def test_identity_routes_and_errors(http):
    assert (http.get("/health").status_code, http.get("/health").content) == (200, b"")
    card = http.get("/v1/models").json()["data"][0]
    assert (card["id"], card["owned_by"], card["root"], card["max_model_len"]) == (MODEL, "sglang", MODEL, 131072)
    assert http.get("/get_model_info").json()["tool_call_parser"] == "gpt-oss"
    assert (http.get("/nope").status_code, http.get("/nope").json()) == (404, {"detail": "Not Found"})
    bad = http.post("/v1/chat/completions", json={"model": MODEL})
    assert bad.status_code == 400
    assert {k: bad.json()[k] for k in ("object", "type", "code")} == {"object": "error", "type": "Bad Request", "code": 400}


@pytest.mark.mockoss(scenario="tool-call-ended-with-return")
def test_call_ended_with_return_gives_only_reasoning_content(client):
    # sgl-project/sglang PR #10576 (closed unmerged): "I often get an empty response containing only
    # reasoning_content" when gpt-oss ends a call with <|return|>. In 0.5.23 <|return|> is cut as
    # the matched stop, the commentary block has no <|end|>/<|call|>, and the parser holds it.
    for _ in range(2):
        reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
        message = reply.choices[0].message
        assert (message.content, message.tool_calls, reply.choices[0].finish_reason) == ("", None, "stop")
        assert message.model_extra["reasoning_content"] == "Need the weather in Tokyo."
        content, reasoning, calls, finish, _ = streamed(client, tools=WEATHER)
        assert (content, reasoning, calls, finish) == ("", "Need the weather in Tokyo.", [], "stop")


# -- /v1/responses (openai-harmony, not the string parser) and /v1/completions -------------------
# Each expectation is what SGLang 0.5.23's own serving code gives (tools/sglang_serving_diff.py ran
# it on the same tokens); see mockoss.profiles.sglang.responses and .completions.

RESPONSE_TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
ROLE_FORM_CALL = '<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Paris"}<|call|>'


@pytest.mark.mockoss(scenario="clean-answer")
def test_responses_create_reasoning_then_message_with_sglang_usage(client):
    response = client.responses.create(model=MODEL, input="What is 2 + 2?")
    reasoning, message = response.output
    assert (reasoning.type, reasoning.content[0].text, reasoning.status) == ("reasoning", "User asks: What is 2 + 2? Simple arithmetic. Provide answer.", None)
    assert (message.type, response.output_text, message.status, message.to_dict()["phase"]) == ("message", "2 + 2 = 4.", "completed", "final_answer")
    assert response.id.startswith("resp_") and len(response.id) == 37 and reasoning.id.startswith("rs_") and message.id.startswith("msg_")
    # HarmonyContext never learns the prompt length: input_tokens is 0 however long the input.
    assert (response.usage.input_tokens, response.usage.output_tokens, response.status) == (0, 35, "completed")
    assert response.text is None  # a reasoning item is not "text only"


def test_responses_function_call_keeps_the_model_arguments_and_shares_one_uuid(server, client):
    use(server, ANALYSIS + CALL)
    response = client.responses.create(model=MODEL, input="Weather in Paris?", tools=RESPONSE_TOOLS)
    [_, call] = response.output
    assert (call.type, call.name, call.arguments, call.status) == ("function_call", "get_weather", '{"city":"Paris"}', None)
    assert call.call_id.startswith("call_") and call.id == "ft_" + call.call_id.removeprefix("call_")


def test_responses_finds_a_call_with_the_recipient_in_the_role_section(server, client):
    # The chat path's string parser misses this form (test above); openai-harmony reads it.
    use(server, ANALYSIS + ROLE_FORM_CALL)
    response = client.responses.create(model=MODEL, input="Weather in Paris?", tools=RESPONSE_TOOLS)
    assert [(item.type, getattr(item, "name", None)) for item in response.output] == [("reasoning", None), ("function_call", "get_weather")]


def test_responses_call_to_an_undeclared_tool_is_kept(server, client):
    use(server, ANALYSIS + CALL.replace("get_weather", "get_time"))
    response = client.responses.create(model=MODEL, input="Time?", tools=RESPONSE_TOOLS)
    assert response.output[-1].name == "get_time"


def test_responses_unknown_recipient_and_malformed_header_are_400(server, client):
    use(server, ANALYSIS + CALL.replace("functions.get_weather", "get_weather"), ANALYSIS + CALL.replace(" <|constrain|>", " to=functions.x <|constrain|>"))
    with pytest.raises(openai.BadRequestError) as unknown:
        client.responses.create(model=MODEL, input="Weather?", tools=RESPONSE_TOOLS)
    assert unknown.value.body == {"message": "Unknown recipient: get_weather", "type": "invalid_request_error", "param": None, "code": 400}
    with pytest.raises(openai.BadRequestError) as header:
        client.responses.create(model=MODEL, input="Weather?", tools=RESPONSE_TOOLS)
    assert header.value.body["message"] == 'unexpected tokens remaining in message header: ["to=functions.get_weather"]'  # openai-harmony 0.0.4's words


@pytest.mark.mockoss(scenario="clean-answer")
def test_responses_stream_events_and_final_response(client):
    with client.responses.stream(model=MODEL, input="What is 2 + 2?") as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [event.type for event in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert "response.content_part.added" in kinds and kinds[-1] == "response.completed"
    assert [event.sequence_number for event in events] == list(range(len(events)))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "2 + 2 = 4."
    assert final.output_text == "2 + 2 = 4." and final.output[0].status == "completed"  # streamed reasoning closes "completed"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (0, 0)  # StreamingHarmonyContext counts nothing


def test_responses_stream_drops_the_connection_on_an_unknown_recipient(server, client):
    # parse_output_message raises inside the generator after HTTP 200: no error event, the body
    # just ends (compare sgl-project/sglang#8914, a Harmony error mid-stream).
    use(server, ANALYSIS + CALL.replace("functions.get_weather", "get_weather"))
    seen = []
    with pytest.raises((httpx.RemoteProtocolError, openai.APIError)), client.responses.stream(model=MODEL, input="Weather?", tools=RESPONSE_TOOLS) as stream:
        seen.extend(event.type for event in stream)
    assert "response.reasoning_text.delta" in seen and "response.completed" not in seen


@pytest.mark.mockoss(scenario="clean-answer")
def test_responses_cut_by_max_output_tokens_is_incomplete(client):
    response = client.responses.create(model=MODEL, input="What is 2 + 2?", max_output_tokens=9)
    assert (response.status, response.incomplete_details.reason, response.output[0].content[0].text) == ("incomplete", "max_output_tokens", "User asks: What is ")


@pytest.mark.mockoss(scenario="clean-answer")
def test_responses_rejects_what_harmony_cannot_constrain(client):
    with pytest.raises(openai.BadRequestError) as forced:
        client.responses.create(model=MODEL, input="hi", tools=RESPONSE_TOOLS, tool_choice="required")
    assert forced.value.body["message"].startswith("Harmony tool_choice='required' cannot require a tool recipient")
    assert forced.value.body["message"].endswith(" None")  # f"{e} {e.__cause__}"
    with pytest.raises(openai.NotFoundError) as model:
        client.responses.create(model="gpt-4o", input="hi")
    assert model.value.body == {"message": "The model 'gpt-4o' does not exist", "type": "invalid_request_error", "param": "model", "code": 404}


@pytest.mark.mockoss(scenario="clean-answer")
def test_completions_strip_special_tokens_unless_asked(client):
    plain = client.completions.create(model=MODEL, prompt="<|start|>user<|message|>2+2?<|end|>", max_tokens=100)
    assert plain.choices[0].text == "analysisUser asks: What is 2 + 2? Simple arithmetic. Provide answer.assistantfinal2 + 2 = 4."
    assert (plain.choices[0].finish_reason, plain.choices[0].model_extra["matched_stop"], len(plain.id)) == ("stop", 200002, 32)
    raw = client.completions.create(model=MODEL, prompt="hi", max_tokens=100, extra_body={"skip_special_tokens": False})
    assert raw.choices[0].text.startswith("<|channel|>analysis<|message|>") and raw.choices[0].text.endswith("<|channel|>final<|message|>2 + 2 = 4.")


@pytest.mark.mockoss(scenario="clean-answer")
def test_completions_stream_one_chunk_per_token(client):
    chunks = list(client.completions.create(model=MODEL, prompt="hi", max_tokens=100, stream=True, stream_options={"include_usage": True}))
    texts = [c.choices[0].text for c in chunks if c.choices]
    assert len(texts) == 35 and texts[0] == "" and "".join(texts).endswith("assistantfinal2 + 2 = 4.")  # special tokens' steps are ""
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 35


def test_models_list_and_retrieve(client):
    # http_server.py available_models / retrieve_model: the card, or its own 404 body.
    assert [m.id for m in client.models.list()] == [MODEL] and client.models.retrieve(MODEL).owned_by == "sglang"
    with pytest.raises(openai.NotFoundError) as missing:
        client.models.retrieve("gpt-4o")
    assert missing.value.body["code"] == "model_not_found"


@pytest.mark.mockoss(scenario="clean-answer")
def test_responses_stream_headers(http):
    with http.stream("POST", "/v1/responses", json={"model": MODEL, "input": "hi", "stream": True}) as reply:
        body = b"".join(reply.iter_bytes())
    assert reply.headers["content-type"].startswith("text/event-stream") and reply.headers["cache-control"] == "no-cache"
    assert body.startswith(b'event: response.created\ndata: {"type":"response.created","sequence_number":0,') and b"[DONE]" not in body


@pytest.mark.mockoss(scenario="clean-answer")
def test_responses_without_model_fail_and_request_id_is_the_response_id(http):
    # model_name = request.model (None) reaches ResponsesResponse(model: str): pydantic's error.
    reply = http.post("/v1/responses", json={"input": "hi"})
    assert reply.status_code == 400 and reply.json()["error"]["message"].startswith("1 validation error for ResponsesResponse\nmodel\n")
    assert http.post("/v1/responses", json={"model": MODEL, "input": "hi", "request_id": "resp_mine"}).json()["id"] == "resp_mine"


@pytest.mark.mockoss(scenario="clean-answer")
def test_responses_tool_output_needs_its_call_in_the_same_input(client):
    # An agent loop that sends only the tool output (relying on previous_response_id, which needs
    # --enable-response-store) is refused; resending the call item with it works.
    with pytest.raises(openai.BadRequestError) as alone:
        client.responses.create(model=MODEL, input=[{"type": "function_call_output", "call_id": "call_1", "output": "15 C"}])
    assert alone.value.body["message"] == "No call message found for call_1 None"
    call = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}
    response = client.responses.create(model=MODEL, tools=RESPONSE_TOOLS, input=[call, {"type": "function_call_output", "call_id": "call_1", "output": "15 C"}])
    assert response.output_text == "2 + 2 = 4."


def test_streamed_text_sends_a_cut_characters_printable_prefix_first(server, client):
    # The detokenizer (DetokenizerManager + find_printable_text): the token " \xe9\x9b" ends inside
    # "雨", so its step sends the printable " " and the next step "雨".
    use(server, "<|channel|>final<|message|>Done 雨が<|return|>")
    chunks = list(client.completions.create(model=MODEL, prompt="hi", max_tokens=50, stream=True))
    assert [c.choices[0].text for c in chunks] == ["", "final", "", "Done", " ", "雨", "が", ""]  # special tokens skipped


@pytest.mark.mockoss(scenario="clean-answer")
def test_streamed_responses_without_model_drop_before_any_event(http):
    # ResponsesResponse.from_request raises in the generator before its first event: HTTP 200, then
    # the connection ends with no event at all.
    frames = []
    with pytest.raises(httpx.RemoteProtocolError), http.stream("POST", "/v1/responses", json={"input": "hi", "stream": True}) as reply:
        assert reply.status_code == 200
        frames.extend(reply.iter_bytes())
    assert b"".join(frames) == b""
