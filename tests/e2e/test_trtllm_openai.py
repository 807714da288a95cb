"""The official openai SDK against the ``trtllm`` profile over HTTP, through the project's pytest
marker. Each expectation is what trtllm-serve's ``chat_harmony`` route gives for the scripted text
(see :mod:`mockoss.profiles.trtllm`); a test names the rule it pins."""

from __future__ import annotations

import json

import openai
import pytest
from profile_e2e_support import stream_chat, use_raw

from mockoss.harmony import Completion

MODEL = "openai/gpt-oss-20b"
USER = [{"role": "user", "content": "Weather in Paris?"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
ANALYSIS = "<|channel|>analysis<|message|>Need the weather.<|end|>"
PREAMBLE = "<|start|>assistant<|channel|>commentary<|message|>Checking the forecast.<|end|>"
CALL = '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
REPEATED = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Sunny.<|end|><|start|>assistant<|channel|>analysis<|message|>Again.<|end|><|start|>assistant<|channel|>final<|message|>Sunny again.<|return|>"

pytestmark = pytest.mark.mockoss(profile="trtllm")


def use(server, *raw: str) -> None:
    use_raw(server, *raw, name="trtllm-e2e")


def streamed(client, **kwargs) -> tuple[str, str, list[tuple[str, str]], str | None, list]:
    """(content, reasoning, calls joined per index, finish_reason, chunks) of a streamed chat completion."""
    return stream_chat(client, MODEL, USER, "reasoning", merge_calls=True, **kwargs)


@pytest.mark.mockoss(scenario="clean-answer")
def test_clean_answer_carries_reasoning_twice_and_every_field(client):
    reply = client.chat.completions.create(model=MODEL, messages=USER)
    choice, extra = reply.choices[0], reply.choices[0].message.model_extra
    assert (choice.message.content, choice.finish_reason, choice.message.tool_calls) == ("2 + 2 = 4.", "stop", [])
    assert extra["reasoning"] == extra["reasoning_content"] == "User asks: What is 2 + 2? Simple arithmetic. Provide answer."
    assert reply.id.startswith("chatcmpl-") and len(reply.id) == 41
    body = reply.to_dict()
    assert body["prompt_token_ids"] is None and body["choices"][0]["stop_reason"] is None
    assert body["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
    # <|return|> is the end id: not output, not counted
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_preamble_is_wrapped_in_markup_next_to_the_call(server, client):
    # harmony_adapter.py _apply_harmony_to_openai_mapping; NVIDIA/TensorRT-LLM#9256.
    use(server, ANALYSIS + PREAMBLE + CALL)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    choice = reply.choices[0]
    assert choice.message.content == "<|channel|>commentary<|message|>Checking the forecast.<|end|>"
    [call] = choice.message.tool_calls
    assert (choice.finish_reason, call.function.name, call.function.arguments) == ("tool_calls", "get_weather", '{"city":"Paris"}')
    assert call.id.startswith("call_") and len(call.id) == 13
    assert reply.usage.completion_tokens == len(Completion.from_text(ANALYSIS + PREAMBLE + CALL).tokens) - 1  # <|call|> trimmed


@pytest.mark.mockoss(scenario="recipientless-call-wrapped-in-content")
def test_recipientless_call_arrives_as_wrapped_content(client):
    # NVIDIA/TensorRT-LLM#9256: finish_reason stop, the JSON in markup, tool_calls [].
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=[{"type": "function", "function": {"name": "grep"}}])
    message = reply.choices[0].message
    assert (reply.choices[0].finish_reason, message.tool_calls) == ("stop", [])
    assert message.content.startswith("<|channel|>commentary<|message|>{") and message.content.endswith("}<|end|>")


def test_streamed_call_ends_with_finish_reason_stop_and_the_stop_token(server, client):
    use(server, ANALYSIS + CALL)
    content, reasoning, calls, finish, chunks = streamed(client, tools=WEATHER)
    assert (content, reasoning, calls, finish) == ("", "Need the weather.", [("get_weather", '{"city":"Paris"}')], "stop")
    assert chunks[0].choices[0].delta.role == "assistant" and sum(1 for c in chunks if c.choices and c.choices[0].delta.role) == 1
    assert chunks[-2].choices[0].model_extra["stop_reason"] == 200012
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0  # usage unasked
    assert len({c.id for c in chunks}) == 1


def test_stream_options_without_usage_drop_the_usage_chunk(server, client):
    use(server, ANALYSIS + "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>")
    *_, chunks = streamed(client, stream_options={"include_usage": False})
    assert chunks[-1].choices[0].finish_reason == "stop" and all(c.usage is None for c in chunks)


def test_repeated_channels_stop_the_stream_and_are_dropped_unstreamed(server, client):
    # _check_channel_valid (NVIDIA/TensorRT-LLM#7849): only the first analysis and final count.
    use(server, REPEATED, REPEATED)
    reply = client.chat.completions.create(model=MODEL, messages=USER)
    assert (reply.choices[0].message.content, reply.choices[0].message.model_extra["reasoning"]) == ("Sunny.", "Think.")
    content, reasoning, _, finish, chunks = streamed(client)
    assert (content, reasoning, finish) == ("Sunny.", "Think.", "stop")
    assert chunks[-2].choices[0].delta.model_dump(exclude_none=True) in ({}, {"tool_calls": []}) and chunks[-1].choices == []


def test_call_on_the_analysis_channel_is_a_tool_call(server, client):
    call = '<|start|>assistant<|channel|>analysis to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
    use(server, ANALYSIS + call, ANALYSIS + call)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    assert [(c.function.name, c.function.arguments) for c in reply.choices[0].message.tool_calls] == [("get_weather", '{"city":"Paris"}')]
    _, reasoning, calls, _, _ = streamed(client, tools=WEATHER)
    assert (reasoning, calls) == ("Need the weather.", [("get_weather", '{"city":"Paris"}')])


@pytest.mark.mockoss(profile="trtllm@2026.01.20")
def test_before_12046_a_call_on_analysis_is_reasoning(server, client):
    call = '<|start|>assistant<|channel|>analysis to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
    use(server, ANALYSIS + call)
    _, reasoning, calls, _, _ = streamed(client, tools=WEATHER)
    assert (reasoning, calls) == ('Need the weather.{"city":"Paris"}', [])


@pytest.mark.mockoss(profile="trtllm@2025.09.19", scenario="clean-answer")
def test_in_2025_every_token_brings_a_role_chunk_and_a_new_id(client):
    content, reasoning, _, finish, chunks = streamed(client)
    assert (content, reasoning, finish) == ("2 + 2 = 4.", "User asks: What is 2 + 2? Simple arithmetic. Provide answer.", "stop")
    roles = sum(1 for c in chunks if c.choices and c.choices[0].delta.role == "assistant")
    assert roles > 10 and len({c.id for c in chunks}) == len(chunks)
    assert all("reasoning_content" not in (c.choices[0].delta.model_extra or {}) for c in chunks if c.choices)


def test_tool_filtering(server, client):
    # No tools declared: every call passes. tool_choice "none" or another declared tool: dropped.
    use(server, ANALYSIS + CALL, ANALYSIS + CALL, ANALYSIS + CALL)
    assert client.chat.completions.create(model=MODEL, messages=USER).choices[0].finish_reason == "tool_calls"
    other = [{"type": "function", "function": {"name": "get_time"}}]
    dropped = client.chat.completions.create(model=MODEL, messages=USER, tools=other)
    assert (dropped.choices[0].message.tool_calls, dropped.choices[0].finish_reason, dropped.choices[0].message.content) == ([], "stop", "")
    _, _, calls, finish, _ = streamed(client, tools=WEATHER, tool_choice="none")
    assert (calls, finish) == ([], "stop")


def test_unparseable_output_falls_back_to_the_raw_text(server, client):
    broken = '<|channel|>commentary to=functions.get_weather to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
    use(server, broken)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    assert reply.choices[0].message.content == broken.removesuffix("<|call|>") and reply.choices[0].finish_reason == "stop"


def test_identity_routes_and_errors(http):
    assert (http.get("/health").status_code, http.get("/health").content) == (200, b"")
    assert http.get("/version").json() == {"version": "1.2.1"}
    assert [(c["id"], c["owned_by"]) for c in http.get("/v1/models").json()["data"]] == [(MODEL, "tensorrt_llm")]
    assert (http.get("/nope").status_code, http.get("/nope").json()) == (404, {"detail": "Not Found"})
    bad = http.post("/v1/chat/completions", content=json.dumps({"model": MODEL}))
    assert bad.status_code == 400
    assert {k: bad.json()[k] for k in ("object", "type", "param", "code")} == {"object": "error", "type": "BadRequestError", "param": None, "code": 400}


@pytest.mark.mockoss(scenario="text-between-messages")
def test_stray_text_is_raw_content_unstreamed_but_skipped_when_streamed(client):
    # Non-streamed, parse_messages_from_completion_tokens raises and the raw text is content;
    # streamed, the batch whose token raised is lost and the parser goes on (checked against
    # harmony_adapter.py by tools/trtllm_adapter_diff.py).
    reply = client.chat.completions.create(model=MODEL, messages=USER)
    assert reply.choices[0].message.content.startswith("<|channel|>analysis<|message|>User greets.")
    assert reply.choices[0].message.model_extra["reasoning"] is None
    content, reasoning, _, finish, _ = streamed(client)
    assert (content, reasoning, finish) == ("Hello! How can I help?", "User greets. Reply politely.", "stop")


@pytest.mark.mockoss(scenario="clean-answer", switches={"stream_interval": 4})
def test_stream_interval_groups_each_engine_response_into_one_chunk(client):
    *_, chunks = streamed(client)
    reasoning = [c.choices[0].delta.model_extra.get("reasoning") for c in chunks if c.choices and c.choices[0].delta.model_extra.get("reasoning")]
    assert "".join(reasoning) == "User asks: What is 2 + 2? Simple arithmetic. Provide answer." and len(reasoning) < 8


# -- /v1/responses (responses_utils.py of autumn 2025, read) ---------------------------------------

def test_responses_drop_the_preamble_and_carry_no_usage(server, client):
    use(server, ANALYSIS + PREAMBLE + CALL)
    response = client.responses.create(model=MODEL, input="Weather in Paris?", tools=[{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}])
    assert [item.type for item in response.output] == ["reasoning", "function_call"]
    call = response.output[1]
    assert (call.name, call.arguments, call.call_id[5:], call.id[3:]) == ("get_weather", '{"city":"Paris"}', call.id[3:], call.call_id[5:])
    assert (response.status, response.usage, response.max_output_tokens, response.parallel_tool_calls) == ("completed", None, 16384, False)
    assert response.id.startswith("resp_")


@pytest.mark.mockoss(scenario="clean-answer")
def test_responses_stream_quirks(client):
    events = list(client.responses.create(model=MODEL, input="What is 2 + 2?", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert {getattr(e, "item_id", "") for e in events} == {""}  # ids are never set
    # the reasoning ends with <|end|>: its done events carry the next output_index
    added, done = next(e for e in events if e.type == "response.output_item.added"), next(e for e in events if e.type == "response.output_item.done")
    assert (added.output_index, done.output_index) == (0, 1)
    # the answer ends with <|return|>, which is not output: no done events for it
    assert kinds.count("response.output_item.done") == 1 and "response.output_text.done" not in kinds
    # the engine's last response carries no token: the parser's last delta is sent again
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "2 + 2 = 4.."
    assert events[-1].response.output[-1].content[0].text == "2 + 2 = 4."


def test_responses_parse_error_is_a_400(server, client, http):
    use(server, "<|channel|>analysis<|message|>Hmm.<|end|> stray<|start|>assistant<|channel|>final<|message|>Hi<|return|>")
    reply = http.post("/v1/responses", json={"model": MODEL, "input": "hi"})
    assert reply.status_code == 400 and reply.json()["object"] == "error" and "Unexpected token" in reply.json()["message"]
    bad = http.post("/v1/responses", json={"model": MODEL, "input": "hi", "previous_response_id": "abc"})
    assert (bad.status_code, bad.json()["type"]) == (400, "InvalidRequestError")


# ------------------------------------------------------------------ /v1/completions (mockoss.profiles.trtllm.completions)

CLEAN_TEXT = "analysisUser asks: What is 2 + 2? Simple arithmetic. Provide answer.assistantfinal2 + 2 = 4."


@pytest.mark.mockoss(scenario="clean-answer")
def test_completion_detokenizes_with_special_tokens_skipped(client):
    # skip_special_tokens defaults to true on this route: the channel names run into the text
    reply = client.completions.create(model=MODEL, prompt="2 + 2?")
    choice, body = reply.choices[0], reply.to_dict()
    assert (choice.text, choice.finish_reason, body["choices"][0]["stop_reason"]) == (CLEAN_TEXT, "stop", None)
    assert reply.id.startswith("cmpl-") and len(reply.id) == 37 and reply.object == "text_completion"
    wire = json.loads(client.completions.with_raw_response.create(model=MODEL, prompt="2 + 2?").http_response.text)
    assert list(wire) == ["id", "object", "created", "model", "choices", "usage", "prompt_token_ids"]
    assert list(wire["choices"][0]) == ["index", "text", "token_ids", "logprobs", "context_logits", "finish_reason", "stop_reason",
                                        "disaggregated_params", "avg_decoded_tokens_per_iter"]
    assert body["prompt_token_ids"] is None and body["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
    raw = client.completions.create(model=MODEL, prompt="2 + 2?", extra_body={"skip_special_tokens": False}).choices[0].text
    assert raw.startswith("<|channel|>analysis<|message|>") and raw.endswith("<|channel|>final<|message|>2 + 2 = 4.")  # <|return|> is the end id


@pytest.mark.mockoss(scenario="clean-answer")
def test_streamed_completion_matches_and_usage_needs_stream_options(client):
    whole = client.completions.create(model=MODEL, prompt="2 + 2?").choices[0].text
    chunks = list(client.completions.create(model=MODEL, prompt="2 + 2?", stream=True))
    assert "".join(c.choices[0].text for c in chunks) == whole
    assert [c.choices[0].finish_reason for c in chunks].count("stop") == 1 and chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks) and len({c.id for c in chunks}) == 1
    # StreamOptions defaults continuous_usage_stats to true: every chunk counts, then the usage chunk
    chunks = list(client.completions.create(model=MODEL, prompt="2 + 2?", stream=True, stream_options={"include_usage": True}))
    assert [c.usage.completion_tokens for c in chunks[:3]] == [1, 2, 3]
    assert chunks[-1].choices == [] and chunks[-1].id == chunks[0].id and chunks[-1].usage.completion_tokens == chunks[-2].usage.completion_tokens


def test_completion_stops_on_call_as_a_stop_word(server, client):
    # PR #9514: generation_config's eos ids are stop tokens: <|call|> trimmed, stop_reason its id
    use(server, ANALYSIS + CALL)
    reply = client.completions.create(model=MODEL, prompt="weather?", extra_body={"skip_special_tokens": False})
    assert reply.choices[0].text.endswith('json<|message|>{"city":"Paris"}') and reply.to_dict()["choices"][0]["stop_reason"] == 200012
    assert reply.usage.completion_tokens == len(Completion.from_text(ANALYSIS + CALL).tokens) - 1


@pytest.mark.mockoss(profile="trtllm@2025.09.19")
def test_in_2025_completions_keep_call_and_end_with_a_chat_usage_chunk(server, http):
    use(server, ANALYSIS + CALL, ANALYSIS + CALL)
    body = http.post("/v1/completions", json={"model": MODEL, "prompt": "x", "skip_special_tokens": False}).json()
    assert body["choices"][0]["text"].endswith("<|call|>") and body["choices"][0]["stop_reason"] is None
    frames = [json.loads(line[6:]) for line in http.post("/v1/completions", json={"model": MODEL, "prompt": "x", "stream": True, "stream_options": {}}).text.split("\n\n")
              if line.startswith("data: {")]
    assert len({f["id"] for f in frames[:-1]}) == len(frames) - 1  # a fresh cmpl- id per chunk
    assert (frames[-1]["object"], frames[-1]["id"][:9], frames[-1]["choices"]) == ("chat.completion.chunk", "chatcmpl-", [])


@pytest.mark.mockoss(scenario="clean-answer")
def test_completion_errors_and_echo(client):
    with pytest.raises(openai.BadRequestError) as error:
        client.completions.create(model=MODEL, prompt="x", logprobs=1)
    assert error.value.body["type"] == "BadRequestError" and "logprobs is not supported" in error.value.body["message"]
    with pytest.raises(openai.BadRequestError):  # echo joins a token-id prompt (a list) with a string
        client.completions.create(model=MODEL, prompt=[1, 2], echo=True)
    assert client.completions.create(model=MODEL, prompt="Q: ", echo=True).choices[0].text == "Q: " + CLEAN_TEXT
