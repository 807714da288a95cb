"""TensorRT-LLM's streamed ``/v1/completions`` batch is sized before its frames are built.

Issue 9 review, finding 6: a 922-byte request (127 prompts, ``stream``, ``continuous_usage_stats``,
a 3,000-word answer) built ~35 MB of frames on the event loop before the per-prompt size check
answered its 400 (other clients waited 436-520 ms). ``_over_bound`` now computes each prompt's
bytes from prompt 0's frames; the 400 must be the very bytes the per-prompt check gives (its
"at least N" figure included), and a reply under the bound the same frames.
"""

from __future__ import annotations

import itertools

import pytest

from mockoss.endpoints import ENDPOINTS
from mockoss.harmony import Completion
from mockoss.profiles import reply_limit
from mockoss.profiles.base import IdSource, RequestContext
from mockoss.profiles.trtllm import TrtllmProfile
from mockoss.profiles.trtllm import completions as trt

RAW = "<|channel|>analysis<|message|>Think a bit.<|end|><|start|>assistant<|channel|>final<|message|>Hello there, a🦜b friend<|return|>"
#: Prompts whose token counts cross 10 and 100 (usage digits), with non-ASCII and escaped text (echo bytes).
PROMPTS = ["a", "é ü", "x\u0001\"\\q", " ".join(["w"] * 12), "🦜" * 3, "b", " ".join(["z"] * 120), "c", "d", "e", "f", "g"]


def _reply(body: dict, bound: int, monkeypatch, *, old: bool = False, **switches):
    monkeypatch.setattr(reply_limit, "MAX_REPLY_BYTES", bound)
    if old:  # the per-prompt check alone: today's figure, frames built prompt by prompt
        monkeypatch.setattr(trt, "_over_bound", lambda *a, **k: None)
    else:
        monkeypatch.setattr(trt, "_over_bound", _REAL)
    body = {"model": "m", **body}
    view = ENDPOINTS["completions"].schema.model_validate(body).view("m", body)
    ctx = RequestContext(ids=IdSource(0, 0), created=7, prompt_tokens=10)
    return TrtllmProfile(**switches).surface("completions", Completion.from_text(RAW), view, ctx)


_REAL = trt._over_bound

OPTIONS = [None, {"include_usage": True}, {"include_usage": True, "continuous_usage_stats": False}, {"include_usage": False}]
SWITCHES = [{}, {"stable_stream_ids": False, "completion_usage_chunk": "chat_chunk"}, {"completion_cached_tokens": False, "stream_interval": 3}]


@pytest.mark.parametrize(("options", "echo", "detokenize", "switches"), list(itertools.product(OPTIONS, [False, True], [True, False], SWITCHES)))
def test_the_400_and_the_frames_are_the_per_prompt_checks(monkeypatch, options, echo, detokenize, switches):
    body = {"prompt": PROMPTS, "stream": True, "echo": echo, "detokenize": detokenize, "max_tokens": 5000}
    if options is not None:
        body["stream_options"] = options
    full = _reply(body, 1 << 30, monkeypatch, old=True, **switches)
    assert full.status == 200
    frames = [f for f in full.frames if f != b"data: [DONE]\n\n"]
    per_prompt = len(frames) // len(PROMPTS)
    cumulative = list(itertools.accumulate(sum(map(len, frames[i * per_prompt : (i + 1) * per_prompt])) for i in range(len(PROMPTS))))
    bounds = {1 << 30, cumulative[-1], cumulative[-1] - 1}
    for k in (0, 1, 3, 5, 6, 9, 10):
        bounds |= {cumulative[k] - 1, cumulative[k], cumulative[k] + 1}
    for bound in sorted(bounds):
        old = _reply(body, bound, monkeypatch, old=True, **switches)
        new = _reply(body, bound, monkeypatch, **switches)
        assert (new.status, new.body, new.frames) == (old.status, old.body, old.frames), bound
        assert new.status == (200 if bound >= cumulative[-1] else 400)
        if new.status == 400:
            over = next(c for c in cumulative if c > bound)
            assert f"(at least {over})".encode() in new.body


def test_a_refused_batch_builds_one_prompt_of_frames(monkeypatch):
    calls = [0]
    dumps = trt.dumps

    def counting(value):
        calls[0] += 1
        return dumps(value)

    body = {"prompt": ["p"] * 60, "stream": True, "max_tokens": 5000, "stream_options": {"include_usage": True}}
    one = _reply({**body, "prompt": ["p"]}, 1 << 30, monkeypatch)
    per_prompt = sum(map(len, one.frames[:-1]))
    monkeypatch.setattr(trt, "dumps", counting)
    reply = _reply(body, per_prompt * 59 + 10, monkeypatch)  # over the bound only at the last prompt
    assert reply.status == 400 and b"these 60 prompts" in reply.body
    assert calls[0] <= 3 * len(one.frames), calls[0]  # prompt 0's frames (dumps of choice and usage each), not 60 prompts'
