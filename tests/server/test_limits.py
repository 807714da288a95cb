"""Limits and isolation of the request path (mockoss issue 9, items 2-5): every reproducer of the
issue's "Why" that is not a benchmark (benchmarks/bench_isolation.py has the timings)."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from mockoss.scenario import player as player_module
from mockoss.scenario.loader import ScenarioError, load_scenario, scenario_from_data
from mockoss.server.core import PROFILE_CACHE_SIZE, MockServer
from mockoss.server.records import RecordedRequest, RequestLog
from mockoss.server.run import ThreadedServer

#: vLLM and SGLang refuse a body not sent as application/json (mockoss.server.content_type).
JSON_TYPE = {"content-type": "application/json"}

MODEL = "openai/gpt-oss-20b"
HI = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}).encode()


def _chat(content: str, model: str = MODEL) -> bytes:
    return json.dumps({"model": model, "messages": [{"role": "user", "content": content}]}).encode()


@pytest.fixture
def served():
    started: list[ThreadedServer] = []

    def start(server: MockServer, **options) -> ThreadedServer:
        threaded = ThreadedServer(server, **options).start()
        started.append(threaded)
        return threaded

    yield start
    for threaded in started:
        threaded.stop()


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


# -- body limit ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("profile", "path"), [("vllm", "/v1/chat/completions"), ("ollama", "/api/chat")])
def test_a_body_over_the_limit_gets_413_in_the_profile_error_shape(served, profile, path):
    server = MockServer("clean-answer", profile=profile, max_body_bytes=10_000)
    url = served(server).url
    model = server.served_model_names[0]
    response = httpx.post(url + path, headers=JSON_TYPE, content=_chat("x" * 20_000, model))
    assert response.status_code == 413
    assert response.headers["connection"] == "close"
    error = response.json()["error"]
    message = error["message"] if isinstance(error, dict) else error  # OpenAI shape / Ollama's {"error": "…"}
    assert "above the limit of 10,000 bytes" in message and "--max-body-bytes" in message
    # Refused before any step was played or logged; the next request is answered.
    assert len(server.requests) == 0
    assert httpx.post(url + path, headers=JSON_TYPE, content=_chat("hi", model)).status_code == 200


def test_a_chunked_body_is_cut_off_at_the_limit(served):
    server = MockServer("clean-answer", max_body_bytes=10_000)
    url = served(server).url

    def chunks():
        yield b'{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"'
        for _ in range(100):
            yield b"y" * 1000
        yield b'"}]}'

    response = httpx.post(url + "/v1/chat/completions", headers=JSON_TYPE, content=chunks())
    assert response.status_code == 413
    assert "more than 10,000 bytes" in response.json()["error"]["message"]


def test_the_default_limit_fits_a_long_agent_conversation():
    assert MockServer(None).max_body_bytes == 32 * 1024 * 1024


# -- slow, idle and half-sent connections -------------------------------------------------------


@pytest.fixture(params=["httptools", "h11"])
def protocol(request, monkeypatch):
    """Both of uvicorn's HTTP/1.1 protocols (CI's plain install has only h11)."""
    from mockoss.server import run

    if request.param == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol

        monkeypatch.setattr(run, "AutoHTTPProtocol", H11Protocol)
    else:
        httptools_impl = pytest.importorskip("uvicorn.protocols.http.httptools_impl")
        monkeypatch.setattr(run, "AutoHTTPProtocol", httptools_impl.HttpToolsProtocol)
    return request.param


def test_idle_and_half_sent_connections_are_closed(served, protocol):
    url = served(MockServer("clean-answer"), request_timeout_s=0.5).url
    address = _address(url)
    idle = socket.create_connection(address, timeout=10)
    half_head = socket.create_connection(address, timeout=10)
    half_head.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
    half_body = socket.create_connection(address, timeout=10)
    half_body.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"mo")
    assert _read_all(idle) == b""  # closed without a word: nothing was asked
    assert _read_all(half_head) == b""
    answer = _read_all(half_body)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"not received within 0.5 s" in answer
    for sock in (idle, half_head, half_body):
        sock.close()


def test_a_keep_alive_connection_with_half_a_second_request_is_closed(served, protocol):
    url = served(MockServer("clean-answer"), request_timeout_s=0.5).url
    sock = socket.create_connection(_address(url), timeout=10)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(HI), HI))
    assert sock.recv(12) == b"HTTP/1.1 200"
    sock.sendall(b"POST /v1/chat")
    _read_all(sock)  # returns once the server closes; pytest-timeout fails the test otherwise
    sock.close()


def test_a_long_answer_is_not_cut_by_the_request_deadline(served, protocol):
    scenario = scenario_from_data(
        {"steps": [{"completion": {"messages": [{"channel": "final", "content": "slow"}]}, "transport": {"ttft_ms": 1200}}]},
        name="slow",
        default_version=True,
    )
    url = served(MockServer(scenario), request_timeout_s=0.5).url
    response = httpx.post(url + "/v1/chat/completions", headers=JSON_TYPE, content=HI, timeout=10)
    assert response.status_code == 200 and response.json()["choices"][0]["message"]["content"] == "slow"


_SERVER_WITH_1024_FDS = """
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
from mockoss.cli import main
sys.exit(main(["serve", "--scenario", "clean-answer", "--port", sys.argv[1], "--request-timeout", "1"]))
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.timeout(90)
def test_the_server_survives_1100_idle_sockets_with_1024_file_descriptors():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1300:
        pytest.skip(f"this test process may open only {hard} files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(4096, hard if hard != resource.RLIM_INFINITY else 4096)), hard))
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-c", _SERVER_WITH_1024_FDS, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    idle: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", headers=JSON_TYPE, content=HI).status_code == 200
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, "server did not start"
                time.sleep(0.1)
        for _ in range(1100):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        # The server's descriptors run out; idle connections are closed after 1 s, and it accepts again.
        deadline = time.monotonic() + 45
        while True:
            try:
                response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", headers=JSON_TYPE, content=HI, timeout=5)
                if response.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, "the server died"
            assert time.monotonic() < deadline, "the server never answered again"
            time.sleep(0.5)
        assert process.poll() is None
    finally:
        for sock in idle:
            sock.close()
        process.terminate()
        process.wait(timeout=10)


