"""POST /mockoss/scenario: compiled off the event loop, a byte cap per upload (413), a byte bound
on what the sessions keep, errors naming the upload (issue 9 review, findings 7 and 10)."""

import threading
import time

import httpx
import pytest
from starlette.testclient import TestClient

from mockoss.server import control_routes
from mockoss.server.app import create_app
from mockoss.server.control import ControlOptions
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}
YAML = {"content-type": "application/yaml"}


def _scenario(text: str, pad: int = 0) -> bytes:
    """A one-step scenario answering ``text``, with a comment of ``pad`` bytes (size without cost)."""
    return (f"version: 1\n# {'x' * pad}\nsteps:\n  - completion: {{messages: [{{channel: final, content: {text!r}}}]}}\n").encode()


def _client(**options) -> tuple[TestClient, object]:
    app = create_app(MockServer(scenario="clean-answer"), control=ControlOptions(allowed_hosts=("testserver",), **options))
    return TestClient(app), app


def _answer(client: TestClient, test_id: str, **headers) -> httpx.Response:
    return client.post("/v1/chat/completions", json=CHAT, headers={"x-mockoss-test-id": test_id, **headers})


def test_an_upload_over_the_cap_gets_413_naming_the_flag():
    """Finding 7: an upload had no cap of its own (only the 32 MiB body limit), and a compiled
    scenario holds ~20x its source."""
    client, _ = _client(max_scenario_bytes=2000)
    with client:
        ok = client.post("/mockoss/scenario?name=small&test_id=a", content=_scenario("fits", 1000), headers=YAML)
        assert ok.status_code == 200, ok.text
        big = client.post("/mockoss/scenario?name=big&test_id=a", content=_scenario("too big", 3000), headers=YAML)
        assert big.status_code == 413
        error = big.json()["error"]
        assert error["status"] == 413 and "--max-scenario-bytes" in error["message"]
        assert "limit of 2,000 bytes" in error["message"] and f"({len(_scenario('too big', 3000)):,} bytes)" in error["message"]
        # Sent in chunks without a Content-Length: counted as it arrives.
        chunked = client.post(
            "/mockoss/scenario?name=big&test_id=a", content=iter([_scenario("too big", 3000)[:1500], b"#" * 1500]), headers=YAML
        )
        assert chunked.status_code == 413 and "--max-scenario-bytes" in chunked.json()["error"]["message"]
        assert "fits" in _answer(client, "a").json()["choices"][0]["message"]["content"]  # the session kept its scenario


def test_the_default_cap_is_the_documented_one():
    from mockoss.cli_parser import build_parser
    from mockoss.server.settings import DEFAULT_MAX_SCENARIO_BYTES

    assert ControlOptions().max_scenario_bytes == DEFAULT_MAX_SCENARIO_BYTES == 4 * 1024 * 1024
    assert build_parser().parse_args(["serve", "--max-scenario-bytes", "1234"]).max_scenario_bytes == 1234


def test_sessions_keep_a_bounded_number_of_upload_bytes():
    """Finding 7: each test id's session kept its upload for good (256 sessions x a 1.9 MB upload
    ~ 10 GB). Now the oldest other sessions are dropped beyond UPLOADS_KEPT x the cap."""
    cap = 8000
    client, app = _client(max_scenario_bytes=cap)
    plane = app.state.mockoss_control
    with client:
        sessions = 3 * control_routes.UPLOADS_KEPT
        for i in range(sessions):
            answer = client.post(f"/mockoss/scenario?name=s&test_id=t{i}", content=_scenario(f"answer {i}", cap - 200), headers=YAML)
            assert answer.status_code == 200, answer.text
        kept = {s["test_id"] for s in client.get("/mockoss/sessions").json()}
        assert f"t{sessions - 1}" in kept and "t0" not in kept
        assert len(kept) <= control_routes.UPLOADS_KEPT
        assert sum("s" in s.server._scenarios for s in plane._sessions.values()) <= control_routes.UPLOADS_KEPT
        assert f"answer {sessions - 1}" in _answer(client, f"t{sessions - 1}").json()["choices"][0]["message"]["content"]


def test_one_session_forgets_its_oldest_upload_names_beyond_the_bound():
    """Finding 7: a session kept every scenario it was sent by name, without bound."""
    cap = 8000
    client, app = _client(max_scenario_bytes=cap)
    with client:
        names = 2 * control_routes.UPLOADS_KEPT
        for i in range(names):
            answer = client.post(f"/mockoss/scenario?name=n{i}&test_id=one", content=_scenario(f"answer {i}", cap - 200), headers=YAML)
            assert answer.status_code == 200, answer.text
        held = app.state.mockoss_control._sessions["one"].server._scenarios
        assert f"n{names - 1}" in held and "n0" not in held
        assert sum(1 for name in held if name.startswith("n")) <= control_routes.UPLOADS_KEPT
        latest = _answer(client, "one")
        assert f"answer {names - 1}" in latest.json()["choices"][0]["message"]["content"]
        forgotten = _answer(client, "one", **{"x-mockoss-scenario": "n0"})
        assert forgotten.status_code == 400 and "unknown scenario 'n0'" in forgotten.text
        recent = _answer(client, "one", **{"x-mockoss-scenario": f"n{names - 2}"})
        assert f"answer {names - 2}" in recent.json()["choices"][0]["message"]["content"]


