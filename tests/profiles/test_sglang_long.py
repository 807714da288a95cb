"""A repeated long request to the ``sglang`` profile is not computed again (issue 9: a request is
answered on the event loop under the server lock, so a streamed 10,000-token answer that was
re-parsed on every request held every other client ~130 ms each time).

What depends only on the completion, the effective token limit (``Completion.cap``) and the
request's shape is memoised on ``completion._memo``; a request fills in its ids. These tests
assert it structurally (the parsing step is not called again) and that the memoised bytes are
the direct computation's, ids included (SGLang's Responses code draws an id per decode step and
shows few of them: the shown ones must be those very draws).
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import Completion
from mockoss.harmony.completion import clear_completion_cache
from mockoss.profiles.base import ChatRequestView, IdSource, RequestContext, ResponsesRequestView, ToolDecl
from mockoss.profiles.sglang import SglangProfile, responses_route, responses_stream
from mockoss.profiles.sglang import chat as chat_module
from mockoss.profiles.sglang.responses import ItemError, final_items, response_object, usage_object
from mockoss.profiles.sglang.responses_stream import stream_events
from mockoss.profiles.wire import dumps

MODEL = "openai/gpt-oss-20b"
WORDS = " ".join(f"word{i % 17} é中" for i in range(300))
LONG = (
    f"<|channel|>analysis<|message|>Think {WORDS[:400]}<|end|><|start|>assistant<|channel|>commentary<|message|>note<|end|>"
    f"<|start|>assistant<|channel|>final<|message|>{WORDS}<|return|>"
)
CALL = (
    "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather"
    ' <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
)
BAD = "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>commentary to=nowhere<|message|>x<|end|>"
WEATHER = (ToolDecl("function", "get_weather"),)


def _fresh(text: str) -> Completion:
    """A completion with an empty memo (``from_text`` shares one completion per text)."""
    clear_completion_cache()
    return Completion.from_text(text)


def _ctx(index: int = 3) -> RequestContext:
    return RequestContext(ids=IdSource(7, index), created=1_767_225_600, prompt_tokens=12)


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    calls: list[int] = []
    original = getattr(module, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("options", [{}, {"tools": WEATHER}, {"tools": WEATHER, "continuous_usage_stats": True, "include_usage": True}])
def test_repeated_streamed_chat_is_not_detokenized_and_parsed_again(monkeypatch: pytest.MonkeyPatch, options: dict) -> None:
    steps = _counting(monkeypatch, chat_module, "stream_deltas")
    for text in (LONG, CALL):
        completion = _fresh(text)
        request = ChatRequestView(model=MODEL, stream=True, **options)
        first = SglangProfile().chat(completion, request, _ctx())
        again = SglangProfile().chat(completion, request, _ctx())
        other = SglangProfile().chat(completion, request, _ctx(4))
        assert first.frames == again.frames  # same request index and seed: same bytes
        assert other.frames != first.frames  # another request: its own ids
        assert len(other.frames) == len(first.frames)
    assert len(steps) == 2  # once per completion, not once per request


@pytest.mark.parametrize("options", [{}, {"tools": WEATHER}])
def test_repeated_chat_is_not_decoded_and_parsed_again(monkeypatch: pytest.MonkeyPatch, options: dict) -> None:
    parses = _counting(monkeypatch, chat_module, "split_reasoning")
    for text in (LONG, CALL):
        completion = _fresh(text)
        request = ChatRequestView(model=MODEL, **options)
        first, again = SglangProfile().chat(completion, request, _ctx()), SglangProfile().chat(completion, request, _ctx())
        assert first.body == again.body
        assert SglangProfile().chat(completion, request, _ctx(4)).body != first.body  # its own ids
    assert len(parses) == 2  # once per completion


def test_repeated_streamed_chat_draws_call_ids_per_request() -> None:
    completion = Completion.from_text(CALL)
    request = ChatRequestView(model=MODEL, stream=True, tools=WEATHER)
    replies = [SglangProfile().chat(completion, request, _ctx(i)) for i in (5, 6)]
    for index, reply in zip((5, 6), replies, strict=True):
        ids = IdSource(7, index)
        rid, call = ids.next(), ids.next("call_")[:29]
        assert all(f'"id":"{rid}"'.encode() in frame for frame in reply.frames[:-1])
        assert sum(f'"id":"{call}"'.encode() in frame for frame in reply.frames) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_repeated_completions_request_is_not_detokenized_again(monkeypatch: pytest.MonkeyPatch, stream: bool) -> None:
    from mockoss.profiles.base import CompletionsRequestView
    from mockoss.profiles.sglang import completions as completions_module

    decodes = _counting(monkeypatch, completions_module, "stream_deltas" if stream else "load_encoding")
    completion = _fresh(LONG)
    for echo in (False, True):
        request = CompletionsRequestView(model=MODEL, prompts=("say it",), stream=stream, max_tokens=100_000, echo=echo)
        first = SglangProfile().surface("completions", completion, request, _ctx())
        again = SglangProfile().surface("completions", completion, request, _ctx())
        assert (first.frames, first.body) == (again.frames, again.body)
        text = b"".join(first.frames) if stream else first.body
        assert (b'"text":"say it' in text) is echo
    assert len(decodes) == 1  # the echo is put in front per request, the text is memoised


def _responses(completion: Completion, stream: bool, index: int = 3, **body: object):
    request = ResponsesRequestView(model=MODEL, stream=stream, max_output_tokens=body.pop("max_output_tokens", None), body={"model": MODEL, **body})
    return SglangProfile().surface("responses", completion, request, _ctx(index))


@pytest.mark.parametrize("stream", [False, True])
def test_repeated_responses_request_is_not_mapped_again(monkeypatch: pytest.MonkeyPatch, stream: bool) -> None:
    calls = _counting(monkeypatch, responses_stream, "content_deltas") if stream else _counting(monkeypatch, responses_route, "final_items")
    completion = _fresh(LONG)
    first, again = _responses(completion, stream), _responses(completion, stream)
    assert (first.frames, first.body) == (again.frames, again.body)
    assert first.status == 200
    assert len(calls) == 1


@pytest.mark.parametrize("text", [LONG, CALL, BAD])
@pytest.mark.parametrize("body", [{}, {"max_output_tokens": 9}, {"reasoning": {"summary": "auto"}, "include": ["reasoning.encrypted_content"]}])
def test_memoised_responses_stream_is_the_direct_one(text: str, body: dict) -> None:
    """The recorded events with this request's ids are the events computed with its ids."""
    completion = Completion.from_text(text)
    limit = body.get("max_output_tokens")
    request = ResponsesRequestView(model=MODEL, stream=True, max_output_tokens=limit, body={"model": MODEL, **body})
    trace = completion.trace(max_tokens=limit, library="openai-harmony-0.0.8")
    status = "incomplete" if completion.emit(limit).finish_reason == "length" else "completed"
    for index in (1, 2):  # the second is a memo hit
        direct_ids, memo_ids = IdSource(7, index), IdSource(7, index)
        rid = direct_ids.next("resp_")
        assert memo_ids.next("resp_") == rid
        direct = stream_events(request, trace, rid, RequestContext(ids=direct_ids, created=5, prompt_tokens=1), status)
        memo = stream_events(request, trace, rid, RequestContext(ids=memo_ids, created=5, prompt_tokens=1), status, completion, completion.cap(limit), ("x",))
        assert memo.frames == direct.frames
        assert memo.abort == direct.abort
        assert memo_ids.next() == direct_ids.next()  # as many ids drawn


