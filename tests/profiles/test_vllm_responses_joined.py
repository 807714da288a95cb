"""The vLLM Responses stream's item events are one joined template per plan (issue 9, eighth
session: a 10,000-token answer's ~10,700 events were filled and encoded one by one on every
request, ~9.4 ms on the event loop; joined, ~2.4 ms).

The joined path must give the frames the per-event templates give: compared here for answers with
``%`` sequences, tool calls and an MCP call, with 16- and 32-digit ids, and through the fallback
that cuts at each ``"\\n\\n"`` when the ids' length has no precomputed offsets.
"""

from __future__ import annotations

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, RequestContext, ResponsesRequestView, ToolDecl
from mockoss.profiles.registry import get_profile
from mockoss.profiles.vllm import responses_plan

TEXTS = [
    "<|channel|>analysis<|message|>100% sure: %s %(id)s %%<|end|><|start|>assistant<|channel|>final<|message|>It is 100%(total)s %d.<|return|>",
    (
        "<|channel|>analysis<|message|>Call it.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
        '<|message|>{"city": "100% Paris"}<|call|>'
    ),
    '<|channel|>commentary to=github.search<|message|>{"q": "x"}<|call|>',
    "<|channel|>final<|message|>" + " ".join(f"word{i}\\n" for i in range(300)) + "<|return|>",
]


def _frames(profile, text: str, joined: bool, digits_cuts: bool = True) -> tuple[bytes, ...]:
    completion = Completion.from_text(text)
    completion._memo.clear()
    real = responses_plan._join_events
    if not joined:
        responses_plan._join_events = lambda events: {"events": tuple(events), "joined": None, "cuts": {}}
    else:  # the joined path must be taken

        def checked(events):
            made = real(events)
            assert made["joined"] is not None and made["events"] == ()
            return made if digits_cuts else {**made, "cuts": {}}

        responses_plan._join_events = checked
    try:
        request = ResponsesRequestView(
            model="openai/gpt-oss-20b", stream=True, tools=(ToolDecl("function", "get_weather"),)
        )
        ctx = RequestContext(ids=IdSource(0, 3), created=1, prompt_tokens=5, raw_body=b"{}")
        reply = profile.surface("responses", completion, request, ctx)
    finally:
        responses_plan._join_events = real
        completion._memo.clear()
    assert reply.status == 200
    return reply.frames


@pytest.mark.parametrize("digits", [16, 32])
@pytest.mark.parametrize("text", TEXTS, ids=["percent", "tool call", "mcp call", "escaped newlines"])
def test_joined_events_are_the_separate_events(text, digits):
    profile = get_profile("vllm", {"id_digits": digits})
    separate = _frames(profile, text, joined=False)
    assert len(separate) > 4
    assert _frames(profile, text, joined=True) == separate
    assert _frames(profile, text, joined=True, digits_cuts=False) == separate


def test_a_plan_joins_its_events_and_knows_each_frames_offsets():
    completion = Completion.from_text(TEXTS[0])
    plan = responses_plan._build_plan(completion, None, True, frozenset(), False)
    assert plan.events == () and plan.joined is not None
    fmt, _holes = plan.joined
    assert set(plan.cuts) == {16, 32} and len(plan.cuts[32]) - 1 == fmt.count("\n\n")


@pytest.mark.parametrize("text", TEXTS, ids=["percent", "tool call", "mcp call", "escaped newlines"])
def test_the_stream_says_its_frames_are_whole_events_and_they_are(text):
    """The frames are :class:`SseEvents` (the transport counts their separators without a scan of
    the 2.3 MB a 10,000-token answer streams, ~1.9 ms): each is one whole event, so the
    concatenation holds exactly one separator per frame."""
    from mockoss.profiles.sse import is_sse_events, whole_event

    frames = _frames(get_profile("vllm"), text, joined=True)
    assert is_sse_events(frames)
    assert all(whole_event(frame) for frame in frames)
    assert b"".join(frames).count(b"\n\n") == len(frames)
    assert not is_sse_events(_frames(get_profile("vllm"), text, joined=False))  # per-event templates: not claimed
