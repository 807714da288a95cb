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


#: ``[ANALYSIS, CALL]`` in each layout, text and token ids pinned (the fault library and
#: ``Completion.from_messages`` both render through :mod:`mockoss.harmony.layout` since 258b252, so
#: comparing them with each other cannot fail). Measured on 258b252^, whose fault library swapped
#: the decoded header itself (``render_completion_text``, both positions) and whose
#: ``Completion.from_messages`` gave the role ids; the channel text is docs/format.md's example, and
#: its message ids are oss-harmony 0.0.11's ``render`` (checked below).
PINNED = {
    "role": (
        (
            "<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant "
            'to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>'
        ),
        # <|channel|> analysis <|message|> Need… <|end|> <|start|> assistant ' to' '=' functions
        # .get _weather <|channel|> comment ary ' ' <|constrain|> json <|message|> {"location"…} <|call|>
        (200005, 35644, 200008, 23483, 316, 1199, 1114, 717, 170154, 13, 200007, 200006, 173781,
         316, 28, 44580, 775, 170154, 200005, 12606, 815, 220, 200003, 4108, 200008,
         10848, 7693, 7534, 28499, 18826, 18583, 200012),
    ),
    "channel": (
        DOCS_EXAMPLE,
        # … <|start|> assistant <|channel|> comment ary ' to' '=' functions .get _weather ' ' <|constrain|> json …
        (200005, 35644, 200008, 23483, 316, 1199, 1114, 717, 170154, 13, 200007, 200006, 173781,
         200005, 12606, 815, 316, 28, 44580, 775, 170154, 220, 200003, 4108, 200008,
         10848, 7693, 7534, 28499, 18826, 18583, 200012),
    ),
}  # fmt: skip


@pytest.mark.parametrize("position", ["channel", "role"])
def test_the_fault_library_and_the_completion_render_the_pinned_layout(position):
    text, ids = PINNED[position]
    assert render_completion_text([ANALYSIS, CALL], position) == text  # the fault library's clean text
    assert Completion.from_text(text).tokens == ids
    completion = Completion.from_messages([ANALYSIS, CALL], ["role", position])
    assert (completion.text, completion.tokens) == (text, ids)


def test_the_pinned_ids_are_the_harmony_librarys_render():
    # The installed library (oss-harmony 0.0.11) renders the analysis message as pinned, and the call
    # in the channel layout; the pinned completion drops the first message's <|start|>assistant.
    encoding = load_encoding()
    _, role_ids = PINNED["role"]
    _, channel_ids = PINNED["channel"]
    assert [200006, 173781, *channel_ids[:11]] == encoding.render(ANALYSIS)
    assert list(channel_ids[11:]) == encoding.render(CALL)
    assert role_ids[:13] == channel_ids[:13] and role_ids[-8:] == channel_ids[-8:]  # only the header moves


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
