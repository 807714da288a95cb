"""The parser trace stays linear in the number of messages (issue 9, task L).

openai-harmony's ``StreamableParser.messages`` serialises every completed message to JSON on each
read, and :func:`mockoss.harmony.trace.parse_tokens` reads it at every message's end: a completion
of 8,000 short messages took 5.6-10 s to trace. The trace now replaces the parser by a fresh one
(``StreamableParser(encoding, None)``) at an ``ExpectStart`` once the history's JSON passes
``REBASE_CHARS``, so each read stays short. These tests check that

* the replacement changes nothing: with ``REBASE_CHARS = 0`` (a new parser after every message)
  the trace equals the per-token reading of one parser on the scenario library, the fault
  library and random token streams (the comparisons of ``test_trace_linear.py``), and on a long
  completion of mixed messages (strict and not, cut at several points);
* the characters of message JSON read per completed message do not grow with the message count.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import StreamableParser

from mockoss.harmony import trace as trace_module
from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.trace import parse_tokens

_spec = importlib.util.spec_from_file_location("_trace_linear_cases", Path(__file__).with_name("test_trace_linear.py"))
_linear = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_linear)  # type: ignore[union-attr]


def _many_messages(count: int, seed: int = 0) -> list[int]:
    """``count`` short assistant messages: reasoning, tool calls (``<|call|>``), preambles, finals."""
    rng = random.Random(seed)
    kinds = (
        "<|channel|>analysis<|message|>Think {i} é.<|end|>",
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{{"city":"c{i}"}}<|call|>',
        "<|channel|>commentary<|message|>Calling tool {i}.<|end|>",
        "<|channel|>final<|message|>Answer {i}.<|return|>",
    )
    text = "<|start|>assistant".join(rng.choice(kinds).format(i=i) for i in range(count))
    return load_encoding().encode(text, allowed_special="all")


@pytest.fixture
def rebase_every_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_module, "REBASE_CHARS", 0)


@pytest.mark.usefixtures("rebase_every_message")
@pytest.mark.parametrize("completion", [c for _, c in _linear.LIBRARY], ids=[n for n, _ in _linear.LIBRARY])
def test_scenario_library_traces_with_a_parser_per_message_equal_one_parser(completion: Any) -> None:
    _linear._assert_same(completion.tokens)


@pytest.mark.usefixtures("rebase_every_message")
@pytest.mark.parametrize("seed", range(40))
def test_random_token_streams_with_a_parser_per_message_equal_one_parser(seed: int) -> None:
    _linear.test_random_token_streams_trace_equal_the_per_token_reading(seed)


@pytest.mark.usefixtures("rebase_every_message")
@pytest.mark.parametrize(
    ("completion", "spec"),
    [pytest.param(case[0], case[1], id=f"{case[1]['kind']}-{i}") for i, case in enumerate(_linear._fault_cases.CASES)],
)
def test_fault_library_traces_with_a_parser_per_message_equal_one_parser(completion: str, spec: dict[str, Any]) -> None:
    _linear.test_fault_library_traces_equal_the_per_token_reading(completion, spec)


@pytest.mark.parametrize("rebase_chars", [0, 300, trace_module.REBASE_CHARS])
def test_a_long_completion_traces_equal_one_parser(monkeypatch: pytest.MonkeyPatch, rebase_chars: int) -> None:
    monkeypatch.setattr(trace_module, "REBASE_CHARS", rebase_chars)
    tokens = _many_messages(60, seed=rebase_chars)
    for strict in (True, False):
        for cut in (None, len(tokens) // 2, len(tokens) - 1):
            fed = tokens if cut is None else tokens[:cut]
            assert _linear._linear(fed, strict) == _linear._reference(fed, strict), (strict, cut)


class _CountingInner:
    """Forwards to the Rust parser and counts the characters of ``messages`` JSON handed out."""

    def __init__(self, inner: Any, counter: list[int]) -> None:
        self._inner, self._counter = inner, counter

    @property
    def messages(self) -> str:
        raw = self._inner.messages
        self._counter[0] += len(raw)
        return raw

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _json_chars_read(count: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(characters of messages JSON read, messages completed) tracing ``count`` messages."""
    counter = [0]
    real = StreamableParser

    def counting(*args: Any, **kwargs: Any) -> Any:
        parser = real(*args, **kwargs)
        wrapper = real.__new__(real)
        wrapper._inner = _CountingInner(parser._inner, counter)
        return wrapper

    monkeypatch.setattr(trace_module, "StreamableParser", counting)
    trace = parse_tokens(_many_messages(count))
    assert trace.error is None
    return counter[0], len(trace.messages)


def test_message_json_read_per_message_does_not_grow_with_the_message_count(monkeypatch: pytest.MonkeyPatch) -> None:
    small_chars, small = _json_chars_read(200, monkeypatch)
    large_chars, large = _json_chars_read(1600, monkeypatch)
    assert (small, large) == (200, 1600)
    # Bounded by REBASE_CHARS plus a message per read: ~2 KB here. Reading the whole history
    # at each message's end read ~11 KB per message at 200 messages and ~90 KB at 1,600.
    assert large_chars / large <= trace_module.REBASE_CHARS
    assert large_chars / large <= 1.25 * (small_chars / small), (small_chars / small, large_chars / large)
