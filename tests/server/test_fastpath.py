"""The short path of scripted generation requests (mockoss.server.fastpath, issue 9) answers exactly
what the layered path answers: same status, headers, body, request log and metrics, request after
request; and it hands over what it does not handle (a body in parts, a late body, a test-id
prefix, an invalid test id) to the layered path's limits and guard."""

from __future__ import annotations

import contextlib
import json
import socket
import time

import pytest
from starlette.responses import Response
from starlette.testclient import TestClient

from mockoss.profiles.base import Reply
from mockoss.profiles.ollama.errors import plain
from mockoss.scenario.loader import scenario_from_data
from mockoss.server.app import create_app
from mockoss.server.connection import CoalescingTransport, HeadFlusher
from mockoss.server.core import MockServer
from mockoss.server.fastpath import GenerationPath, plain_head
from mockoss.server.responses import to_response
from mockoss.server.run import ThreadedServer
from mockoss.server.transport import StreamAborted

#: vLLM and SGLang refuse a body not sent as application/json (mockoss.server.content_type).
JSON_TYPE = {"content-type": "application/json"}

MODEL = "openai/gpt-oss-20b"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "What is the weather in Paris?"}]}
RETRY = scenario_from_data(
    {"when_exhausted": "error", "steps": [{"error": {"status": 429, "message": "Slow down", "retry_after": 3}}]},
    name="retry",
    default_version=True,
)

#: (profile, scenario, path, body, extra headers): short and streamed replies, errors with their
#: own headers, NDJSON, a paced (scheduled) stream, bodies that are not JSON, test-id sessions.
EXCHANGES = [
    ("vllm", "clean-answer", "/v1/chat/completions", CHAT, {}),
    ("vllm", "clean-answer", "/v1/chat/completions", {**CHAT, "stream": True}, {}),
    ("vllm", "clean-tool-call", "/v1/responses", {"model": MODEL, "input": "weather?", "stream": True}, {}),
    ("vllm", RETRY, "/v1/chat/completions", CHAT, {}),
    ("vllm", "clean-answer", "/v1/chat/completions", b"{not json", {}),
    ("vllm", "clean-answer", "/v1/chat/completions", {**CHAT, "stream": True}, {"X-Mockoss-Transport": "frames_per_write=1"}),
    ("vllm", "clean-answer", "/v1/chat/completions", CHAT, {"X-Mockoss-Test-Id": "t-1"}),
    ("ollama", "clean-answer", "/api/chat", {"model": "gpt-oss:20b", "messages": CHAT["messages"]}, {}),
    ("llamacpp", "clean-answer", "/v1/chat/completions", {**CHAT, "stream": True}, {}),
    ("lmstudio", "clean-answer", "/v1/chat/completions", {"model": "nope", "messages": CHAT["messages"]}, {}),
]


def _client(profile: str, scenario, layered: bool) -> TestClient:
    app = create_app(MockServer(scenario=scenario, profile=profile))
    assert isinstance(app.mockoss_generation, GenerationPath)
    if layered:
        app.mockoss_generation = app.mockoss_generation.fallback
    return TestClient(app, base_url="http://127.0.0.1:8000")


def _exchange(client: TestClient, path: str, body, headers: dict[str, str]) -> tuple:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = client.post(path, content=content, headers={"content-type": "application/json", **headers})
    return response.status_code, sorted(response.headers.items()), response.content


def _log(client: TestClient, headers: dict[str, str]) -> list[dict]:
    entries = client.get("/mockoss/requests", headers=headers).json()
    for entry in entries:
        entry.pop("ms")
    return entries


def _counts(metrics: str) -> list[str]:
    """The metric samples, less the ``*_created`` timestamps."""
    return [line for line in metrics.splitlines() if line.startswith("mockoss_") and "_created{" not in line]


@pytest.mark.parametrize(("profile", "scenario", "path", "body", "headers"), EXCHANGES)
def test_the_short_path_answers_and_logs_byte_for_byte_what_the_layered_path_does(profile, scenario, path, body, headers):
    fast, layered = _client(profile, scenario, False), _client(profile, scenario, True)
    for _ in range(3):  # the scenario advances (steps, exhaustion) the same way on both
        assert _exchange(fast, path, body, headers) == _exchange(layered, path, body, headers)
    assert _log(fast, headers) == _log(layered, headers)
    metrics = [_counts(client.get("/mockoss/metrics").text) for client in (fast, layered)]
    assert metrics[0] == metrics[1] and metrics[0]