# -- isolation ----------------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_a_small_request_is_answered_while_a_10_mb_one_is_handled(served):
    """Issue 9: a 10 MB body froze every client (another client's "hi" waited 15.3 s). Ordering
    only, no timing: the small request, sent after the big one started, finishes first. Its
    1.75M-token prompt is over vLLM's default ``max_model_len`` (131,072: a 400, as vLLM answers);
    the server is given room for it, so that the big request is counted and answered in full."""
    url = served(MockServer("clean-answer", switches={"max_model_len": 2_000_000})).url
    big = _chat("fresh words for the tokenizer " * 350_000)
    done: list[str] = []

    def send_big() -> None:
        assert httpx.post(url + "/v1/chat/completions", headers=JSON_TYPE, content=big, timeout=120).status_code == 200
        done.append("big")

    thread = threading.Thread(target=send_big)
    thread.start()
    time.sleep(0.3)  # the big body is on its way or being counted
    assert httpx.post(url + "/v1/chat/completions", headers=JSON_TYPE, content=HI, timeout=120).status_code == 200
    done.append("small")
    thread.join()
    assert done == ["small", "big"]


def test_a_big_request_counts_the_same_prompt_tokens_as_in_process(served):
    server = MockServer("clean-answer")
    url = served(server).url
    big = _chat("count me exactly " * 20_000)  # above the 256 KiB offload threshold
    assert len(big) > 256 * 1024
    over_http = httpx.post(url + "/v1/chat/completions", headers=JSON_TYPE, content=big, timeout=60).json()["usage"]["prompt_tokens"]
    in_process = json.loads(MockServer("clean-answer").handle("chat", big, {}).body)["usage"]["prompt_tokens"]
    assert over_http == in_process > 60_000


