"""`mockoss eval` end to end, against a mockoss server on loopback whose scenario fixes the mix."""

import io
import json
import socket

import pytest

from mockoss.cli import main
from mockoss.scenario.loader import scenario_from_data
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

HARMONY_ERROR = 'unexpected tokens remaining in message header: Some("to=functions.x")'
CALL = '{"name":"get_current_time","arguments":{"timezone":"America/Los_Angeles"}}'
#: Eight requests, in order: 3 mcp_call, 1 function_call, 1 message, a scripted HarmonyError 500, then
#: a malformed header (duplicate to=) that the genuine parser rejects, repeated for the 7th and 8th.
MIX = {
    "description": "the serving-evaluation mix, in a fixed order",
    # The seed's vLLM answered the rejected header with 500; vLLM 0.32/0.33 skip it (HarmonyParser.process_chunk).
    "switches": {"harmony_errors": "raise"},
    "steps": [
        {"completion": {"messages": [
            {"channel": "analysis", "content": "Call the time tool."},
            {"channel": "commentary", "recipient": "tool.mcp", "content": CALL},
        ]}, "times": 3},
        {"completion": {"messages": [
            {"channel": "analysis", "content": "Call it."},
            {"channel": "commentary", "recipient": "functions.mcp", "content_type": "<|constrain|>json", "content": CALL},
        ]}},
        {"completion": {"messages": [
            {"channel": "analysis", "content": "Answer."},
            {"channel": "final", "content": CALL},
        ]}},
        {"error": {"status": 500, "message": HARMONY_ERROR}},
        {"completion": {"raw": "<|channel|>analysis<|message|>Need to call x.<|end|><|start|>assistant"
                               "<|channel|>commentary to=functions.x to=functions.x json<|message|>{}<|call|>"}},
    ],
    "when_exhausted": "repeat_last",
}
HARMONY_500 = f"500 — InternalServerError: {HARMONY_ERROR}"
RESPONSES_MIX = [
    {"outcome": "200 — reasoning, mcp_call(tool/mcp)", "count": 3, "share": 0.375},
    {"outcome": HARMONY_500, "count": 3, "share": 0.375},
    {"outcome": "200 — reasoning, function_call(mcp)", "count": 1, "share": 0.125},
    {"outcome": "200 — reasoning, message", "count": 1, "share": 0.125},
]
REQUEST = {"model": "openai/gpt-oss-20b", "input": "Use the time MCP server. YOU MUST CALL THE MCP TOOL"}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


@pytest.fixture(scope="module")
def running():
    server = ThreadedServer(MockServer()).start()
    yield server
    server.stop()


@pytest.fixture
def base(running):
    """The base URL of a server playing MIX from its first step."""
    running.server.set_switches({})
    running.server.use_scenario(scenario_from_data(MIX, name="eval-mix", default_version=True))
    running.server.reset()
    return running.url + "/v1"


@pytest.fixture
def request_file(tmp_path):
    def write(body, name="request.json"):
        path = tmp_path / name
        path.write_text(json.dumps(body))
        return str(path)

    return write


