"""A pass-through recording replays as recorded with the command on its first line; a step names the
endpoint it answered. Reproduces the sixteenth session's newcomer report (/tmp/new16/REPORT.md,
items 2, 3, 6 and 8): a vllm front relayed Ollama's ``POST /api/chat``, whose replay under
``--profile vllm`` was a 404 taking no step, so every later reply came one step late, silently; the
first line named one model of two and an absolute path; ``GET /v1/models`` went unrecorded."""

import shlex

import httpx
import pytest
import yaml
from upstream_helpers import completion_step, scenario, stopped

from mockoss.scenario.loader import load_scenario, scenario_from_data
from mockoss.server.core import MockServer
from mockoss.upstream import Recorder, Upstream

#: How a recording's first line begins (mockoss.upstream.replay_command.COMMAND_PREFIX, as before it).
COMMAND_PREFIX = "# Replay it byte for byte with: "
NAMES = ["gpt-oss:20b", "gpt-oss:120b"]
#: What the newcomer's client sent (method, path, body), Ollama's native chat first.
EXCHANGES = [
    ("POST", "/api/chat", {"model": "gpt-oss:20b", "messages": [{"role": "user", "content": "hi"}], "stream": False}),
    ("GET", "/v1/models", None),
    ("POST", "/v1/chat/completions", {"model": "gpt-oss:20b", "messages": [{"role": "user", "content": "hello"}]}),
    ("POST", "/v1/chat/completions", {"model": "gpt-oss:120b", "messages": [{"role": "user", "content": "again"}]}),
]


def _send(http: httpx.Client, url: str, exchanges=EXCHANGES) -> list[tuple[int, bytes]]:
    return [(r.status_code, r.content) for r in (http.request(m, url + p, json=b) for m, p, b in exchanges)]


def _command(path) -> dict[str, list[str]]:
    """The first line's ``mockoss serve`` flags, each with its values."""
    first = path.read_text().splitlines()[0]
    assert first.startswith(COMMAND_PREFIX)
    words = shlex.split(first.removeprefix(COMMAND_PREFIX))
    assert words[:2] == ["mockoss", "serve"]
    flags: dict[str, list[str]] = {}
    for word in words[2:]:
        if word.startswith("--"):
            current = flags.setdefault(word, [])
        else:
            current.append(word)
    return flags


@pytest.fixture
def recorded(serve, http, tmp_path, monkeypatch):
    """The newcomer's session: an ollama backend, a pass-through front (profile vllm) recording."""
    monkeypatch.chdir(tmp_path)
    backend = serve(MockServer(profile="ollama", scenario=scenario(completion_step()), served_model_names=NAMES))
    recorder = Recorder(tmp_path / "rec", "recording")
    with stopped(serve(MockServer(upstream=Upstream(backend.url), recorder=recorder))) as front:
        first = _send(http, front.url)
    return recorder.path, first


def test_the_first_line_replays_every_route_model_and_model_list(serve, http, recorded):
    path, first = recorded
    flags = _command(path)
    assert flags["--profile"] == ["ollama"]  # serves /api/chat and /v1/chat/completions
    assert flags["--served-model-name"] == NAMES  # GET /v1/models' ids, and both models the requests used
    assert flags["--scenario"] == ["rec/recording.yaml"]  # relative to the working directory, not /tmp/...
    replay = MockServer(
        scenario=load_scenario(flags["--scenario"][0]), profile=flags["--profile"][0], seed=int(flags["--seed"][0]),
        served_model_names=flags["--served-model-name"],
    )  # fmt: skip
    with stopped(serve(replay)) as again:
        assert _send(http, again.url) == first
    assert [status for status, _ in first] == [200, 200, 200, 200]


def test_a_request_to_another_endpoint_than_the_step_s_is_refused_and_takes_no_step(serve, http, recorded):
    path, first = recorded
    # Replayed under the front's profile, which has no /api/chat: its 404 takes no step, and the
    # next request is refused instead of getting the recorded NDJSON.
    with stopped(serve(MockServer(scenario=load_scenario(path), profile="vllm", served_model_names=NAMES))) as again:
        native, _, chat, _ = _send(http, again.url)
        assert native[0] == 404
        assert chat[0] == 400
        message = httpx.Response(400, content=chat[1]).json()["error"]["message"]
        assert "steps[0] was recorded for ollama.chat (POST /api/chat)" in message
        assert "this request is chat (POST /v1/chat/completions)" in message
        assert again.server.requests[-1].problem == message
    assert first[0][1] not in chat[1]
    steps = yaml.safe_load(path.read_text())["steps"]
    assert [step["endpoint"] for step in steps] == ["ollama.chat", "chat", "chat"]


def test_a_step_with_an_endpoint_answers_only_that_endpoint(serve, http):
    data = {"steps": [{**completion_step(), "endpoint": "responses"}, {**completion_step(), "endpoint": "chat"}]}
    chat = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}
    responses = {"model": "openai/gpt-oss-20b", "input": "Hi"}
    with stopped(serve(MockServer(scenario=scenario_from_data(data, name="routes", default_version=True)))) as mock:
        refused = http.post(mock.url + "/v1/chat/completions", json=chat)
        assert refused.status_code == 400 and "took no step" in refused.json()["error"]["message"]
        assert http.post(mock.url + "/v1/responses", json=responses).status_code == 200
        assert http.post(mock.url + "/v1/chat/completions", json=chat).status_code == 200


