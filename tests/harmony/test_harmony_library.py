"""The Harmony library switch: oss-harmony (installed) and openai-harmony 0.0.8 (emulated).

The 0.0.8 outcomes in data/openai_harmony_0_0_8_headers.json were measured with the openai-harmony
0.0.8 wheel itself, on completions where the two libraries disagree (a header holding ``<|channel|>``
twice). The emulation (mockoss/harmony/library.py) was also checked against 0.0.8 on 3,081 generated
completions in strict and non-strict mode with no mismatch; this file keeps a sample of them.
"""

import json
from pathlib import Path

import pytest

from mockoss.harmony import Completion
from mockoss.harmony.library import HARMONY_LIBRARIES, parse_header_0_0_8, parse_with

CASES = json.loads((Path(__file__).parent / "data" / "openai_harmony_0_0_8_headers.json").read_text())["cases"]


def _outcome(trace):
    messages = [*trace.messages, *trace.eos_messages]
    return (
        trace.error,
        trace.eos_error,
        [[m.author.role.value, m.author.name, m.channel, m.recipient, m.content_type, "".join(c.text for c in m.content)] for m in messages],
    )


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{'strict' if c['strict'] else 'lax'}" for i, c in enumerate(CASES)])
def test_the_emulated_library_parses_like_openai_harmony_0_0_8(case):
    completion = Completion.from_text(case["text"])
    trace = parse_with(completion.tokens, strict=case["strict"], library="openai-harmony-0.0.8")
    assert _outcome(trace) == (case["error"], case["eos_error"], case["messages"])
    # and the installed library (oss-harmony) really differs on these, so the switch matters
    assert _outcome(parse_with(completion.tokens, strict=case["strict"])) != _outcome(trace)


def test_the_vllm_32587_tool_name_is_the_old_librarys_and_the_fork_strips_it():
    """vllm-project/vllm#32587: ``to=functions.bash<|channel|>commentary`` was the tool name with
    openai-harmony 0.0.8; oss-harmony 0.0.11 (vLLM 0.32/0.33) gives ``functions.bash``."""
    completion = Completion.from_text("<|channel|>commentary to=functions.bash<|channel|>commentary<|message|>{}<|call|>")
    assert completion.trace().messages[0].recipient == "functions.bash"
    old = completion.trace(library="openai-harmony-0.0.8")
    assert old.messages[0].recipient == "functions.bash<|channel|>commentary"
    content_steps = [s for s in completion.trace().steps if s.state.name == "CONTENT"]
    assert [s.recipient for s in old.steps if s.state.name == "CONTENT"] == ["functions.bash<|channel|>commentary"] * len(content_steps)


def test_steps_keep_the_installed_parsers_deltas_and_token_positions():
    text = "<|channel|>analysis<|channel|>x<|message|>héllo wörld<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>"
    completion = Completion.from_text(text)
    new, old = completion.trace(), completion.trace(library="openai-harmony-0.0.8")
    assert [s.token for s in old.steps] == list(completion.tokens)
    assert [s.delta for s in old.steps] == [s.delta for s in new.steps]
    assert [s.state for s in old.steps] == [s.state for s in new.steps]
    assert old.messages[0].recipient == "<|channel|>x" and new.messages[0].recipient is None


def test_header_parse_errors_read_as_0_0_8_wrote_them():
    with pytest.raises(ValueError, match="Unknown role: assistant<|channel|>final"):
        parse_header_0_0_8("assistant<|channel|>final<|channel|>final", None)
    with pytest.raises(ValueError, match="channel marker present but no channel value"):
        parse_header_0_0_8("<|channel|> to=x", None)
    assert parse_header_0_0_8("<|channel|>commentary to=functions.x json", None).remaining is None


def test_an_unknown_library_is_refused_with_the_choices():
    assert HARMONY_LIBRARIES == ("oss-harmony", "openai-harmony-0.0.8")
    with pytest.raises(ValueError, match="oss-harmony, openai-harmony-0.0.8"):
        parse_with((200005,), library="openai-harmony-0.0.9")


def test_skipping_errors_in_linear_time_equals_reading_the_parser_token_by_token():
    """The spliced linear reading (``parse_skipping``) reports what the parser fed every token with
    errors caught reports (``_parse_skipping_slow``, vLLM's ``process_chunk`` loop), on seeded
    random completions built from header and stop-token fragments."""
    import random

    from mockoss.harmony import load_encoding, skip_errors

    pieces = ["<|channel|>", "commentary", "analysis", "final", " ", " to=functions.x", "<|constrain|>", "json", "assistant", "<", " x"]
    rng = random.Random(7)
    encoding = load_encoding()

    def key(trace):
        steps = [(s.token, s.state, s.channel, s.recipient, s.content_type, s.delta, s.completed) for s in trace.steps]
        return steps, trace.messages, trace.pending_tokens, trace.eos_messages, trace.eos_error, trace.skipped

    skipped = 0
    for _ in range(300):
        text = ""
        for k in range(rng.randint(1, 3)):
            if k:
                text += "<|start|>" + rng.choice(["assistant", ""])
            text += "".join(rng.choice(pieces) for _ in range(rng.randint(1, 5)))
            text += rng.choice(["<|message|>", ""]) + rng.choice(["hi", ""]) + rng.choice(["<|end|>", "<|call|>", "<|return|>", ""])
        tokens = tuple(encoding.encode(text, allowed_special="all"))
        for strict in (True, False):
            fast = skip_errors.parse_skipping(tokens, strict)
            assert key(fast) == key(skip_errors._parse_skipping_slow(tokens, strict)), text
            skipped += bool(fast.skipped)
    assert skipped > 100  # the comparison covers many completions that do raise
