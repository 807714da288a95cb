"""The control plane (mockoss/server/control.py): sessions per test id, run-time scenarios, the
request log, readiness, metrics, and the guard of /mockoss/* (admin token, cross-origin, Host)."""

import json

import httpx
import pytest

from mockoss.server.control import ControlOptions
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}
SCENARIO_YAML = """\
version: 1
steps:
  - completion: {raw: "<|channel|>final<|message|>First from the upload<|return|>"}
  - completion: {raw: "<|channel|>final<|message|>Second from the upload<|return|>"}
"""
YAML = {"content-type": "application/yaml"}


@pytest.fixture
def running(request):
    started = []

    def start(options=None, **kwargs):
        server = ThreadedServer(MockServer(**{"scenario": "clean-answer", **kwargs}))
        if options is not None:  # rebuild the app with the options (ThreadedServer builds it at init)
            import uvicorn

            from mockoss.server.run import _config

            server._uvicorn = uvicorn.Server(_config(server.server, "warning", control=options))
            server._uvicorn.install_signal_handlers = lambda: None
            import threading

            server._thread = threading.Thread(target=server._uvicorn.run, kwargs={"sockets": [server._sock]}, daemon=True)
        started.append(server.start())
        return server

    yield start
    for server in started:
        server.stop()


def _answers(client, url, test_id, count=3):
    headers = {"x-mockoss-test-id": test_id} if test_id else {}
    return [client.post(url + "/v1/chat/completions", json=CHAT, headers=headers).content for _ in range(count)]


def test_two_test_ids_sharing_a_server_get_what_two_servers_give(running):
    shared, alone = running(), running()
    with httpx.Client(timeout=30) as client:
        # Interleaved on one server...
        a = [client.post(shared.url + "/v1/chat/completions", json=CHAT, headers={"x-mockoss-test-id": "a"}).content]
        b = [client.post(shared.url + "/s/b/v1/chat/completions", json=CHAT).content]
        a += _answers(client, shared.url, "a", 2)
        b += _answers(client, shared.url + "/s/b", None, 2)
        # ...and each alone on a fresh server (reset between them).
        expected = _answers(client, alone.url, None)
    assert a == expected and b == expected  # ids included: each session numbers its own requests
    assert json.loads(a[0])["id"] == json.loads(expected[0])["id"]


def test_a_scenario_loaded_at_run_time_answers_one_session_only(running):
    server = running()
    with httpx.Client(timeout=30) as client:
        loaded = client.post(server.url + "/mockoss/scenario?name=uploaded&test_id=t1", content=SCENARIO_YAML, headers=YAML)
        assert loaded.status_code == 200 and loaded.json()["steps"] == 2
        one = client.post(server.url + "/s/t1/v1/chat/completions", json=CHAT).json()
        other = client.post(server.url + "/s/t2/v1/chat/completions", json=CHAT).json()
        plain = client.post(server.url + "/v1/chat/completions", json=CHAT).json()
        assert one["choices"][0]["message"]["content"] == "First from the upload"
        assert other["choices"][0]["message"]["content"] == plain["choices"][0]["message"]["content"] != "First from the upload"
        # JSON works too, and a reset of t1 rewinds t1 only.
        as_json = {"version": 1, "steps": [{"completion": {"raw": "<|channel|>final<|message|>JSON one<|return|>"}}]}
        assert client.post(server.url + "/mockoss/scenario?name=j&test_id=t3", json=as_json).status_code == 200
        assert client.post(server.url + "/s/t3/v1/chat/completions", json=CHAT).json()["choices"][0]["message"]["content"] == "JSON one"
        assert client.post(server.url + "/mockoss/reset?test_id=t1").status_code == 204
        again = client.post(server.url + "/s/t1/v1/chat/completions", json=CHAT).json()
        assert again["choices"][0]["message"]["content"] == "First from the upload"
        assert client.get(server.url + "/mockoss/scenario?test_id=t1").json()["name"] == "uploaded"


def test_a_bad_upload_names_the_line_and_field(running):
    server = running()
    bad = "version: 1\nsteps:\n  - completion: {raw: 'x'}\n    bogus_field: 1\n"
    with httpx.Client(timeout=30) as client:
        answer = client.post(server.url + "/mockoss/scenario?name=broken", content=bad, headers=YAML)
        syntax = client.post(server.url + "/mockoss/scenario?name=broken", content="version: 1\nsteps: [\n", headers=YAML)
    assert answer.status_code == 400
    message = answer.json()["error"]["message"]
    assert message.startswith("upload:broken.yaml:") and "bogus_field" in message
    assert syntax.status_code == 400 and "upload:broken.yaml:" in syntax.json()["error"]["message"]


