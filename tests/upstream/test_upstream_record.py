"""`--record DIR`: every exchange a scenario step; replaying the file gives the client the same bytes."""

import httpx
import pytest
import yaml
from upstream_helpers import (
    CHAT,
    MODEL,
    RAW,
    RESPONSES,
    completion_step,
    dead_url,
    escaped,
    scenario,
    stopped,
    stream_bytes,
)

from mockoss.scenario.loader import load_scenario
from mockoss.server.core import MockServer
from mockoss.upstream import Recorder, Upstream

KEY_ENV = "MOCKOSS_TEST_UPSTREAM_KEY"
UPSTREAM_KEY = "sk-upstream-7f3a9c1e5b"
CLIENT_KEY = "sk-client-2b8d4e6f"

#: (path, body) pairs a client sends: chat streamed and not, Responses not streamed and streamed.
EXCHANGES = [
    ("/v1/chat/completions", {**CHAT, "stream": True, "stream_options": {"include_usage": True}}),
    ("/v1/responses", RESPONSES),
    ("/v1/chat/completions", CHAT),
    ("/v1/responses", {**RESPONSES, "stream": True}),
]


def _send(http, url, exchanges=EXCHANGES, **headers):
    out = []
    for path, body in exchanges:
        response = http.post(url + path, json=body, headers=headers)
        out.append((response.status_code, response.headers.get("content-type"), response.headers.get("retry-after"), response.content))
    return out


def _files(directory):
    return {path.name: path.read_bytes() for path in directory.rglob("*") if path.is_file()}


@pytest.fixture
def upstream(serve):
    return serve(MockServer(scenario=scenario(completion_step())))


def test_pass_through_recording_replays_byte_identical_and_holds_no_secret(serve, upstream, http, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, UPSTREAM_KEY)
    recorder = Recorder(tmp_path, "session")
    with stopped(serve(MockServer(upstream=Upstream.from_env(upstream.url, api_key_env=KEY_ENV), recorder=recorder))) as proxy:
        first = _send(http, proxy.url, authorization=f"Bearer {CLIENT_KEY}", **{"x-api-key": "xk-client-99887766"})
    assert upstream.server.requests[0].headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    files = _files(tmp_path)
    assert list(files) == ["session.yaml"]
    for secret in (UPSTREAM_KEY, CLIENT_KEY, "xk-client-99887766", "Bearer", "uthorization"):
        assert secret.encode() not in files["session.yaml"]
    data = yaml.safe_load(files["session.yaml"])
    assert [sorted(step) for step in data["steps"]] == [["endpoint", "note", "replay"]] * 4
    assert data["steps"][0]["note"] == "chat request 0: Hi there"
    assert data["steps"][0]["replay"]["content_type"] == "text/event-stream; charset=utf-8"
    assert data["steps"][0]["replay"]["frames"][-1] == "data: [DONE]\n\n"
    assert data["steps"][1]["replay"]["body"].startswith('{"id":"resp_')
    replay = serve(MockServer(scenario=str(tmp_path / "session.yaml")))
    assert _send(http, replay.url) == first


def test_raw_mode_records_completions_and_failures(serve, upstream, http, tmp_path):
    recorder = Recorder(tmp_path, "raw")
    with stopped(serve(MockServer(profile="ollama", upstream=Upstream(upstream.url, mode="raw", model=MODEL), recorder=recorder))) as proxy:
        body = {"model": "gpt-oss:20b", "messages": CHAT["messages"]}
        first = [stream_bytes(http, proxy.url, "/api/chat", body), stream_bytes(http, proxy.url, "/v1/responses", {**RESPONSES, "model": "gpt-oss:20b"})]
        upstream.stop()
        first.append(stream_bytes(http, proxy.url, "/api/chat", body))
    steps = yaml.safe_load((tmp_path / "raw.yaml").read_text())["steps"]
    assert [s["completion"]["raw"] for s in steps[:2]] == [escaped(RAW)] * 2  # {{ written as a template literal
    assert steps[2]["error"]["status"] == 502
    assert steps[2]["error"]["message"].startswith(f"mockoss: upstream {upstream.url} is unreachable")
    assert [s.error is not None for s in load_scenario(tmp_path / "raw.yaml").steps] == [False, False, True]
    text = (tmp_path / "raw.yaml").read_text()
    assert '{{ \\"{{\\" }} braces }}' in text  # the model's own braces, escaped so they are not a template
    assert text.startswith(f"# Replay it byte for byte with: mockoss serve --scenario {tmp_path / 'raw.yaml'} --profile ollama --seed 0 --served-model-name gpt-oss:20b\n")
    replay = serve(MockServer(profile="ollama", scenario=str(tmp_path / "raw.yaml")))
    again = [stream_bytes(http, replay.url, "/api/chat", body), stream_bytes(http, replay.url, "/v1/responses", {**RESPONSES, "model": "gpt-oss:20b"}),
             stream_bytes(http, replay.url, "/api/chat", body)]
    assert again == first
    assert b"How can I help?" in first[1] and b"unreachable" in first[2]


