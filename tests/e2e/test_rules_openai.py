"""Rule-based scenario files driving real agent loops through the official openai SDK."""

import json
import re
import textwrap

import openai
import pytest

MODEL = "openai/gpt-oss-20b"
TERMINAL = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
#: hermes-agent's leak detector (agent/codex_responses_adapter.py _TOOL_CALL_LEAK_PATTERN).
LEAK_PATTERN = re.compile(r"(?:^|[\s>|])to=functions\.[A-Za-z_][\w.]*")

# One step each, as a YAML flow mapping, for scenario texts below.
LEAK = (
    "{completion: {messages: [{channel: analysis, content: Need to list files.}, "
    """{channel: final, content: 'to=functions.terminal {"command":"ls"}'}]}}"""
)
CALL = (
    "{completion: {messages: [{channel: analysis, content: Need to list files.}, {channel: commentary, "
    """recipient: functions.terminal, content_type: <|constrain|>json, content: '{"command":"ls"}'}]}}"""
)


def _scenario(tmp_path, text):
    """Write a scenario file (``LEAK``/``CALL`` stand for those steps) and return its path."""
    path = tmp_path / "agent.yaml"
    path.write_text(textwrap.dedent(text).replace("LEAK", LEAK).replace("CALL", CALL))
    return str(path)


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


def reprompting_agent(client, max_attempts, headers=None):
    """Ask for a tool call; on a leaked call, re-prompt, at most ``max_attempts`` requests in all.

    Returns the tool call, or ``None`` when it gave up.
    """
    messages = [{"role": "user", "content": "List the files."}]
    for _ in range(max_attempts):
        reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TERMINAL, extra_headers=headers)
        message = reply.choices[0].message
        if message.tool_calls:
            return message.tool_calls[0]
        assert LEAK_PATTERN.search(message.content or "")
        messages += [
            {"role": "assistant", "content": message.content},
            {"role": "user", "content": "That was text. Call the tool with a real tool call."},
        ]
    return None


def test_leak_leak_then_a_proper_tool_call(mockoss, client, tmp_path):
    mockoss.use(
        _scenario(
            tmp_path,
            """\
            version: 1
            rules:
              - name: leak
                match: {turn: [1, 2], tools: true}
                steps:
                  - LEAK
              - name: call
                match: {turn: 3, tool_names: [terminal]}
                steps:
                  - CALL
            """,
        )
    )
    call = reprompting_agent(client, max_attempts=5)
    assert call.function.name == "terminal" and json.loads(call.function.arguments) == {"command": "ls"}
    assert [(r.rule, r.turn, r.status) for r in mockoss.requests] == [
        ("leak", 1, 200),
        ("leak", 2, 200),
        ("call", 3, 200),
    ]


def test_three_leaks_then_the_client_gives_up(mockoss, client, tmp_path):
    mockoss.use(
        _scenario(
            tmp_path,
            """\
            version: 1
            steps:
              - {times: 3, completion: {messages: [{channel: final, content: 'to=functions.terminal {"command":"ls"}'}]}}
              - CALL
            """,
        )
    )
    assert reprompting_agent(client, max_attempts=3) is None
    assert len(mockoss.requests) == 3
    assert [r.step for r in mockoss.requests] == [0, 0, 0]  # the proper call (step 1) was never reached


def test_rule_keyed_on_the_last_tool_message(mockoss, client, tmp_path):
    mockoss.use(
        _scenario(
            tmp_path,
            """\
            version: 1
            rules:
              - name: retry-on-error
                match: {last_tool: "(?i)^error", role: tool}
                steps:
                  - completion: {messages: [{channel: final, content: The command failed; retrying is pointless.}]}
              - name: summarize
                match: {role: tool}
                steps:
                  - completion: {messages: [{channel: final, content: "Files: {{ request.messages[-1].content }}"}]}
              - name: first
                steps:
                  - CALL
            """,
        )
    )
    first = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "ls"}], tools=TERMINAL)
    call = first.choices[0].message.tool_calls[0]
    history = [{"role": "user", "content": "ls"}, first.choices[0].message.model_dump(exclude_none=True)]

    def answer(result):
        messages = [*history, {"role": "tool", "tool_call_id": call.id, "content": result}]
        return client.chat.completions.create(model=MODEL, messages=messages, tools=TERMINAL).choices[0].message.content

    assert answer("a.txt b.txt") == "Files: a.txt b.txt"
    assert answer("ERROR: permission denied") == "The command failed; retrying is pointless."
    assert [r.rule for r in mockoss.requests] == ["first", "summarize", "retry-on-error"]


@pytest.mark.mockoss(assert_all_requests_were_expected=False)  # alice's turn 3 is unanswered on purpose
def test_parallel_sessions_keep_their_own_turns_and_cursors(mockoss, tmp_path):
    mockoss.use(
        {
            "rules": [
                {
                    "name": f"turn-{n}",
                    "match": {"turn": n},
                    "steps": [{"completion": {"raw": f"<|channel|>final<|message|>turn {n}<|return|>"}}],
                }
                for n in (1, 2)
            ]
        }
    )
    clients = [
        openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0, default_headers=mockoss.session(key))
        for key in ("alice", "bob")
    ]
    try:
        ask = lambda c: (
            c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
            .choices[0]
            .message.content
        )
        alice, bob = clients
        assert [ask(alice), ask(bob), ask(bob), ask(alice)] == ["turn 1", "turn 1", "turn 2", "turn 2"]
        with pytest.raises(openai.BadRequestError) as info:
            ask(alice)  # alice's turn 3: no rule
    finally:
        for c in clients:
            c.close()
    message = info.value.body["message"]
    assert message.startswith("mockoss: no rule of scenario 'inline-1' answers this chat request")
    assert message.splitlines()[1:] == [
        "rule 'turn-1' (scenario inline-1): turn 3 not in [1]",
        "rule 'turn-2' (scenario inline-1): turn 3 not in [2]",
    ]
    assert [(r.headers["x-mockoss-session"], r.turn) for r in mockoss.requests] == [
        ("alice", 1),
        ("bob", 1),
        ("bob", 2),
        ("alice", 2),
        ("alice", 3),
    ]


def test_responses_turns_from_function_call_output(mockoss, tmp_path):
    mockoss.use(
        _scenario(
            tmp_path,
            """\
            version: 1
            rules:
              - match: {endpoint: responses, turn: 1}
                steps:
                  - CALL
              - match: {endpoint: responses, last_tool: a.txt}
                steps:
                  - completion: {messages: [{channel: final, content: "Turn two: {{ request.input[-1].output }}"}]}
            """,
        )
    )
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        tools = [{"type": "function", "name": "terminal", "parameters": {"type": "object", "properties": {}}}]
        first = client.responses.create(model=MODEL, input="List the files.", tools=tools)
        call = next(item for item in first.output if item.type == "function_call")
        items = [
            {"role": "user", "content": "List the files."},
            *[item.model_dump(exclude_none=True) for item in first.output],
            {"type": "function_call_output", "call_id": call.call_id, "output": "a.txt"},
        ]
        second = client.responses.create(model=MODEL, input=items, tools=tools)
    assert second.output_text == "Turn two: a.txt"
    assert [(r.rule, r.turn) for r in mockoss.requests] == [("#1", 1), ("#2", 2)]