@pytest.mark.parametrize("text", [LONG, CALL, BAD])
@pytest.mark.parametrize("limit", [None, 9])
def test_memoised_responses_body_is_the_direct_one(text: str, limit: int | None) -> None:
    """Non-streamed: the body is the one made from ``final_items`` with the ids drawn directly;
    a request field that looks like a slot is written as sent."""
    body = {"model": MODEL, "instructions": "\x001\x00 kept"}
    request = ResponsesRequestView(model=MODEL, max_output_tokens=limit, body=body)
    completion = _fresh(text)
    trace = completion.trace(max_tokens=limit, library="openai-harmony-0.0.8")
    status = "incomplete" if completion.emit(limit).finish_reason == "length" else "completed"
    for index in (1, 2):  # the second is a memo hit
        reply = SglangProfile().surface("responses", completion, request, _ctx(index))
        ids = IdSource(7, index)
        rid = ids.next("resp_")
        try:
            output = final_items(trace, ids)
        except ItemError as exc:
            assert reply.status == 400
            assert json.loads(reply.body)["error"]["message"] == str(exc)
            continue
        expected = response_object(request, rid, _ctx(index), output, status, usage_object(len(completion.emit(limit).tokens)))
        assert reply.body == dumps(expected).encode()
        assert b'"instructions":"\\u00001\\u0000 kept"' in reply.body


def test_id_source_skip_is_drawing() -> None:
    drawn, skipped = IdSource(3, 8), IdSource(3, 8)
    for _ in range(5):
        drawn.next()
    skipped.skip(5)
    assert skipped.next("x_") == drawn.next("x_")


def test_hold_partial_is_the_longest_suffix_a_guard_starts_with() -> None:
    """The string parser's hold (searched from the guard's first character, for speed) is the
    definition's: the longest suffix that is a proper prefix of a guard."""
    import random

    from mockoss.profiles.sglang.harmony_text import _GUARDS, hold_partial

    def naive(text: str, guards: tuple[str, ...]) -> tuple[str, str]:
        sizes = [size for guard in guards for size in range(1, min(len(guard) - 1, len(text)) + 1) if guard.startswith(text[-size:])]
        held = max(sizes, default=0)
        return (text[:-held], text[-held:]) if held else (text, "")

    rng = random.Random(9)
    pieces = [*"<|>ab cfilmnorst", "<|", "|>", "<|start", "<|channel", "<|message|", "analysis", "assistantfin", "commentar"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 7)))
        for guards in (_GUARDS, ("assistantfinal",), ("analysis", "commentary", "assistantfinal")):
            assert hold_partial(text, guards) == naive(text, guards), (text, guards)
