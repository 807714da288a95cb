"""`fault:` in a completion: checked at load, applied once at compile time, or per request when templated."""

import json

import pytest
from openai_harmony import Message, Role

from mockoss.harmony.faults import apply_fault
from mockoss.scenario.loader import ScenarioError, scenario_from_data
from mockoss.server.core import MockServer

CALL = [
    {"channel": "analysis", "content": "Need ls."},
    {
        "channel": "commentary",
        "recipient": "functions.terminal",
        "content_type": "<|constrain|>json",
        "content": '{"command":"ls"}',
    },
]


def _load(completion):
    return scenario_from_data({"steps": [{"completion": completion}]}, name="t", default_version=True)


def test_fault_is_applied_at_compile_time_to_the_rendered_messages():
    step = _load({"messages": CALL, "fault": {"kind": "duplicate_recipient"}}).steps[0]
    messages = [
        Message.from_role_and_content(Role.ASSISTANT, "Need ls.").with_channel("analysis"),
        Message.from_role_and_content(Role.ASSISTANT, '{"command":"ls"}')
        .with_channel("commentary")
        .with_recipient("functions.terminal")
        .with_content_type("<|constrain|>json"),
    ]
    assert step.template is None
    assert step.completion.text == apply_fault(messages, {"kind": "duplicate_recipient"})
    assert step.completion.text == (
        "<|channel|>analysis<|message|>Need ls.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.terminal to=functions.terminal <|constrain|>json<|message|>{"command":"ls"}<|call|>'
    )
    assert (
        step.completion.trace().error == 'unexpected tokens remaining in message header: Some("to=functions.terminal")'
    )


def test_the_faulted_completion_reaches_the_client_as_the_server_surfaces_it():
    server = MockServer(scenario=_load({"messages": CALL, "fault": {"kind": "duplicate_recipient"}}))
    body = {
        "model": "openai/gpt-oss-20b",
        "messages": [{"role": "user", "content": "ls"}],
        "tools": [{"type": "function", "function": {"name": "terminal"}}],
    }
    reply = server.handle("chat", json.dumps(body).encode(), {})
    # vLLM 0.32/0.33 skip the tokens that raise (HarmonyParser.process_chunk,
    # vllm-project/vllm@v0.32.0:vllm/parser/harmony.py): HTTP 200, the call dropped.
    assert reply.status == 200
    assert "tool_calls" not in json.loads(reply.body)["choices"][0]["message"]
    assert "to=functions.terminal to=functions.terminal" in server.requests[0].completion
    raising = MockServer(scenario=_load({"messages": CALL, "fault": {"kind": "duplicate_recipient"}}), switches={"harmony_errors": "raise"})
    reply = raising.handle("chat", json.dumps(body).encode(), {})
    assert reply.status >= 400
    assert "unexpected tokens remaining in message header" in json.loads(reply.body)["error"]["message"]


def test_fault_with_templated_messages_is_applied_per_request():
    messages = [CALL[0], {**CALL[1], "content": '{"command": {{ request.messages[-1].content | json }}}'}]
    scenario = _load({"messages": messages, "fault": {"kind": "duplicate_recipient"}})
    assert scenario.steps[0].template is not None
    server = MockServer(scenario=scenario)
    body = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "pwd"}]}
    server.handle("chat", json.dumps(body).encode(), {})
    assert server.requests[0].completion.endswith(
        'to=functions.terminal to=functions.terminal <|constrain|>json<|message|>{"command": "pwd"}<|call|>'
    )


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        (
            {"raw": "<|channel|>final<|message|>x<|return|>", "fault": {"kind": "truncated"}},
            "<inline>: steps[0].completion: Value error, 'fault' applies to 'messages'; 'raw' text is used verbatim",
        ),
        (
            {"messages": CALL, "fault": {"kind": "truncated", "at": "middle"}},
            "<inline>: steps[0].completion.fault.at: expected one of 'header', 'content', got 'middle'",
        ),
        (
            {"messages": CALL, "fault": {"tokens": 1}},
            "<inline>: steps[0].completion.fault.kind: missing; valid kinds: ",
        ),
        (
            {"messages": [{"channel": "final", "content": "hi"}], "fault": {"kind": "duplicate_recipient"}},
            "<inline>: steps[0].completion.fault.message: duplicate_recipient: message 0 (channel 'final') has no recipient; this fault needs a tool call",
        ),
    ],
)
def test_bad_faults_are_load_errors(completion, expected):
    with pytest.raises(ScenarioError) as info:
        _load(completion)
    assert str(info.value).startswith(expected)
