"""A repeated long streamed request to the ``openai`` profile is not rewritten again (issue 9).

The profile rewrites the vLLM profile's frames into OpenAI's shapes, one JSON parse per frame:
a 10,000-token answer took ~70 ms of the event loop on every streamed request. The rewrite is
memoised per request shape (:mod:`mockoss.profiles.openai.stream_memo`): a repeated request parses
only the frames that carry its own values. These tests count the parses (structural, never
timed) and compare the memoised frames with the direct rewrite, ids included.
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import Completion
from mockoss.harmony.completion import clear_completion_cache
from mockoss.profiles.base import ChatRequestView, IdSource, RequestContext, ResponsesRequestView, ToolDecl
from mockoss.profiles.openai import VLLM, OpenAIProfile, wire
from mockoss.profiles.openai.normalize import normalised

MODEL = "openai/gpt-oss-20b"
WORDS = " ".join(f"word{i % 13} é中" for i in range(400))
LONG = (
    f"<|channel|>analysis<|message|>Think {WORDS[:500]}<|end|><|start|>assistant<|channel|>final<|message|>{WORDS}<|return|>"
)
CALL = (
    "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather"
    ' <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
)
BROKEN = "<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>final<|channel|>x<|message|>y<|return|>"
WEATHER = (ToolDecl("function", "get_weather"),)
WEATHER_BODY = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]


def _fresh(text: str) -> Completion:
    clear_completion_cache()
    return Completion.from_text(text)


def _ctx(index: int, body: dict) -> RequestContext:
    return RequestContext(ids=IdSource(11, index), created=1_767_225_600, prompt_tokens=21, raw_body=json.dumps(body).encode())


def _chat(completion: Completion, index: int, **options: object):
    view = ChatRequestView(model=MODEL, stream=True, **options)  # type: ignore[arg-type]
    return view, OpenAIProfile().surface("chat", completion, view, _ctx(index, {"model": MODEL, "stream": True}))


def _responses_view(**body: object) -> ResponsesRequestView:
    tools = WEATHER if body.get("tools") else ()
    return ResponsesRequestView(model=MODEL, stream=True, tools=tools, max_output_tokens=body.get("max_output_tokens"),  # type: ignore[arg-type]
                                body={"model": MODEL, "stream": True, **body})


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = wire.loads

    def counted(text: object) -> object:
        calls.append(1)
        return original(text)  # type: ignore[arg-type]

    monkeypatch.setattr(wire, "loads", counted)
    return calls


def test_repeated_streamed_chat_parses_only_its_own_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    completion = _fresh(LONG)
    parses = _count_parses(monkeypatch)
    _, first = _chat(completion, 1, include_usage=True)
    assert len(parses) >= len(first.frames) - 1  # every frame rewritten once ([DONE] is not parsed)
    parses.clear()
    _, again = _chat(completion, 2, include_usage=True)
    assert len(again.frames) == len(first.frames) > 300
    assert len(parses) <= 2  # the usage chunk (the prompt's count), not the 300 others


def test_repeated_streamed_responses_parse_only_the_response_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    completion = _fresh(LONG)
    view = _responses_view()
    parses = _count_parses(monkeypatch)
    first = OpenAIProfile().surface("responses", completion, view, _ctx(1, dict(view.body)))
    parses.clear()
    again = OpenAIProfile().surface("responses", completion, view, _ctx(2, dict(view.body)))
    assert len(again.frames) == len(first.frames) > 300
    assert len(parses) <= 3  # response.created, response.in_progress, response.completed


CHAT_SHAPES = [{}, {"include_usage": True}, {"tools": WEATHER}, {"include_usage": True, "continuous_usage_stats": True}, {"max_tokens": 40}]


@pytest.mark.parametrize("text", [LONG, CALL, BROKEN])
@pytest.mark.parametrize("options", CHAT_SHAPES)
def test_memoised_chat_stream_is_the_direct_rewrite(text: str, options: dict) -> None:
    completion = _fresh(text)
    for index in (1, 2, 3):  # the later ones are memo hits
        view, reply = _chat(completion, index, **options)
        normal = normalised(completion, view.max_tokens, tools_declared=bool(view.tools))
        direct = wire.chat_frames(VLLM.chat(normal, view, _ctx(index, {})), view.include_usage)  # type: ignore[arg-type]
        assert (reply.status, reply.frames, reply.abort) == (direct.status, direct.frames, direct.abort)


MARKED = LONG.replace("word3 ", "~mockoss~slot~00000000000000002~ ", 3)
RESPONSES_SHAPES = [{}, {"max_output_tokens": 30}, {"tools": WEATHER_BODY}, {"instructions": "keep ~mockoss~slot~00000000000000001~ as sent"}]


@pytest.mark.parametrize("text", [LONG, CALL, BROKEN, MARKED])
@pytest.mark.parametrize("body", RESPONSES_SHAPES)
def test_memoised_responses_stream_is_the_direct_rewrite(text: str, body: dict) -> None:
    """The same frames and ids as rewriting vLLM's frames made with the request's ids (a request
    holding the slots' marker is answered directly, its text kept)."""
    completion = _fresh(text)
    view = _responses_view(**body)
    for index in (1, 2, 3):
        reply = OpenAIProfile().surface("responses", completion, view, _ctx(index, dict(view.body)))
        normal = normalised(completion, view.max_output_tokens, tools_declared=bool(view.tools))
        direct = wire.responses_frames(VLLM.responses(normal, view, _ctx(index, dict(view.body))))  # type: ignore[arg-type]
        assert (reply.status, reply.frames, reply.abort) == (direct.status, direct.frames, direct.abort)
    if "instructions" in body:
        assert b"keep ~mockoss~slot~00000000000000001~ as sent" in reply.frames[0]


def test_an_entry_serves_only_the_frames_it_was_made_from() -> None:
    """Two streams of one length but other contents (another request shape) under one memo key:
    the second is rewritten afresh, not answered with the first one's frames."""
    from mockoss.profiles.base import Reply
    from mockoss.profiles.openai import stream_memo

    head = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":5,"model":"m","choices":['
    def reply(words: list[str], rid: bytes = b"1") -> Reply:
        frames = [head.replace(b"-1", b"-" + rid) + b'{"index":0,"delta":{"content":"%s"},"logprobs":null,"finish_reason":null}]}\n\n' % w.encode() for w in words]
        return Reply(status=200, media_type="text/event-stream", frames=(*frames, b"data: [DONE]\n\n"))
    memo: dict = {}
    first, second = reply(["a", "b", "c"]), reply(["a", "x", "c"], b"2")
    assert stream_memo.chat_frames(first, False, memo).frames == wire.chat_frames(first, False).frames
    assert stream_memo.chat_frames(second, False, memo).frames == wire.chat_frames(second, False).frames
    same = reply(["a", "x", "c"], b"3")  # now a hit: its own head in front
    assert stream_memo.chat_frames(same, False, memo).frames == wire.chat_frames(same, False).frames
    shifted = reply(["a", "xc", ""], b"4")  # the same joined text, split otherwise
    assert stream_memo.chat_frames(shifted, False, memo).frames == wire.chat_frames(shifted, False).frames