def test_the_same_upload_by_many_sessions_is_one_compiled_scenario():
    client, app = _client()
    with client:
        for test_id in ("a", "b"):
            assert client.post(f"/mockoss/scenario?name=same&test_id={test_id}", content=_scenario("shared"), headers=YAML).status_code == 200
        sessions = app.state.mockoss_control._sessions
        assert sessions["a"].server.scenario is sessions["b"].server.scenario


def test_an_upload_compiles_off_the_event_loop(monkeypatch):
    """Finding 7: _load_text ran on the event loop (a 249 KB scenario held every other client
    222 ms). Here the compile is held until another request has been answered: on the loop that
    request would wait for it."""
    release, compiling = threading.Event(), threading.Event()
    original = control_routes._load_text

    def held(raw, name):
        compiling.set()
        release.wait(10)
        return original(raw, name)

    monkeypatch.setattr(control_routes, "_load_text", held)
    server = ThreadedServer(MockServer(scenario="clean-answer")).start()
    try:
        result = {}

        def upload():
            with httpx.Client(timeout=30) as client:
                result["upload"] = client.post(server.url + "/mockoss/scenario?name=u&test_id=x", content=_scenario("uploaded"), headers=YAML)

        uploader = threading.Thread(target=upload)
        uploader.start()
        assert compiling.wait(10)
        began = time.perf_counter()
        with httpx.Client(timeout=30) as client:
            other = client.post(server.url + "/v1/chat/completions", json=CHAT)
        waited = time.perf_counter() - began
        release.set()
        uploader.join(30)
        assert other.status_code == 200 and waited < 5, waited
        assert result["upload"].status_code == 200, result["upload"].text
    finally:
        release.set()
        server.stop()


@pytest.mark.parametrize(
    ("body", "where"),
    [
        # Finding 10: int() past 4,300 digits raised ValueError: a 400 without file or line.
        (b"version: 1\nseed: " + b"9" * 5000 + b"\nsteps: [{completion: {messages: [{channel: final, content: x}]}}]\n", "upload:u.yaml:2: seed:"),
        # Finding 10: a bad switch value named the deleted temporary file /tmp/mockoss-upload-XXXX/u.yaml.
        (b"version: 1\nswitches: {stream_interval: 0}\nsteps: [{completion: {messages: [{channel: final, content: x}]}}]\n", "upload:u.yaml"),
    ],
)
def test_a_broken_upload_gets_400_naming_the_upload(body, where):
    client, _ = _client()
    with client:
        answer = client.post("/mockoss/scenario?name=u&test_id=z", content=body, headers=YAML)
    assert answer.status_code == 400, answer.text
    message = answer.json()["error"]["message"]
    assert where in message and "mockoss-upload" not in message


def test_a_long_message_text_is_not_kept_after_rendering():
    """Finding 7: the token layout's cache (4,096 texts of any length) kept every uploaded
    scenario's message text and tokens after its session was dropped or reset."""
    import gc
    import tracemalloc

    from openai_harmony import Message, Role

    from mockoss.harmony.layout import render_assistant_message

    render_assistant_message(Message.from_role_and_content(Role.ASSISTANT, "warm up").with_channel("final"))
    content = " ".join(f"unique{i}" for i in range(30_000))  # ~270 KB, ~60,000 tokens
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tokens = render_assistant_message(Message.from_role_and_content(Role.ASSISTANT, content).with_channel("final"))
        assert len(tokens) > 30_000
        del tokens
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 200_000, kept


def test_a_long_upload_text_is_tokenized_in_the_worker_process(monkeypatch):
    """Finding 7: openai-harmony's encode holds the GIL for the whole call (a 169 KB content:
    57 ms at once, on any thread). An upload's long texts are tokenized in the prompt worker
    process (the same ids: the reply holds the text), through
    :mod:`mockoss.server.scenario_compile`, which a --scenario-dir file's compile shares."""
    from mockoss.server import prompt_client

    asked = []
    real = prompt_client.encode_in_worker

    def spy(text, special):
        asked.append(len(text))
        return real(text, special)

    monkeypatch.setattr(prompt_client, "encode_in_worker", spy)
    content = " ".join(f"worker{i}x{time.time_ns() % 100_000}" for i in range(3_000))  # unique: no cache hit
    assert len(content) > control_routes.ENCODE_ELSEWHERE_CHARS
    client, _ = _client()
    with client:
        loaded = client.post("/mockoss/scenario?name=long&test_id=w", content=_scenario(content), headers=YAML)
        assert loaded.status_code == 200, loaded.text
        assert _answer(client, "w").json()["choices"][0]["message"]["content"] == content
    assert len(content) in asked
