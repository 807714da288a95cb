"""The linear parser trace equals the trace read from the parser after every token.

:func:`mockoss.harmony.trace.parse_tokens` derives the stream state and the completed messages
instead of reading ``StreamableParser.state`` / ``.messages`` (JSON dumps of the whole parser state)
after every token. :func:`_reference` is the direct reading; the two must agree on every step of the
scenario library, the fault library and random token streams, strict and not, cut at several
``max_tokens``, with whichever Harmony library is installed (openai-harmony or a fork).
"""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import HarmonyError, Role, StreamableParser

from mockoss.harmony import Completion
from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.faults import apply_fault
from mockoss.harmony.trace import parse_tokens
from mockoss.scenario.loader import Step, builtin_names, load_scenario

_FAULTS_TEST = Path(__file__).with_name("test_faults.py")
_spec = importlib.util.spec_from_file_location("_fault_cases", _FAULTS_TEST)
_fault_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fault_cases)  # type: ignore[union-attr]


def _reference(tokens: Sequence[int], strict: bool) -> tuple[Any, ...]:
    """The trace as the parser reports it when ``state`` and ``messages`` are read after every token."""
    parser = StreamableParser(load_encoding(), Role.ASSISTANT, strict=strict)
    steps, start, seen, error, error_index = [], 0, 0, None, None
    for index, token in enumerate(tokens):
        try:
            parser.process(token)
        except HarmonyError as exc:
            error, error_index = str(exc), index
            break
        messages = parser.messages
        completed = messages[-1] if len(messages) > seen else None
        if completed is not None:
            seen, start = len(messages), index + 1
        steps.append(
            (
                token,
                parser.state,
                parser.current_channel,
                parser.current_recipient,
                parser.current_content_type,
                parser.last_content_delta,
                completed,
            )
        )
    end = len(tokens) if error_index is None else error_index + 1
    pending = tuple(tokens[start:end])
    done = tuple(parser.messages)
    eos_messages, eos_error = (), None
    if error is None and pending:
        try:
            parser.process_eos()
            eos_messages = tuple(parser.messages[len(done) :])
        except HarmonyError as exc:
            eos_error = str(exc)
    return tuple(tokens), steps, done, error, error_index, pending, eos_messages, eos_error, strict


def _linear(tokens: Sequence[int], strict: bool) -> tuple[Any, ...]:
    trace = parse_tokens(tokens, strict=strict)
    return (
        trace.tokens,
        [tuple(getattr(step, f.name) for f in fields(step)) for step in trace.steps],
        trace.messages,
        trace.error,
        trace.error_index,
        trace.pending_tokens,
        trace.eos_messages,
        trace.eos_error,
        trace.strict,
    )


def _assert_same(tokens: Sequence[int]) -> None:
    cuts = {None, 1, 2, 3, 5, len(tokens) // 2, max(len(tokens) - 1, 0)}
    for strict in (True, False):
        for cut in cuts:
            fed = tokens if cut is None else tokens[:cut]
            assert _linear(fed, strict) == _reference(fed, strict), (strict, cut)


def _step_completions(steps: Sequence[Step]) -> Iterator[Completion]:
    for step in steps:
        if step.completion is not None:
            yield step.completion
        yield from _step_completions([option for _, option in step.options])


def _library() -> list[tuple[str, Completion]]:
    found = []
    for name in builtin_names():
        scenario = load_scenario(name)
        steps = [*scenario.steps, *(s for rule in scenario.rules for s in rule.steps)]
        found += [(f"{name}#{i}", c) for i, c in enumerate(dict.fromkeys(_step_completions(steps)))]
    return found


LIBRARY = _library()


def test_the_scenario_library_has_completions_to_compare():
    assert len(LIBRARY) >= 30


@pytest.mark.parametrize("completion", [c for _, c in LIBRARY], ids=[n for n, _ in LIBRARY])
def test_scenario_library_traces_equal_the_per_token_reading(completion: Completion) -> None:
    _assert_same(completion.tokens)


@pytest.mark.parametrize(
    ("completion", "spec"),
    [pytest.param(case[0], case[1], id=f"{case[1]['kind']}-{i}") for i, case in enumerate(_fault_cases.CASES)],
)
def test_fault_library_traces_equal_the_per_token_reading(completion: str, spec: dict[str, Any]) -> None:
    text = apply_fault(_fault_cases.COMPLETIONS[completion], spec)
    _assert_same(Completion.from_text(text).tokens)


#: Special tokens a model can emit (start, end, message, channel, constrain, return, call) and a few
#: text tokens that make headers ("assistant", "analysis", "final", " to=functions.x", "json", text).
_SPECIAL = (200006, 200007, 200008, 200005, 200003, 200002, 200012)


@pytest.mark.parametrize("seed", range(40))
def test_random_token_streams_trace_equal_the_per_token_reading(seed: int) -> None:
    encoding = load_encoding()
    words = [
        encoding.encode(t, allowed_special="all")
        for t in ("assistant", "analysis", "commentary", "final", " to=functions.x", " json", "Hello there", " é")
    ]
    rng = random.Random(seed)
    tokens: list[int] = []
    for _ in range(rng.randint(5, 60)):
        tokens += [rng.choice(_SPECIAL)] if rng.random() < 0.3 else rng.choice(words)
    # Half of the streams start like a well-formed completion, so that the parser gets far.
    if seed % 2:
        tokens = encoding.encode("<|channel|>analysis<|message|>x<|end|><|start|>assistant", allowed_special="all") + tokens
    _assert_same(tokens)