@pytest.mark.parametrize(
    "transport",
    [
        "truncate_after_frames=5",
        "disconnect_after_ms=0,frames_per_write=1",
        "split_special=true",
        "malformed_at_frame=2,frames_per_write=1",
        "stall_after_frames=3,stall_ms=1,frames_per_write=2",
        "disconnect_after_frames=4,frames_per_write=3",
    ],
)
def test_a_faulty_stream_is_logged_with_the_frames_that_left_on_both_paths(transport):
    headers = {"X-Mockoss-Transport": transport}
    logs = []
    for layered in (False, True):
        client = _client("vllm", "clean-tool-call", layered)
        for _ in range(2):
            # The emulated server drops the connection: the test client raises what the app raised.
            with contextlib.suppress(StreamAborted):
                client.post("/v1/chat/completions", json={**CHAT, "stream": True}, headers=headers)
        logs.append((_log(client, {}), _counts(client.get("/mockoss/metrics").text)))
    assert logs[0] == logs[1]
    # Equal is not enough (both paths could miscount alike): the count is what the fault lets out.
    [frames] = [float(line.split()[-1]) for line in logs[0][1] if line.startswith("mockoss_stream_frames_total")]
    cut = {"truncate_after_frames=5": 5, "disconnect_after_frames=4,frames_per_write=3": 4}.get(transport)
    assert frames == 2 * cut if cut is not None else frames > 0, (transport, frames)


def test_a_short_request_does_not_take_the_layered_path():
    app = create_app(MockServer(scenario="clean-answer"))
    path = app.mockoss_generation

    async def refuse(scope, receive, send):
        raise AssertionError(f"the layered path answered {scope['path']}")

    path.fallback = refuse
    response = TestClient(app).post("/v1/chat/completions", json=CHAT)
    assert response.status_code == 200 and response.json()["choices"][0]["message"]["content"]


def test_what_the_short_path_hands_over_is_answered_by_the_layered_path():
    app = create_app(MockServer(scenario="clean-answer", max_body_bytes=1000))
    path, seen = app.mockoss_generation, []
    layered = path.fallback

    async def watch(scope, receive, send):
        seen.append(scope["path"])
        await layered(scope, receive, send)

    path.fallback = watch
    client = TestClient(app)
    assert client.post("/s/t-2/v1/chat/completions", json=CHAT).status_code == 200  # test-id prefix
    assert client.post("/v1/chat/completions", json=CHAT, headers={"X-Mockoss-Test-Id": "bad id!"}).status_code == 400
    assert client.post("/v1/chat/completions", content=b"x" * 2000).status_code == 413
    assert client.post("/v1/chat/completions", headers=JSON_TYPE, content=iter([json.dumps(CHAT).encode()])).status_code == 200  # chunked
    assert len(seen) == 4


def test_plain_head_is_the_header_list_starlette_builds():
    server = MockServer(scenario=RETRY)
    replies = [server.respond("chat", json.dumps(CHAT).encode(), {})[0] for _ in range(2)]
    replies.append(MockServer(scenario="clean-answer", profile="ollama").respond("ollama.generate", b"{}", {})[0])
    replies.append(plain(404, "404 page not found"))  # its own content-type header
    replies.append(Reply(status=204, body=b""))  # no content-length on a 204
    for reply in replies:
        assert not reply.streamed
        assert plain_head(reply) == to_response(reply).raw_headers
    # Not a reply mockoss sends unstreamed today (only JSON is), but built as Starlette builds it.
    text = Reply(status=404, media_type="text/plain", body=b"404 page not found")
    assert plain_head(text) == Response(text.body, 404, media_type="text/plain").raw_headers


