"""Transport timing and faults as the openai SDK and httpx see them (threaded server, loopback).

Timing assertions are lower bounds only (a late wake-up can never make them fail).
"""

import json
import subprocess
import sys
import time

import httpx
import openai
import pytest

from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

MODEL = "openai/gpt-oss-20b"
USER = [{"role": "user", "content": "What is 2 + 2?"}]
CHAT = {"model": MODEL, "messages": USER}
HEADER = "X-Mockoss-Transport"


@pytest.fixture
def client(mockoss):
    mockoss.use("clean-answer")
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


@pytest.fixture
def http(mockoss):
    mockoss.use("clean-answer")
    with httpx.Client(base_url=mockoss.url, timeout=10) as client:
        yield client


def stream(client, transport=None, **options):
    headers = {HEADER: transport} if transport else None
    return client.chat.completions.create(model=MODEL, messages=USER, stream=True, extra_headers=headers, **options)


def fold(chunks):
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    return content, finish


def test_truncated_stream_raises_nothing_in_the_sdk_and_lacks_the_final_chunk(mockoss, client):
    complete = list(stream(client))
    assert fold(complete) == ("2 + 2 = 4.", ["stop"])
    truncated = list(stream(client, "truncate_after_frames=-2"))  # no finish chunk, no [DONE]
    assert len(truncated) == len(complete) - 1
    assert fold(truncated) == ("2 + 2 = 4.", [])


def test_truncated_stream_ends_the_http_response_cleanly_without_done(http):
    reply = http.post(
        "/v1/chat/completions", json={**CHAT, "stream": True}, headers={HEADER: "truncate_after_frames=-1"}
    )
    assert reply.status_code == 200
    # the last chunk vLLM 0.33 sends: weight_versions, system_fingerprint, kv_transfer_params (chat_completion/serving.py)
    assert b'"finish_reason":"stop","stop_reason":null,"token_ids":null,"weight_versions":null}]' in reply.content.split(b"\n\n")[-2]
    assert reply.content.endswith(b'"kv_transfer_params":null}\n\n')
    assert b"[DONE]" not in reply.content


def test_truncated_responses_stream_has_no_response_completed_event(mockoss):
    mockoss.use("clean-answer")
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        events = list(
            client.responses.create(
                model=MODEL, input="hi", stream=True, extra_headers={HEADER: "truncate_after_frames=-1"}
            )
        )
    assert [e.type for e in events][-2:] == ["response.content_part.done", "response.output_item.done"]


def test_disconnect_mid_stream_is_an_api_connection_error(client):
    chunks = []
    with pytest.raises(openai.APIConnectionError) as caught:
        for chunk in stream(client, "disconnect_after_frames=3"):
            chunks.append(chunk)  # noqa: PERF402  # one by one: the chunks read before the error are kept
    assert len(chunks) == 3
    # openai 3.x runs on httpx2, whose exception classes mirror httpx's.
    assert type(caught.value.__cause__).__name__ == "RemoteProtocolError"


def test_disconnect_after_ms_is_an_incomplete_chunked_body_for_httpx(http):
    received = []
    with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
        request = {**CHAT, "stream": True}
        with http.stream(
            "POST", "/v1/chat/completions", json=request, headers={HEADER: "tokens_per_s=100,disconnect_after_ms=25"}
        ) as reply:
            received.extend(reply.iter_bytes())
    assert b"".join(received).count(b"\n\n") == 3  # frames due at 0, 10 and 20 ms


def test_disconnect_before_a_non_streamed_body_is_an_api_connection_error(client):
    with pytest.raises(openai.APIConnectionError) as caught:
        client.chat.completions.create(model=MODEL, messages=USER, extra_headers={HEADER: "disconnect_after_frames=0"})
    assert type(caught.value.__cause__).__name__ == "RemoteProtocolError"
    assert "received 0 bytes" in str(caught.value.__cause__)


def test_malformed_frame_raises_in_the_sdk(client):
    chunks = []
    with pytest.raises(json.JSONDecodeError):
        for chunk in stream(client, "malformed_at_frame=2"):
            chunks.append(chunk)  # noqa: PERF402  # one by one: the chunks read before the error are kept
    assert len(chunks) == 2


def test_malformed_frame_bytes_on_the_wire(http):
    reply = http.post(
        "/v1/chat/completions",
        json={**CHAT, "stream": True},
        headers={HEADER: "malformed_at_frame=1,truncate_after_frames=2"},
    )
    assert reply.content.split(b"\n\n")[1:] == [b"data: {malformed json: <<<mockoss>>>", b""]


def test_split_writes_parse_identically(mockoss, client):
    plain = [c.model_dump() for c in stream(client)]
    mockoss.server.reset()  # same request index, so the same ids
    split = [c.model_dump() for c in stream(client, "split_special=true,frames_per_write=1")]
    assert split == plain


def test_split_writes_carry_the_same_bytes(mockoss, http):
    request = {**CHAT, "stream": True}
    plain = http.post("/v1/chat/completions", json=request).content
    mockoss.server.reset()
    split = http.post(
        "/v1/chat/completions", json=request, headers={HEADER: "split_special=true,frames_per_write=3"}
    ).content
    assert split == plain


