"""``token_repeat="100-error"`` (ollama/ollama#18374) on every route, and beside ``tool_call_error="v0.11.3"``.

The merged code (``ollama/ollama@00f6d620:llm/llama_server.go``, ``llamaServerRunner.Completion``,
"Token repeat detection"): ``if tokenRepeat > 100 { return fmt.Errorf("prediction aborted, token
repeat limit reached") }``, before the event's ``fn(resp)``. So 140 equal pieces deliver 101 (the
first sets ``lastToken``, the 102nd is the 101st repeat and is not delivered) and no ``Done``. The
routes send the runner's error as ``gin.H{"error": err.Error()}`` (``server/routes.go@fb3076099``
``GenerateHandler``/``ChatHandler``): non-streamed HTTP 500 ``{"error":…}``; streamed
(``streamResponse``) the lines so far, then ``{"error":…}``. ``/v1`` (``middleware/openai.go@fb3076099``):
the 500 becomes ``openai.NewError`` (``api_error``); a streamed error line is read as an empty
``api.ChatResponse``: one empty chunk, no finish chunk, no ``[DONE]`` (``ChatWriter``), no
``response.completed`` (``ResponsesWriter``). The PR's description showed only the non-streamed
``/api/generate`` 500; the code is followed here.

With ``tool_call_error="v0.11.3"`` as well, the runner's error keeps that shape: Ollama 0.11.3 put
only the tool-call parse's error under the key ``error parsing tool call`` (``server/routes.go@v0.11.3``
:1658 chat, :367 generate) and sent a runner's error as ``{"error": …}`` (:1703, :405); an aborted
generation never reaches the parse (no ``Done`` callback).
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.ollama.errors import stream_cut_note
from mockoss.scenario.loader import Step
from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"
AFTER = {"token_repeat": "100-error"}
BOTH = {"token_repeat": "100-error", "tool_call_error": "v0.11.3"}
REPEAT_ERROR = "prediction aborted, token repeat limit reached"
NATIVE_ERROR = '{"error":"prediction aborted, token repeat limit reached"}'
OPENAI_ERROR = '{"error":{"message":"prediction aborted, token repeat limit reached","type":"api_error","param":null,"code":null}}\n'
SCRIPT = "<|channel|>final<|message|>" + "😊" * 140 + "<|return|>"
DELIVERED = "😊" * 101
MESSAGES = [{"role": "user", "content": "Repeat the emoji."}]

#: (endpoint, body without "stream")
ROUTES = {
    "api-generate-raw": ("ollama.generate", {"model": MODEL, "prompt": "Repeat the emoji.", "raw": True}),
    "api-chat": ("ollama.chat", {"model": MODEL, "messages": MESSAGES}),
    "v1-chat": ("chat", {"model": MODEL, "messages": MESSAGES}),
    "v1-responses": ("responses", {"model": MODEL, "input": "Repeat the emoji."}),
}


def _answer(switches: dict[str, str], route: str, stream: bool) -> tuple[int, str, str, tuple[str, ...]]:
    """(status, content type, body text, request-log lines) for the script given as the step."""
    endpoint, body = ROUTES[route]
    server = MockServer(profile="ollama", switches=switches, served_model_names=[MODEL])
    raw = json.dumps({**body, "stream": stream}).encode()
    reply, _ = server.respond(
        endpoint, raw, {}, step=Step(index=0, completion=Completion.from_text(SCRIPT), error=None)
    )
    text = reply.body if not reply.streamed else b"".join(reply.frames)
    kind = dict(reply.headers or ()).get("content-type", reply.media_type)
    return reply.status, kind, text.decode(), server.requests[0].server_log


@pytest.mark.parametrize("route", ["api-generate-raw", "api-chat"])
def test_native_non_streamed_is_a_500(route):
    assert _answer(AFTER, route, False)[:3] == (500, "application/json; charset=utf-8", NATIVE_ERROR)


def test_raw_generate_streams_the_delivered_pieces_then_the_error_line():
    """Raw: no preserved tokens, so ``<|channel|>``/``<|message|>`` are empty events, ``final`` a
    piece of its own; then 101 emoji, then the error line (no ``done`` line)."""
    status, kind, text, _ = _answer(AFTER, "api-generate-raw", True)
    lines = text.splitlines()
    assert (status, kind) == (200, "application/x-ndjson")
    assert lines[-1] == NATIVE_ERROR
    chunks = [json.loads(line) for line in lines[:-1]]
    assert all(chunk["done"] is False for chunk in chunks)
    assert "".join(chunk["response"] for chunk in chunks) == "final" + DELIVERED


@pytest.mark.parametrize("route", ["v1-chat", "v1-responses"])
def test_v1_non_streamed_is_the_openai_500(route):
    assert _answer(AFTER, route, False)[:3] == (500, "application/json", OPENAI_ERROR)


def test_v1_chat_stream_ends_with_the_error_line_read_as_an_empty_chunk():
    status, kind, text, log = _answer(AFTER, "v1-chat", True)
    events = [json.loads(frame[len("data: ") :]) for frame in text.split("\n\n") if frame]
    assert (status, kind) == (200, "text/event-stream")
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events) == DELIVERED
    assert events[-1]["model"] == "" and events[-1]["choices"][0]["delta"] == {"content": ""}  # the error line
    assert all(e["choices"][0]["finish_reason"] is None for e in events) and "[DONE]" not in text
    assert log == (stream_cut_note(REPEAT_ERROR, "a finish_reason chunk or data: [DONE]"),)


def test_v1_responses_stream_has_no_completed_event():
    status, kind, text, log = _answer(AFTER, "v1-responses", True)
    deltas = [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]
    assert (status, kind) == (200, "text/event-stream")
    text_deltas = [d["delta"] for d in deltas if d["type"] == "response.output_text.delta"]
    assert "".join(text_deltas) == DELIVERED
    assert "response.completed" not in text and "response.failed" not in text
    assert log == (stream_cut_note(REPEAT_ERROR, "response.completed"),)


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize(
    "route",
    [
        "api-generate-raw",
        "api-chat",
        "v1-chat",
        "v1-responses",
    ],
)
def test_with_the_v0_11_3_switch_the_runner_error_keeps_its_shape(route, stream):
    """Not ``{"error parsing tool call": …}`` nor ``unexpected error format in response``: the
    same reply as with ``token_repeat`` alone."""
    assert _answer(BOTH, route, stream) == _answer(AFTER, route, stream)
