"""The official openai SDK against the ``vllm-mlx`` profile over HTTP. Each expectation is what
vllm-mlx 0.6.0's server gives for the scripted text, as ``tools/vllm_mlx_diff.py`` measured it
against the server's own code (see :mod:`mockoss.profiles.vllm_mlx`)."""

from __future__ import annotations

import json
import re

import openai
import pytest
from profile_e2e_support import stream_chat, use_raw

from mockoss.harmony.encoding import load_encoding

MODEL = "mlx-community/gpt-oss-20b-MXFP4-Q8"
USER = [{"role": "user", "content": "Weather in Paris?"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
ANSWER = "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>final<|message|>Sunny.<|return|>"
CALL = '<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'

pytestmark = pytest.mark.mockoss(profile="vllm-mlx")


def tokens(text: str) -> list[int]:
    return load_encoding().encode(text, allowed_special="all")


def use(server, *raw: str) -> None:
    use_raw(server, *raw, name="vllm-mlx-e2e")


def streamed(client, **kwargs):
    return stream_chat(client, MODEL, USER, "reasoning_content", **kwargs)


def test_non_streamed_answer_loses_the_reasoning_to_the_engine_cleaner(server, client):
    # SimpleEngine runs clean_output_text before the reasoning parser sees the text.
    use(server, ANSWER)
    reply = client.chat.completions.create(model=MODEL, messages=USER)
    message = reply.choices[0].message
    assert (message.content, (message.model_extra or {}).get("reasoning_content"), reply.choices[0].finish_reason) == ("Sunny.", None, "stop")
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{8}", reply.id) and reply.model == MODEL


def test_streamed_answer_splits_reasoning_and_content(server, client):
    use(server, ANSWER)
    content, reasoning, calls, finish, chunks = streamed(client, stream_options={"include_usage": True})
    assert (content, reasoning, calls, finish) == ("Sunny.", "Need the weather.", [], "stop")
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == chunks[-2].usage.completion_tokens
    # streamed, the stop token counts (the engine's flush output); not streamed, the text re-encoded does not
    assert chunks[-1].usage.completion_tokens == len(tokens(ANSWER))
    assert client.chat.completions.create(model=MODEL, messages=USER).usage.completion_tokens == len(tokens(ANSWER)) - 1


def test_non_streamed_call_is_flattened_into_content(server, client):
    # waybarrios/vllm-mlx#562's configuration: the engine's cleaner strips the channel headers, the
    # parsers find no call; analysis text and arguments are the answer.
    use(server, CALL)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    choice = reply.choices[0]
    assert (choice.message.content, choice.message.tool_calls, choice.finish_reason) == ('Need the weather.{"city":"Paris"}', None, "stop")


def test_streamed_call_is_lost_behind_the_gpt_oss_reasoning_parser(server, client):
    # The commentary block is the gpt_oss parser's "transition" phase: it never reaches the tool parser.
    use(server, CALL)
    content, reasoning, calls, finish, _ = streamed(client, tools=WEATHER)
    assert (content, reasoning, calls, finish) == ("", "Need the weather.", [], "stop")


@pytest.mark.mockoss(switches={"reasoning_parser": None})
def test_without_reasoning_parser_the_streamed_call_is_found(server, client):
    use(server, CALL)
    content, reasoning, calls, finish, chunks = streamed(client, tools=WEATHER)
    assert calls == [("get_weather", '{"city": "Paris"}')] and finish == "tool_calls"
    # Harmony tokens stripped, their words kept, until "<|channel|>commentary" is complete and the tool parser takes over
    assert content == "analysisNeed the weather.assistantcomment" and reasoning == ""
    assert all(re.fullmatch(r"call_[0-9a-f]{8}", c.id) for ch in chunks if ch.choices for c in ch.choices[0].delta.tool_calls or ())


@pytest.mark.mockoss(profile="vllm-mlx@0.4.0", switches={"reasoning_parser": None})
def test_before_562_no_call_is_ever_found(server, client):
    # 0.4.0's pattern needs <|call|>, which the engine consumes as a stop token (waybarrios/vllm-mlx#562).
    use(server, CALL)
    assert streamed(client, tools=WEATHER)[2:4] == ([], "stop")


@pytest.mark.mockoss(profiles=["vllm-mlx@0.4.1", "vllm-mlx@0.5.0"])
def test_a_stream_cut_inside_a_held_header_ends_without_finish_reason_before_673(server, client):
    # The limit cuts the stream in the commentary header the gpt_oss parser holds ("transition"):
    # before waybarrios/vllm-mlx#673 (0.5.0) nothing carries finish_reason (#672's symptom).
    use(server, CALL)
    _, reasoning, calls, finish, _ = streamed(client, tools=WEATHER, max_tokens=12)
    assert (reasoning, calls) == ("Need the weather.", [])
    assert finish == (None if server.profile == "vllm-mlx@0.4.1" else "length")


@pytest.mark.mockoss(profiles=["vllm-mlx@0.4.1", "vllm-mlx"])
def test_streamed_responses_without_tools_got_a_call_before_0_5(server, client):
    # 0.4.1's _parse_tool_calls_with_parser ran the Harmony parser even with no tools declared.
    use(server, CALL)
    with client.responses.stream(model=MODEL, input="Weather?") as stream:
        final = stream.get_final_response()
    types = [i.type for i in final.output]
    if server.profile == "vllm-mlx@0.4.1":
        assert types == ["reasoning", "function_call"] and final.output[1].name == "get_weather"
    else:  # no parser runs: the message is the whole text cleaned, the analysis text included
        assert types == ["reasoning", "message"] and final.output_text == 'Need the weather.<|end|>{"city":"Paris"}'


def test_streamed_stop_one_token_short_of_the_limit_reports_length(server, client):
    # mlx-lm's flush is one more engine output: k tokens before <|return|> give k + 1 outputs, so
    # max_tokens = k + 1 reads as a length stop, with the whole answer.
    text = "<|channel|>final<|message|>Hi there<|return|>"
    use(server, text, text)
    k = len(tokens(text)) - 1
    content, _, _, finish, _ = streamed(client, max_tokens=k + 1)
    assert (content, finish) == ("Hi there", "length")
    assert streamed(client, max_tokens=k + 2)[3] == "stop"


def test_errors_are_fastapi_detail_bodies(http, client):
    missing = http.post("/v1/chat/completions", json={"model": "other", "messages": USER})
    assert missing.status_code == 404
    assert missing.json() == {"detail": f"The model `other` does not exist. Available model: `{MODEL}`"}
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=MODEL, messages=USER, max_tokens=40000)
    assert http.get("/v1/nothing").json() == {"detail": "Not Found"}


def test_probes(http):
    health = http.get("/health").json()
    assert (health["status"], health["model_name"], health["engine_type"]) == ("healthy", MODEL, "simple")
    models = http.get("/v1/models").json()
    assert models["data"][0]["id"] == MODEL and models["data"][0]["owned_by"] == "vllm-mlx"


def test_text_completion_is_cleaned_and_its_stream_is_raw_with_an_id_per_chunk(server, client, http):
    # create_completion: SimpleEngine.generate cleans (final channel only); stream_completion sends
    # the raw text, one json.dumps chunk per engine output, each with a new cmpl- id.
    use(server, ANSWER, ANSWER)
    reply = client.completions.create(model=MODEL, prompt="<|start|>user<|message|>Weather?<|end|><|start|>assistant")
    assert (reply.choices[0].text, reply.choices[0].finish_reason) == ("Sunny.", "stop")
    assert re.fullmatch(r"cmpl-[0-9a-f]{8}", reply.id) and reply.usage.completion_tokens == len(tokens(ANSWER))
    frames = [f for f in http.post("/v1/completions", json={"model": MODEL, "prompt": "x", "stream": True}).text.split("\n\n") if f]
    chunks = [json.loads(f.removeprefix("data: ")) for f in frames[:-1]]
    assert frames[-1] == "data: [DONE]" and frames[0].startswith('data: {"id": "cmpl-')
    assert "".join(c["choices"][0]["text"] for c in chunks) == ANSWER.removesuffix("<|return|>")
    assert len({c["id"] for c in chunks}) == len(chunks) and "usage" in chunks[-1] and chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_responses_are_built_from_the_cleaned_chat_text(server, client):
    # _run_responses_request: the chat engine's cleaned text, tool parser first, then the reasoning
    # parser; no reasoning item survives the engine's cleaner, the call is flattened into the message.
    use(server, ANSWER, CALL)
    reply = client.responses.create(model=MODEL, input="Weather?", metadata={"k": "v"})
    assert ([i.type for i in reply.output], reply.output_text, reply.status, reply.metadata) == (["message"], "Sunny.", "completed", {"k": "v"})
    assert re.fullmatch(r"resp_[0-9a-f]{32}", reply.id) and (reply.top_p, reply.temperature) == (0.9, 0.7)
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    called = client.responses.create(model=MODEL, input="Weather?", tools=tools)
    assert [i.type for i in called.output] == ["message"] and called.output_text == 'Need the weather.{"city":"Paris"}'
    assert called.tools[0].description == "" and called.tools[0].strict is False  # echoed as pydantic normalised it


def test_responses_cut_by_max_output_tokens_is_incomplete(server, client):
    use(server, ANSWER)
    reply = client.responses.create(model=MODEL, input="Weather?", max_output_tokens=3)
    assert (reply.status, reply.incomplete_details.reason, reply.usage.output_tokens) == ("incomplete", "max_output_tokens", 3)


def test_streamed_responses_find_the_call_streamed_chat_loses(server, client):
    # _stream_responses_request parses the raw accumulated text for calls at the end, so the call
    # the gpt_oss reasoning parser hides from streamed chat arrives as a function_call item.
    use(server, CALL)
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    with client.responses.stream(model=MODEL, input="Weather?", tools=tools) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(1, len(events) + 1))
    assert "".join(e.delta for e in events if e.type == "response.reasoning_text.delta") == "Need the weather."
    assert [(i.type, getattr(i, "name", None)) for i in final.output] == [("reasoning", None), ("function_call", "get_weather")]
    assert final.output[1].arguments == '{"city": "Paris"}' and final.status == "completed"
    added = [e for e in events if e.type == "response.output_item.added"]
    assert [(e.output_index, e.item.type) for e in added] == [(0, "reasoning"), (1, "function_call")]


def test_generic_parser_turns_a_json_answer_into_a_call_when_not_streamed(server, client):
    # _parse_tool_calls_with_parser falls back to the generic parser's raw-JSON branch when the
    # Harmony parser finds no call; its arguments are json.dumps'ed with the default separators.
    text = '<|channel|>final<|message|>{"name":"get_weather","arguments":{"city":"Zürich"}}<|return|>'
    use(server, text, text)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    call, = reply.choices[0].message.tool_calls
    assert (call.function.name, call.function.arguments, reply.choices[0].message.content) == ("get_weather", '{"city": "Z\\u00fcrich"}', None)
    assert reply.choices[0].finish_reason == "tool_calls"
    assert streamed(client, tools=WEATHER)[2] == []  # the streamed Harmony path has no such fallback


def test_validation_errors_are_fastapi_422s_and_scripted_errors_keep_their_status(server, http):
    bad = http.post("/v1/chat/completions", content=b"[1]", headers={"content-type": "application/json"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][0] == "body"
    server.use({"steps": [{"error": {"status": 400, "message": "Bad things"}}]})
    scripted = http.post("/v1/chat/completions", json={"model": MODEL, "messages": USER})
    assert (scripted.status_code, scripted.json()) == (400, {"detail": "Bad things"})