def test_sliced_validation_gives_pydantics_result_and_errors():
    from pydantic import ValidationError

    from mockoss.endpoints import ENDPOINTS
    from mockoss.server.validation import SLICE_ITEMS, validate_request

    schema = ENDPOINTS["chat"].schema
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}", "name": f"n{i}"} for i in range(3 * SLICE_ITEMS + 7)]
    body = {"model": MODEL, "messages": messages, "tools": [{"type": "function", "function": {"name": "f"}}]}
    assert validate_request(schema, body) == schema.model_validate(body)
    broken = {**body, "messages": [*messages[:-1], {"role": "robot"}]}
    with pytest.raises(ValidationError) as whole:
        schema.model_validate(broken)
    with pytest.raises(ValidationError) as sliced:
        validate_request(schema, broken)
    assert sliced.value.errors() == whole.value.errors()
    assert sliced.value.errors()[0]["loc"][:2] == ("messages", 3 * SLICE_ITEMS + 6)


def test_a_long_optional_tools_list_is_validated_in_slices_with_pydantics_result_and_errors(monkeypatch):
    """``tools: list[...] | None`` is sliced too (100,000 tools held the GIL ~1.4 s in one call:
    bench_isolation.py case tools100k); the result and the errors are pydantic's own."""
    from pydantic import TypeAdapter, ValidationError

    from mockoss.endpoints import ENDPOINTS
    from mockoss.server.validation import SLICE_ITEMS, validate_request

    calls: list[int] = []
    real = TypeAdapter.validate_python

    def counted(self, items, *args, **kwargs):
        calls.append(len(items))
        return real(self, items, *args, **kwargs)

    monkeypatch.setattr(TypeAdapter, "validate_python", counted)
    schema = ENDPOINTS["chat"].schema
    tools = [{"type": "function", "function": {"name": f"f{i}", "parameters": {"type": "object"}}} for i in range(2 * SLICE_ITEMS + 3)]
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "tools": tools}
    assert validate_request(schema, body) == schema.model_validate(body)
    assert calls == [SLICE_ITEMS, SLICE_ITEMS, 3]
    broken = {**body, "tools": [*tools[:-1], {"type": "function", "function": {"name": 3}}]}
    with pytest.raises(ValidationError) as whole:
        schema.model_validate(broken)
    with pytest.raises(ValidationError) as sliced:
        validate_request(schema, broken)
    assert sliced.value.errors() == whole.value.errors()
    assert sliced.value.errors()[0]["loc"][:2] == ("tools", 2 * SLICE_ITEMS + 2)


# -- bounded state ------------------------------------------------------------------------------


def test_the_request_log_is_bounded_in_bytes_and_cleared_by_reset():
    server = MockServer("clean-answer", request_log_bytes=100_000)
    for n in range(20):
        server.handle("chat", _chat(f"{n} " + "z" * 30_000), {})
    assert server.requests.bytes <= 100_000
    assert [r.index for r in server.requests] == [17, 18, 19]  # the newest entries, in order
    server.reset()
    assert len(server.requests) == 0 and server.requests.bytes == 0


def test_the_request_log_keeps_the_newest_entry_even_alone_over_budget():
    log = RequestLog(maxlen=5, max_bytes=10)
    for n in range(3):
        log.append(RecordedRequest(n, "chat", b"x" * 100, (), None, None, 200, None))
    assert [r.index for r in log] == [2]


def test_distinct_switch_headers_keep_a_bounded_number_of_profiles_and_reset_frees_them():
    server = MockServer("clean-answer")
    for n in range(PROFILE_CACHE_SIZE + 200):
        reply = server.handle("chat", HI, {"x-mockoss-switch": f"stream_interval={n + 1}"})
        assert reply.status == 200
    assert len(server._profiles) == PROFILE_CACHE_SIZE
    server.reset()
    assert len(server._profiles) == 0