def test_steps_without_an_endpoint_answer_any_endpoint_as_before(serve, http):
    """Older recordings and cassettes have no ``endpoint:``: they replay as they always did."""
    data = {"steps": [completion_step(), completion_step()]}
    chat = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}
    with stopped(serve(MockServer(scenario=scenario_from_data(data, name="any", default_version=True)))) as mock:
        assert http.post(mock.url + "/v1/chat/completions", json=chat).status_code == 200
        assert (
            http.post(mock.url + "/v1/responses", json={"model": "openai/gpt-oss-20b", "input": "Hi"}).status_code
            == 200
        )


def test_a_model_named_after_the_header_is_written_reaches_the_first_line_on_close(serve, http, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    backend = serve(MockServer(scenario=scenario(completion_step()), served_model_names=NAMES))
    recorder = Recorder("rec", "two")
    with stopped(serve(MockServer(upstream=Upstream(backend.url), recorder=recorder))) as front:
        for name in NAMES:
            body = {"model": name, "messages": [{"role": "user", "content": "Hi"}]}
            assert http.post(front.url + "/v1/chat/completions", json=body).status_code == 200
        recorder.flush()
        lines = recorder.path.read_text().splitlines()
        # While recording the file is only appended to: the new command comes before the step.
        assert lines[0].endswith("--served-model-name gpt-oss:20b")
        assert (
            f"{COMMAND_PREFIX}mockoss serve --scenario rec/two.yaml --profile vllm --seed 0 --served-model-name {' '.join(NAMES)}"
            in lines
        )
    assert _command(recorder.path)["--served-model-name"] == NAMES  # closed: the first line has both


def test_a_recording_inside_the_working_directory_names_a_relative_path(serve, http, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recorder = Recorder(tmp_path / "cassettes" / "test_x", "test_one", match=True)  # absolute, as cassettes are
    with stopped(serve(MockServer(scenario=scenario(completion_step()), recorder=recorder))) as mock:
        http.post(
            mock.url + "/v1/chat/completions",
            json={"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]},
        )
    text = recorder.path.read_text()
    assert text.startswith(f"{COMMAND_PREFIX}mockoss serve --scenario cassettes/test_x/test_one.yaml --profile vllm ")
    assert str(tmp_path) not in text


def test_the_replay_profile_serves_every_recorded_endpoint():
    from mockoss.upstream.replay_command import replay_profile

    assert replay_profile("vllm", ["chat", "completions"]) == ("vllm", [])
    assert replay_profile("vllm", ["ollama.chat", "chat"]) == ("ollama", [])
    assert replay_profile("vllm", ["completions", "ollama.chat"]) == ("vllm", ["ollama.chat"])  # no profile has both


def test_raw_mode_names_upstream_model_when_the_upstream_does_not_serve_the_model(serve, http):
    backend = serve(MockServer(scenario=scenario(completion_step())))  # vllm, serves openai/gpt-oss-20b only
    front = MockServer(upstream=Upstream(backend.url, mode="raw"), profile="ollama", served_model_names=["gpt-oss:20b"])
    with stopped(serve(front)) as proxy:
        answer = http.post(
            proxy.url + "/api/chat",
            json={"model": "gpt-oss:20b", "messages": [{"role": "user", "content": "Hi"}], "stream": False},
        )
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert "The model `gpt-oss:20b` does not exist." in error  # the upstream's own words, quoted
    assert "mockoss sent model 'gpt-oss:20b'" in error and "--upstream-model NAME" in error


@pytest.mark.parametrize(
    ("profile", "relayed", "line"),
    [
        ("vllm", False, "root URL: http://h:1"),
        ("ollama", False, "root URL: http://h:1 (native APIs: POST /api/chat, POST /api/generate)"),
        ("lmstudio", False, "root URL: http://h:1 (native APIs: POST /api/v0/chat/completions, POST /api/v0/completions)"),
        ("vllm", True, ("root URL: http://h:1 (native APIs relayed upstream: POST /api/chat, POST /api/generate, "
                        "POST /api/v0/chat/completions, POST /api/v0/completions)")),
    ],
)  # fmt: skip
def test_the_banner_names_native_routes_only_where_the_server_answers_them(profile, relayed, line):
    from mockoss.cli import root_line
    from mockoss.profiles.registry import get_profile

    assert root_line("http://h:1", get_profile(profile).endpoints, relayed=relayed) == line


def test_the_first_line_is_shell_quoted(serve, http, tmp_path, monkeypatch):
    """A path or model id with a space must survive a copy-paste of the command (a review's finding)."""
    import shlex

    monkeypatch.chdir(tmp_path)
    recorder = Recorder(tmp_path / "my recordings", "run-one", match=True)
    server = MockServer(scenario=scenario(completion_step()), recorder=recorder, served_model_names=["my model"])
    with stopped(serve(server)) as mock:
        http.post(mock.url + "/v1/chat/completions", json={"model": "my model", "messages": [{"role": "user", "content": "Hi"}]})
    first = recorder.path.read_text().splitlines()[0]
    argv = shlex.split(first[len(COMMAND_PREFIX) :])
    assert argv[argv.index("--scenario") + 1] == "my recordings/run-one.yaml"
    assert argv[argv.index("--served-model-name") + 1] == "my model"
