"""The heavy-body check's two gaps found by the seventh session's final review of issue 9.

1. Content parts are joined with nothing between them (vLLM's ``flatten_input_text_content``,
   ``mockoss.harmony.prompt._common._flatten_text``), so a break the raw check finds in a field
   that is never rendered, between two parts, is not a break of the rendered text: 2,000 parts of
   80 letters, each with ``"j": " a"`` (248 KB), stayed on the event loop and held every other
   client 8.5 s.
2. ``\\n`` or ``\\r`` followed by ``/`` is not a break: o200k's fourth alternative
   (`` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*``) ends a punctuation piece with any run of them, so
   ``"!" + "\\n/" * 10500`` (31.6 KB) is one piece (another client waited ~105 ms).
"""

from __future__ import annotations

import json

import pytest

from mockoss import jsonbody
from mockoss.server.offload import has_long_run

MODEL = "openai/gpt-oss-20b"


def _parts(n: int, kind: str = "text") -> list[dict[str, str]]:
    return [{"type": kind, "text": ("y" if i == 0 else "x") * (80 + i % 7), "j": " a"} for i in range(n)]


@pytest.mark.parametrize("role", ["system", "developer", "tool"])
def test_chat_content_parts_joined_into_one_piece_are_heavy(role):
    body = {"model": MODEL, "messages": [{"role": role, "content": _parts(2000)}, {"role": "user", "content": "hi"}]}
    assert has_long_run(json.dumps(body).encode())


@pytest.mark.parametrize(
    "body",
    [
        {"model": MODEL, "input": [{"type": "message", "role": "developer", "content": _parts(2000, "input_text")}]},
        {"model": MODEL, "input": [{"type": "function_call_output", "call_id": "c", "output": _parts(2000, "input_text")}]},
        {"model": MODEL, "input": "hi", "instructions": _parts(2000, "input_text")},
    ],
    ids=["developer", "function_call_output", "instructions"],
)
def test_responses_content_parts_joined_into_one_piece_are_heavy(body):
    assert has_long_run(json.dumps(body).encode())


@pytest.mark.parametrize("run", ["\n/", "/\n", "\r/"])
def test_a_newline_escape_before_a_slash_is_not_a_break(run):
    body = {"model": MODEL, "messages": [{"role": "user", "content": "!" + run * 10500}]}
    raw = json.dumps(body).encode()
    assert len(raw) < 40_000
    assert has_long_run(raw)


def test_usual_bodies_with_content_parts_stay_on_the_loop_and_are_parsed_once():
    items = [
        {"type": "message", "role": "user" if i % 2 == 0 else "assistant", "content": [{"type": "input_text", "text": f"turn {i}: some words of text"}]}
        for i in range(200)
    ]
    system = [{"type": "text", "text": "You are a careful agent. "}, {"type": "text", "text": "Use the tools. " * 50}]
    for body in ({"model": MODEL, "input": items}, {"model": MODEL, "messages": [{"role": "system", "content": system}] * 20}):
        raw = json.dumps(body).encode()
        assert len(raw) > 8192
        assert not has_long_run(raw)
        # The check's parse is handed to the answer's, once, for this very bytes object.
        handed = jsonbody._handed
        assert handed is not None and handed[0] is raw
        first = jsonbody.parse_json(raw)
        assert first is handed[1] and first == body
        again = jsonbody.parse_json(raw)
        assert again == body and again is not first
        assert jsonbody.parse_json(bytes(raw)) == body  # an equal but other object is parsed
