"""The fault library's API: registry, validation errors, application errors, JSON Schema, docs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import Message, Role

from mockoss.harmony import Completion, faults
from mockoss.harmony.faults import (
    FAULTS,
    FaultError,
    apply_fault,
    fault_json_schema,
    render_completion_text,
    validate_fault,
)

REQUIRED_KINDS = {
    "invented_recipient", "duplicate_recipient", "space_after_constrain", "extra_content_type",
    "constrain_as_recipient", "control_tokens_in_recipient", "tool_call_as_text", "stray_token_after_end",
    "missing_end", "doubled_channel", "empty_channel", "return_instead_of_call", "arguments_not_json",
    "truncated", "analysis_only", "special_tokens_stripped",
}  # fmt: skip


def _message(channel: str, content: str, recipient: str | None = None) -> Message:
    message = Message.from_role_and_content(Role.ASSISTANT, content).with_channel(channel)
    return message.with_recipient(recipient) if recipient else message


TOOL = [_message("analysis", "Need to list files."), _message("commentary", '{"cmd":["ls"]}', "functions.bash")]
ANSWER = [_message("analysis", "User asks 2+2."), _message("final", "2 + 2 = 4.")]


def test_registry_is_read_only_and_named_in_snake_case() -> None:
    assert REQUIRED_KINDS <= set(FAULTS)
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", name) for name in FAULTS)
    assert all(name in (faults.__doc__ or "") for name in FAULTS)  # the module docstring lists them all
    with pytest.raises(TypeError):
        FAULTS["new"] = FAULTS["truncated"]  # type: ignore[index]


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_every_kind_documents_params_shape_parser_and_source(name: str) -> None:
    kind = FAULTS[name]
    assert kind.name == name and kind.summary == kind.doc.splitlines()[0]
    assert kind.sources and all(re.search(r"[\w-]+/[\w.-]+", source) for source in kind.sources)
    assert "Parser" in kind.doc and "Shape" in kind.doc and ("Params:" in kind.doc or "No params" in kind.doc)
    for param in kind.params:
        assert f"``{param.name}``" in kind.doc, f"{name}: param {param.name} undocumented"


def test_validate_fills_defaults_and_leaves_the_spec_alone() -> None:
    spec = {"kind": "truncated", "at": "header"}
    assert validate_fault(spec) == {
        "kind": "truncated",
        "at": "header",
        "tokens": None,
        "message": None,
        "recipient_position": "channel",
    }
    assert spec == {"kind": "truncated", "at": "header"}
    assert validate_fault({"kind": "analysis_only"}) == {
        "kind": "analysis_only",
        "stop_token": "<|end|>",
        "recipient_position": "channel",
    }


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        (["truncated"], "fault", "fault: expected a mapping with 'kind' (one of: invented_recipient, "),
        ({"tokens": 3}, "kind", "kind: missing; valid kinds: invented_recipient, duplicate_recipient, "),
        ({"kind": "truncate"}, "kind", "kind: unknown fault kind 'truncate'; valid kinds: invented_recipient, "),
        ({"kind": 3}, "kind", "kind: unknown fault kind 3; valid kinds: "),
        (
            {"kind": "truncated", "colour": 1},
            "colour",
            "colour: unknown parameter of truncated; valid parameters: at, tokens, message, recipient_position",
        ),
        (
            {"kind": "analysis_only", "message": 1},
            "message",
            "message: unknown parameter of analysis_only; valid parameters: stop_token, recipient_position",
        ),
        ({"kind": "truncated", "tokens": "3"}, "tokens", "tokens: expected an integer >= 0 or null, got '3'"),
        ({"kind": "truncated", "tokens": True}, "tokens", "tokens: expected an integer >= 0 or null, got True"),
        ({"kind": "truncated", "tokens": -1}, "tokens", "tokens: expected an integer >= 0 or null, got -1"),
        ({"kind": "truncated", "at": "middle"}, "at", "at: expected one of 'header', 'content', got 'middle'"),
        ({"kind": "truncated", "message": "last"}, "message", "message: expected an integer or null, got 'last'"),
        (
            {"kind": "empty_channel", "recipient_position": "header"},
            "recipient_position",
            "recipient_position: expected one of 'channel', 'role', got 'header'",
        ),
        (
            {"kind": "arguments_not_json", "arguments": '{"a": 1}'},
            "arguments",
            "arguments: '{\"a\": 1}' is valid JSON; give arguments that are not",
        ),
        ({"kind": "invented_recipient", "recipient": " "}, "recipient", "recipient: must not be empty"),
        (
            {"kind": "analysis_only", "stop_token": "<|call|>"},
            "stop_token",
            "stop_token: expected one of '<|end|>', '<|return|>', got '<|call|>'",
        ),
    ],
)
def test_validation_errors_name_the_field_and_the_valid_choices(spec: Any, field: str, message: str) -> None:
    with pytest.raises(FaultError) as caught:
        validate_fault(spec)
    assert isinstance(caught.value, ValueError)
    assert caught.value.field == field
    assert str(caught.value).startswith(message)
    if field == "kind":
        assert all(name in str(caught.value) for name in FAULTS)


@pytest.mark.parametrize(
    ("messages", "spec", "message"),
    [
        (TOOL, {"kind": "truncated", "message": 2}, "message: index 2 is out of range for 2 message(s)"),
        (
            ANSWER,
            {"kind": "duplicate_recipient"},
            "message: duplicate_recipient: message 1 (channel 'final') has no recipient; this fault needs a tool call",
        ),
        (
            TOOL,
            {"kind": "missing_start", "message": 0},
            "message: missing_start: message 0 is the first message, which has no <|start|> (the prompt supplies it)",
        ),
        (
            TOOL,
            {"kind": "missing_start", "drop": "channel", "recipient_position": "role"},
            "drop: 'channel': message 1's header ' to=functions.bash<|channel|>commentary' does not begin with <|channel|>",
        ),
        (
            TOOL,
            {"kind": "missing_end", "message": -1},
            "message: missing_end: message 1 is the last message; no <|start|> follows it",
        ),
        (
            ANSWER[1:],
            {"kind": "missing_end"},
            "message: missing_end: no message ends with <|end|> before another message",
        ),
        (TOOL, {"kind": "truncated", "tokens": 99}, "tokens: message 1 has only 6 content token(s), cannot keep 99"),
        (
            TOOL,
            {"kind": "truncated", "at": "header", "tokens": 0, "message": 0},
            "tokens: keeping 0 header token(s) of message 0 leaves an empty completion",
        ),
        (
            [_message("final", "🦜")],
            {"kind": "truncated", "tokens": 1},
            "tokens: cutting after 1 content token(s) splits a character; choose another count",
        ),
        (
            [_message("commentary", "ls", "functions.bash")],
            {"kind": "tool_call_as_text", "form": "json"},
            "message: tool_call_as_text: message 0 has arguments 'ls', not a JSON object; form 'json' merges them with the name",
        ),
        (
            [_message("commentary", "[1]", "functions.x")],
            {"kind": "arguments_not_json"},
            "arguments: cannot derive non-JSON arguments from '[1]'; give 'arguments'",
        ),
        (
            [_message("commentary", '{"n": 1}', "functions.x")],
            {"kind": "arguments_not_json"},
            "arguments: cannot derive non-JSON arguments from '{\"n\": 1}'; give 'arguments'",
        ),
        (
            ANSWER[1:],
            {"kind": "analysis_only"},
            "messages: analysis_only needs at least one analysis message without a recipient",
        ),
        (
            [_message("final", "x").with_channel(None)],
            {"kind": "doubled_channel"},
            "message: doubled_channel: message 0 has no channel to double",
        ),
        ([], {"kind": "empty_channel"}, "messages: a completion needs at least one message"),
        (
            [Message.from_role_and_content(Role.USER, "hi")],
            {"kind": "empty_channel"},
            "messages[0]: a completion holds assistant messages only, got role 'user'",
        ),
    ],
)
def test_apply_errors_say_which_message_and_why(messages: list[Message], spec: dict[str, Any], message: str) -> None:
    with pytest.raises(FaultError) as caught:
        apply_fault(messages, spec)
    assert str(caught.value) == message


def test_targets_default_to_the_tool_call_and_can_be_chosen() -> None:
    two_calls = [*TOOL, _message("final", "done")]
    # the last message with a recipient wins over a later final message
    assert apply_fault(two_calls, {"kind": "return_instead_of_call"}).count("<|return|>") == 2
    assert apply_fault(ANSWER, {"kind": "stray_token_after_end", "message": -2}).startswith(
        "<|channel|>analysis<|message|>User asks 2+2.<|end|><|return|><|start|>"
    )
    assert (
        apply_fault(TOOL, {"kind": "truncated", "message": -2, "tokens": 2}) == "<|channel|>analysis<|message|>Need to"
    )


def test_faults_are_deterministic_and_never_mutate_the_messages() -> None:
    before = [m.to_dict() for m in TOOL]
    for name in FAULTS:
        try:
            first = apply_fault(TOOL, {"kind": name})
        except FaultError:
            continue
        assert apply_fault(TOOL, {"kind": name}) == first
    assert [m.to_dict() for m in TOOL] == before


def test_json_schema_describes_every_kind_and_param() -> None:
    schema = fault_json_schema()
    json.dumps(schema)  # serializable as is
    assert schema["properties"]["kind"]["enum"] == list(FAULTS)
    branches = {b["properties"]["kind"]["const"]: b for b in schema["oneOf"]}
    assert list(branches) == list(FAULTS)
    for name, branch in branches.items():
        kind = FAULTS[name]
        assert branch["additionalProperties"] is False and branch["required"] == ["kind"]
        assert branch["description"] == kind.summary and branch["x-sources"] == list(kind.sources)
        assert list(branch["properties"]) == ["kind", *(p.name for p in kind.all_params)]
        defaults = {k: v["default"] for k, v in branch["properties"].items() if k != "kind"}
        assert validate_fault({"kind": name, **defaults}) == {"kind": name, **defaults}
    truncated = branches["truncated"]["properties"]
    assert truncated["tokens"] == {
        "type": ["integer", "null"],
        "minimum": 0,
        "default": None,
        "description": truncated["tokens"]["description"],
    }
    assert truncated["at"]["enum"] == ["header", "content"]
    assert branches["analysis_only"]["properties"].keys() == {"kind", "stop_token", "recipient_position"}


def test_fault_modules_stay_small() -> None:
    for path in Path(faults.__file__).parent.glob("faults*.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) < 400, path.name


CANONICAL_TOOL_CALL = [  # openai/harmony docs/format.md, function calling
    _message("analysis", "Need to use function get_weather."),
    _message("commentary", '{"location":"San Francisco"}', "functions.get_weather").with_content_type(
        "<|constrain|>json"
    ),
]


def test_recipient_positions_against_the_renderer_and_the_docs() -> None:
    assert render_completion_text(CANONICAL_TOOL_CALL, "role") == Completion.from_messages(CANONICAL_TOOL_CALL).text
    assert render_completion_text(CANONICAL_TOOL_CALL) == (
        "<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant<|channel|>commentary"
        ' to=functions.get_weather <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>'
    )
    for position in ("channel", "role"):  # both parse to the same messages
        parsed = Completion.from_text(render_completion_text(CANONICAL_TOOL_CALL, position)).trace()
        assert [m.to_dict() for m in parsed.messages] == [m.to_dict() for m in CANONICAL_TOOL_CALL]


@pytest.mark.parametrize(
    "spec", [{"kind": "truncated", "tokens": 3}, {"kind": "truncated", "at": "header", "tokens": 5}]
)
def test_truncation_cuts_where_max_tokens_would(spec: dict[str, Any]) -> None:
    clean = Completion.from_messages(CANONICAL_TOOL_CALL)
    cut = Completion.from_text(apply_fault(CANONICAL_TOOL_CALL, {**spec, "recipient_position": "role"}))
    assert cut.tokens == clean.tokens[: len(cut.tokens)]
    limited, alone = clean.trace(max_tokens=len(cut.tokens)), cut.trace()
    assert limited.messages == alone.messages and limited.eos_messages == alone.eos_messages
    assert limited.eos_error == alone.eos_error
    assert clean.emit(len(cut.tokens)).finish_reason == "length"
    assert cut.emit().finish_reason == "stop"  # the text alone carries no finish reason (documented)