def test_the_request_log_has_every_route_per_session_with_its_conversation(running):
    server = running()
    with httpx.Client(timeout=30) as client:
        client.get(server.url + "/s/t1/v1/models")
        client.post(server.url + "/s/t1/v1/chat/completions", json=CHAT, headers={"x-mockoss-session": "conv-1"})
        client.get(server.url + "/s/t1/no/such/route")
        client.post(server.url + "/s/t2/v1/chat/completions", json=CHAT)
        log = client.get(server.url + "/mockoss/requests?test_id=t1").json()
        conv = client.get(server.url + "/mockoss/requests?test_id=t1&session=conv-1").json()
        other = client.get(server.url + "/mockoss/requests", headers={"x-mockoss-test-id": "t2"}).json()
        default = client.get(server.url + "/mockoss/requests").json()
    assert [(e["method"], e["path"], e["status"], e["endpoint"], e["test_id"]) for e in log] == [
        ("GET", "/v1/models", 200, "probe", "t1"),
        ("POST", "/v1/chat/completions", 200, "chat", "t1"),
        ("GET", "/no/such/route", 404, "probe", "t1"),
    ]
    assert [e["session"] for e in log] == [None, "conv-1", None]
    assert log[1]["index"] == 0 and log[1]["scenario"] == "clean-answer" and log[1]["body"] == CHAT
    assert [e["path"] for e in conv] == ["/v1/chat/completions"]
    assert [e["test_id"] for e in other] == ["t2"]
    assert default == []  # nothing was sent without a test id


def test_readiness_metrics_and_openapi(running):
    server = running()
    with httpx.Client(timeout=30) as client:
        client.post(server.url + "/v1/chat/completions", json={**CHAT, "stream": True})
        client.post(server.url + "/v1/chat/completions", json={**CHAT, "model": "nope"})
        ready = client.get(server.url + "/mockoss/ready")
        health = client.get(server.url + "/health")
        metrics = client.get(server.url + "/mockoss/metrics").text
        spec = client.get(server.url + "/mockoss/openapi.json").json()
    assert ready.status_code == 200 and ready.json()["ready"] is True and ready.json()["profile"] == "vllm"
    assert health.status_code == 200 and health.content != ready.content  # the profile's own /health
    assert 'mockoss_requests_total{endpoint="chat",scenario="clean-answer",status="200"} 1.0' in metrics
    assert 'mockoss_requests_total{endpoint="chat",scenario="",status="404"} 1.0' in metrics
    frames = [line for line in metrics.splitlines() if line.startswith('mockoss_stream_frames_total{endpoint="chat"}')]
    assert frames and float(frames[0].split()[-1]) > 3
    assert {"/ready", "/scenario", "/reset", "/requests", "/metrics"} <= set(spec["paths"])
    assert not any(path.startswith(("/v1", "/api")) for path in spec["paths"])


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"origin": "https://evil.example"}, 403),
        ({"sec-fetch-site": "cross-site"}, 403),
        ({"content-type": "text/plain"}, 415),
        ({"content-type": "application/x-www-form-urlencoded"}, 415),
        ({"host": "attacker.example:8000"}, 403),
        ({"origin": "http://127.0.0.1:8000", "content-type": "application/json"}, 204),
        ({}, 204),
    ],
)
def test_control_routes_refuse_cross_origin_and_foreign_host(running, headers, status):
    server = running()
    with httpx.Client(timeout=30) as client:
        answer = client.post(server.url + "/mockoss/reset", content=b"x" if "content-type" in headers else b"", headers=headers)
        generation = client.post(server.url + "/v1/chat/completions", json=CHAT, headers={"origin": "https://evil.example"})
    assert answer.status_code == status
    assert generation.status_code == 200  # the emulated API stays open, as the real servers' is


