"""Every fault kind: the exact raw text it produces, and what openai-harmony's real parser does with it."""

from __future__ import annotations

from typing import Any

import pytest
from openai_harmony import Message, Role

from mockoss.harmony import Completion
from mockoss.harmony.faults import FAULTS, apply_fault


def _message(channel: str, content: str, recipient: str | None = None, content_type: str | None = None) -> Message:
    message = Message.from_role_and_content(Role.ASSISTANT, content).with_channel(channel)
    if recipient is not None:
        message = message.with_recipient(recipient)
    if content_type is not None:
        message = message.with_content_type(content_type)
    return message


ARGS = '{"cmd":["ls"]}'
COMPLETIONS = {
    "tool": (
        _message("analysis", "Need to list files."),
        _message("commentary", ARGS, "functions.bash", "<|constrain|>json"),
    ),
    "answer": (_message("analysis", "User asks 2+2."), _message("final", "2 + 2 = 4.")),
}

THINK = "<|channel|>analysis<|message|>Need to list files.<|end|>"
ASK = "<|channel|>analysis<|message|>User asks 2+2.<|end|>"
CALL_HEADER = "<|channel|>commentary to=functions.bash <|constrain|>json"
HEADER_ERROR = 'unexpected tokens remaining in message header: Some("to=functions.bash")'
EOS_IN_HEADER = "Unexpected EOS while waiting for message header to complete"


def _start_error(token: int) -> str:
    return f"Unexpected token {token} while expecting start token 200006"


def _m(
    channel: str | None,
    text: str,
    recipient: str | None = None,
    content_type: str | None = None,
    *,
    role: str = "assistant",
    name: str | None = None,
) -> tuple[Any, ...]:
    return (role, name, channel, recipient, content_type, text)


THOUGHT = _m("analysis", "Need to list files.")
ASKED = _m("analysis", "User asks 2+2.")
CALLED = _m("commentary", ARGS, "functions.bash", "<|constrain|>json")
ANSWERED = _m("final", "2 + 2 = 4.")


def _ok(*messages: tuple[Any, ...]) -> tuple[Any, ...]:
    return (None, list(messages), None, [])


def _error(error: str, *messages: tuple[Any, ...]) -> tuple[Any, ...]:
    return (error, list(messages), None, [])


def _by_library(oss: tuple[Any, ...], v0_0_8: tuple[Any, ...]) -> dict[str, tuple[Any, ...]]:
    """Outcomes that differ between the libraries: a header holding ``<|channel|>`` twice.
    oss-harmony 0.0.11 cuts every ``<|channel|>NAME`` out of the header; 0.0.8 only the first
    (openai/harmony@ec7606d:src/encoding.rs ``parse_header_from_string``). Both values were measured
    with the two wheels from the package index."""
    return {"oss-harmony": oss, "openai-harmony-0.0.8": v0_0_8}


def _at_eos(messages: list[tuple[Any, ...]], eos_error: str | None, *flushed: tuple[Any, ...]) -> tuple[Any, ...]:
    return (None, messages, eos_error, list(flushed))


def _outcome(text: str, library: str = "oss-harmony") -> tuple[Any, ...]:
    """(error, completed messages, process_eos error, messages flushed at EOS) from the real parser
    (oss-harmony, installed) or openai-harmony 0.0.8's (emulated, mockoss.harmony.library)."""
    trace = Completion.from_text(text).trace(library=library)

    def fields(m: Message) -> tuple[Any, ...]:
        return _m(
            m.channel,
            "".join(c.text for c in m.content),
            m.recipient,
            m.content_type,
            role=m.author.role.value,
            name=m.author.name,
        )

    return (trace.error, [fields(m) for m in trace.messages], trace.eos_error, [fields(m) for m in trace.eos_messages])


