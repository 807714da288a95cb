"""Public reports reproduced as a user of mockoss writes them: a marker picks the server release,
the official openai SDK (or plain HTTP for side routes) talks to it, the test asserts what the
report shows. Each test names its report."""

from __future__ import annotations

import httpx
import openai
import pytest

from mockoss.scenario.loader import scenario_from_data

MODEL = "openai/gpt-oss-20b"
USER = [{"role": "user", "content": "Weather in San Francisco?"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
RESPONSES_WEATHER = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
#: clean-tool-call's first step is 32 tokens; 29 stops inside the arguments (after ``"San``).
CUT_INSIDE_ARGUMENTS = 29


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


@pytest.fixture
def http(mockoss):
    with httpx.Client(base_url=mockoss.url, timeout=10) as client:
        yield client


def _raw(mockoss, *texts: str) -> None:
    steps = [{"completion": {"raw": text}} for text in texts]
    mockoss.server.use_scenario(scenario_from_data({"steps": steps}, name="report", default_version=True))


def _event_types(client, **extra) -> list[str]:
    stream = client.responses.create(model=MODEL, input="Weather in San Francisco?", tools=RESPONSES_WEATHER, stream=True, **extra)
    return [event.type for event in stream]


# -- vllm-project/vllm#24076 (PR #25728's "before" trace): 0.10.1's Responses stream ----------


@pytest.mark.mockoss(profile="vllm-0.10.1")
def test_vllm_24076_the_0_10_1_responses_stream_has_no_function_call_events(mockoss, client):
    mockoss.use("clean-tool-call")
    types = _event_types(client)
    assert "response.reasoning_text.delta" in types
    assert not [t for t in types if "function_call" in t]
    added = [t for t in types if t == "response.output_item.added"]
    assert len(added) == 1  # the reasoning item only: the call is never announced


@pytest.mark.mockoss(profile="vllm@0.10.1.1")
def test_vllm_24076_the_release_the_report_names_behaves_the_same(mockoss, client):
    mockoss.use("clean-tool-call")
    assert not [t for t in _event_types(client) if "function_call" in t]


@pytest.mark.mockoss(profile="vllm")
def test_vllm_24076_fixed_the_newest_release_streams_the_call(mockoss, client):
    mockoss.use("clean-tool-call")
    types = _event_types(client)
    assert "response.function_call_arguments.delta" in types and "response.function_call_arguments.done" in types


# -- vllm-project/vllm#53269 (PR #53270): finish_reason of a streamed call cut by max_tokens ------


def _stream_finish(client, **extra) -> tuple[str | None, str]:
    stream = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER, stream=True, **extra)
    finish, arguments = None, ""
    for chunk in stream:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or ():
                arguments += call.function.arguments or ""
    return finish, arguments


@pytest.mark.mockoss(profile="vllm@0.27.0")
def test_vllm_53269_before_the_fix_a_cut_tool_call_streams_as_tool_calls(mockoss, client):
    mockoss.use("clean-tool-call")
    finish, arguments = _stream_finish(client, max_tokens=CUT_INSIDE_ARGUMENTS)
    assert finish == "tool_calls"
    assert arguments == '{"location":"San'  # the arguments do not parse as JSON


@pytest.mark.mockoss(profile="vllm")
def test_vllm_53269_after_the_fix_it_ends_length_and_the_switch_turns_the_fix_off(mockoss, client):
    mockoss.use("clean-tool-call")
    assert _stream_finish(client, max_tokens=CUT_INSIDE_ARGUMENTS)[0] == "length"
    mockoss.use("clean-tool-call")
    mockoss.switches(stream_finish_keeps_length=False)
    assert _stream_finish(client, max_tokens=CUT_INSIDE_ARGUMENTS)[0] == "tool_calls"
    mockoss.use("clean-tool-call")
    assert _stream_finish(client)[0] == "tool_calls"  # a complete call still ends tool_calls


@pytest.mark.mockoss(profiles=["vllm@0.27.0", "vllm"])
def test_vllm_53269_before_and_after_as_one_parametrised_test(mockoss, client):
    mockoss.use("clean-tool-call")
    expected = {"vllm@0.27.0": "tool_calls", "vllm": "length"}[mockoss.profile]
    assert _stream_finish(client, max_tokens=CUT_INSIDE_ARGUMENTS)[0] == expected


# -- vllm-project/vllm#50690: ignore_eos with gpt-oss -------------------------------------------


@pytest.mark.mockoss(profile="vllm@0.26.0")
def test_vllm_50690_ignore_eos_is_a_500_when_the_answer_ends_before_the_limit(mockoss, client):
    mockoss.use("clean-answer")
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model=MODEL, messages=USER, max_completion_tokens=512, extra_body={"ignore_eos": True})
    error = caught.value.body
    assert caught.value.status_code == 500
    assert error["message"] == "Unexpected token 200002 while expecting start token 200006"
    assert error["code"] == 500