def test_admin_token_guards_every_control_route_but_readiness(running):
    server = running(ControlOptions(admin_token="s3cret-admin", allowed_hosts=("mockoss",)))
    with httpx.Client(timeout=30) as client:
        assert client.post(server.url + "/mockoss/reset").status_code == 401
        assert client.get(server.url + "/mockoss/requests", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert client.get(server.url + "/mockoss/ready").status_code == 200
        assert client.post(server.url + "/mockoss/reset", headers={"authorization": "Bearer s3cret-admin"}).status_code == 204
        assert client.get(server.url + "/mockoss/requests", headers={"x-mockoss-admin-token": "s3cret-admin", "host": "mockoss:8000"}).status_code == 200
        # The token does not open the door to another Host or origin.
        assert client.post(server.url + "/mockoss/reset", headers={"authorization": "Bearer s3cret-admin", "host": "evil:1"}).status_code == 403


def test_a_bad_test_id_is_refused(running):
    server = running()
    with httpx.Client(timeout=30) as client:
        answer = client.post(server.url + "/v1/chat/completions", json=CHAT, headers={"x-mockoss-test-id": "a b"})
    assert answer.status_code == 400


def test_access_log_prints_every_request(running, capsys):
    server = running(ControlOptions(access_log=True))
    with httpx.Client(timeout=30) as client:
        client.post(server.url + "/s/t9/v1/chat/completions", json=CHAT)
        client.get(server.url + "/health")
        client.get(server.url + "/mockoss/ready")
    lines = [line for line in capsys.readouterr().err.splitlines() if '"' in line]
    assert len(lines) == 3
    assert '"POST /v1/chat/completions" 200' in lines[0] and lines[0].endswith("test_id=t9")
    assert '"GET /health" 200' in lines[1] and '"GET /mockoss/ready" 200' in lines[2]


def test_the_readme_ci_recipe_flags_work_from_the_command_line(tmp_path):
    """README 'Sharing one server': token from $MOCKOSS_ADMIN_TOKEN, --allowed-host, readiness, /s/ID/v1
    (bound to 127.0.0.1 here instead of 0.0.0.0: tests talk only to loopback)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "MOCKOSS_ADMIN_TOKEN": "ci-secret"}
    command = [sys.executable, "-m", "mockoss.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--scenario", "clean-answer", "--allowed-host", "mockoss"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        url = next(line.split()[2] for line in proc.stdout if line.startswith("root URL: "))
        with httpx.Client(timeout=30) as client:
            assert client.get(url + "/mockoss/ready").json()["ready"] is True
            assert client.post(url + "/s/my-test/v1/chat/completions", json=CHAT).status_code == 200
            assert client.get(url + "/mockoss/requests?test_id=my-test").status_code == 401
            token = {"authorization": "Bearer ci-secret"}
            log = client.get(url + "/mockoss/requests?test_id=my-test", headers={**token, "host": "mockoss:8000"})
            assert log.status_code == 200 and [e["path"] for e in log.json()] == ["/v1/chat/completions"]
            assert client.get(url + "/mockoss/requests", headers={**token, "host": "elsewhere:8000"}).status_code == 403
    finally:
        proc.terminate()
        proc.wait(30)
        proc.stdout.close()


def test_with_an_upstream_each_test_id_still_reads_only_its_own_log(running):
    from mockoss.upstream import Upstream

    upstream = running()
    proxy = running(upstream=Upstream(upstream.url), scenario=None)
    with httpx.Client(timeout=30) as client:
        assert client.post(proxy.url + "/s/a/v1/chat/completions", json=CHAT).status_code == 200
        assert client.post(proxy.url + "/s/b/v1/chat/completions", json=CHAT).status_code == 200
        a = client.get(proxy.url + "/mockoss/requests?test_id=a").json()
        assert client.post(proxy.url + "/mockoss/reset?test_id=b").status_code == 204
        b = client.get(proxy.url + "/mockoss/requests?test_id=b").json()
        a_again = client.get(proxy.url + "/mockoss/requests?test_id=a").json()
    assert [(e["test_id"], e["status"], e["endpoint"]) for e in a] == [("a", 200, "chat")]
    assert b == [] and a_again == a


def test_the_session_prefix_does_not_bypass_the_guard(running):
    server = running(ControlOptions(admin_token="tok"))
    with httpx.Client(timeout=30) as client:
        assert client.post(server.url + "/s/x/mockoss/reset", headers={"origin": "https://evil.example"}).status_code == 403
        assert client.get(server.url + "/s/x/mockoss/requests").status_code == 401
        client.post(server.url + "/s/x/v1/chat/completions", json=CHAT, headers={"x-mockoss-test-id": "other"})
        ok = client.get(server.url + "/s/x/mockoss/requests", headers={"authorization": "Bearer tok", "x-mockoss-test-id": "other"})
    assert ok.status_code == 200  # the prefix's test id wins over the header, for both routes
    assert [(e["test_id"], e["path"]) for e in ok.json()] == [("x", "/v1/chat/completions")]


def _post_raw_then_log(url, *raws):
    """POST each raw JSON text to chat completions, then read the request log: (statuses, log)."""
    with httpx.Client(timeout=30) as client:
        statuses = [
            client.post(url + "/v1/chat/completions", content=raw, headers={"content-type": "application/json"}).status_code
            for raw in raws
        ]
        return statuses, client.get(url + "/mockoss/requests")


def test_a_body_with_infinity_or_nan_does_not_break_the_request_log(running):
    """Newcomer report: one request with ``"top_p": Infinity`` (Python's json and so the server read
    it) made ``GET /mockoss/requests`` a 500 until a reset. The log now shows such numbers as
    their JavaScript spellings, as strings."""
    server = running()
    raw = '{"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], "top_p": Infinity, "temperature": NaN}'
    [answered], log = _post_raw_then_log(server.url, raw)
    assert answered == 200
    assert log.status_code == 200
    [entry] = log.json()
    assert entry["body"]["top_p"] == "Infinity" and entry["body"]["temperature"] == "NaN"
    assert entry["body"]["messages"] == [{"role": "user", "content": "hi"}]


def test_a_deeply_nested_body_beside_a_nan_does_not_break_the_request_log(running):
    """Differential review (session 4, a bug since before it): a body with ``NaN`` and a body
    nested 600 levels deep (which json.loads reads) made ``GET /mockoss/requests`` a 500: the
    NaN fallback recursed through the deep one."""
    server = running()
    nan = '{"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], "temperature": NaN}'
    deep = '{"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], "metadata": ' + '{"a":' * 600 + "1" + "}" * 600 + "}"
    _, log = _post_raw_then_log(server.url, nan, deep)
    assert log.status_code == 200, log.text[:300]
    first, second = log.json()
    assert first["body"]["temperature"] == "NaN"
    depth, value = 0, second["body"]["metadata"]
    while isinstance(value, dict):
        depth, value = depth + 1, value["a"]
    assert (depth, value) == (600, 1)


def test_a_body_with_a_lone_surrogate_does_not_break_the_request_log(running):
    """Newcomer report (second session): after one request holding ``"\\ud800"`` (a lone UTF-16
    surrogate, which Python's json reads and UTF-8 cannot encode), ``GET /mockoss/requests`` was a
    plain 500 until a reset. The log escapes it instead, and the text comes back as sent."""
    server = running()
    raw = '{"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "a\\ud800b \u00e9"}]}'
    [answered], log = _post_raw_then_log(server.url, raw)
    assert answered == 200
    assert log.status_code == 200 and log.headers["content-type"] == "application/json"
    [entry] = json.loads(log.content)  # Python's json: the escape becomes the surrogate again
    assert entry["body"]["messages"] == [{"role": "user", "content": "a\ud800b \u00e9"}]


def test_a_request_that_ends_after_a_reset_stays_out_of_the_next_log(running):
    """Newcomer report (a flaky failure): a request still finishing when the next test's reset ran
    landed in that test's request log. A request is logged only if its session was not reset
    while it was being answered."""
    import threading

    server = running(transport={"ttft_ms": 1500})
    with httpx.Client(timeout=30) as client:
        slow = threading.Thread(target=lambda: client.post(server.url + "/v1/chat/completions", json=CHAT))
        slow.start()
        import time

        deadline = time.monotonic() + 10
        while not server.server.requests and time.monotonic() < deadline:  # answered, its delivery paced
            time.sleep(0.01)
        assert server.server.requests, "the slow request never reached the server"
        assert client.post(server.url + "/mockoss/reset").status_code == 204
        slow.join()
        after_reset = client.get(server.url + "/mockoss/requests").json()
        client.post(server.url + "/v1/chat/completions", json=CHAT, headers={"x-mockoss-transport": "ttft_ms=0"})
        later = client.get(server.url + "/mockoss/requests").json()
    assert after_reset == []
    assert [e["path"] for e in later] == ["/v1/chat/completions"]
