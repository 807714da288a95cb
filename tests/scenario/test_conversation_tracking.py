"""Turns and cursors that follow real clients: resent Responses items, previous_response_id with
store, and the automatic conversation key (mockoss.scenario.conversation, mockoss.scenario.player)."""

from __future__ import annotations

import json

from mockoss.scenario.conversation import RequestFacts, conversation_key
from mockoss.server.core import MockServer
from mockoss.steps import final, rule, script, tool_call

MODEL = "openai/gpt-oss-20b"
TURNS = script(*(rule(final(f"turn {n}"), name=f"t{n}", turn=n) for n in (1, 2, 3, 4)))
USER = {"role": "user", "content": "What time is it?"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "x"}]}
MESSAGE = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "to=functions.t {}"}]}
CALL = {"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "12:00"}


def _turn(items):
    return RequestFacts("responses", {"input": items}, {}, MODEL).turn


def test_responses_turns_count_each_earlier_response_once():
    assert _turn("hi") == 1
    assert _turn([USER]) == 1
    assert _turn([USER, REASONING, MESSAGE, USER]) == 2
    assert _turn([USER, REASONING, CALL, OUTPUT]) == 2
    assert _turn([USER, REASONING, CALL, CALL, OUTPUT, OUTPUT]) == 2  # parallel calls: one response
    assert _turn([USER, REASONING, CALL, OUTPUT, REASONING, MESSAGE]) == 3
    # Outputs resent back to back (no tool output between): a new reasoning item starts a new response.
    assert _turn([USER, REASONING, MESSAGE, REASONING, CALL, OUTPUT]) == 3
    assert _turn([USER, MESSAGE, REASONING, CALL, OUTPUT]) == 3


def test_chat_turns_count_assistant_messages():
    messages = [USER, {"role": "assistant", "content": "a"}, {"role": "tool", "content": "r"}]
    assert RequestFacts("chat", {"messages": messages}, {}, MODEL).turn == 2


def _responses(server, body, headers=None):
    reply = server.handle("responses", json.dumps({"model": MODEL, **body}).encode(), headers or {})
    data = json.loads(reply.body)
    text = [c["text"] for item in data["output"] if item["type"] == "message" for c in item["content"]]
    return data["id"], text[0] if text else None


#: vLLM's store is off by default (404 for any previous_response_id): the chaining tests turn it on.
STORE = {"responses_store": True}


def test_previous_response_id_continues_the_stored_conversation():
    server = MockServer(scenario=TURNS, switches=STORE)
    first, text = _responses(server, {"input": "What time is it?"})
    assert text == "turn 1"
    second, text = _responses(server, {"input": [OUTPUT], "previous_response_id": first})
    assert text == "turn 2"
    _, text = _responses(server, {"input": [{"role": "user", "content": "and now?"}], "previous_response_id": second})
    assert text == "turn 3"
    assert [r.turn for r in server.requests] == [1, 2, 3]


def test_store_false_is_not_remembered():
    # Ollama ignores previous_response_id (ollama/ollama openai/responses.go): no store's refusal of
    # the id (vllm with its store on, openai, lmstudio would refuse it).
    server = MockServer(scenario=TURNS, profile="ollama", served_model_names=[MODEL])
    first, _ = _responses(server, {"input": "hi", "store": False})
    _, text = _responses(server, {"input": [OUTPUT], "previous_response_id": first})
    assert text == "turn 1"  # unknown to the server: the turn comes from the input alone


def test_auto_session_keeps_independent_conversations_apart():
    steps = script(final("first answer"), final("second answer"))
    shared, auto = MockServer(scenario=steps), MockServer(scenario=steps, auto_session=True)
    chat = lambda server, text, headers=None: json.loads(
        server.handle(
            "chat", json.dumps({"model": MODEL, "messages": [{"role": "user", "content": text}]}).encode(), headers or {}
        ).body
    )["choices"][0]["message"]["content"]
    assert [chat(shared, "A"), chat(shared, "B")] == ["first answer", "second answer"]
    assert [chat(auto, "A"), chat(auto, "B")] == ["first answer", "first answer"]
    header = MockServer(scenario=steps)
    auto_header = {"x-mockoss-session": "auto"}
    assert [chat(header, "A", auto_header), chat(header, "B", auto_header)] == ["first answer", "first answer"]
    assert header.requests[0].headers["x-mockoss-session"] == "auto"


def test_conversation_key_reads_system_text_and_first_user_message():
    chat = {"messages": [{"role": "system", "content": "S"}, USER, {"role": "assistant", "content": "x"}]}
    later = {"messages": [*chat["messages"], {"role": "user", "content": "more"}]}
    assert conversation_key("chat", chat) == conversation_key("chat", later)
    other_system = {"messages": [{"role": "system", "content": "T"}, USER]}
    assert conversation_key("chat", chat) != conversation_key("chat", other_system)
    responses = {"instructions": "S", "input": [USER, REASONING, CALL, OUTPUT]}
    assert conversation_key("responses", responses) == conversation_key("responses", {"instructions": "S", "input": "What time is it?"})
    assert conversation_key("chat", chat).startswith("auto:") and len(conversation_key("chat", chat)) == 21


def test_tool_checks_warn_on_undeclared_tools_and_bad_arguments():
    tools = [{"type": "function", "name": "t", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}]
    server = MockServer(scenario=script(tool_call("t", {"n": "x"}), tool_call("u", {}), tool_call("t", '{"n": 1')))
    for _ in range(3):
        server.handle("responses", json.dumps({"model": MODEL, "input": "hi", "tools": tools}).encode(), {})
    assert [r.warnings for r in server.requests] == [
        ("tool call 't': arguments do not match the declared parameters at $.n: 'x' is not of type 'integer'",),
        ("tool call 'u': not declared by the request (declared functions: t)",),
        ("tool call 't': arguments are not JSON (Expecting ',' delimiter at 7): {\"n\": 1",),
    ]