# -- X-Mockoss-Scenario names only scenarios ----------------------------------------------------


def test_the_scenario_header_never_opens_a_file_of_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path(".env").write_text("OPENAI_API_KEY: sk-secret\nDATABASE_PASSWORD: hunter2\n")
    Path("app.log").write_text("version: 1\nsteps: [{completion: {raw: leaked}}]\n")
    Path("local.yaml").write_text("version: 1\nsteps: [{completion: {raw: leaked}}]\n")
    server = MockServer(None)
    for name in (".env", "app.log", "local", "local.yaml", "./local.yaml", "../local", str(tmp_path / "local.yaml")):
        reply = server.handle("chat", HI, {"x-mockoss-scenario": name})
        assert reply.status == 400, name
        assert b"OPENAI_API_KEY" not in reply.body and b"DATABASE_PASSWORD" not in reply.body
        assert b"leaked" not in reply.body


def test_scenario_dirs_serve_their_files_by_name_and_nothing_outside(tmp_path):
    shared = tmp_path / "scenarios"
    shared.mkdir()
    (shared / "greet.yaml").write_text("version: 1\nsteps: [{completion: {messages: [{channel: final, content: hello}]}}]\n")
    (tmp_path / "outside.yaml").write_text("version: 1\nsteps: [{completion: {raw: outside}}]\n")
    (shared / "escape.yaml").symlink_to(tmp_path / "outside.yaml")
    server = MockServer(None, scenario_dirs=[shared])
    reply = server.handle("chat", HI, {"x-mockoss-scenario": "greet"})
    assert reply.status == 200 and json.loads(reply.body)["choices"][0]["message"]["content"] == "hello"
    # A link the operator put in the directory is served wherever it points (eleventh-session
    # breaker, finding 5b: Bazel runfiles and nix are links); a name cannot leave the directory.
    assert server.handle("chat", HI, {"x-mockoss-scenario": "escape"}).status == 200
    assert server.handle("chat", HI, {"x-mockoss-scenario": "../outside"}).status == 400
    assert server.handle("chat", HI, {"x-mockoss-scenario": "clean-answer"}).status == 200  # shipped names still work


def test_a_huge_file_in_a_scenario_dir_is_refused_before_it_is_read(tmp_path):
    """Issue 9: a 100 MB file named by the header took 54 s and 1.3 GB to parse."""
    with open(tmp_path / "huge.yaml", "wb") as handle:
        handle.truncate(65 * 1024 * 1024)  # sparse: nothing is written
    reply = MockServer(None, scenario_dirs=[tmp_path]).handle("chat", HI, {"x-mockoss-scenario": "huge"})
    assert reply.status == 400
    assert b"above the 67,108,864-byte limit for a scenario file" in reply.body


# -- YAML and regex that cannot stall the server ------------------------------------------------


def test_a_recursive_alias_in_a_switch_header_is_a_400():
    reply = MockServer("clean-answer").handle("chat", HI, {"x-mockoss-switch": "stream_interval=&a [*a]"})
    assert reply.status == 400 and b"recursive YAML alias" in reply.body

_LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9) if previous else ', '.join(['lol'] * 9)}]\n"
    for previous, name in zip([None, *"abcdefgh"], "abcdefghi")
)


@pytest.mark.timeout(20)
def test_a_billion_laughs_scenario_fails_fast_with_file_and_line(tmp_path):
    path = tmp_path / "laughs.yaml"
    path.write_text("version: 1\n" + _LAUGHS + "steps: []\n")
    with pytest.raises(ScenarioError, match=r"laughs\.yaml:\d+: YAML aliases expand to more than 2,000,000 nodes"):
        load_scenario(path)


@pytest.mark.timeout(20)
def test_a_billion_laughs_under_switches_fails_fast(tmp_path):
    nested = "".join("  " + line for line in _LAUGHS.splitlines(keepends=True))
    path = tmp_path / "switches.yaml"
    path.write_text("version: 1\nswitches:\n" + nested + "steps: []\n")
    with pytest.raises(ScenarioError, match=r"switches\.yaml:\d+: YAML aliases expand"):
        load_scenario(path)


