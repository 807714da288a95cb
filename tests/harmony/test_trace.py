"""Parser traces carry the genuine parser's outcome, exact error text included."""

from mockoss.harmony import Completion


def test_clean_tool_call_trace_has_header_fields_only_after_message_token():
    text = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"a":1}<|call|>'
    trace = Completion.from_text(text).trace()
    assert trace.error is None
    header = [s for s in trace.steps if s.state.name == "HEADER"]
    assert header and all(s.recipient is None for s in header)
    content = [s for s in trace.steps if s.delta]
    assert [s.delta for s in content] == ['{"', "a", '":', "1", "}"]
    assert {(s.channel, s.recipient, s.content_type) for s in content} == {
        ("commentary", "functions.get_weather", "<|constrain|>json")
    }
    assert trace.steps[-1].completed is not None
    assert trace.messages[0].recipient == "functions.get_weather"
    assert trace.pending_tokens == ()


def test_duplicate_recipient_raises_the_exact_harmony_error_at_the_message_token():
    completion = Completion.from_text("<|channel|>commentary to=functions.x to=functions.x json<|message|>{}<|call|>")
    trace = completion.trace()
    assert trace.error == 'unexpected tokens remaining in message header: Some("to=functions.x")'
    assert completion.tokens[trace.error_index] == 200008
    assert len(trace.steps) == trace.error_index


def test_stray_token_after_end_is_reported_with_its_id():
    trace = Completion.from_text("<|channel|>final<|message|>a<|end|>garbage").trace()
    assert trace.error == "Unexpected token 6802 while expecting start token 200006"
    assert len(trace.messages) == 1


def test_truncated_content_is_flushed_at_eos():
    trace = Completion.from_text("<|channel|>analysis<|message|>I am thinking").trace()
    assert trace.error is None and trace.ended_inside_message
    assert [m.content[0].text for m in trace.eos_messages] == ["I am thinking"]


def test_stop_token_inside_header_fails_at_eos_in_strict_mode_only():
    completion = Completion.from_text("<|channel|>final Hello there<|end|>")
    strict = completion.trace(strict=True)
    # The strict parser does not raise on <|end|> in a header; it stays in the header and the
    # error surfaces when the input ends.
    assert strict.error is None
    assert strict.eos_error == "Unexpected EOS while waiting for message header to complete"
    assert strict.pending_tokens == completion.tokens
    relaxed = completion.trace(strict=False)
    assert relaxed.error is None
    assert relaxed.messages[0].content[0].text == "Hello there"


def test_eos_inside_header_after_max_tokens():
    trace = Completion.from_text("<|channel|>analysis<|message|>x<|end|>").trace(max_tokens=2)
    assert trace.eos_error == "Unexpected EOS while waiting for message header to complete"
    assert trace.pending_tokens == (200005, 35644)


def test_constrain_read_as_recipient_on_final():
    trace = Completion.from_text('<|channel|>final <|constrain|>json<|message|>{"a":1}<|return|>').trace()
    assert trace.messages[0].recipient == "<|constrain|>json"
    assert trace.messages[0].content_type is None
