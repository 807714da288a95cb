"""``--scenario-dir`` files a request names are compiled on a worker thread, outside the server
lock, the way uploads are, and capped as uploads are (the fifteenth session's breaker, F4,
in issue 9's note of that session: a 359 KB file of 5,001 rules, its first request 2.47 s and
another client waiting 2.44 s, again 2.99 s after an edit; issue 9: another client's small
request waits at most 50 ms more than alone)."""

from __future__ import annotations

import json
import threading

import pytest
from starlette.testclient import TestClient

from mockoss.scenario import loader
from mockoss.server.app import create_app
from mockoss.server.control_guard import ControlOptions
from mockoss.server.core import MockServer
from mockoss.server.settings import DEFAULT_MAX_SCENARIO_BYTES

MODEL = "openai/gpt-oss-20b"
JSON = {"content-type": "application/json"}


def _file(answer: str, rules: int = 0) -> str:
    """A scenario file answering ``answer``, after ``rules`` rules that never match ``hi``."""
    lines = ["version: 1", "rules:"]
    for i in range(rules):
        lines += [
            f'  - match: {{last_user: "^q{i}$"}}',
            f'    steps: [{{completion: {{messages: [{{channel: final, content: "a{i}"}}]}}}}]',
        ]
    lines += [
        f"  - steps: [{{completion: {{messages: [{{channel: final, content: {json.dumps(answer)}}}]}}}}]",
        "    when_exhausted: repeat_last",
    ]
    return "\n".join(lines) + "\n"


def _chat(content: str = "hi") -> bytes:
    return json.dumps({"model": MODEL, "messages": [{"role": "user", "content": content}]}).encode()


def _client(server: MockServer, options: ControlOptions | None = None) -> TestClient:
    return TestClient(
        create_app(server, control=options), base_url="http://127.0.0.1:8000", raise_server_exceptions=False
    )


def _content(response) -> str:
    return response.json()["choices"][0]["message"]["content"]


def test_a_named_file_is_compiled_off_the_loop_and_outside_the_lock_first_and_after_an_edit(monkeypatch, tmp_path):
    """F4: ``_scenario_for`` loaded the file with the server lock held (selection.py:171-172),
    so every other client waited for the whole compile; after an edit the request stayed on the
    event loop and compiled it there. Now both compile on the off-loop gate's worker thread with
    the lock free, while another client is answered, and the locked path finds the scenario
    loaded (one compile per version)."""
    path = tmp_path / "big.yaml"
    path.write_text(_file("v1", rules=20))
    server = MockServer(scenario="clean-answer", scenario_dirs=[tmp_path])
    compiles: list[tuple[str, bool, int | None]] = []
    real = loader._load_dir_file

    def watched(*args):
        # Another client, meanwhile: answered while this file compiles (not held by the lock)?
        other: list[int] = []
        thread = threading.Thread(
            target=lambda: other.append(client.post("/v1/chat/completions", content=_chat(), headers=JSON).status_code)
        )
        thread.start()
        thread.join(10)
        compiles.append((threading.current_thread().name, server._lock.locked(), other[0] if other else None))
        return real(*args)

    monkeypatch.setattr(loader, "_load_dir_file", watched)
    headers = {**JSON, "x-mockoss-scenario": "big"}
    with _client(server) as client:
        assert _content(client.post("/v1/chat/completions", content=_chat(), headers=headers)) == "v1"
        assert (
            _content(client.post("/v1/chat/completions", content=_chat(), headers=headers)) == "v1"
        )  # loaded: no compile
        path.write_text(_file("v2 edited", rules=20))
        assert _content(client.post("/v1/chat/completions", content=_chat(), headers=headers)) == "v2 edited"
    assert len(compiles) == 2, compiles
    for thread_name, lock_held, other_status in compiles:
        assert thread_name.startswith("mockoss-offload") and not lock_held and other_status == 200, compiles


def test_the_reply_bytes_are_those_of_a_file_loaded_under_the_lock(tmp_path):
    """Determinism: loaded before the lock over HTTP, the scenario is the object the locked path
    plays, so the replies are byte for byte those of an in-process server (loaded under the lock)."""
    (tmp_path / "steps.yaml").write_text(
        "version: 1\nsteps:\n  - completion: {messages: [{channel: analysis, content: think}, {channel: final, content: one}]}\n"
        "  - completion: {messages: [{channel: final, content: two}]}\nwhen_exhausted: repeat_last\n"
    )
    headers = {**JSON, "x-mockoss-scenario": "steps"}
    with _client(MockServer(scenario="clean-answer", scenario_dirs=[tmp_path])) as client:
        over_http = [
            client.post("/v1/chat/completions", content=_chat(f"m{i}"), headers=headers).content for i in range(3)
        ]
    in_process = MockServer(scenario="clean-answer", scenario_dirs=[tmp_path])
    assert over_http == [in_process.handle("chat", _chat(f"m{i}"), headers).body for i in range(3)]


