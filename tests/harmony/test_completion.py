"""Structured completions render in openai-harmony 0.0.8's layout, token for token, whichever library is installed."""

import itertools

import pytest
from openai_harmony import Message, Role

from mockoss.harmony import Completion, load_encoding

CHANNELS = ["analysis", "commentary", "final", None]
RECIPIENTS = [None, "functions.get_weather", "browser.search", "python"]
CONTENT_TYPES = [None, "<|constrain|>json", "json", "code"]


def _message(channel, recipient, content_type, text='{"location": "Tokyo"}'):
    message = Message.from_role_and_content(Role.ASSISTANT, text)
    if channel:
        message = message.with_channel(channel)
    if recipient:
        message = message.with_recipient(recipient)
    if content_type:
        message = message.with_content_type(content_type)
    return message


def _layout_0_0_8(message: Message) -> str:
    """openai-harmony 0.0.8's render layout, written out (openai/harmony@ec7606d:src/encoding.rs,
    ``impl Render<Message>``): role, `` to=R``, ``<|channel|>C``, `` CT`` (a leading ``<|constrain|>``
    stays the special token), ``<|message|>``, text, then ``<|call|>`` with a recipient else ``<|end|>``."""
    text = "<|start|>assistant"
    if message.recipient:
        text += f" to={message.recipient}"
    if message.channel:
        text += f"<|channel|>{message.channel}"
    if message.content_type:
        text += f" {message.content_type}"
    return text + "<|message|>" + message.content[0].text + ("<|call|>" if message.recipient else "<|end|>")


@pytest.mark.parametrize(("channel", "recipient", "content_type"), list(itertools.product(CHANNELS, RECIPIENTS, CONTENT_TYPES)))
def test_a_second_message_renders_in_openai_harmony_0_0_8s_layout(channel, recipient, content_type):
    """Scripted completions keep 0.0.8's layout whichever library is installed (mockoss.harmony.layout);
    the layout function was checked token for token against openai-harmony 0.0.8's ``render`` on 375
    messages (every channel/recipient/content type combination here, plus text with special-token
    strings and non-ASCII)."""
    first = _message("analysis", None, None, "thinking")
    second = _message(channel, recipient, content_type)
    completion = Completion.from_messages([first, second])

    expected_second = _layout_0_0_8(second)
    if channel == "final" and recipient is None:
        # The answer ends with the <|return|> stop token; history keeps <|end|>.
        expected_second = expected_second.removesuffix("<|end|>") + "<|return|>"
    assert completion.text == "<|channel|>analysis<|message|>thinking<|end|>" + expected_second
    assert list(completion.tokens) == load_encoding().encode(completion.text, allowed_special="all")


def test_the_installed_library_renders_the_recipient_after_the_channel():
    """Why the layout is mockoss's own: oss-harmony 0.0.11 (the library vLLM 0.32/0.33 ship) renders
    ``<|channel|>commentary to=R <|constrain|>json``, where 0.0.8 rendered `` to=R<|channel|>commentary json``
    (measured with both wheels from the package index). If this fails, the library changed its renderer
    again: revisit mockoss/harmony/layout.py's docstring."""
    rendered = load_encoding().decode_utf8(load_encoding().render(_message("commentary", "functions.get_weather", "json")))
    assert rendered == '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location": "Tokyo"}<|call|>'


def test_first_message_drops_start_assistant_because_the_prompt_ends_with_it():
    completion = Completion.from_messages([_message("final", None, None, "Hi")])
    assert completion.text == "<|channel|>final<|message|>Hi<|return|>"
    assert completion.tokens[:2] == (200005, 17196)


def test_tool_call_ends_with_call_and_recipient_is_rendered_in_the_role_position():
    completion = Completion.from_messages(
        [_message("analysis", None, None, "Need weather."), _message("commentary", "functions.get_weather", "<|constrain|>json", "{}")]
    )
    assert completion.text == (
        "<|channel|>analysis<|message|>Need weather.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{}<|call|>"
    )
    assert completion.tokens[-1] == 200012


def test_raw_text_is_tokenized_verbatim_with_special_tokens():
    completion = Completion.from_text("<|start|>assistant<|channel|>final<|message|>Hi<|return|>")
    assert completion.tokens == (200006, 173781, 200005, 17196, 200008, 12194, 200002)


def test_non_assistant_messages_are_refused():
    with pytest.raises(ValueError, match="assistant messages only, got role 'user'"):
        Completion.from_messages([Message.from_role_and_content(Role.USER, "hi")])
    with pytest.raises(ValueError, match="at least one message"):
        Completion.from_messages([])


def test_emit_stops_after_the_first_assistant_action_stop_token():
    completion = Completion.from_text("<|channel|>final<|message|>a<|return|><|start|>assistant<|channel|>final<|message|>b<|return|>")
    emission = completion.emit()
    assert emission.tokens[-1] == 200002
    assert emission.tokens.count(200002) == 1
    assert emission.finish_reason == "stop"


def test_emit_cuts_at_max_tokens_with_finish_reason_length():
    completion = Completion.from_text("<|channel|>final<|message|>one two three four<|return|>")
    emission = completion.emit(max_tokens=4)
    assert emission.tokens == completion.tokens[:4]
    assert emission.finish_reason == "length"
    assert completion.emit(max_tokens=len(completion.tokens)).finish_reason == "stop"
