"""The trtllm stream's parser feed (``fed_batches``) is read in linear time (issue 9).

TensorRT-LLM feeds its parser one engine response (``stream_interval`` tokens) at a time; a token
that raises ``HarmonyError`` ends that batch (the rest of it is never processed) and the next
batch goes on (``NVIDIA/TensorRT-LLM@38134b130944ed5c037949456df20300126ec728:tensorrt_llm/serve/harmony_adapter.py``,
``stateful_stream_harmony_tokens_to_openai_deltas``). :func:`reference` is that rule written the
plain way (the whole feed read again for every batch: quadratic; a 1,000-token answer with a
rejected header took 7 s at ``stream_interval`` 3, on the event loop); ``fed_batches`` must give the
same trace and spans, reading the tokens a bounded number of times.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import mockoss.profiles.trtllm.chat as chat_module
from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.library import parse_with
from mockoss.harmony.trace import ParserTrace
from mockoss.profiles.trtllm.chat import engine_batches, fed_batches

START, END, MESSAGE, CHANNEL, CONSTRAIN, RETURN, CALL = 200006, 200007, 200008, 200005, 200003, 200002, 200012


def reference(tokens: tuple[int, ...], bounds: list[tuple[int, int, bool]], library: str) -> tuple[ParserTrace, list[tuple[int, int, bool]]]:
    """Batch by batch: what has been fed and this batch read whole; the first token of the batch
    that fails ends it (it is fed, the rest is not)."""
    fed: list[int] = []
    spans = []
    for start, stop, _ in bounds:
        begin = len(fed)
        attempt = parse_with((*fed, *tokens[start:stop]), strict=True, library=library, skip_errors=True)  # type: ignore[arg-type]
        error = next((index for index, _ in attempt.skipped if index >= begin), None)
        fed.extend(tokens[start:stop] if error is None else tokens[start : start + error - begin + 1])
        spans.append((begin, len(fed) if error is None else error, error is not None))
    return parse_with(tuple(fed), strict=True, library=library, skip_errors=True), spans  # type: ignore[arg-type]


def _text(text: str) -> list[int]:
    return load_encoding().encode(text, allowed_special=set())


def _message(channel: str, text: str) -> list[int]:
    return [CHANNEL, *_text(channel), MESSAGE, *_text(text), END, START, *_text("assistant")]


def _completions(seed: int, count: int) -> list[tuple[int, ...]]:
    """Seeded token sequences: well-formed messages and runs of loose markup and header words."""
    rng = random.Random(seed)
    loose = [[START], [END], [MESSAGE], [CHANNEL], [CONSTRAIN], *(_text(w) for w in (
        "assistant", "analysis", "final", "commentary", " to=functions.get", " json", "hello world", " code", '{"a":1}', " to=browser.search", "user",
    ))]
    out = []
    for _ in range(count):
        tokens: list[int] = []
        for _ in range(rng.randint(1, 8)):
            if rng.random() < 0.5:
                tokens += _message(rng.choice(["analysis", "final", "commentary"]), rng.choice(["hi there", "some text here ok", "x"]))
            else:
                for _ in range(rng.randint(1, 6)):
                    tokens += rng.choice(loose)
        if rng.random() < 0.5:
            tokens.append(rng.choice([RETURN, CALL]))
        out.append(tuple(tokens))
    return out


@pytest.mark.parametrize("library", ["oss-harmony", "openai-harmony-0.0.8"])
def test_fed_batches_is_the_batch_by_batch_rule(library: str) -> None:
    failing = 0
    for tokens in _completions(9, 50):
        for interval in (2, 3, 5):
            bounds = engine_batches(len(tokens), len(tokens), interval)
            trace, spans = fed_batches(tokens, bounds, library)
            want_trace, want_spans = reference(tokens, bounds, library)
            assert spans == want_spans, tokens
            assert (trace.tokens, trace.steps, trace.skipped, trace.messages) == (want_trace.tokens, want_trace.steps, want_trace.skipped, want_trace.messages), tokens
            failing += any(bad for *_, bad in spans)
    assert failing > 20  # the sample exercises batches cut by an error


def test_a_long_answer_with_a_rejected_header_is_read_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    words = "the quick brown fox jumps over a lazy dog " * 120
    # A header the parser rejects at <|message|> (two <|channel|> tokens, words after the
    # recipient): it then fails every token up to the next <|start|>, so each batch of that
    # message ends at its first token.
    tokens = (
        *_message("analysis", "x")[:-2], START, *_text("assistant"), CHANNEL, CHANNEL, *_text("final to=bad oops"), MESSAGE, *_text(words),
        END, START, *_text("assistant"), CHANNEL, *_text("final"), MESSAGE, *_text(words), RETURN,
    )
    calls: list[Any] = []
    real = chat_module.parse_with

    def counting(*args: Any, **kwargs: Any) -> ParserTrace:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[no-any-return]

    bounds = engine_batches(len(tokens), len(tokens) - 1, 3)
    monkeypatch.setattr(chat_module, "parse_with", counting)
    trace, spans = fed_batches(tokens[:-1], bounds, "oss-harmony")
    assert sum(bad for *_, bad in spans) > 100  # the rejected message's batches
    assert len(calls) <= 4, f"{len(calls)} readings of the tokens for {len(bounds)} batches"
    monkeypatch.setattr(chat_module, "parse_with", real)
    want_trace, want_spans = reference(tokens[:-1], bounds, "oss-harmony")
    assert spans == want_spans
    assert trace.steps == want_trace.steps
