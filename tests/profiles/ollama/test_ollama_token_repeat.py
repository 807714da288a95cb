"""Ollama's token-repeat abort: a repeating answer is cut and looks like a success.

``ollama/ollama@fb3076099:llm/llama_server.go:1692-1702`` counts consecutive llama-server
``/completion`` events whose ``strings.TrimSpace(content)`` equals the previous one's; past 30 it
returns ``ctx.Err()`` (nil) without the ``Done`` callback. Measured with Ollama's own Go code
(``tools/goldens/ollama_harness.go``, whose ``complete`` restates those lines, on the events
``tools/goldens/ollama_0_33_0_rc2.py`` makes of each token; ``--scenario`` gives the command):
``token_repeat_golden/`` holds its 32 exchanges for each step of ``ollama-token-repeat-abort.yaml``
(not shipped: every shipped-case golden set would have to cover it), OCR dots (ollama#14117), an
emoji (the #18374 repro) and whitespace pieces (they trim to ``""``). ``/api/chat`` streams 31 dots
and no ``done`` line; non-streamed ``"done":false`` and no ``done_reason``; the OpenAI stream has
no finish chunk and no ``[DONE]``, its body ``finish_reason: null`` and zero usage.

After ollama/ollama#18374 (switch ``token_repeat="100-error"``; the PR's description read, not run):
past 100 repeats, ``{"error":"prediction aborted, token repeat limit reached"}``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mockoss.golden.store import read_golden_dir
from mockoss.harmony import Completion
from mockoss.profiles.ollama.repeat import repeat_abort, trim_space
from mockoss.server.core import MockServer

HERE = Path(__file__).resolve().parent
SCENARIO = str(HERE / "ollama-token-repeat-abort.yaml")
GOLDENS = HERE / "token_repeat_golden"
sys.path.insert(0, str(HERE.parents[1] / "golden"))
import test_ollama_goldens as goldens  # the comparison of tests/golden/test_ollama_goldens.py

MODEL = "gpt-oss:20b"
AFTER = {"token_repeat": "100-error"}
ERROR = '{"error":"prediction aborted, token repeat limit reached"}'


def _chat(server: MockServer, stream: bool, endpoint: str = "ollama.chat") -> tuple[int, str]:
    key = "input" if endpoint == "responses" else "messages"
    value = "Copy the line." if endpoint == "responses" else [{"role": "user", "content": "Copy the line."}]
    body = {"model": MODEL, key: value, "stream": stream}
    reply = server.handle(endpoint, json.dumps(body).encode(), {})
    text = (
        reply.body if not reply.streamed else b"".join(f if isinstance(f, bytes) else f.encode() for f in reply.frames)
    )
    return reply.status, text.decode()


@pytest.mark.parametrize("path", sorted(GOLDENS.glob("*.json")), ids=lambda p: p.stem)
def test_every_route_cuts_the_repeating_answer_as_ollama_fb3076099_does(path: Path) -> None:
    """All 32 exchanges (``/api/chat``, ``/api/generate`` parsed and raw, ``/v1/chat/completions``,
    ``/v1/responses``; streamed or not; with ``num_predict`` cuts and prefills) as the harness."""
    (golden,) = [g for g in read_golden_dir(GOLDENS) if g.case == path.stem]
    problems = []
    for e, exchange in enumerate(golden.exchanges):
        want, got = goldens.recorded(golden, e), goldens.mockoss_answer(golden, e)
        if want != got:
            problems.append(f"{exchange.id}:\nOllama fb3076099: {want}\nmockoss: {got}")
    assert len(golden.exchanges) == 32
    assert not problems, "\n\n".join(problems)


def test_the_scenario_streams_31_dots_and_no_done_line() -> None:
    """The one-line check a client writes: the stream ends without ``"done":true``."""
    status, text = _chat(MockServer(scenario=SCENARIO, profile="ollama", served_model_names=[MODEL]), True)
    lines = [json.loads(line) for line in text.splitlines()]
    assert status == 200 and all(line["done"] is False for line in lines)
    assert "".join(line["message"]["content"] for line in lines) == "Introduction" + " ." * 31


def test_non_streamed_replies_say_done_false_without_a_reason() -> None:
    server = MockServer(scenario=SCENARIO, profile="ollama", served_model_names=[MODEL])
    body = json.loads(_chat(server, False)[1])
    assert body["done"] is False and "done_reason" not in body and "eval_count" not in body
    assert body["message"] == {
        "role": "assistant",
        "content": "Introduction" + " ." * 31,
        "thinking": "Copy the table of contents line.",
    }
    openai = json.loads(_chat(server, False, "chat")[1])  # step 1: 31 of the 40 emoji
    assert openai["choices"][0]["finish_reason"] is None and openai["choices"][0]["message"]["content"] == "😊" * 31
    assert openai["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def test_the_openai_stream_has_no_finish_chunk_and_no_done_marker() -> None:
    server = MockServer(scenario=SCENARIO, profile="ollama", served_model_names=[MODEL])
    _chat(server, False)
    status, text = _chat(server, True, "chat")
    assert status == 200 and "[DONE]" not in text and '"finish_reason":"' not in text
    status, text = _chat(server, True, "responses")  # step 2: whitespace pieces
    assert status == 200 and "response.completed" not in text and "output_text.done" not in text


def test_after_18374_the_limit_is_100_and_an_error() -> None:
    """``token_repeat="100-error"`` (ollama/ollama#18374): 40 equal pieces pass; 140
    fail with the #18374 error (non-streamed 500; streamed, the lines so far then the error line, as ``server/routes.go`` ``streamResponse``)."""
    forty = MockServer(scenario=SCENARIO, profile="ollama", switches=AFTER, served_model_names=[MODEL])
    body = json.loads(_chat(forty, False)[1])
    assert body["done"] is True and body["message"]["content"] == "Introduction" + " ." * 40 + " 1"
    script = "<|channel|>final<|message|>" + "😊" * 140 + "<|return|>"
    server = MockServer(profile="ollama", switches=AFTER, served_model_names=[MODEL])
    step_reply = server.respond(
        "ollama.generate",
        json.dumps({"model": MODEL, "prompt": "x", "stream": False}).encode(),
        {},
        step=goldens.Step(index=0, completion=Completion.from_text(script), error=None),
    )[0]
    assert (step_reply.status, step_reply.body.decode()) == (500, ERROR)
    streamed = server.respond(
        "ollama.chat",
        json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "x"}]}).encode(),
        {},
        step=goldens.Step(index=0, completion=Completion.from_text(script), error=None),
    )[0]
    frames = b"".join(f if isinstance(f, bytes) else f.encode() for f in streamed.frames).decode().splitlines()
    assert len(frames) == 102 and frames[-1] == ERROR  # 101 emoji then the error
    assert '"done":true' not in "".join(frames)


