"""`--upstream-mode raw`: a real model's Harmony completion, surfaced the way any profile surfaces it."""

import json

import openai
import pytest
from upstream_helpers import (
    CALL_RAW,
    CHAT,
    MODEL,
    RAW,
    RESPONSES,
    TOOLS,
    completion_step,
    dead_url,
    scenario,
    stream_bytes,
)

from mockoss.harmony import load_encoding
from mockoss.harmony.prompt import render_chat_prompt, render_responses_prompt
from mockoss.server.core import MockServer
from mockoss.upstream import Upstream
from mockoss.upstream.raw import completion_text


@pytest.fixture
def upstream(serve):
    """A vLLM that answers /v1/completions with RAW, special tokens and all."""
    return serve(MockServer(scenario=scenario(completion_step())))


def _pair(serve, upstream_url, profile, raw=RAW, **options):
    """The raw-mode proxy and, for reference, the same profile serving the completion from a scenario."""
    proxy = serve(MockServer(profile=profile, upstream=Upstream(upstream_url, mode="raw", **options)))
    reference = serve(MockServer(profile=profile, scenario=scenario(completion_step(raw))))
    return proxy, reference


CASES = [
    ("vllm", "/v1/chat/completions", CHAT),
    ("vllm", "/v1/chat/completions", {**CHAT, "stream": True, "stream_options": {"include_usage": True}}),
    ("vllm", "/v1/responses", RESPONSES),
    ("vllm", "/v1/responses", {**RESPONSES, "stream": True}),
    ("ollama", "/api/chat", {"model": "gpt-oss:20b", "messages": CHAT["messages"]}),
    ("ollama", "/api/chat", {"model": "gpt-oss:20b", "messages": CHAT["messages"], "stream": False}),
    ("ollama", "/v1/chat/completions", {**CHAT, "model": "gpt-oss:20b", "stream": True}),
    ("openai", "/v1/responses", {**RESPONSES, "stream": True}),
    ("openai", "/v1/chat/completions", CHAT),
]


@pytest.mark.parametrize(("profile", "path", "body"), CASES, ids=[f"{p}{path}-{'stream' if b.get('stream', p == 'ollama' and path.startswith('/api')) else 'json'}" for p, path, b in CASES])
def test_the_upstream_completion_is_surfaced_like_a_scripted_one(serve, upstream, http, profile, path, body):
    proxy, reference = _pair(serve, upstream.url, profile, model=MODEL)
    expected = stream_bytes(http, reference.url, path, body)
    assert stream_bytes(http, proxy.url, path, body) == expected
    assert b"Hello" in expected and b"braces" in expected
    assert proxy.server.requests[0].completion == RAW


def test_the_upstream_is_asked_for_the_raw_completion_of_the_rendered_prompt(serve, upstream, http):
    proxy = serve(MockServer(upstream=Upstream(upstream.url, mode="raw")))
    body = {**CHAT, "tools": TOOLS, "max_completion_tokens": 300, "temperature": 0.2, "seed": 7}
    http.post(proxy.url + "/v1/chat/completions", json=body)
    assert upstream.server.requests[0].endpoint == "completions"
    assert upstream.server.requests[0].body == {
        "model": MODEL,
        "prompt": render_chat_prompt(body),
        "max_tokens": 300,
        "stream": False,
        "skip_special_tokens": False,
        "spaces_between_special_tokens": False,
        "include_stop_str_in_output": True,
        "stop_token_ids": [200002, 200012],
        "temperature": 0.2,
        "seed": 7,
    }
    # The prompt holds the tools, rendered by openai-harmony into the developer message.
    assert "get_weather" in load_encoding().decode(upstream.server.requests[0].body["prompt"])
    http.post(proxy.url + "/v1/responses", json=RESPONSES)
    sent = upstream.server.requests[1].body
    assert (sent["prompt"], sent["max_tokens"]) == (render_responses_prompt(RESPONSES), None)


@pytest.mark.parametrize("form", ["tokens", "text"])
def test_both_prompt_forms_give_the_same_answer(serve, upstream, http, form):
    proxy, reference = _pair(serve, upstream.url, "vllm", prompt=form)
    assert http.post(proxy.url + "/v1/chat/completions", json=CHAT).content == http.post(reference.url + "/v1/chat/completions", json=CHAT).content
    prompt = upstream.server.requests[0].body["prompt"]
    ids = render_chat_prompt(CHAT)
    assert prompt == (ids if form == "tokens" else load_encoding().decode(ids))
    assert upstream.server.requests[0].completion == RAW


