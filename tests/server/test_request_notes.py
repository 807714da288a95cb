"""The request log says why the emulated server answered as it did, when a newcomer could not tell.

Session 18's newcomer: on ``sglang`` a chat tool without ``description`` gets SGLang's real 400
``'dict object' has no attribute 'function'`` (the bytes are right: sgl-project/sglang@v0.5.23
serving_chat.py:2206-2227 answers its chat template's retry error) but the failure report only said
``not scripted: the server's own error reply``; on the default ``vllm`` profile the shipped
``malformed-header-duplicate-recipient`` scenario answers HTTP 200 and the tool call vanishes
(vLLM 0.32/0.33 ``HarmonyParser.process_chunk`` skips the tokens the parser rejects,
vllm-project/vllm@v0.32.0:vllm/parser/harmony.py) with ``mockoss.requests[0].warnings == ()``. Both
now carry a ``hint: …`` warning (:mod:`mockoss.server.request_notes`); the replies' bytes are
unchanged, and the tool-check assertion leaves hints out.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockoss.pytest_plugin._report import describe_requests, tool_warnings
from mockoss.server import request_notes
from mockoss.server.core import MockServer

SGLANG_REFUSAL = b'{"object":"error","message":"\'dict object\' has no attribute \'function\'","type":"BadRequest","param":null,"code":400}'
PARAMS = {"type": "object", "properties": {}}
BARE = {"type": "function", "function": {"name": "get_time", "parameters": PARAMS}}
DESCRIBED = {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": PARAMS}}
TOOL_X = {"type": "function", "function": {"name": "x", "description": "X.", "parameters": PARAMS}}


def _send(server: MockServer, endpoint: str = "chat", **fields: Any):
    body: dict[str, Any] = {"model": "openai/gpt-oss-20b", **fields}
    if endpoint == "chat":
        body.setdefault("messages", [{"role": "user", "content": "hi"}])
    else:  # the Responses tool shape: the function's fields at the top
        body.setdefault("input", "hi")
        body["tools"] = [{"type": "function", **tool["function"]} for tool in body.get("tools", [])]
    reply = server.handle(endpoint, json.dumps(body).encode(), {"content-type": "application/json"})
    return reply, server.requests[-1]


# --------------------------------------------------------------------------- refusals


def test_sglang_tool_without_description_names_the_tool_and_the_switch():
    server = MockServer(scenario="clean-answer", profile="sglang")
    reply, record = _send(server, tools=[DESCRIBED, BARE])
    assert (reply.status, reply.body) == (400, SGLANG_REFUSAL)  # SGLang's own bytes, unchanged
    (hint,) = record.warnings
    assert hint.startswith("hint: tool 'get_time' (tools[1]) has no \"description\"")
    assert "tool.description unguarded" in hint and "tool_description_required=false" in hint
    report = describe_requests(server.requests, "sglang", 0)
    assert "not scripted: the server's own error reply\n  hint: tool 'get_time' (tools[1])" in report
    assert tool_warnings(server.requests) == []  # not a tool-check problem


def test_sglang_hint_follows_what_the_template_renders():
    server = MockServer(scenario="clean-answer", profile="sglang")
    # A named tool_choice renders only the named tool (serving_chat.py:1861-1872): no refusal.
    choice = {"type": "function", "function": {"name": "get_weather"}}
    reply, record = _send(server, tools=[DESCRIBED, BARE], tool_choice=choice)
    assert (reply.status, record.warnings) == (200, ())
    reply, record = _send(server, tools=[BARE], tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert reply.status == 400 and record.warnings[0].startswith("hint: tool 'get_time' (tools[0])")
    off = MockServer(scenario="clean-answer", profile="sglang", switches={"tool_description_required": False})
    reply, record = _send(off, tools=[BARE])
    assert (reply.status, record.warnings) == (200, ())


def test_llamacpp_template_500s_carry_what_to_do():
    server = MockServer(scenario="clean-answer", profile="llamacpp")
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "content": "42", "tool_call_id": "c1"}]
    reply, record = _send(server, messages=orphan)
    assert reply.status == 500 and b"Message has tool role" in reply.body
    assert record.warnings[0].startswith("hint: the gpt-oss chat template raised at a 'tool' message")
    items = {"type": "object", "properties": {"paths": {"type": "array"}}}
    array_tool = {"type": "function", "function": {"name": "ls", "description": "List.", "parameters": items}}
    reply, record = _send(server, tools=[array_tool])
    assert reply.status == 500 and "template_items_check=false" in record.warnings[0]
    # A 400 names its cause itself: no hint.
    two = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "content": "b"},
    ]
    reply, record = _send(server, messages=two)
    assert (reply.status, record.warnings) == (400, ())


def test_a_failing_hint_leaves_the_reply_and_gives_no_hint(monkeypatch):
    monkeypatch.setitem(request_notes.REFUSAL_HINTS, "sglang", "mockoss.server.request_notes:no_such_function")
    server = MockServer(scenario="clean-answer", profile="sglang")
    reply, record = _send(server, tools=[BARE])
    assert (reply.status, reply.body, record.warnings) == (400, SGLANG_REFUSAL, ())


# --------------------------------------------------------------------------- dropped messages


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("endpoint", ["chat", "responses"])
def test_vllm_says_it_dropped_the_message_the_parser_rejected(endpoint, stream):
    server = MockServer(scenario="malformed-header-duplicate-recipient", profile="vllm")
    reply, record = _send(server, endpoint, tools=[TOOL_X], stream=stream)
    assert reply.status == 200
    (hint,) = record.warnings
    assert hint.startswith(
        "hint: vLLM 0.33.0 skipped the tokens its Harmony parser rejected (harmony_errors=skip; first: "
    )
    assert 'Some("to=functions.x")' in hint and "harmony_errors=raise" in hint
    assert tool_warnings(server.requests) == []
    assert "\n  hint: vLLM 0.33.0 skipped" in describe_requests(server.requests, "vllm", 0)


def test_no_drop_hint_where_nothing_was_skipped_or_the_server_raises():
    clean = MockServer(scenario="clean-tool-call", profile="vllm")
    weather = {"type": "function", "function": {"name": "get_weather", "description": "W.", "parameters": PARAMS}}
    assert _send(clean, tools=[weather])[1].warnings == ()
    raising = MockServer(
        scenario="malformed-header-duplicate-recipient", profile="vllm", switches={"harmony_errors": "raise"}
    )
    reply, record = _send(raising, tools=[TOOL_X])
    assert (reply.status, record.warnings) == (500, ())
    old = MockServer(scenario="malformed-header-duplicate-recipient", profile="vllm@0.26.0")
    assert _send(old, tools=[TOOL_X])[1].warnings == ()
    # A limit that ends the completion before the bad header: nothing skipped, nothing said.
    cut = MockServer(scenario="malformed-header-duplicate-recipient", profile="vllm")
    assert _send(cut, tools=[TOOL_X], max_tokens=3)[1].warnings == ()


def test_sglang_responses_with_the_skip_guard_says_so_too():
    server = MockServer(
        scenario="malformed-header-duplicate-recipient", profile="sglang", switches={"harmony_errors": "skip"}
    )
    reply, record = _send(server, "responses", tools=[TOOL_X])
    assert reply.status == 200 and record.warnings[0].startswith(
        "hint: SGLang (its Responses guard after 0.5.23) skipped"
    )
    default = MockServer(scenario="malformed-header-duplicate-recipient", profile="sglang")
    reply, record = _send(default, "responses", tools=[TOOL_X])
    assert (reply.status, record.warnings) == (400, ())
