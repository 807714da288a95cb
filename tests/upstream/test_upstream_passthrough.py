"""`mockoss serve --upstream URL`: every request forwarded unchanged, every answer relayed as received."""

import json

import httpx
import openai
import pytest
from upstream_helpers import CHAT, MODEL, RESPONSES, completion_step, dead_url, scenario

from mockoss.server.core import MockServer
from mockoss.upstream import Upstream

KEY_ENV = "MOCKOSS_TEST_UPSTREAM_KEY"
UPSTREAM_KEY = "sk-upstream-7f3a9c1e5b"


@pytest.fixture
def upstream(serve):
    return serve(MockServer(scenario=scenario(completion_step())))


@pytest.fixture
def proxy(serve, upstream, monkeypatch):
    monkeypatch.setenv(KEY_ENV, UPSTREAM_KEY)
    return serve(MockServer(upstream=Upstream.from_env(upstream.url + "/v1", api_key_env=KEY_ENV)))


def _sdk(url):
    return openai.OpenAI(base_url=url + "/v1", api_key="sk-client-2b8d4e6f", max_retries=0)


def _chat(client, stream):
    kwargs = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
    return client.chat.completions.with_streaming_response.create(model=MODEL, messages=CHAT["messages"], **kwargs)


def _responses(client, stream):
    return client.responses.with_streaming_response.create(model=MODEL, input=RESPONSES["input"], stream=stream)


@pytest.mark.parametrize("call", [_chat, _responses], ids=["chat", "responses"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_the_sdk_gets_the_bytes_the_upstream_sends(upstream, proxy, call, stream):
    with _sdk(upstream.url) as client, call(client, stream) as response:
        direct = response.read()
    upstream.server.reset()  # same request index upstream: same ids
    with _sdk(proxy.url) as client, call(client, stream) as response:
        relayed = response.read()
        assert response.headers["content-type"] == ("text/event-stream; charset=utf-8" if stream else "application/json")
    assert relayed == direct
    assert b"Hello! How can I help?" in relayed or b'"Hello"' in relayed


def test_the_sdk_parses_relayed_answers(proxy):
    with _sdk(proxy.url) as client:
        chat = client.chat.completions.create(model=MODEL, messages=CHAT["messages"])
        assert chat.choices[0].message.content == "Hello! How can I help?"
        events = [event.type for event in client.responses.create(model=MODEL, input="Hi there", stream=True)]
    assert events[0] == "response.created" and events[-1] == "response.completed"


def test_only_content_type_accept_and_the_upstream_key_go_upstream(upstream, proxy, http):
    http.post(
        proxy.url + "/v1/chat/completions",
        content=json.dumps(CHAT).encode(),
        headers={"content-type": "application/json", "accept": "application/json", "authorization": "Bearer sk-client-2b8d4e6f",
                 "x-mockoss-scenario": "clean-answer", "openai-organization": "org-1"},
    )
    sent = upstream.server.requests[0]
    assert sent.raw == json.dumps(CHAT).encode()  # the body, byte for byte
    assert sent.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    assert sent.headers["content-type"] == "application/json" and sent.headers["accept"] == "application/json"
    assert sent.headers["accept-encoding"] == "identity"
    assert "x-mockoss-scenario" not in sent.headers and "openai-organization" not in sent.headers
    # The proxy still logs what it was sent, with the upstream's status.
    logged = proxy.server.requests[0]
    assert (logged.endpoint, logged.status, logged.body) == ("chat", 200, CHAT)


def test_without_a_key_no_authorization_goes_upstream(serve, upstream, http):
    proxy = serve(MockServer(upstream=Upstream(upstream.url)))
    http.post(proxy.url + "/v1/responses", json=RESPONSES, headers={"authorization": "Bearer sk-client-2b8d4e6f"})
    assert "authorization" not in upstream.server.requests[0].headers


def test_models_are_the_upstreams(serve, http):
    upstream = serve(MockServer(scenario=scenario(completion_step()), served_model_names=["my-gpt-oss"]))
    proxy = serve(MockServer(upstream=Upstream(upstream.url)))
    assert [m["id"] for m in http.get(proxy.url + "/v1/models").json()["data"]] == ["my-gpt-oss"]
    # Other probes are the emulated server's own.
    assert http.get(proxy.url + "/health").status_code == 200


def test_upstream_errors_are_relayed_as_sent(serve, http):
    upstream = serve(MockServer(scenario=scenario({"error": {"status": 429, "message": "Slow down", "retry_after": 7}})))
    proxy = serve(MockServer(upstream=Upstream(upstream.url)))
    direct = http.post(upstream.url + "/v1/chat/completions", json=CHAT)
    relayed = http.post(proxy.url + "/v1/chat/completions", json=CHAT)
    assert (relayed.status_code, relayed.content, relayed.headers["retry-after"]) == (429, direct.content, "7")
    # Requests mockoss itself would reject go upstream too: it decides.
    wrong = http.post(proxy.url + "/v1/chat/completions", json={**CHAT, "model": "other"})
    assert wrong.status_code == 404 and wrong.json()["error"]["message"] == "The model `other` does not exist."


def test_upstream_down_is_a_502_in_the_profiles_error_shape(serve, http):
    url = dead_url()
    proxy = serve(MockServer(upstream=Upstream(url)))
    reply = http.post(proxy.url + "/v1/chat/completions", json=CHAT)
    assert reply.status_code == 502
    error = reply.json()["error"]
    assert error["message"].startswith(f"mockoss: upstream {url} is unreachable: ")
    assert error["code"] == 502
    assert proxy.server.requests[0].status == 502
    ollama = serve(MockServer(profile="ollama", upstream=Upstream(url)))
    native = http.post(ollama.url + "/api/chat", json={"model": "gpt-oss:20b", "messages": CHAT["messages"]})
    assert native.status_code == 502 and native.json()["error"].startswith(f"mockoss: upstream {url} is unreachable")
    models = http.get(proxy.url + "/v1/models")
    assert models.status_code == 502


def test_upstream_timeout_is_a_502(serve, http):
    slow = serve(MockServer(scenario=scenario(completion_step(transport={"ttft_ms": 3000}))))
    proxy = serve(MockServer(upstream=Upstream(slow.url, timeout_s=0.3)))
    reply = http.post(proxy.url + "/v1/chat/completions", json=CHAT)
    assert reply.status_code == 502
    assert reply.json()["error"]["message"] == f"mockoss: upstream {slow.url} did not answer in time (ReadTimeout)"


def test_a_stream_the_upstream_breaks_breaks_for_the_client(serve, http):
    broken = serve(MockServer(scenario=scenario(completion_step(transport={"disconnect_after_frames": 3}))))
    proxy = serve(MockServer(upstream=Upstream(broken.url)))
    received = bytearray()
    with pytest.raises(httpx.RemoteProtocolError), http.stream("POST", proxy.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
        for chunk in response.iter_raw():
            received += chunk
    assert received.count(b"data: ") == 3 and b"[DONE]" not in received


def test_upstream_url_credentials_never_show(serve, http):
    proxy = serve(MockServer(upstream=Upstream(dead_url().replace("//", "//user:hunter2-password@"))))
    message = http.post(proxy.url + "/v1/chat/completions", json=CHAT).json()["error"]["message"]
    assert "hunter2" not in message and "user" not in message
    assert "hunter2" not in repr(Upstream("http://h", api_key="sk-secret-123456"))
    assert "sk-secret" not in repr(Upstream("http://h", api_key="sk-secret-123456"))