def _eval(capsys, *args):
    code = main(["eval", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys, *args):
    code, out, err = _eval(capsys, *args, "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert isinstance(data.pop("elapsed_s"), float)
    return data


def test_json_counts_match_the_scenario(base, request_file, capsys):
    path = request_file(REQUEST)
    data = _json(capsys, "--url", base, "--request", path, "-n", "8", "--concurrency", "1")
    assert data == {"url": base, "request": path, "n": 8, "outcomes": RESPONSES_MIX}


def test_concurrency_does_not_change_the_counts(base, running, request_file, capsys):
    data = _json(capsys, "--url", base, "--request", request_file(REQUEST), "-n", "8", "--concurrency", "4")
    assert data["outcomes"] == RESPONSES_MIX
    assert len(running.server.requests) == 8


def test_printed_table_for_a_responses_stream(base, request_file, capsys):
    path = request_file({**REQUEST, "stream": True})
    code, out, err = _eval(capsys, "--url", base, "--request", path, "-n", "8", "--concurrency", "1")
    assert (code, err) == (0, "")
    table, summary = out.split("\n\n")
    assert table == (
        "outcome                                                                                           count  share\n"
        "200 — reasoning, mcp_call(tool/mcp)                                                                   3  37.5%\n"
        "200 — stream dropped after reasoning                                                                  2    25%\n"
        "200 — reasoning, function_call(mcp)                                                                   1  12.5%\n"
        "200 — reasoning, message                                                                              1  12.5%\n"
        '500 — InternalServerError: unexpected tokens remaining in message header: Some("to=functions.x")      1  12.5%\n'
        "total                                                                                                 8   100%"
    )
    assert summary.startswith(f"8 requests to {base}/responses in ")
    assert summary.endswith(" s, concurrency 1\n")


def test_chat_stream_with_tools(base, request_file, capsys):
    body = {"messages": [{"role": "user", "content": "What time is it?"}], "tools": TOOLS, "stream": True}
    data = _json(capsys, "--url", base, "--request", request_file(body), "-n", "8", "--concurrency", "2")
    assert data["outcomes"] == [
        {"outcome": "200 — reasoning, tool_calls: tool.mcp", "count": 3, "share": 0.375},
        {"outcome": f"200 — stream error chunk: InternalServerError: {HARMONY_ERROR}", "count": 2, "share": 0.25},
        {"outcome": "200 — reasoning, content", "count": 1, "share": 0.125},
        {"outcome": "200 — reasoning, tool_calls: mcp", "count": 1, "share": 0.125},
        {"outcome": HARMONY_500, "count": 1, "share": 0.125},
    ]


def test_save_then_compare_before_and_after_the_fix(base, running, request_file, tmp_path, capsys):
    path, saved = request_file({"endpoint": "responses", "body": REQUEST}), tmp_path / "before.json"
    code, out, _ = _eval(capsys, "--url", base, "--request", path, "-n", "8", "--concurrency", "1", "--save", str(saved))
    assert code == 0 and out.startswith("outcome ")
    assert json.loads(saved.read_text())["outcomes"] == RESPONSES_MIX

    running.server.reset()
    running.server.set_switches({"responses_ignore_recipients_without_tools": True})
    code, out, err = _eval(capsys, "--url", base, "--request", path, "-n", "8", "--compare", str(saved))
    assert (code, err) == (0, "")
    assert out.split("\n\n")[0] == (
        "outcome                                                                                              before      after\n"
        '500 — InternalServerError: unexpected tokens remaining in message header: Some("to=functions.x")  3 (37.5%)  3 (37.5%)\n'
        "200 — reasoning, mcp_call(tool/mcp)                                                               3 (37.5%)          0\n"
        "200 — reasoning, message                                                                          1 (12.5%)  5 (62.5%)\n"
        "200 — reasoning, function_call(mcp)                                                               1 (12.5%)          0\n"
        "total                                                                                                     8          8"
    )


def test_compare_in_json(base, request_file, tmp_path, capsys):
    saved = tmp_path / "before.json"
    saved.write_text(json.dumps({"outcomes": [{"outcome": "200 — reasoning, mcp_call(tool/mcp)", "count": 40}]}))
    data = _json(capsys, "--url", base, "--request", request_file(REQUEST), "-n", "1", "--compare", str(saved))
    assert data["compare"] == {
        "before": str(saved),
        "outcomes": [{"outcome": "200 — reasoning, mcp_call(tool/mcp)", "before": 40, "after": 1}],
    }


def test_api_key_from_openai_api_key_or_named_variable_never_printed(base, running, request_file, capsys, monkeypatch):
    path = request_file(REQUEST)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default-secret")
    code, out, err = _eval(capsys, "--url", base, "--request", path, "-n", "1")
    assert code == 0 and "sk-default-secret" not in out + err
    assert running.server.requests[-1].headers["authorization"] == "Bearer sk-default-secret"

    monkeypatch.setenv("GPU_KEY", "sk-named-secret")
    code, out, err = _eval(capsys, "--url", base, "--request", path, "-n", "1", "--json", "--api-key-env", "GPU_KEY")
    assert code == 0 and "secret" not in out + err
    assert running.server.requests[-1].headers["authorization"] == "Bearer sk-named-secret"

    monkeypatch.delenv("OPENAI_API_KEY")
    _eval(capsys, "--url", base, "--request", path, "-n", "1")
    assert "authorization" not in running.server.requests[-1].headers

    assert _eval(capsys, "--url", base, "--request", path, "--api-key-env", "NOT_SET_ANYWHERE") == (
        2, "", "mockoss eval: error: --api-key-env: environment variable NOT_SET_ANYWHERE is not set\n"
    )


def test_connection_refused_is_an_outcome(request_file, capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, out, err = _eval(capsys, "--url", f"http://127.0.0.1:{port}/v1", "--request", request_file(REQUEST), "-n", "3", "--json")
    [outcome] = json.loads(out)["outcomes"]
    assert outcome["outcome"].startswith("connection error — ConnectError")
    assert outcome["count"] == 3
    # The table is still printed, but nothing reached the endpoint: the exit code says so.
    assert code == 3
    assert err.startswith(f"mockoss eval: error: 3 of 3 requests did not reach http://127.0.0.1:{port}/v1/responses: connection error")


def test_a_server_that_never_answers_is_a_timeout(request_file, capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        data = _json(capsys, "--url", url, "--request", request_file(REQUEST), "-n", "2", "--timeout", "0.2")
    assert data["outcomes"] == [{"outcome": "timeout — no complete answer within 0.2 s", "count": 2, "share": 1.0}]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal(base, request_file, capsys, monkeypatch):
    path = request_file(REQUEST)
    assert _eval(capsys, "--url", base, "--request", path, "-n", "2")[2] == ""
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["eval", "--url", base, "--request", path, "-n", "4", "--concurrency", "1"]) == 0
    assert terminal.getvalue() == (
        "\r[#####...............] 1/4\r[##########..........] 2/4\r[###############.....] 3/4"
        "\r[####################] 4/4\n"
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--url", "127.0.0.1:8000/v1"],
         "--url: expected an http:// or https:// base URL such as http://127.0.0.1:8000/v1, got '127.0.0.1:8000/v1'"),
        (["--request", "{missing}"], "--request: {missing}: cannot read: No such file or directory"),
        (["--compare", "{missing}"], "--compare: {missing}: cannot read: No such file or directory"),
        (["--compare", "{request}"],
         '--compare: {request}: not a mockoss eval result: expected an object with an "outcomes" list'),
    ],
    ids=["url", "request", "compare-missing", "compare-not-a-result"],
)
def test_argument_errors_exit_2_before_sending(running, request_file, tmp_path, capsys, args, error):
    names = {"missing": str(tmp_path / "missing.json"), "request": request_file(REQUEST)}
    args = [arg.format(**names) for arg in args]
    base_args = {"--url": "http://127.0.0.1:1/v1", "--request": names["request"]}
    for flag, value in base_args.items():
        if flag not in args:
            args += [flag, value]
    before = len(running.server.requests)
    assert _eval(capsys, *args) == (2, "", f"mockoss eval: error: {error.format(**names)}\n")
    assert len(running.server.requests) == before


@pytest.mark.parametrize("args", [["-n", "0"], ["--concurrency", "x"], ["--timeout", "0"]])
def test_argparse_rejects_bad_numbers(request_file, capsys, args):
    with pytest.raises(SystemExit) as info:
        main(["eval", "--url", "http://127.0.0.1:1/v1", "--request", request_file(REQUEST), *args])
    assert info.value.code == 2
    assert "expected" in capsys.readouterr().err
