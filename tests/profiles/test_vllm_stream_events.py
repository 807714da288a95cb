"""The vLLM chat stream's frames are :class:`~mockoss.profiles.sse.SseEvents` only when the claim
holds: every frame ends with ``b"\\n\\n"`` and holds no other newline (the transport then counts
the separators sent without reading the bytes, :mod:`mockoss.server.transport`)."""

from __future__ import annotations

import itertools

import pytest
from openai_harmony import Message, Role

from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, IdSource, RequestContext, ToolDecl
from mockoss.profiles.sse import SseEvents, is_sse_events
from mockoss.profiles.vllm import VllmProfile
from mockoss.profiles.vllm import chat_stream as chat_stream_module

MODEL = "openai/gpt-oss-20b"
WEATHER = (ToolDecl("function", "get_weather"),)
TEXTS = {
    "answer": "<|channel|>analysis<|message|>User asks 2+2.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>",
    # Newlines in the text: JSON escapes them, so the frames stay whole events.
    "newlines": "<|channel|>analysis<|message|>a\n\nb<|end|><|start|>assistant<|channel|>final<|message|>x\n\ny\n<|return|>",
    "tool call": "<|channel|>analysis<|message|>Need weather.<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Paris"}<|call|>',
    "malformed": "<|channel|>commentary to=functions.x to=functions.x json<|message|>{}<|call|>",
    "error after content": "<|channel|>final<|message|>Hi<|end|><|return|>",
}
PROFILES = {
    "default": VllmProfile(),
    "raise": VllmProfile().with_switches(harmony_errors="raise"),
    "both, no fingerprint": VllmProfile().with_switches(reasoning_field="both", fingerprint_mode="none"),
    "interval 3": VllmProfile().with_switches(stream_interval=3),
}
REQUESTS = {
    "plain": {},
    "usage": {"include_usage": True},
    "continuous": {"include_usage": True, "continuous_usage_stats": True},
    "no reasoning": {"include_reasoning": False},
    "tools": {"tools": WEATHER},
    "named": {"tools": WEATHER, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    "cut": {"tools": WEATHER, "max_tokens": 12},
}


def _stream(text: str, profile: VllmProfile, request: dict) -> tuple[bytes, ...]:
    completion = Completion.from_text(text)
    view = ChatRequestView(model=request.get("model", MODEL), stream=True, **{k: v for k, v in request.items() if k != "model"})
    reply = profile.chat(completion, view, RequestContext(ids=IdSource(0, 0), created=1_750_000_000, prompt_tokens=10))
    assert reply.status == 200 and reply.frames
    return reply.frames


def _whole_events(frames: tuple[bytes, ...]) -> bool:
    return all(frame.endswith(b"\n\n") and frame.count(b"\n") == 2 for frame in frames)


@pytest.mark.parametrize(("text", "profile", "request_"), list(itertools.product(TEXTS, PROFILES, REQUESTS)))
def test_stream_frames_claim_to_be_whole_events_only_when_they_are(text, profile, request_):
    frames = _stream(TEXTS[text], PROFILES[profile], REQUESTS[request_])
    assert _whole_events(frames)  # what vLLM's frames are: JSON (no raw newline) + "\n\n"
    assert is_sse_events(frames)  # ... and the profile says so


def test_a_model_name_with_newlines_is_escaped_and_still_whole_events():
    frames = _stream(TEXTS["answer"], VllmProfile(), {"model": "m\n\nx"})
    assert b'"model":"m\\n\\nx"' in frames[0] and is_sse_events(frames) and _whole_events(frames)


def test_a_frame_with_two_events_is_not_claimed(monkeypatch):
    """The per-request frames are checked (:func:`mockoss.profiles.sse.whole_event`): a stand-in
    error frame holding two events (what no vLLM frame does) turns the claim off, and the frames
    are a plain tuple."""
    monkeypatch.setattr(chat_stream_module, "stream_error_frame", lambda *args, **kwargs: b"data: x\n\ndata: y\n\n")
    frames = _stream(TEXTS["malformed"], PROFILES["raise"], {"tools": (ToolDecl("function", "x"),)})
    assert b"data: x\n\ndata: y\n\n" in frames and frames.__class__ is tuple and not is_sse_events(frames)


def test_the_claim_is_the_exact_type_and_not_inherited_by_slices():
    events = SseEvents((b"data: 1\n\n", b"data: 2\n\n"))
    assert events == (b"data: 1\n\n", b"data: 2\n\n") and is_sse_events(events)
    assert not is_sse_events(events[:1]) and not is_sse_events(events + (b"x",)) and not is_sse_events(tuple(events))


def test_answer_frames_are_built_as_before():
    """The map/zip build of the chunk frames gives the frames of the per-chunk join."""
    completion = Completion.from_messages(
        [
            Message.from_role_and_content(Role.ASSISTANT, "User asks 2+2.").with_channel("analysis"),
            Message.from_role_and_content(Role.ASSISTANT, "2 + 2 = 4.").with_channel("final"),
        ]
    )
    reply = VllmProfile().chat(
        completion, ChatRequestView(model=MODEL, stream=True), RequestContext(ids=IdSource(0, 0), created=1, prompt_tokens=10)
    )
    head = reply.frames[1].split(b'"delta":')[0] + b'"delta":'
    after = b',"logprobs":null,"finish_reason":null,"token_ids":null}],"kv_transfer_params":null}\n\n'
    deltas = [b'{"reasoning":"User"}', b'{"reasoning":" asks"}']
    assert list(reply.frames[1:3]) == [head + delta + after for delta in deltas]