def _two_at_once(monkeypatch, target, name, servers):
    """Hold ``target``'s function (patched on :mod:`mockoss.scenario.loader`) at its first call
    while each of ``servers`` names the file ``name`` from its own thread, then release it.
    Returns (the calls' first arguments or ``name`` keywords, the scenario each server found)."""
    started, release = threading.Event(), threading.Event()
    calls: list = []
    real = getattr(loader, target)

    def slow(*args, **kwargs):
        calls.append(args[0] if args and target == "_load_dir_file" else kwargs.get("name"))
        started.set()
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(loader, target, slow)
    found: list = []
    threads = [
        threading.Thread(
            target=lambda s=s: found.append(s.warm_target({"x-mockoss-scenario": name}, make_profile=True)[0])
        )
        for s in servers
    ]
    for thread in threads:
        thread.start()
    assert started.wait(10)
    release.set()
    for thread in threads:
        thread.join(10)
    return calls, found


def test_a_burst_of_first_requests_compiles_the_file_once(monkeypatch, tmp_path):
    """Two requests naming a file not loaded yet, at once: one compiles it, the other waits on
    its own worker thread and finds it loaded (not two compiles side by side)."""
    (tmp_path / "twice.yaml").write_text(_file("once"))
    server = MockServer(scenario="clean-answer", scenario_dirs=[tmp_path])
    calls, found = _two_at_once(monkeypatch, "_load_dir_file", "twice", [server, server])
    assert len(calls) == 1 and len(found) == 2 and found[0] is found[1] is server._scenarios["twice"]


@pytest.mark.parametrize("options", [ControlOptions(max_scenario_bytes=2000), None])
def test_the_upload_cap_applies_to_scenario_dir_files(tmp_path, options):
    """``--max-scenario-bytes`` capped uploads only: a client could name a file of any size up to
    the loader's 64 MiB and have it compiled. Now a file over the cap is refused unread, with the
    profile's 400 naming the file, its size and the limit (as a malformed file names its file,
    line and field); a file under it is served, and one that grows over it is refused too."""
    cap = options.max_scenario_bytes if options else DEFAULT_MAX_SCENARIO_BYTES
    small, big = tmp_path / "small.yaml", tmp_path / "big.yaml"
    small.write_text(_file("small"))
    big.write_bytes(_file("big").encode() + b"#" * cap + b"\n")
    with _client(MockServer(scenario="clean-answer", scenario_dirs=[tmp_path]), options) as client:
        refused = client.post("/v1/chat/completions", content=_chat(), headers={**JSON, "x-mockoss-scenario": "big"})
        assert refused.status_code == 400
        size = big.stat().st_size
        message = refused.json()["error"]["message"]
        assert message == (
            f"mockoss: {big.resolve()}: {size:,} bytes, above the {cap:,}-byte limit for a scenario a request names "
            "(--max-scenario-bytes, ControlOptions(max_scenario_bytes=...), which caps uploads too)"
        )
        # a test-id session's copy of the server has the same cap
        session = {**JSON, "x-mockoss-scenario": "big", "x-mockoss-test-id": "t1"}
        in_session = client.post("/v1/chat/completions", content=_chat(), headers=session)
        assert (in_session.status_code, in_session.json()["error"]["message"]) == (400, message)
        served = client.post("/v1/chat/completions", content=_chat(), headers={**JSON, "x-mockoss-scenario": "small"})
        assert served.status_code == 200 and _content(served) == "small"
        small.write_bytes(_file("grown").encode() + b"#" * cap + b"\n")
        grown = client.post("/v1/chat/completions", content=_chat(), headers={**JSON, "x-mockoss-scenario": "small"})
        assert (
            grown.status_code == 400
            and "-byte limit for a scenario a request names" in grown.json()["error"]["message"]
        )


def test_in_process_the_loaders_own_limit_stays(tmp_path):
    """Without the HTTP layer (no uploads, no ``--max-scenario-bytes``) a file above the uploads'
    default cap is still served, up to :data:`mockoss.scenario.loader.MAX_SCENARIO_BYTES`."""
    (tmp_path / "roomy.yaml").write_bytes(_file("roomy").encode() + b"#" * DEFAULT_MAX_SCENARIO_BYTES + b"\n")
    reply = MockServer(None, scenario_dirs=[tmp_path]).handle("chat", _chat(), {"x-mockoss-scenario": "roomy"})
    assert reply.status == 200 and json.loads(reply.body)["choices"][0]["message"]["content"] == "roomy"


def test_two_servers_naming_the_same_file_at_once_compile_it_once(monkeypatch, tmp_path):
    """Test-id sessions are separate servers: a burst of them naming one file compiled it once
    each, side by side (the compile-once lock was keyed by server; a final review of this
    session). Keyed by the file now, the second waits and takes the loader's compiled copy."""
    (tmp_path / "shared.yaml").write_text(_file("shared"))
    servers = [MockServer(scenario="clean-answer", scenario_dirs=[tmp_path]) for _ in range(2)]
    compiles, found = _two_at_once(monkeypatch, "scenario_from_data", "shared", servers)
    assert len(compiles) == 1 and len(found) == 2 and found[0] is found[1]