def test_a_recursive_alias_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("version: 1\nloop: &loop [1, *loop]\nsteps: []\n")
    with pytest.raises(ScenarioError, match=r"loop\.yaml:2: recursive YAML alias"):
        load_scenario(path)


@pytest.mark.timeout(20)
def test_a_pathological_regex_runs_in_linear_time():
    """Issue 9: ``^(a+)+$`` on 26 characters stalled every client for 6.4 s under Python's re;
    RE2 answers 5,000 at once (a backtracking engine would never finish)."""
    scenario = scenario_from_data(
        {
            "rules": [
                {"match": {"last_user": "^(a+)+$"}, "steps": [{"completion": {"raw": "all a"}}]},
                {"steps": [{"completion": {"messages": [{"channel": "final", "content": "other"}]}}]},
            ]
        },
        name="regex",
        default_version=True,
    )
    server = MockServer(scenario)
    reply = server.handle("chat", _chat("a" * 5000 + "b"), {})
    assert json.loads(reply.body)["choices"][0]["message"]["content"] == "other"


@pytest.mark.parametrize(
    ("field", "pattern", "reason"),
    [
        ("last_user", "(a)\\\\1", "invalid escape sequence"),
        ("last_tool", "(?=x)y", "invalid perl operator"),
        ("last_message", "(?x) a b", "invalid perl operator"),
    ],
)
def test_patterns_re2_cannot_run_are_refused_at_load_with_file_line_and_field(tmp_path, field, pattern, reason):
    path = tmp_path / "re.yaml"
    path.write_text(f'version: 1\nrules:\n  - match:\n      {field}: "{pattern}"\n    steps: [{{completion: {{raw: x}}}}]\n')
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:4: rules[0].match.{field}: invalid regular expression")
    assert reason in str(info.value) and "RE2" in str(info.value)


def test_python_end_of_text_and_unicode_classes_work():
    scenario = scenario_from_data(
        {"rules": [{"match": {"last_user": "(?i)^héllo\\Z", "headers": {"x-agent": "^\\p{L}+$"}}, "steps": [{"completion": {"raw": "matched"}}]}]},
        name="re2",
        default_version=True,
    )
    server = MockServer(scenario)
    assert server.handle("chat", _chat("HÉLLO"), {"x-agent": "ñandú"}).status == 200


# -- the six unscripted 500s --------------------------------------------------------------------

PROFILES = ("vllm", "vllm-2025", "vllm-0.10.1", "llamacpp", "lmstudio", "ollama", "openai")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("value", ["x=[1", "x=!!python/object/apply:os.system [ls]", "x=!!binary aGk=", "x={a: 1"])
def test_a_bad_switch_header_is_a_400(profile, value):
    server = MockServer("clean-answer", profile=profile)
    body = json.dumps({"model": server.served_model_names[0], "messages": [{"role": "user", "content": "hi"}]}).encode()
    reply = server.handle("chat", body, {"x-mockoss-switch": value})
    assert reply.status == 400, reply.body
    assert b"x-mockoss-switch" in reply.body


SURROGATE = '"\\ud800"'


@pytest.mark.parametrize("profile", ["lmstudio", "llamacpp", "openai", "vllm"])
def test_a_lone_surrogate_in_model_is_a_400(profile):
    server = MockServer("clean-answer", profile=profile)
    reply = server.handle("chat", ('{"model":%s,"messages":[{"role":"user","content":"hi"}]}' % SURROGATE).encode(), {})  # noqa: UP031  # JSON braces
    assert reply.status == 400
    assert b"lone UTF-16 surrogate" in reply.body