def test_mock_mode_records_the_scripted_steps(serve, http, tmp_path):
    source = scenario(
        {"completion": {"messages": [{"channel": "analysis", "content": "Think."}, {"channel": "final", "content": "Hi {{ faker.first_name }}!"}]}},
        {"error": {"status": 429, "message": "Slow down", "retry_after": 3}},
        {"completion": {"raw": "<|channel|>final<|message|>Cut short<|return|>"}, "transport": {"truncate_after_frames": -1}},
        name="scripted",
    )
    recorder = Recorder(tmp_path, "scripted")
    exchanges = [*EXCHANGES[:2], ("/v1/chat/completions", {**CHAT, "stream": True}), ("/v1/chat/completions", {**CHAT, "model": "unknown"}), EXCHANGES[0]]
    with stopped(serve(MockServer(scenario=source, recorder=recorder, seed=5))) as mock:
        first = _send(http, mock.url, exchanges)
    assert [status for status, *_ in first] == [200, 429, 200, 404, 200]
    data = yaml.safe_load((tmp_path / "scripted.yaml").read_text())
    # The unknown model is rejected before any step, on replay too: it takes no step.
    assert [next(k for k in step if k != "note") for step in data["steps"]] == ["completion", "error", "completion", "completion"]
    assert data["steps"][1]["error"] == {"status": 429, "message": "Slow down", "retry_after": 3}
    assert data["steps"][2]["transport"] == {"truncate_after_frames": -1}
    assert "{{" not in data["steps"][0]["completion"]["raw"]  # the template as rendered for that request
    replay = serve(MockServer(scenario=str(tmp_path / "scripted.yaml"), seed=5))
    assert _send(http, replay.url, exchanges) == first


