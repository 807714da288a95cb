"""Structured completions must render byte-identical to openai-harmony's own renderer."""

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


@pytest.mark.parametrize(("channel", "recipient", "content_type"), list(itertools.product(CHANNELS, RECIPIENTS, CONTENT_TYPES)))
def test_a_second_message_renders_exactly_as_openai_harmony_renders_it(channel, recipient, content_type):
    encoding = load_encoding()
    first = _message("analysis", None, None, "thinking")
    second = _message(channel, recipient, content_type)
    completion = Completion.from_messages([first, second])

    expected_first = encoding.decode_utf8(encoding.render(first)).removeprefix("<|start|>assistant")
    expected_second = encoding.decode_utf8(encoding.render(second))
    if channel == "final" and recipient is None:
        # The answer ends with the <|return|> stop token; history keeps <|end|>.
        assert expected_second.endswith("<|end|>")
        expected_second = expected_second.removesuffix("<|end|>") + "<|return|>"
    assert completion.text == expected_first + expected_second
    assert list(completion.tokens) == encoding.encode(completion.text, allowed_special="all")


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