@pytest.mark.parametrize("profile", ["lmstudio", "llamacpp", "openai", "vllm"])
def test_a_lone_surrogate_sent_as_utf8_style_bytes_in_model_is_a_400_too(profile):
    # json.loads decodes b"\xed\xa0\x80" with surrogatepass: the same lone "\ud800" as its escape.
    server = MockServer("clean-answer", profile=profile)
    reply = server.handle("chat", b'{"model":"\xed\xa0\x80","messages":[{"role":"user","content":"hi"}]}', {})
    assert reply.status == 400
    assert b"lone UTF-16 surrogate" in reply.body


@pytest.mark.parametrize("profile", ["vllm", "lmstudio", "openai"])
@pytest.mark.parametrize("field", ["instructions", "metadata"])
def test_a_lone_surrogate_in_an_echoed_responses_field_is_a_400(profile, field):
    server = MockServer("clean-answer", profile=profile)
    value = SURROGATE if field == "instructions" else '{"k":%s}' % SURROGATE  # noqa: UP031  # JSON braces
    raw = ('{"model":"%s","input":"hi","%s":%s}' % (server.served_model_names[0], field, value)).encode()  # noqa: UP031  # JSON braces
    reply = server.handle("responses", raw, {})
    assert reply.status == 400 and field.encode() in reply.body


