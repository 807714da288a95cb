"""``parser=regex``: a raw control character inside a JSON string of tool arguments (review 12,
finding 1: an unscripted 500 "JSONDecodeError: Invalid control character" before the fix).

llama.cpp reads the arguments with nlohmann's strict lexer (``try_consume_json`` ->
``common_json_parse``, ggml-org/llama.cpp@1d232c2c38b4e3167369bf3233615b7770b9d610:
common/chat-parser.cpp and common/json-partial.cpp): the lexer stops at the control character and
the parse "heals" the text cut there, so the arguments are partial: a final parse raises
``common_chat_msg_partial_exception`` and falls back to the whole output as content with no tool
calls; a partial parse stops at that message (``handle_tool_call``). A top-level string is not
healed: the arguments are skipped as non-JSON (see ``regex_parser._strict``)."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient
from test_llamacpp_regex_incremental import FLAGS, check

from mockoss.profiles.llamacpp.gptoss import ChatMsg
from mockoss.profiles.llamacpp.regex_parser import parse_regex
from mockoss.server.app import create_app
from mockoss.server.core import MockServer

CALL = '<|channel|>commentary to=functions.f json<|message|>{"a": "line1\nline2"}'
ANSWER = "<|start|>assistant<|channel|>final<|message|>done"
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize("calls", [True, False])
def test_final_parse_falls_back_to_the_whole_output(calls):
    text = "<|channel|>analysis<|message|>think<|end|><|start|>assistant" + CALL + ANSWER
    got = parse_regex(text, extract_reasoning=True, tool_calls=calls, partial=False)
    assert got == ChatMsg(content=text, reasoning_content="think")


def test_partial_parse_stops_at_the_healed_arguments():
    text = "<|channel|>analysis<|message|>think<|end|><|start|>assistant" + CALL + ANSWER
    got = parse_regex(text, extract_reasoning=True, tool_calls=True, partial=True)
    assert got == ChatMsg(reasoning_content="think")  # no call, no "done"


@pytest.mark.parametrize("args", ['["x\ty"]', '{"k\x01": 1}', '{"a": {"b": "\x1f"}}'])
def test_nested_strings_in_keys_and_arrays_heal_too(args):
    text = "<|channel|>commentary to=functions.f<|message|>" + args
    assert parse_regex(text, extract_reasoning=True, tool_calls=True, partial=False) == ChatMsg(content=text)


def test_a_top_level_string_is_skipped_as_non_json():
    text = '<|channel|>commentary to=functions.f<|message|>"a\nb"' + ANSWER
    assert parse_regex(text, extract_reasoning=True, tool_calls=True, partial=False) == ChatMsg(content="done")


def test_escaped_control_characters_are_still_a_call():
    text = '<|channel|>commentary to=functions.f<|message|>{"a": "line1\\nline2"}\n'
    got = parse_regex(text, extract_reasoning=True, tool_calls=True, partial=False)
    assert got == ChatMsg(tool_calls=(("f", '{"a":"line1\\nline2"}'),))


def test_per_token_parses_equal_the_full_reparse():
    text = "<|channel|>analysis<|message|>think<|end|><|start|>assistant" + CALL + ANSWER
    for extract, calls in FLAGS:
        check(extract, calls, list(text))


@pytest.mark.parametrize("stream", [False, True])
def test_served_reply_is_the_output_as_content_not_a_500(tmp_path, stream):
    path = tmp_path / "crash.yaml"
    raw = CALL + "<|call|>"
    path.write_text("version: 1\nsteps:\n  - completion:\n      raw: " + json.dumps(raw) + "\n")
    server = MockServer(scenario=str(path), profile="llamacpp", seed=1, switches={"parser": "regex"})
    body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
    with TestClient(create_app(server)) as client:
        reply = client.post("/v1/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    if not stream:
        message = reply.json()["choices"][0]["message"]
        assert message["content"] == CALL and "tool_calls" not in message
        return
    deltas = [json.loads(line[6:]) for line in reply.text.splitlines() if line.startswith("data: {")]
    content = "".join(d["choices"][0]["delta"].get("content") or "" for d in deltas if d["choices"])
    assert content == CALL
    assert not any(d["choices"][0]["delta"].get("tool_calls") for d in deltas if d["choices"])
