"""Turn numbers: derived from the body for stateless clients, counted per X-Mockoss-Session otherwise."""

import json

from mockoss.scenario.conversation import RequestFacts
from mockoss.scenario.loader import scenario_from_data
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
USER = {"role": "user", "content": "hi"}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}
RESULT = {"role": "tool", "tool_call_id": "c", "content": "42"}


def _turn(endpoint, body, headers=None):
    return RequestFacts(endpoint, body, headers or {}, MODEL).turn


def test_chat_turn_is_assistant_messages_plus_one():
    assert _turn("chat", {"messages": [USER]}) == 1
    assert _turn("chat", {"messages": [{"role": "system", "content": "s"}, USER, CALL, RESULT]}) == 2
    assert (
        _turn("chat", {"messages": [USER, CALL, RESULT, CALL, RESULT, {"role": "assistant", "content": "x"}, USER]})
        == 4
    )


def test_responses_turn_counts_runs_of_model_items():
    user = {"role": "user", "content": "hi"}
    reasoning = {"type": "reasoning", "id": "rs", "summary": [], "content": [{"type": "reasoning_text", "text": "t"}]}
    call = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c", "output": "42"}
    assert _turn("responses", {"input": "hi"}) == 1
    assert _turn("responses", {"input": [user]}) == 1
    # one earlier response: reasoning + two parallel calls; their outputs follow
    assert _turn("responses", {"input": [user, reasoning, call, {**call, "call_id": "d"}, output, output]}) == 2
    assert _turn("responses", {"input": [user, call, output, reasoning, call, output]}) == 3
    assert _turn("responses", {"input": [user, {"type": "message", "role": "assistant", "content": "a"}, user]}) == 2
    assert _turn("responses", {"input": [user, {"type": "item_reference", "id": "x"}]}) == 1


def test_ollama_chat_reads_like_chat_and_generate_like_a_prompt():
    ollama_call = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}
    facts = RequestFacts("ollama.chat", {"messages": [USER, ollama_call, {"role": "tool", "content": "42", "tool_name": "f"}]}, {}, MODEL)
    assert (facts.turn, facts.last("tool")) == (2, ("tool", "42"))
    assert _turn("ollama.generate", {"prompt": "hi"}) == 1


def test_prompt_bodies_are_always_turn_one():
    assert _turn("completions", {"prompt": "Once upon a time"}) == 1
    assert _turn("completions", {"prompt": ["a", "b"]}) == 1


def test_last_messages_as_text():
    facts = RequestFacts(
        "responses",
        {
            "input": [
                {
                    "role": "user",
                    "content": [{"type": "input_text", "text": "line 1"}, {"type": "input_text", "text": "line 2"}],
                },
                {"type": "function_call_output", "call_id": "c", "output": "out"},
            ]
        },
        {},
        MODEL,
    )
    assert facts.last("user") == ("user", "line 1\nline 2")
    assert facts.last("tool") == ("tool", "out")
    assert facts.last() == ("tool", "out")
    assert facts.last("assistant") is None


def _turn_server():
    steps = [{"completion": {"messages": [{"channel": "final", "content": f"turn {n}"}]}} for n in (1, 2, 3)]
    rules = [{"name": f"t{n}", "match": {"turn": n}, "steps": [step]} for n, step in zip((1, 2, 3), steps, strict=True)]
    return MockServer(scenario=scenario_from_data({"rules": rules}, name="turns", default_version=True))


def _ask(server, messages, headers=None):
    reply = server.handle("chat", json.dumps({"model": MODEL, "messages": messages}).encode(), headers or {})
    return json.loads(reply.body)["choices"][0]["message"]["content"]


def test_stateless_client_turns_come_from_the_messages():
    server = _turn_server()
    assert _ask(server, [USER]) == "turn 1"
    assert _ask(server, [USER]) == "turn 1"  # the same conversation again: still its first turn
    assert _ask(server, [USER, CALL, RESULT]) == "turn 2"
    assert [r.turn for r in server.requests] == [1, 1, 2]


def test_session_turns_are_counted_per_session_whatever_the_body():
    server = _turn_server()
    a, b = {"X-Mockoss-Session": "a"}, {"x-mockoss-session": "b"}
    assert _ask(server, [USER], a) == "turn 1"
    assert _ask(server, [USER], a) == "turn 2"
    assert _ask(server, [USER], b) == "turn 1"
    assert _ask(server, [USER], a) == "turn 3"
    assert _ask(server, [USER], b) == "turn 2"
    assert [
        (r.headers.get("X-Mockoss-Session") or r.headers.get("x-mockoss-session"), r.turn) for r in server.requests
    ] == [("a", 1), ("a", 2), ("b", 1), ("a", 3), ("b", 2)]
    server.reset()
    assert _ask(server, [USER], a) == "turn 1"


def test_sessions_have_their_own_rule_cursors():
    data = {"steps": [{"completion": {"messages": [{"channel": "final", "content": c}]}} for c in ("one", "two")]}
    server = MockServer(scenario=scenario_from_data(data, name="seq", default_version=True))
    a, b = {"x-mockoss-session": "a"}, {"x-mockoss-session": "b"}
    assert [_ask(server, [USER], h) for h in (a, b, a, b, None, None)] == ["one", "one", "two", "two", "one", "two"]