@pytest.mark.parametrize(
    ("profile", "endpoint", "field", "value"),
    [
        ("openai", "responses", "user", "\ud800"),
        ("openai", "responses", "truncation", "\ud800"),
        ("lmstudio", "responses", "tools", [{"type": "function", "name": "\ud800", "parameters": {}}]),
        ("llamacpp", "chat", "response_format", {"type": "\ud800"}),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_a_lone_surrogate_in_any_other_echoed_field_is_a_400_too(profile, endpoint, field, value, stream):
    server = MockServer("clean-answer", profile=profile)
    body = {"model": server.served_model_names[0], "stream": stream, field: value}
    body.update({"input": "hi"} if endpoint == "responses" else {"messages": [{"role": "user", "content": "hi"}]})
    reply = server.handle(endpoint, json.dumps(body).encode(), {})
    assert reply.status == 400 and b"lone UTF-16 surrogate" in reply.body


def test_a_lone_surrogate_in_message_content_is_still_answered():
    server = MockServer("clean-answer")
    reply = server.handle("chat", ('{"model":"%s","messages":[{"role":"user","content":%s}]}' % (MODEL, SURROGATE)).encode(), {})  # noqa: UP031  # JSON braces
    assert reply.status == 200


def test_completions_echo_with_a_token_id_out_of_vocabulary_is_vllms_400():
    server = MockServer("clean-answer")
    reply = server.handle("completions", json.dumps({"model": MODEL, "prompt": [200000, 999999999], "echo": True}).encode(), {})
    assert reply.status == 400
    assert json.loads(reply.body)["error"]["message"] == "Token id 999999999 is out of vocabulary"
    ok = server.handle("completions", json.dumps({"model": MODEL, "prompt": [200000, 201087], "echo": True}).encode(), {})
    assert ok.status == 200


@pytest.mark.timeout(60)
def test_ollama_generate_with_a_million_character_word_is_a_400_not_a_500():
    server = MockServer("clean-answer", profile="ollama")
    raw = json.dumps({"model": server.served_model_names[0], "prompt": "a" * 1_000_000, "stream": False}).encode()
    reply = server.handle("ollama.generate", raw, {})
    assert reply.status == 400
    assert "openai-harmony cannot tokenize" in json.loads(reply.body)["error"]
    assert server.handle("ollama.generate", raw.replace(b"a" * 1_000_000, b"hi"), {}).status == 200


# -- a broken vocabulary cache ------------------------------------------------------------------


@pytest.mark.parametrize("command", [["serve", "--scenario", "clean-answer", "--port", "0"], ["explain", "-"]])
def test_a_broken_vocabulary_cache_is_reported_as_what_it_is(tmp_path, command):
    (tmp_path / "o200k_base.tiktoken").write_bytes(b"not a vocabulary")
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_ENCODINGS_BASE"}
    env["MOCKOSS_CACHE_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "mockoss", *command], input='{"steps": []}', capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 2
    assert done.stderr.startswith("mockoss: error: the o200k_base vocabulary cannot be loaded: ")
    assert "sha256 mismatch" in done.stderr
    assert "Traceback" not in done.stderr and "scenarios/clean-answer.yaml" not in done.stderr


def test_session_keys_are_bounded_and_the_shared_cursors_survive(monkeypatch):
    # Issue 9, item 3 (per-header state bounded): a client inventing an X-Mockoss-Session key per
    # request must not grow the server without limit; the least recently used key is forgotten.
    monkeypatch.setattr(player_module, "MAX_SESSIONS", 50)
    reference = MockServer("clean-tool-call")
    steps = [json.loads(reference.handle("chat", HI, {}).body)["choices"][0]["message"] for _ in range(2)]
    assert steps[0] != steps[1]
    server = MockServer("clean-tool-call")
    server.handle("chat", HI, {})  # the shared cursors (no session): step 0
    kept = {"x-mockoss-session": "kept"}
    assert server.handle("chat", HI, kept).status == 200
    for n in range(200):
        server.handle("chat", HI, {"x-mockoss-session": f"k{n}"})
        if n % 10 == 0:
            server.handle("chat", HI, kept)  # recently used: stays
    cursors = server._player._cursors["clean-tool-call"]
    assert len(server._player._sessions) <= 50 and len(cursors) <= 51
    assert "kept" in server._player._sessions and "k0" not in server._player._sessions
    # The shared cursors were not forgotten: the next request without a session is step 1.
    assert json.loads(server.handle("chat", HI, {}).body)["choices"][0]["message"] == steps[1]


def test_the_prompt_worker_empties_its_caches_after_a_reset(monkeypatch):
    # Issue 9, item 3 (caches cleared by reset): the worker process's count caches too (noted
    # last session). The worker's loop, in process, fed what the server sends it.
    import io

    from mockoss import endpoints
    from mockoss.server import prompt_worker

    cleared = []
    monkeypatch.setattr(endpoints, "clear_prompt_caches", lambda: cleared.append(True))
    frames = io.BytesIO()
    for generation in (b"0", b"0", b"1", b"1"):
        prompt_worker.write_frame(frames, b"chat\0" + generation + b"\0" + HI)
    frames.seek(0)
    answers = io.BytesIO()
    prompt_worker.serve(frames, answers)
    answers.seek(0)
    counts = [prompt_worker.read_frame(answers) for _ in range(4)]
    assert len(set(counts)) == 1 and int(counts[0]) > 0
    assert cleared == [True]  # once: when the generation changed
    before = endpoints.prompt_cache_generation()
    MockServer("clean-answer").reset()
    assert endpoints.prompt_cache_generation() == before + 1


@pytest.mark.parametrize(("options", "message"), [
    ({"max_body_bytes": 0}, "max_body_bytes must be at least 1"),
    ({"max_body_bytes": -5}, "max_body_bytes must be at least 1"),
    ({"served_model_names": [""]}, "served_model_names must be non-empty strings"),
])
def test_a_limit_that_refuses_everything_or_an_empty_model_name_is_refused_at_start(options, message):
    # Newcomer report (second session): --max-body-bytes -5 answered every request 413, and an
    # empty --served-model-name listed a model with id "".
    with pytest.raises(ValueError, match=message):
        MockServer("clean-answer", **options)


@pytest.mark.parametrize(("argv", "message"), [
    (["--max-body-bytes", "0"], "expected at least 1 byte"),
    (["--max-body-bytes", "lots"], "expected a whole number of bytes"),
    (["--served-model-name", " "], "a model name cannot be empty"),
])
def test_serve_refuses_the_same_on_the_command_line(argv, message, capsys):
    from mockoss.cli import main

    with pytest.raises(SystemExit) as info:
        main(["serve", "--scenario", "clean-answer", "--port", "0", *argv])
    assert info.value.code == 2 and message in capsys.readouterr().err