@pytest.fixture
def served():
    started: list[ThreadedServer] = []
    yield lambda server, **options: started.append(ThreadedServer(server, **options).start()) or started[-1]
    for threaded in started:
        threaded.stop()


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_body_that_never_comes_after_its_head_gets_408_at_the_deadline(served):
    url = served(MockServer("clean-answer"), request_timeout_s=1.0).url
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=20)
    began = time.monotonic()
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
    answer = _read_all(sock)
    waited = time.monotonic() - began
    sock.close()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"not received within 1 s" in answer
    # Once, not twice: the layered path's limits take over the deadline the short path started.
    assert waited < 1.9


def test_a_short_response_leaves_in_one_write_with_the_same_bytes():
    writes: list[bytes] = []

    class Sink:
        def write(self, data: bytes) -> None:
            writes.append(data)

        def is_closing(self) -> bool:
            return False

        def close(self) -> None:
            writes.append(b"<closed>")

    class Loop:
        def __init__(self) -> None:
            self.soon: list = []

        def call_soon(self, callback) -> None:
            self.soon.append(callback)

    loop = Loop()
    transport = CoalescingTransport(Sink(), loop)  # type: ignore[arg-type]
    transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    assert writes == []
    transport.write(b"{}")
    assert writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"]
    transport.rearm()  # the protocol: the response is complete
    transport.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")  # a stream's head ...
    for callback in loop.soon:  # ... leaves at the end of the loop iteration, before any event is due
        callback()
    assert writes[-1] == b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")  # until rearm(), even a head-like frame goes straight out
    assert writes[-1] == b"HTTP/1.1 200 OK\r\n\r\n"
    transport.rearm()
    transport.write(b"HTTP/1.1 500 x\r\n\r\n")
    transport.close()  # a held head is written before the close
    assert writes[-2:] == [b"HTTP/1.1 500 x\r\n\r\n", b"<closed>"]


def test_heads_held_in_one_loop_iteration_share_one_flush_callback():
    # mockoss.server.connection.HeadFlusher: one end-of-iteration callback for all connections,
    # not one per response; a head whose body followed is not written again by it.
    writes: list[tuple[int, bytes]] = []

    class Sink:
        def __init__(self, n: int) -> None:
            self.n = n

        def write(self, data: bytes) -> None:
            writes.append((self.n, data))

        def is_closing(self) -> bool:
            return False

    class Loop:
        def __init__(self) -> None:
            self.soon: list = []

        def call_soon(self, callback) -> None:
            self.soon.append(callback)

    loop = Loop()
    flusher = HeadFlusher(loop)  # type: ignore[arg-type]
    short, stream = (CoalescingTransport(Sink(n), loop, None, flusher) for n in (1, 2))  # type: ignore[arg-type]
    short.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    stream.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
    short.write(b"{}")
    assert len(loop.soon) == 1 and writes == [(1, b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")]
    loop.soon.pop()()  # the end of the iteration
    assert writes[1:] == [(2, b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")]
    short.rearm()
    short.write(b"HTTP/1.1 204 No Content\r\n\r\n")  # the next iteration schedules its own flush
    assert len(loop.soon) == 1
    loop.soon.pop()()
    assert writes[-1] == (1, b"HTTP/1.1 204 No Content\r\n\r\n") and len(writes) == 3


@pytest.mark.parametrize(("profile", "path", "shape"), [
    ("vllm", "/v1/chat/completions", lambda body: body["error"]["code"] == 400 and "Test-Id" in body["error"]["message"].title()),
    ("ollama", "/api/chat", lambda body: set(body) == {"error"} and isinstance(body["error"], str)),
    ("gptoss-reference", "/v1/responses", lambda body: set(body) == {"detail"}),  # FastAPI's 422 there
])
def test_a_bad_test_id_on_the_emulated_api_is_refused_in_the_profiles_error_shape(profile, path, shape):
    # Newcomer report (second session): it was mockoss's control-route shape on every profile.
    client = _client(profile, "clean-answer", False)
    response = client.post(path, json={"model": "x", "messages": [], "input": "hi"}, headers={"X-Mockoss-Test-Id": "bad id!"})
    assert response.status_code in (400, 422) and shape(response.json()), response.text
    assert client.get("/mockoss/requests", headers={"X-Mockoss-Test-Id": "bad id!"}).json()["error"]["status"] == 400
