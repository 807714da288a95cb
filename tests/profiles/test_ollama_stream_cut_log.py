"""Ollama's ``/v1`` streams that a failed tool-call parse cuts short: the wire is Ollama's, and the
request log says why the answer stopped (session 15's newcomer, finding 3: "a 200 stream that just
stops, and nothing says why").

What the real server does, ollama/ollama@fb307609: the harmony parser returns ``error parsing tool
call: raw='…', err=…`` (``harmony/harmonyparser.go`` ``HarmonyMessageHandler.Add``);
``ChatHandler`` sends ``gin.H{"error": …}`` down its channel without a log call;
``streamResponse`` (``server/routes.go``) writes it as the stream's last NDJSON line once the
response has started (it logs only if that encoding fails); ``ChatWriter.writeResponse``
(``middleware/openai.go``) decodes that line as an empty ``api.ChatResponse``: one chunk with
``"model":""`` and an empty delta, no finish chunk, no ``[DONE]``. Ollama's log has only gin's
``200`` access line, so mockoss's line starts with ``mockoss:``.
"""

from __future__ import annotations

import json

import httpx
import pytest

from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

MODEL = "gpt-oss:20b"
ERROR = "error parsing tool call: raw='ls -R\\n', err=invalid character 'l' looking for beginning of value"
TOOLS = [{"type": "function", "function": {"name": "terminal", "parameters": {"type": "object"}}}]


@pytest.fixture(scope="module")
def running():
    server = ThreadedServer(MockServer(scenario="tool-arguments-not-json", profile="ollama")).start()
    yield server
    server.stop()


def _post(running, path: str, body: dict) -> httpx.Response:
    return httpx.post(running.url + path, json=body, timeout=30)


def test_v1_chat_stream_stops_without_done_and_the_request_log_says_why(running):
    reply = _post(running, "/v1/chat/completions", {
        "model": MODEL, "stream": True, "tools": TOOLS, "messages": [{"role": "user", "content": "ls"}]
    })  # fmt: skip
    frames = [f for f in reply.text.split("\n\n") if f]
    last = json.loads(frames[-1].removeprefix("data: "))
    # the wire stays Ollama's: a 200 whose last chunk is the error line read as an empty response
    assert reply.status_code == 200 and "data: [DONE]" not in frames
    assert (last["model"], last["choices"][0]["delta"], last["choices"][0]["finish_reason"]) == (
        "",
        {"content": ""},
        None,
    )
    (line,) = running.server.requests[-1].server_log
    assert line.startswith("mockoss: the stream stops here without a finish_reason chunk or data: [DONE]: ")
    assert f"({ERROR})" in line and "Ollama logs nothing but the 200" in line


def test_v1_responses_stream_stops_without_completed_and_the_request_log_says_why(running):
    tools = [{"type": "function", "name": "terminal", "parameters": {"type": "object"}}]
    reply = _post(running, "/v1/responses", {"model": MODEL, "stream": True, "tools": tools, "input": "ls"})
    assert reply.status_code == 200 and "response.completed" not in reply.text and "response.created" in reply.text
    (line,) = running.server.requests[-1].server_log
    assert line.startswith("mockoss: the stream stops here without response.completed: ")
    assert f"({ERROR})" in line


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/api/chat"])
def test_replies_that_carry_the_error_log_no_note(running, path):
    """Non-streamed (a 500 with the error) and the native stream (the error line reaches the
    client) already say why: no note there."""
    body = {
        "model": MODEL,
        "stream": path == "/api/chat",
        "tools": TOOLS,
        "messages": [{"role": "user", "content": "ls"}],
    }
    reply = _post(running, path, body)
    assert ERROR in reply.text  # both JSON: the arguments' newline arrives escaped, as ERROR spells it
    assert running.server.requests[-1].server_log == ()


def test_the_failure_report_section_shows_the_line(running):
    from mockoss.pytest_plugin._report import describe_request

    _post(running, "/v1/chat/completions", {
        "model": MODEL, "stream": True, "tools": TOOLS, "messages": [{"role": "user", "content": "ls"}]
    })  # fmt: skip
    lines = describe_request(running.server.requests[-1])
    assert any(
        line.startswith("  server log: mockoss: the stream stops here without a finish_reason") for line in lines
    )
