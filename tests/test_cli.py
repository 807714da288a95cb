"""`mockoss serve` and `mockoss scenarios` as a user runs them."""

import subprocess
import sys
import time

import openai
import pytest

from mockoss.cli import main
from mockoss.cli_parser import build_parser


@pytest.fixture
def serve():
    processes = []

    def start(*args):
        process = subprocess.Popen(
            [sys.executable, "-m", "mockoss", "serve", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        lines = [process.stdout.readline(), process.stdout.readline()]
        assert lines[1].startswith("base URL: "), lines + [process.stderr.read() if process.poll() is not None else ""]
        return lines, lines[1].removeprefix("base URL: ").strip()

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()


def _wait_ready(client):
    for _ in range(100):
        try:
            return client.models.list()
        except openai.APIConnectionError:
            time.sleep(0.05)
    raise AssertionError("server never answered")


def test_serve_prints_a_loopback_base_url_and_answers_the_sdk(serve):
    lines, url = serve("--scenario", "leaked-recipient-no-tools")
    assert lines[0].startswith("mockoss ") and "profile vllm, scenario leaked-recipient-no-tools" in lines[0]
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    with openai.OpenAI(base_url=url, api_key="unused", max_retries=0) as client:
        assert [m.id for m in _wait_ready(client).data] == ["openai/gpt-oss-20b"]
        response = client.responses.create(model="openai/gpt-oss-20b", input="What time is it?")
    assert [item.type for item in response.output] == ["reasoning", "mcp_call"]


def test_serve_flags_served_model_name_and_switch(serve):
    _, url = serve(
        "--scenario", "leaked-recipient-no-tools",
        "--served-model-name", "my-oss",
        "--switch", "responses_ignore_recipients_without_tools=true",
    )
    with openai.OpenAI(base_url=url, api_key="unused", max_retries=0) as client:
        assert [m.id for m in _wait_ready(client).data] == ["my-oss"]
        response = client.responses.create(model="my-oss", input="What time is it?")
    assert [item.type for item in response.output] == ["reasoning", "message"]


def test_serve_rejects_a_bad_scenario_with_file_line_field(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("version: 1\nsteps:\n  - completion: {rawx: hi}\n")
    assert main(["serve", "--scenario", str(path), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: steps[0].completion.rawx: unknown field" in err


@pytest.mark.parametrize(
    ("value", "says"),
    [("x=[a", "not a plain YAML value"), ("x=!!python/object:os.system", "is not allowed here"), ("x=" + "[" * 3000, "nested too deep")],
    ids=["invalid", "tag", "deep"],
)
def test_serve_answers_a_bad_switch_value_with_a_usage_error_not_a_traceback(capsys, value, says):
    """issue 9 review, eighth session, finding 8: ``--switch 'x=[a'`` printed a ParserError
    traceback (a tag a ConstructorError, 3,000 brackets a RecursionError), where the
    ``X-Mockoss-Switch`` header answers the same values with a clean 400."""
    with pytest.raises(SystemExit) as stopped:  # the parser alone: the old code would go on to serve
        build_parser().parse_args(["serve", "--switch", value, "--port", "0"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_serve_refuses_a_scenario_dir_that_is_not_a_directory(capsys, tmp_path):
    """issue 9 review, eighth session: a mistyped ``--scenario-dir`` was accepted silently."""
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["serve", "--scenario-dir", str(tmp_path / "nope"), "--port", "0"])
    assert stopped.value.code == 2
    assert "not a directory" in capsys.readouterr().err


def test_serve_rejects_an_unknown_switch(capsys):
    assert main(["serve", "--scenario", "clean-answer", "--switch", "nope=1", "--port", "0"]) == 2
    assert "has no switch 'nope'" in capsys.readouterr().err


def test_scenarios_lists_names_with_descriptions(capsys):
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out
    rows = dict(line.split(None, 1) for line in out.splitlines())
    assert rows["leaked-recipient-no-tools"].startswith("Responses request without tools")
    assert rows["tool-call-leaked-as-text"].startswith("Three tool calls leaked as final text")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.5", True), ("localhost", True), ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False), ("mockoss", False)],
)
def test_serve_warns_beyond_loopback_without_a_token(host, loopback):
    """``serve --host 0.0.0.0`` with no ``--admin-token`` prints a warning (newcomer report); the
    check that decides it."""
    from mockoss.cli import _loopback

    assert _loopback(host) is loopback


def test_serve_max_template_chars_lets_a_longer_echo_through(serve, tmp_path):
    scenario = tmp_path / "echo.yaml"
    scenario.write_text(
        'version: 1\nsteps:\n  - completion: {messages: [{channel: final, content: "You said: {{ request.messages[-1].content }}"}]}\n'
    )
    long_message = "word " * 3000  # 15,000 characters: over the default 8,192
    results = {}
    for label, extra in (("default", ()), ("raised", ("--max-template-chars", "20000"))):
        _, url = serve("--scenario", str(scenario), *extra)
        with openai.OpenAI(base_url=url, api_key="unused", max_retries=0) as client:
            _wait_ready(client)
            try:
                reply = client.chat.completions.create(model="openai/gpt-oss-20b", messages=[{"role": "user", "content": long_message}])
                results[label] = reply.choices[0].message.content
            except openai.BadRequestError as exc:
                results[label] = exc
    assert isinstance(results["default"], openai.BadRequestError)
    assert "8192" in str(results["default"]) and "MAX_RENDERED_CHARS" in str(results["default"])
    assert results["raised"] == "You said: " + long_message


def test_serve_max_reply_bytes_bounds_a_completions_batch(serve, capsys):
    """``--max-reply-bytes N`` sets ``reply_limit.MAX_REPLY_BYTES`` for the server: a batch whose
    reply fits the default 32 MiB gets the 400 over N, streamed or not."""
    from mockoss.profiles import reply_limit

    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert f"{reply_limit.MAX_REPLY_BYTES:,}" in capsys.readouterr().out  # the default the help gives is the module's
    results = {}
    for label, extra in (("default", ()), ("lowered", ("--max-reply-bytes", "2000"))):
        _, url = serve("--scenario", "clean-answer", *extra)
        with openai.OpenAI(base_url=url, api_key="unused", max_retries=0) as client:
            _wait_ready(client)
            for stream in (False, True):
                try:
                    reply = client.completions.create(model="openai/gpt-oss-20b", prompt=["hi"] * 20, stream=stream)
                    results[label, stream] = list(reply) if stream else reply
                except openai.BadRequestError as exc:
                    results[label, stream] = exc
    assert len(results["default", False].choices) == 20 and len(results["default", False].model_dump_json()) > 2000
    assert len(results["default", True]) == 20 * 16
    for stream in (False, True):
        error = results["lowered", stream]
        assert isinstance(error, openai.BadRequestError), stream
        assert "over 2000 bytes" in str(error) and "MAX_REPLY_BYTES" in str(error)