def test_paced_stream_first_token_and_total_time_lower_bounds(client):
    started = time.perf_counter()
    arrivals, chunks = [], []
    for chunk in stream(client, "ttft_ms=50,tokens_per_s=100"):
        arrivals.append(time.perf_counter() - started)
        chunks.append(chunk)
    assert fold(chunks) == ("2 + 2 = 4.", ["stop"])
    assert arrivals == sorted(arrivals)
    assert arrivals[0] >= 0.050
    assert arrivals[-1] >= 0.050 + (len(chunks) - 1) * 0.010  # [DONE] is one more frame, never earlier


def test_non_streamed_reply_waits_ttft_plus_tokens_over_rate(mockoss, client):
    tokens = len(mockoss.server.scenario.steps[0].completion.tokens)
    started = time.perf_counter()
    reply = client.chat.completions.create(
        model=MODEL, messages=USER, extra_headers={HEADER: "ttft_ms=50,tokens_per_s=500"}
    )
    assert time.perf_counter() - started >= 0.050 + tokens / 500
    assert reply.choices[0].message.content == "2 + 2 = 4."


def test_scripted_429_with_retry_after_composes_with_a_delay(mockoss, client):
    mockoss.use([{"error": {"status": 429, "message": "Slow down", "retry_after": 3}, "transport": {"ttft_ms": 60}}])
    started = time.perf_counter()
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model=MODEL, messages=USER)
    assert time.perf_counter() - started >= 0.060
    assert caught.value.response.headers["retry-after"] == "3"
    assert caught.value.body["message"] == "Slow down"


def test_step_transport_from_an_inline_scenario(mockoss, client):
    final = {"messages": [{"channel": "final", "content": "Hi."}]}
    mockoss.use([{"completion": final, "transport": {"disconnect_after_frames": 1}}, {"completion": final}])
    with pytest.raises(openai.APIConnectionError):
        list(stream(client))
    assert fold(list(stream(client))) == ("Hi.", ["stop"])


def test_stall_forever_ends_at_the_client_timeout(mockoss, http):
    request = {**CHAT, "stream": True}
    with (
        pytest.raises(httpx.ReadTimeout),  # the timeout is raised while reading
        http.stream("POST", "/v1/chat/completions", json=request, headers={HEADER: "stall_after_frames=2"}, timeout=0.3) as reply,
    ):
        for _ in reply.iter_raw():
            pass
    assert http.post("/v1/chat/completions", json=CHAT).status_code == 200  # the server still answers


def test_waits_end_when_the_client_gives_up():
    # A stalled stream and a delayed body are cancelled on disconnect: stopping the server (which
    # waits for in-flight responses) is not held up by their 600 s / 300 s waits.
    running = ThreadedServer(MockServer(scenario="clean-answer")).start()
    try:
        with httpx.Client(base_url=running.url, timeout=0.2) as http:
            for streamed, transport in ((True, "stall_after_frames=2"), (False, "ttft_ms=300000")):
                with pytest.raises(httpx.ReadTimeout):
                    http.post("/v1/chat/completions", json={**CHAT, "stream": streamed}, headers={HEADER: transport})
    finally:
        started = time.perf_counter()
        running.stop()
    assert time.perf_counter() - started < 5


def test_bad_header_is_a_400_for_the_sdk(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=USER, extra_headers={HEADER: "ttft=5"})
    assert caught.value.body["message"].startswith(
        "mockoss: X-Mockoss-Transport: ttft: unknown field (did you mean 'ttft_ms'?); the fields are ttft_ms,"
    )


def test_server_default_transport():
    running = ThreadedServer(MockServer(scenario="clean-answer", transport={"ttft_ms": 80})).start()
    try:
        with httpx.Client(base_url=running.url, timeout=10) as http:
            started = time.perf_counter()
            assert http.post("/v1/chat/completions", json=CHAT).status_code == 200
            assert time.perf_counter() - started >= 0.080
            assert http.post("/v1/chat/completions", json={"model": MODEL}).status_code == 400  # validation: at once
    finally:
        running.stop()


def test_cli_ttft_and_tokens_per_s_flags():
    argv = [sys.executable, "-m", "mockoss", "serve", "--port", "0", "--scenario", "clean-answer"]
    process = subprocess.Popen(
        [*argv, "--ttft-ms", "60", "--tokens-per-s", "1000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        lines = [process.stdout.readline(), process.stdout.readline()]
        assert lines[1].startswith("base URL: "), lines
        url = lines[1].removeprefix("base URL: ").strip()
        with httpx.Client(timeout=10) as http:
            for _ in range(100):
                try:
                    http.get(url.removesuffix("/v1") + "/health")
                    break
                except httpx.ConnectError:
                    time.sleep(0.05)
            started = time.perf_counter()
            reply = http.post(url + "/chat/completions", json={**CHAT, "stream": True})
            elapsed = time.perf_counter() - started
        frames = reply.content.count(b"\n\n")
        assert elapsed >= 0.060 + (frames - 1) / 1000
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()


def test_cli_rejects_a_negative_ttft():
    result = subprocess.run(
        [sys.executable, "-m", "mockoss", "serve", "--port", "0", "--ttft-ms", "-1"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "ttft_ms: Input should be greater than or equal to 0 (got -1.0)" in result.stderr