def test_a_broken_upstream_stream_replays_broken(serve, http, tmp_path):
    broken = serve(MockServer(scenario=scenario(completion_step(transport={"disconnect_after_frames": 4}))))
    recorder = Recorder(tmp_path, "broken")

    def received(url):
        got = bytearray()
        with pytest.raises(httpx.RemoteProtocolError), http.stream("POST", url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
            for chunk in response.iter_raw():
                got += chunk
        return bytes(got)

    with stopped(serve(MockServer(upstream=Upstream(broken.url), recorder=recorder))) as proxy:
        first = received(proxy.url)
    step = yaml.safe_load((tmp_path / "broken.yaml").read_text())["steps"][0]["replay"]
    assert len(step["frames"]) == 4 and step["abort"].startswith("the upstream broke the stream: RemoteProtocolError")
    replay = serve(MockServer(scenario=str(tmp_path / "broken.yaml")))
    assert received(replay.url) == first


def test_upstream_down_is_recorded_as_the_502_the_client_got(serve, http, tmp_path):
    recorder = Recorder(tmp_path, "down")
    with stopped(serve(MockServer(upstream=Upstream(dead_url()), recorder=recorder))) as proxy:
        first = _send(http, proxy.url, EXCHANGES[1:2])
    assert first[0][0] == 502
    replay = serve(MockServer(scenario=str(tmp_path / "down.yaml")))
    assert _send(http, replay.url, EXCHANGES[1:2]) == first


PERSONAL = "Hi, I'm Jane Smith (jane.smith@corp.example, +1 415-555-0132). Book a table for Mr. Robert Brown."


def test_match_mode_with_redaction_stores_no_personal_details_and_still_matches(serve, upstream, http, tmp_path):
    recorder = Recorder(tmp_path, "private", redact=True, match=True)
    other = {**CHAT, "messages": [{"role": "user", "content": "What time is it?"}]}
    personal = {**CHAT, "messages": [{"role": "user", "content": PERSONAL}]}
    with stopped(serve(MockServer(upstream=Upstream(upstream.url), recorder=recorder))) as proxy:
        first = [http.post(proxy.url + "/v1/chat/completions", json=b).content for b in (personal, other)]
    text = (tmp_path / "private.yaml").read_text()
    # The upstream's address is in the file's header; its random port may hold "415" or "0132".
    scrubbed = text.replace(upstream.url.split("://", 1)[-1], "UPSTREAM")
    for detail in ("Jane", "Smith", "jane.smith", "corp.example", "415", "0132", "Robert", "Brown"):
        assert detail not in scrubbed
    rules = yaml.safe_load(text)["rules"]
    note = rules[0]["steps"][0]["note"]
    assert note.startswith("chat request 0: Hi, I'm ") and "Book a table for Mr. " in note
    assert rules[1]["match"] == {"endpoint": "chat", "stream": False, "last_user": r"\AWhat\ time\ is\ it\?\Z"}
    # Replayed out of order: each request finds its own rule by its (real) prompt.
    replay = serve(MockServer(scenario=str(tmp_path / "private.yaml")))
    assert [http.post(replay.url + "/v1/chat/completions", json=b).content for b in (other, personal)] == first[::-1]
    # The stand-ins are the same on every run.
    again = Recorder(tmp_path / "again", "private", redact=True, match=True)
    with stopped(serve(MockServer(upstream=Upstream(upstream.url), recorder=again))) as proxy:
        http.post(proxy.url + "/v1/chat/completions", json=personal)
    assert yaml.safe_load((tmp_path / "again" / "private.yaml").read_text())["rules"][0]["steps"][0]["note"] == note


def test_recorder_rejects_a_path_as_name(tmp_path):
    with pytest.raises(ValueError, match=r"recording name must be a plain file name .* got '\.\./x'"):
        Recorder(tmp_path, "../x")


def test_a_client_leaving_mid_stream_does_not_hold_up_the_recording(serve, http, tmp_path):
    slow = serve(MockServer(scenario=scenario(completion_step(transport={"tokens_per_s": 20}))))
    recorder = Recorder(tmp_path, "left")
    with stopped(serve(MockServer(upstream=Upstream(slow.url), recorder=recorder))) as proxy:
        with http.stream("POST", proxy.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
            first_chunk = next(response.iter_raw())
        later = http.post(proxy.url + "/v1/responses", json=RESPONSES)
        recorder.flush(timeout=10)  # the abandoned stream's step is settled too
        steps = yaml.safe_load((tmp_path / "left.yaml").read_text())["steps"]
    assert first_chunk.startswith(b"data: ")
    assert len(steps) == 2 and steps[1]["replay"]["body"] == later.text
    relayed = steps[0]["replay"].get("body") or "".join(steps[0]["replay"]["frames"])
    assert relayed.encode().startswith(first_chunk) and "data: [DONE]" not in relayed  # as far as it went


def test_match_mode_tells_a_streamed_request_from_a_plain_one_with_the_same_question(serve, upstream, http, tmp_path):
    """A breaker's finding: a cassette recorded a question plain, then streamed; replayed in the other
    order, the streamed request got the recorded JSON body (the openai SDK yielded no chunks and
    raised nothing) and the plain one the SSE text. The rules now match on ``stream`` too."""
    recorder = Recorder(tmp_path, "both", match=True)
    plain = {**CHAT, "messages": [{"role": "user", "content": "What time is it?"}]}
    streamed = {**plain, "stream": True}
    with stopped(serve(MockServer(upstream=Upstream(upstream.url), recorder=recorder))) as proxy:
        first = [http.post(proxy.url + "/v1/chat/completions", json=b).content for b in (plain, streamed)]
    assert first[1].startswith(b"data: ") and not first[0].startswith(b"data: ")
    replay = serve(MockServer(scenario=str(tmp_path / "both.yaml")))
    assert [http.post(replay.url + "/v1/chat/completions", json=b).content for b in (streamed, plain)] == first[::-1]


def test_a_stream_rule_knows_ollamas_native_default():
    """``stream`` in a ``match`` block: Ollama's /api/chat streams unless the body says ``false``
    (its request type's default, mockoss.schemas.ollama), the OpenAI routes only with ``true``."""
    from mockoss.scenario.matching import streams

    assert streams("ollama.chat", {}) and not streams("ollama.chat", {"stream": False})
    assert not streams("chat", {}) and streams("chat", {"stream": True}) and not streams("chat", {"stream": "yes"})