def test_the_count_includes_empty_events_and_the_stop_event() -> None:
    """``lastToken`` starts as ``""``, so the first empty event is already a repeat: 30 control
    tokens rendered as nothing, then the stop event, are 31 repeats and abort (no ``Done``);
    whitespace trims as Go's ``strings.TrimSpace`` (not ``\\x1c``, which Python's ``strip`` drops)."""
    control = 200001  # <|reserved_200001|>: not preserved, renders as ""
    assert repeat_abort([control] * 29, [], frozenset(), 30) is None
    assert repeat_abort([control] * 30, [], frozenset(), 30) == 30  # the stop event
    assert trim_space(" \t\u3000x\n") == "x" and trim_space("\x1c") == "\x1c"


@pytest.mark.parametrize("endpoint", ["ollama.chat", "chat", "responses"])
@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_the_request_log_says_why_the_reply_stopped(endpoint: str, stream: bool) -> None:
    """Ollama logs the abort at debug level only; mockoss's request log names the cause."""
    server = MockServer(scenario=SCENARIO, profile="ollama", served_model_names=[MODEL])
    _chat(server, stream, endpoint)
    (note,) = server.requests[-1].server_log
    assert note.startswith("mockoss: the reply stops here") and "llm/llama_server.go:1692-1702" in note