@pytest.mark.mockoss(profile="vllm@0.26.0")
def test_vllm_50690_an_answer_longer_than_the_limit_succeeds(mockoss, client):
    mockoss.use("clean-answer")  # 35 tokens
    reply = client.chat.completions.create(model=MODEL, messages=USER, max_completion_tokens=20, extra_body={"ignore_eos": True})
    assert reply.choices[0].finish_reason == "length"
    mockoss.use("clean-answer")
    plain = client.chat.completions.create(model=MODEL, messages=USER, max_completion_tokens=512)
    assert plain.choices[0].message.content == "2 + 2 = 4."  # without ignore_eos nothing changes


@pytest.mark.mockoss(profile="vllm")
def test_ignore_eos_that_is_not_a_boolean_is_a_400(mockoss, client):
    mockoss.use("clean-answer")
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=USER, extra_body={"ignore_eos": "yes"})
    assert caught.value.body["param"] == "ignore_eos"


# -- vllm-project/vllm#32125 (#31501, PR #36011): --stream-interval across analysis → final ------


def _stream_text(client) -> tuple[str, str, int]:
    reasoning = content = ""
    chunks = 0
    for chunk in client.chat.completions.create(model=MODEL, messages=USER, stream=True):
        for choice in chunk.choices:
            chunks += 1
            content += choice.delta.content or ""
            reasoning += (choice.delta.model_extra or {}).get("reasoning") or ""
    return reasoning, content, chunks


@pytest.mark.mockoss(profile="vllm@0.27.0", switches={"stream_interval": 16})
def test_vllm_32125_a_chunk_spanning_analysis_and_final_lands_in_content(mockoss, client):
    mockoss.use("clean-answer")
    reasoning, content, _ = _stream_text(client)
    assert content != "2 + 2 = 4." and content.endswith("2 + 2 = 4.")
    tail = content.removesuffix("2 + 2 = 4.")
    assert (reasoning + tail) == "User asks: What is 2 + 2? Simple arithmetic. Provide answer."


@pytest.mark.mockoss(profile="vllm", switches={"stream_interval": 16})
def test_vllm_32125_fixed_each_token_keeps_its_channel_in_a_merged_chunk(mockoss, client):
    mockoss.use("clean-answer")
    reasoning, content, chunks = _stream_text(client)
    assert (reasoning, content) == ("User asks: What is 2 + 2? Simple arithmetic. Provide answer.", "2 + 2 = 4.")
    mockoss.switches(stream_interval=1)
    mockoss.use("clean-answer")
    assert _stream_text(client)[2] > chunks  # one chunk per token without the interval


@pytest.mark.mockoss(profile="vllm")
def test_a_request_stream_interval_below_one_is_a_400(mockoss, client):
    mockoss.use("clean-answer")
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=USER, extra_body={"stream_interval": 0})
    assert caught.value.body["param"] == "stream_interval"


# -- llama-server's message validation -----------------------------------------------------------


