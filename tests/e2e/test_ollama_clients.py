"""The official ``ollama`` Python client and the ``openai`` SDK against ``mockoss`` (profile ollama).

A real HTTP server (``ThreadedServer``) on loopback, scenario ``clean-tool-call``: the first request
gets the tool call, the second the answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import ollama
import openai
import pydantic
import pytest

from mockoss.scenario.loader import load_scenario, scenario_from_data
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

MODEL = "gpt-oss:20b"
USER = [{"role": "user", "content": "Weather in San Francisco?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get-weather",
            "description": "Current weather.",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
        },
    }
]
BAD_ARGS = "<|channel|>analysis<|message|>List files.<|end|><|start|>assistant<|channel|>commentary to=functions.terminal<|message|>ls -R\n<|call|>"


@pytest.fixture(scope="module")
def server():
    running = ThreadedServer(
        MockServer(scenario="clean-tool-call", profile="ollama", served_model_names=[MODEL])
    ).start()
    yield running
    running.stop()


@pytest.fixture
def url(server):
    server.server.reset()
    server.server.set_switches({})
    server.server.use_scenario("clean-tool-call")
    return server.url


@pytest.fixture
def client(url):
    with ollama.Client(host=url) as client:
        yield client


@pytest.fixture
def sdk(url):
    with openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0) as sdk:
        yield sdk


def _bad_args(server) -> None:
    server.server.use_scenario(
        scenario_from_data({"version": 1, "steps": [{"completion": {"raw": BAD_ARGS}}]}, name="bad-args")
    )


# --------------------------------------------------------------------------- official ollama client


def test_chat_not_streamed_tool_call_then_answer(client):
    first = client.chat(model=MODEL, messages=USER, tools=TOOLS, stream=False)
    assert first.message.thinking == "Need to use function get_weather."
    assert [(c.function.name, dict(c.function.arguments)) for c in first.message.tool_calls] == [
        ("get-weather", {"location": "San Francisco"})  # mapped back to the declared name
    ]
    assert (first.done, first.done_reason, first.eval_count) == (True, "stop", 32)
    second = client.chat(model=MODEL, messages=USER, tools=TOOLS, stream=False)
    assert (second.message.content, second.message.tool_calls) == ("It is sunny in San Francisco at 20 °C.", None)


def test_chat_streamed_is_the_default_for_the_raw_api(url):
    with httpx.Client() as http:
        reply = http.post(url + "/api/chat", json={"model": MODEL, "messages": USER})
    assert reply.headers["content-type"] == "application/x-ndjson"
    objects = [json.loads(line) for line in reply.text.splitlines()]
    assert objects[-1]["done"] is True and all(o["done"] is False for o in objects[:-1])


def test_chat_streamed_with_the_client(client):
    parts = list(client.chat(model=MODEL, messages=USER, tools=TOOLS, stream=True))
    assert "".join(p.message.thinking or "" for p in parts) == "Need to use function get_weather."
    assert parts[-1].done and parts[-1].message.tool_calls[0].function.name == "get-weather"
    parts = list(client.chat(model=MODEL, messages=USER, tools=TOOLS, stream=True))
    assert "".join(p.message.content for p in parts) == "It is sunny in San Francisco at 20 °C."
    assert [p.done for p in parts].count(True) == 1


def test_generate_with_the_client(client):
    client.chat(model=MODEL, messages=USER, stream=False)  # skip the tool-call step
    response = client.generate(model=MODEL, prompt="Weather?", stream=False)
    assert (response.response, response.thinking) == (
        "It is sunny in San Francisco at 20 °C.",
        "The tool says it is sunny and 20 degrees.",
    )
    assert response.context and response.done_reason == "stop"


def test_non_json_arguments_raise_response_error_with_status_500(server, client):
    _bad_args(server)
    with pytest.raises(ollama.ResponseError) as caught:
        client.chat(model=MODEL, messages=USER, stream=False)
    assert caught.value.status_code == 500
    assert (
        caught.value.error
        == "error parsing tool call: raw='ls -R\n', err=invalid character 'l' looking for beginning of value"
    )


def test_non_json_arguments_mid_stream_raise_after_the_thinking(server, client):
    _bad_args(server)
    seen = []
    with pytest.raises(ollama.ResponseError, match="error parsing tool call: raw='ls -R"):
        for part in client.chat(model=MODEL, messages=USER, stream=True):
            seen.append(part.message.thinking)
    assert "".join(seen) == "List files."


def test_v0_11_3_wrong_key_breaks_the_client_parser(server, client):
    _bad_args(server)
    server.server.set_switches({"tool_call_error": "v0.11.3"})
    with pytest.raises(pydantic.ValidationError):  # {"error parsing tool call": …} is not a ChatResponse
        list(client.chat(model=MODEL, messages=USER, stream=True))


def test_unknown_model_is_a_404_response_error(client):
    with pytest.raises(ollama.ResponseError) as caught:
        client.chat(model="llama3:8b", messages=USER)
    assert (caught.value.status_code, caught.value.error) == (404, "model 'llama3:8b' not found")


def test_identity_routes(client, url):
    assert [m.model for m in client.list().models] == [MODEL]
    shown = client.show(MODEL)
    assert shown.capabilities == ["completion", "tools", "thinking"] and shown.details.family == "gptoss"
    with httpx.Client() as http:
        assert http.get(url + "/api/version").json() == {"version": "0.33.0-rc2"}
        root = http.get(url + "/")
        assert (root.text, root.headers["content-type"]) == ("Ollama is running", "text/plain; charset=utf-8")
        head = http.head(url + "/")
        assert (head.status_code, head.content) == (200, b"")
        missing = http.get(url + "/api/nothing")
        assert (missing.status_code, missing.text, missing.headers["content-type"]) == (
            404,
            "404 page not found",
            "text/plain",
        )
        wrong = http.get(url + "/api/chat")
        assert (wrong.status_code, wrong.text, wrong.headers["allow"]) == (405, "405 method not allowed", "POST")


# --------------------------------------------------------------------------- openai SDK on /v1


def test_sdk_chat_completions(sdk):
    first = sdk.chat.completions.create(model=MODEL, messages=USER, tools=TOOLS)
    choice = first.choices[0]
    assert (choice.finish_reason, choice.message.model_extra["reasoning"]) == (
        "tool_calls",
        "Need to use function get_weather.",
    )
    assert [(c.function.name, c.function.arguments) for c in choice.message.tool_calls] == [
        ("get-weather", '{"location":"San Francisco"}')
    ]
    assert first.id.startswith("chatcmpl-") and first.system_fingerprint == "fp_ollama"
    stream = sdk.chat.completions.create(
        model=MODEL, messages=USER, tools=TOOLS, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert (
        "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        == "It is sunny in San Francisco at 20 °C."
    )
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage.completion_tokens == 33


def test_sdk_responses(sdk):
    tools = [{"type": "function", "name": "get-weather", "parameters": {"type": "object", "properties": {}}}]
    first = sdk.responses.create(model=MODEL, input="Weather?", tools=tools)
    assert [item.type for item in first.output] == ["reasoning", "function_call"]
    assert first.output[0].encrypted_content == "Need to use function get_weather."
    with sdk.responses.stream(model=MODEL, input="Weather?") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert final.output_text == "It is sunny in San Francisco at 20 °C."
    assert "response.reasoning_summary_text.delta" in kinds and "response.reasoning_text.delta" not in kinds


def test_sdk_sees_model_list_and_not_found_errors(sdk):
    assert [(m.id, m.owned_by) for m in sdk.models.list()] == [(MODEL, "library")]
    with pytest.raises(openai.NotFoundError, match="model 'other' not found"):
        sdk.chat.completions.create(model="other", messages=USER)


def test_sdk_bad_arguments_are_an_internal_server_error(server, sdk):
    _bad_args(server)
    with pytest.raises(openai.InternalServerError, match="error parsing tool call"):
        sdk.chat.completions.create(model=MODEL, messages=USER)


# --------------------------------------------------------------------------- the command line


def test_mockoss_serve_profile_ollama_answers_both_clients():
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockoss",
            "serve",
            "--port",
            "0",
            "--profile",
            "ollama",
            "--served-model-name",
            MODEL,
            "--scenario",
            "clean-tool-call",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [process.stdout.readline(), process.stdout.readline()]
        assert "profile ollama, scenario clean-tool-call" in lines[0], lines
        base = lines[1].removeprefix("base URL: ").strip().removesuffix("/v1")
        with ollama.Client(host=base) as client:
            for _ in range(100):
                try:
                    client.list()
                    break
                except ConnectionError:
                    time.sleep(0.05)
            streamed = list(client.chat(model=MODEL, messages=USER, tools=TOOLS, stream=True))
            assert streamed[-1].message.tool_calls[0].function.arguments == {"location": "San Francisco"}
            assert client.chat(model=MODEL, messages=USER, stream=False).message.content.startswith("It is sunny")
        with openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0) as sdk:
            answer = sdk.chat.completions.create(model=MODEL, messages=USER)  # the scenario repeats its last step
            assert answer.choices[0].message.content == "It is sunny in San Francisco at 20 °C."
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()
    assert load_scenario("clean-tool-call").name == "clean-tool-call"
