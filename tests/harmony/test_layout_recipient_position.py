"""The recipient-in-channel layout of :mod:`mockoss.harmony.layout`: the tokens gpt-oss writes, the same
as oss-harmony's renderer and the fault library's ``recipient_position: channel``; the default
(recipient after the role, openai-harmony 0.0.8's renderer) unchanged."""

from __future__ import annotations

import pytest
from openai_harmony import Message, Role

from mockoss.harmony import Completion
from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.faults import apply_fault, render_completion_text
from mockoss.harmony.layout import render_assistant_message


def _msg(channel: str | None, content: str, recipient: str | None = None, content_type: str | None = None) -> Message:
    message = Message.from_role_and_content(Role.ASSISTANT, content)
    if channel is not None:
        message = message.with_channel(channel)
    if recipient is not None:
        message = message.with_recipient(recipient)
    if content_type is not None:
        message = message.with_content_type(content_type)
    return message


ANALYSIS = _msg("analysis", "Need to use function get_weather.")
CALL = _msg("commentary", '{"location":"San Francisco"}', "functions.get_weather", "<|constrain|>json")
#: openai/harmony@ec7606d:docs/format.md, "Receiving tool calls" (after the prompt's <|start|>assistant).
DOCS_EXAMPLE = (
    "<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant<|channel|>commentary "
    'to=functions.get_weather <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>'
)


def test_channel_form_is_the_docs_function_call_example():
    completion = Completion.from_messages([ANALYSIS, CALL], ["role", "channel"])
    assert completion.text == DOCS_EXAMPLE
    assert completion.tokens == Completion.from_text(DOCS_EXAMPLE).tokens


def test_channel_form_tokens_are_oss_harmonys_render():
    # oss-harmony 0.0.11 (the installed library, current vLLM's) renders the recipient after the channel.
    assert render_assistant_message(CALL, "channel") == list(load_encoding().render(CALL))


@pytest.mark.parametrize("position", ["channel", "role"])
def test_the_fault_library_renders_through_the_same_layout(position):
    messages = [ANALYSIS, CALL]
    positions = ["role", position]
    assert Completion.from_messages(messages, positions).text == render_completion_text(messages, position)
    assert (
        Completion.from_messages(messages, positions).tokens
        == Completion.from_text(render_completion_text(messages, position)).tokens
    )


def test_the_default_is_unchanged_role_position():
    text = Completion.from_messages([ANALYSIS, CALL]).text
    assert text == Completion.from_messages([ANALYSIS, CALL], ["role", "role"]).text
    assert "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>" in text


def test_fault_output_is_unchanged_by_the_move_into_the_layout():
    # Before: faults_core swapped ' to=R' behind '<|channel|>C' in the decoded header.
    text = apply_fault([ANALYSIS, CALL], {"kind": "duplicate_recipient"})
    assert "<|start|>assistant<|channel|>commentary to=functions.get_weather to=functions.get_weather" in text


@pytest.mark.parametrize(
    "message",
    [
        _msg(None, "{}", "functions.x", "<|constrain|>json"),  # no channel: stays after the role
        _msg("final", "Hi"),  # no recipient
        _msg("commentary", "{}", "all"),  # `all` is not rendered
    ],
)
def test_messages_without_both_keep_one_layout(message):
    assert render_assistant_message(message, "channel") == render_assistant_message(message, "role")


def test_a_bad_position_is_refused():
    with pytest.raises(ValueError, match="recipient_position: expected 'role' or 'channel', got 'header'"):
        render_assistant_message(CALL, "header")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="recipient_positions: 1 for 2 message"):
        Completion.from_messages([ANALYSIS, CALL], ["channel"])