S = "<|start|>assistant"
CASES = [
    # recipient invented with no tools
    (
        "tool",
        {"kind": "invented_recipient"},
        f"{THINK}{S}<|channel|>commentary to=tool.mcp <|constrain|>json<|message|>{ARGS}<|call|>",
        _ok(THOUGHT, _m("commentary", ARGS, "tool.mcp", "<|constrain|>json")),
    ),
    (
        "answer",
        {"kind": "invented_recipient"},
        f"{ASK}{S}<|channel|>commentary to=tool.mcp<|message|>2 + 2 = 4.<|call|>",
        _ok(ASKED, _m("commentary", "2 + 2 = 4.", "tool.mcp")),
    ),
    # headers with extra tokens
    (
        "tool",
        {"kind": "duplicate_recipient"},
        f"{THINK}{S}<|channel|>commentary to=functions.bash to=functions.bash <|constrain|>json<|message|>{ARGS}<|call|>",
        _error(HEADER_ERROR, THOUGHT),
    ),
    (
        "tool",
        {"kind": "duplicate_recipient", "recipient": "functions.ls", "recipient_position": "role"},
        f"{THINK}{S} to=functions.bash to=functions.ls<|channel|>commentary <|constrain|>json<|message|>{ARGS}<|call|>",
        _error(HEADER_ERROR, THOUGHT),
    ),
    (
        "tool",
        {"kind": "space_after_constrain"},
        f"{THINK}{S}<|channel|>commentary to=functions.bash <|constrain|> json<|message|>{ARGS}<|call|>",
        _error(HEADER_ERROR, THOUGHT),
    ),
    (
        "answer",
        {"kind": "space_after_constrain"},
        f"{ASK}{S}<|channel|>final <|constrain|> json<|message|>2 + 2 = 4.<|return|>",
        _ok(ASKED, _m("final", "2 + 2 = 4.", "<|constrain|>", "json")),
    ),
    (
        "tool",
        {"kind": "extra_content_type"},
        f"{THINK}{S}<|channel|>commentary to=functions.bash code <|constrain|>json<|message|>{ARGS}<|call|>",
        _error(HEADER_ERROR, THOUGHT),
    ),
    # <|constrain|> read as the recipient
    (
        "tool",
        {"kind": "constrain_as_recipient"},
        f"{THINK}{S}<|channel|>commentary <|constrain|>json<|message|>{ARGS}<|call|>",
        _ok(THOUGHT, _m("commentary", ARGS, "<|constrain|>json")),
    ),
    (
        "answer",
        {"kind": "constrain_as_recipient"},
        f"{ASK}{S}<|channel|>final <|constrain|>json<|message|>2 + 2 = 4.<|return|>",
        _ok(ASKED, _m("final", "2 + 2 = 4.", "<|constrain|>json")),
    ),
    (
        "answer",
        {"kind": "constrain_as_recipient", "content_type": "json"},
        f"{ASK}{S}<|channel|>final json<|message|>2 + 2 = 4.<|return|>",
        _ok(ASKED, _m("final", "2 + 2 = 4.", "json")),
    ),
    # control tokens glued to the tool name
    (
        "tool",
        {"kind": "control_tokens_in_recipient"},
        f"{THINK}{S}<|channel|>commentary to=functions.bash<|channel|>commentary <|constrain|>json<|message|>{ARGS}<|call|>",
        _by_library(_ok(THOUGHT, CALLED), _ok(THOUGHT, _m("commentary", ARGS, "functions.bash<|channel|>commentary", "<|constrain|>json"))),
    ),
    (
        "tool",
        {"kind": "control_tokens_in_recipient", "recipient_position": "role"},
        f"{THINK}{S} to=functions.bash<|channel|>commentary<|channel|>commentary <|constrain|>json<|message|>{ARGS}<|call|>",
        _by_library(_ok(THOUGHT, CALLED), _ok(THOUGHT, _m("commentary", ARGS, "functions.bash<|channel|>commentary", "<|constrain|>json"))),
    ),
    # doubled and empty channels
    (
        "tool",
        {"kind": "doubled_channel"},
        f"{THINK}{S}<|channel|>commentary<|channel|>commentary to=functions.bash <|constrain|>json<|message|>{ARGS}<|call|>",
        _by_library(
            _ok(THOUGHT, CALLED),
            _ok(
                THOUGHT,
                _m(
                    "commentary",
                    ARGS,
                    "functions.bash",
                    "<|constrain|>json",
                    role="tool",
                    name="assistant<|channel|>commentary",
                ),
            ),
        ),
    ),
    (
        "answer",
        {"kind": "doubled_channel"},
        f"{ASK}{S}<|channel|>final<|channel|>final<|message|>2 + 2 = 4.<|return|>",
        _by_library(_ok(ASKED, ANSWERED), _error("Unknown role: assistant<|channel|>final", ASKED)),
    ),
    (
        "answer",
        {"kind": "doubled_channel", "message": 0},
        f"<|channel|>analysis<|channel|>analysis<|message|>User asks 2+2.<|end|>{S}<|channel|>final<|message|>2 + 2 = 4.<|return|>",
        _by_library(_ok(ASKED, ANSWERED), _ok(_m("analysis", "User asks 2+2.", "<|channel|>analysis"), ANSWERED)),
    ),
    (
        "tool",
        {"kind": "empty_channel"},
        f"{THINK}{S} to=functions.bash<|channel|> <|constrain|>json<|message|>{ARGS}<|call|>",
        _error("channel marker present but no channel value found in header", THOUGHT),
    ),
    (
        "answer",
        {"kind": "empty_channel"},
        f"{ASK}{S}<|channel|><|message|>2 + 2 = 4.<|return|>",
        _error("channel marker present but no channel value found in header", ASKED),
    ),
    # tool calls leaked as final text
    (
        "tool",
        {"kind": "tool_call_as_text"},
        f"{THINK}{S}<|channel|>final<|message|>to=functions.bash {ARGS}<|return|>",
        _ok(THOUGHT, _m("final", f"to=functions.bash {ARGS}")),
    ),
    (
        "tool",
        {"kind": "tool_call_as_text", "form": "role"},
        f"{THINK}{S}<|channel|>final<|message|>assistant to=functions.bash {ARGS}<|return|>",
        _ok(THOUGHT, _m("final", f"assistant to=functions.bash {ARGS}")),
    ),
    (
        "tool",
        {"kind": "tool_call_as_text", "form": "channel"},
        f"{THINK}{S}<|channel|>final<|message|><|channel|>commentary to=functions.bash {ARGS}<|return|>",
        _ok(THOUGHT, _m("final", f"<|channel|>commentary to=functions.bash {ARGS}")),
    ),
    (
        "tool",
        {"kind": "tool_call_as_text", "form": "json"},
        f'{THINK}{S}<|channel|>final<|message|>{{"name": "bash", "cmd": ["ls"]}}<|return|>',
        _ok(THOUGHT, _m("final", '{"name": "bash", "cmd": ["ls"]}')),
    ),
    # framing
    (
        "tool",
        {"kind": "stray_token_after_end"},
        f"{THINK}{S}{CALL_HEADER}<|message|>{ARGS}<|end|><|call|>",
        _error(_start_error(200012), THOUGHT, CALLED),
    ),
    (
        "answer",
        {"kind": "stray_token_after_end"},
        f"{ASK}{S}<|channel|>final<|message|>2 + 2 = 4.<|end|><|return|>",
        _error(_start_error(200002), ASKED, ANSWERED),
    ),
    (
        "tool",
        {"kind": "stray_token_after_end", "message": 0, "text": "garbage"},
        f"{THINK}garbage{S}{CALL_HEADER}<|message|>{ARGS}<|call|>",
        _error(_start_error(6802), THOUGHT),
    ),
    (
        "tool",
        {"kind": "missing_end"},
        f"<|channel|>analysis<|message|>Need to list files.{S}{CALL_HEADER}<|message|>{ARGS}<|call|>",
        _ok(_m("analysis", f"Need to list files.{S}{CALL_HEADER}<|message|>{ARGS}")),
    ),
    (
        "answer",
        {"kind": "missing_end"},
        f"<|channel|>analysis<|message|>User asks 2+2.{S}<|channel|>final<|message|>2 + 2 = 4.<|return|>",
        _ok(_m("analysis", f"User asks 2+2.{S}<|channel|>final<|message|>2 + 2 = 4.")),
    ),
    (
        "tool",
        {"kind": "missing_start"},
        f"{THINK}{CALL_HEADER}<|message|>{ARGS}<|call|>",
        _error(_start_error(200005), THOUGHT),
    ),
    (
        "tool",
        {"kind": "missing_start", "drop": "start"},
        f"{THINK}assistant{CALL_HEADER}<|message|>{ARGS}<|call|>",
        _error(_start_error(173781), THOUGHT),
    ),
    (
        "tool",
        {"kind": "missing_start", "drop": "channel"},
        f"{THINK}commentary to=functions.bash <|constrain|>json<|message|>{ARGS}<|call|>",
        _error(_start_error(12606), THOUGHT),
    ),
    # tool-call ending and arguments
    (
        "tool",
        {"kind": "return_instead_of_call"},
        f"{THINK}{S}{CALL_HEADER}<|message|>{ARGS}<|return|>",
        _ok(THOUGHT, CALLED),
    ),
    (
        "tool",
        {"kind": "arguments_not_json"},
        f"{THINK}{S}{CALL_HEADER}<|message|>ls\n<|call|>",
        _ok(THOUGHT, _m("commentary", "ls\n", "functions.bash", "<|constrain|>json")),
    ),
    (
        "tool",
        {"kind": "arguments_not_json", "arguments": "ls -R\n"},
        f"{THINK}{S}{CALL_HEADER}<|message|>ls -R\n<|call|>",
        _ok(THOUGHT, _m("commentary", "ls -R\n", "functions.bash", "<|constrain|>json")),
    ),
    # cut off by max_tokens
    (
        "tool",
        {"kind": "truncated"},
        f'{THINK}{S}{CALL_HEADER}<|message|>{{"cmd":["',
        _at_eos([THOUGHT], None, _m("commentary", '{"cmd":["', "functions.bash", "<|constrain|>json")),
    ),
    (
        "answer",
        {"kind": "truncated", "at": "content"},
        f"{ASK}{S}<|channel|>final<|message|>2 + 2",
        _at_eos([ASKED], None, _m("final", "2 + 2")),
    ),
    (
        "tool",
        {"kind": "truncated", "at": "header"},
        f"{THINK}{S}<|channel|>commentary to=",
        _at_eos([THOUGHT], EOS_IN_HEADER),
    ),
    (
        "tool",
        {"kind": "truncated", "at": "header", "tokens": 7},
        f"{THINK}{S}<|channel|>commentary to=functions",
        _at_eos([THOUGHT], EOS_IN_HEADER),
    ),
    (
        "tool",
        {"kind": "truncated", "at": "header", "tokens": 0},
        f"{THINK}<|start|>",
        _at_eos([THOUGHT], EOS_IN_HEADER),
    ),
    ("answer", {"kind": "truncated", "at": "header", "message": 0}, "<|channel|>", _at_eos([], EOS_IN_HEADER)),
    # analysis only; special tokens stripped
    ("tool", {"kind": "analysis_only"}, THINK, _ok(THOUGHT)),
    (
        "answer",
        {"kind": "analysis_only", "stop_token": "<|return|>"},
        "<|channel|>analysis<|message|>User asks 2+2.<|return|>",
        _ok(ASKED),
    ),
    (
        "tool",
        {"kind": "special_tokens_stripped"},
        f"analysisNeed to list files.assistantcommentary to=functions.bash json{ARGS}",
        _at_eos([], EOS_IN_HEADER),
    ),
    (
        "answer",
        {"kind": "special_tokens_stripped"},
        "analysisUser asks 2+2.assistantfinal2 + 2 = 4.",
        _at_eos([], EOS_IN_HEADER),
    ),
]


@pytest.mark.parametrize(
    ("completion", "spec", "text", "parsed"),
    [pytest.param(*case, id=f"{case[1]['kind']}-{case[0]}-{i}") for i, case in enumerate(CASES)],
)
def test_fault_text_and_real_parser_outcome(
    completion: str, spec: dict[str, Any], text: str, parsed: tuple[Any, ...]
) -> None:
    produced = apply_fault(COMPLETIONS[completion], spec)
    assert produced == text
    if isinstance(parsed, dict):
        assert {library: _outcome(produced, library) for library in parsed} == parsed
    else:
        assert _outcome(produced) == parsed
        assert _outcome(produced, "openai-harmony-0.0.8") == parsed  # one <|channel|> a header: no difference


def test_every_registered_kind_has_a_case() -> None:
    assert {case[1]["kind"] for case in CASES} == set(FAULTS)


def test_header_errors_are_raised_at_the_message_token() -> None:
    completion = Completion.from_text(apply_fault(COMPLETIONS["tool"], {"kind": "duplicate_recipient"}))
    trace = completion.trace()
    assert completion.tokens[trace.error_index] == 200008
    assert trace.pending_tokens[:2] == (200006, 173781)