@pytest.mark.mockoss(profile="llamacpp")
def test_llama_server_refuses_an_assistant_message_without_content_or_tool_calls(mockoss, client):
    """A client that replays a reasoning-only turn without ``content`` (ggml-org/llama.cpp
    ``oaicompat_chat_params_parse``: ``std::invalid_argument`` → 400)."""
    mockoss.use("clean-answer")
    history = [*USER, {"role": "assistant", "reasoning_content": "Thinking."}, {"role": "user", "content": "And now?"}]
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="ggml-org/gpt-oss-20b-GGUF", messages=history)
    assert caught.value.body == {
        "code": 400,
        "message": "Assistant message must contain either 'content' or 'tool_calls'!",
        "type": "invalid_request_error",
    }
    history[1]["content"] = None  # a null content is present: accepted
    reply = client.chat.completions.create(model="ggml-org/gpt-oss-20b-GGUF", messages=history)
    assert reply.choices[0].message.content == "2 + 2 = 4."


# -- lmstudio-ai/lmstudio-bug-tracker#876: the parse error LM Studio logs when it drops a call ---

WEB_SEARCH_CALL = (
    "<|channel|>analysis<|message|>We need to use web search.<|end|><|start|>assistant<|channel|>commentary "
    'to=functions.Web Search <|constrain|>json<|message|>{ "query": "Fractal Design North XL" }<|call|>'
)


@pytest.mark.mockoss(profile="lmstudio")
def test_lmstudio_876_the_dropped_call_and_its_parse_error_in_the_request_log(mockoss, client):
    _raw(mockoss, WEB_SEARCH_CALL)
    tools = [{"type": "function", "function": {"name": "Web Search", "parameters": {"type": "object"}}}]
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=tools)
    assert reply.choices[0].message.tool_calls == []
    error, output = mockoss.last_request.server_log
    assert error.endswith('Failed to parse tool call: Expected "<|message|>", but got "Search <|co" at index 57.')
    assert error.startswith("[ERROR] [openai_gpt-oss-20b] Failed to generate a tool call")
    assert output.startswith("Model Output:  <|start|>assistant<|channel|>commentary to=functions.Web Search ")
    assert "server log: [ERROR]" in mockoss.describe()  # the pytest failure report shows it too
    with httpx.Client(base_url=mockoss.url, timeout=10) as http:  # and so does GET /mockoss/requests
        (entry,) = [e for e in http.get("/mockoss/requests").json() if e["endpoint"] == "chat"]
    assert entry["server_log"] == [error, output]


# -- hermes-agent's server-type probe waterfall (issue 10 of this project) -----------------------

WATERFALL = ["/api/v1/models", "/api/tags", "/v1/props", "/props", "/version"]


@pytest.mark.mockoss(profile="vllm")
def test_the_probe_waterfall_settles_on_vllm_at_version(mockoss, http):
    statuses = [http.get(path).status_code for path in WATERFALL]
    assert statuses == [404, 404, 404, 404, 200]
    assert http.get("/version").json() == {"version": "0.33.0"}


@pytest.mark.mockoss(profile="vllm@0.26.0")
def test_version_reports_the_emulated_release(mockoss, http):
    assert http.get("/version").json() == {"version": "0.26.0"}


@pytest.mark.mockoss(profile="llamacpp")
def test_the_probe_waterfall_settles_on_llama_server_at_props(mockoss, http):
    statuses = [http.get(path).status_code for path in WATERFALL[:4]]
    assert statuses == [404, 404, 404, 200]  # upstream server.cpp registers /props, not /v1/props


@pytest.mark.mockoss(profile="lmstudio")
def test_the_probe_waterfall_settles_on_lm_studio_at_its_first_probe(mockoss, http):
    models = http.get(WATERFALL[0]).json()["models"]  # LM Studio >= 0.4.0: the native REST API v1
    assert [(m["type"], m["key"]) for m in models] == [("llm", "openai/gpt-oss-20b")]


@pytest.mark.mockoss(profile="lmstudio@0.3.23")
def test_lm_studio_before_0_4_has_no_rest_api_v1(mockoss, http):
    reply = http.get(WATERFALL[0])
    assert (reply.status_code, reply.json()) == (200, {"error": "Unexpected endpoint or method. (GET /api/v1/models)"})


@pytest.mark.mockoss(profile="ollama")
def test_the_probe_waterfall_settles_on_ollama_at_api_tags(mockoss, http):
    assert [http.get(path).status_code for path in WATERFALL[:2]] == [404, 200]
    assert http.get("/api/ps").json()["models"][0]["name"] == "gpt-oss:20b"