def test_a_tool_call_comes_back_as_a_tool_call(serve, http):
    upstream = serve(MockServer(scenario=scenario(completion_step(CALL_RAW))))
    proxy = serve(MockServer(upstream=Upstream(upstream.url, mode="raw")))
    with openai.OpenAI(base_url=proxy.url + "/v1", api_key="unused", max_retries=0) as client:
        reply = client.chat.completions.create(model=MODEL, messages=CHAT["messages"], tools=TOOLS)
    call = reply.choices[0].message.tool_calls[0]
    assert (call.function.name, call.function.arguments, reply.choices[0].finish_reason) == ("get_weather", '{"city": "Tokyo"}', "tool_calls")


def test_the_emulated_server_checks_the_request_before_the_upstream_is_asked(serve, upstream, http):
    proxy = serve(MockServer(profile="ollama", upstream=Upstream(upstream.url, mode="raw")))
    reply = http.post(proxy.url + "/api/chat", json={"model": "nope", "messages": CHAT["messages"]})
    assert (reply.status_code, reply.json()) == (404, {"error": "model 'nope' not found"})
    assert http.post(proxy.url + "/api/chat", content=b"{not json").status_code == 400
    assert len(upstream.server.requests) == 0
    assert [r.status for r in proxy.server.requests] == [404, 400]


def test_upstream_down_is_a_502_in_each_profiles_shape(serve, http):
    url = dead_url()
    vllm = serve(MockServer(upstream=Upstream(url, mode="raw")))
    reply = http.post(vllm.url + "/v1/chat/completions", json=CHAT)
    assert reply.status_code == 502
    assert reply.json()["error"]["message"].startswith(f"mockoss: upstream {url} is unreachable: ")
    ollama = serve(MockServer(profile="ollama", upstream=Upstream(url, mode="raw")))
    native = http.post(ollama.url + "/api/chat", json={"model": "gpt-oss:20b", "messages": CHAT["messages"]})
    assert native.status_code == 502 and native.json()["error"].startswith(f"mockoss: upstream {url} is unreachable: ")


def test_an_upstream_error_is_a_502_quoting_its_body(serve, http):
    upstream = serve(MockServer(scenario=scenario({"error": {"status": 400, "message": "This model's maximum context length is 4096 tokens."}})))
    proxy = serve(MockServer(upstream=Upstream(upstream.url, mode="raw")))
    reply = http.post(proxy.url + "/v1/responses", json={**RESPONSES, "stream": True})
    assert reply.status_code == 502
    message = reply.json()["error"]["message"]
    assert message.startswith(f"mockoss: upstream {upstream.url} answered HTTP 400 to POST /v1/completions: {{")
    assert "maximum context length is 4096 tokens" in message


def test_an_upstream_without_completions_is_a_502(serve, http):
    ollama = serve(MockServer(profile="ollama", scenario=scenario(completion_step())))  # Ollama has no raw /v1/completions here
    proxy = serve(MockServer(upstream=Upstream(ollama.url, mode="raw", model="gpt-oss:20b")))
    reply = http.post(proxy.url + "/v1/chat/completions", json=CHAT)
    assert reply.status_code == 502
    assert "answered HTTP 404 to POST /v1/completions" in reply.json()["error"]["message"]


def test_an_upstream_timeout_is_a_502(serve, http):
    slow = serve(MockServer(scenario=scenario(completion_step(transport={"ttft_ms": 3000}))))
    proxy = serve(MockServer(upstream=Upstream(slow.url, mode="raw", timeout_s=0.3)))
    reply = http.post(proxy.url + "/v1/chat/completions", json=CHAT)
    assert (reply.status_code, reply.json()["error"]["message"]) == (502, f"mockoss: upstream {slow.url} did not answer in time (ReadTimeout)")


@pytest.mark.parametrize(
    ("choice", "text"),
    [
        ({"text": "<|channel|>final<|message|>Hi<|return|>", "finish_reason": "stop"}, "<|channel|>final<|message|>Hi<|return|>"),
        ({"text": "<|channel|>final<|message|>Hi", "finish_reason": "stop", "stop_reason": None}, "<|channel|>final<|message|>Hi<|return|>"),
        ({"text": "…json<|message|>{}", "finish_reason": "stop", "stop_reason": 200012}, "…json<|message|>{}<|call|>"),
        ({"text": "<|channel|>analysis<|message|>Long", "finish_reason": "length"}, "<|channel|>analysis<|message|>Long"),
    ],
)
def test_completion_text_restores_a_dropped_stop_token(choice, text):
    assert completion_text({"choices": [choice]}) == text


def test_completion_text_rejects_other_answers():
    with pytest.raises(ValueError, match=r"no choices\[0\]\.text"):
        completion_text(json.loads('{"object": "error"}'))
