"""The vLLM profile's per-request caches give the bytes the full path gives (issue 9).

``VllmProfile.surface`` answers a non-streamed chat request without ``ignore_eos`` or
``stream_interval`` from :func:`mockoss.profiles.vllm.chat.cached_full_reply` (one memo lookup,
then the ids and usage formatted into the finished body). Here every golden case's completion is
surfaced through ``surface`` and through the full path (the cache switched off), for several
profiles and request shapes, twice each (cold, then from the cache, with other ids), and the
replies must be equal in every field. The ids themselves are checked against the keyed BLAKE2b
that :class:`mockoss.profiles.base.IdSource` documents.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

import mockoss.profiles.vllm as vllm_package
from mockoss.golden.cases import all_cases
from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, IdSource, Reply, RequestContext, ToolDecl
from mockoss.profiles.registry import get_profile
from mockoss.profiles.vllm import VllmProfile
from mockoss.profiles.vllm.chat import cached_full_reply

PROFILES = [
    ("vllm", {}),
    ("vllm@0.32.0", {}),
    ("vllm-2025", {}),
    ("vllm", {"id_digits": 32, "reasoning_field": "both", "fingerprint_mode": "none", "weight_versions_field": False}),
    ("vllm", {"finish_tool_calls_needs_calls": False, "end_of_script_eos": False, "tool_choice_required": "ignored"}),
    ("vllm", {"enable_auto_tool_choice": False, "tool_choice_none": "ignored", "flush_raw_recovery": False}),
    ("vllm", {"harmony_errors": "raise", "harmony_library": "openai-harmony-0.0.8", "strict": False}),
]
WEATHER = (ToolDecl("function", "get_weather"),)
NAMED = {"type": "function", "function": {"name": "get_weather"}}
#: (view fields, body): the request shapes the cache keys on, and the options that bypass it.
REQUESTS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, {}),
    ({"tools": WEATHER}, {"tools": []}),
    ({"tools": WEATHER, "tool_choice": "required"}, {}),
    ({"tools": WEATHER, "tool_choice": "none"}, {}),
    ({"tools": WEATHER, "tool_choice": NAMED}, {}),
    ({"include_reasoning": False, "max_tokens": 7}, {}),
    ({"max_tokens": 1}, {}),
    ({"max_tokens": 60}, {"ignore_eos": True}),
    ({}, {"stream_interval": 0}),
    ({"model": "m%s\"x"}, {}),
]


def _ctx(index: int, prompt: int) -> RequestContext:
    return RequestContext(ids=IdSource(7, index), created=1_767_225_600, prompt_tokens=prompt)


def _fields(reply: Reply) -> tuple[Any, ...]:
    return (reply.status, reply.media_type, reply.body, reply.frames, reply.headers, reply.abort, reply.log)


@pytest.mark.parametrize(("name", "switches"), PROFILES, ids=lambda p: str(p))
def test_cached_chat_reply_is_the_full_paths_reply(name: str, switches: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    profile = get_profile(name, switches)
    cases = all_cases()
    cached: list[tuple[Any, ...]] = []
    hits = 0
    for case in cases:
        completion = Completion(text=case.completion.text, tokens=case.completion.tokens)
        for n, (fields, body) in enumerate(REQUESTS):
            view = ChatRequestView(**{"model": "openai/gpt-oss-20b", **fields, "body": body})
            for attempt in range(2):
                cached.append(_fields(profile.surface("chat", completion, view, _ctx(attempt, 50 + n))))
                hits += cached_full_reply(profile, completion, view, _ctx(attempt, 50 + n)) is not None
    monkeypatch.setattr(vllm_package, "cached_full_reply", lambda *args: None)
    full = []
    for case in cases:
        completion = Completion(text=case.completion.text, tokens=case.completion.tokens)
        for n, (fields, body) in enumerate(REQUESTS):
            view = ChatRequestView(**{"model": "openai/gpt-oss-20b", **fields, "body": body})
            for attempt in range(2):
                full.append(_fields(profile.surface("chat", completion, view, _ctx(attempt, 50 + n))))
    assert len(cached) == len(full) == len(cases) * len(REQUESTS) * 2
    for index, (got, want) in enumerate(zip(cached, full)):
        assert got == want, f"request {index}: cached {got!r} != full {want!r}"
    if profile.chat_parser == "harmony_parser":
        assert hits > len(cases) * 8  # the cache answered most of them (not the errors, not the options)
    else:
        assert hits == 0  # the 2025 chat paths are not cached


def test_cache_steps_aside_for_streams_options_and_errors() -> None:
    profile = VllmProfile()
    answer = Completion.from_text(
        "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>4.<|return|>"
    )
    ctx = _ctx(0, 10)
    plain = ChatRequestView(model="m")
    assert cached_full_reply(profile, answer, plain, ctx) is not None
    assert cached_full_reply(profile, answer, ChatRequestView(model="m", stream=True), ctx) is None
    assert cached_full_reply(profile, answer, ChatRequestView(model="m", body={"ignore_eos": False}), ctx) is None
    assert cached_full_reply(profile, answer, ChatRequestView(model="m", body={"stream_interval": 1}), ctx) is None
    assert cached_full_reply(profile.with_switches(chat_parser="openai_tool_parser"), answer, plain, ctx) is None
    broken = Completion.from_text("<|channel|>commentary to=functions.x to=functions.x json<|message|>{}<|call|>")
    assert cached_full_reply(profile.with_switches(harmony_errors="raise"), broken, plain, ctx) is None


def test_ids_are_the_documented_keyed_blake2b() -> None:
    """``IdSource`` id n of request r under seed s: BLAKE2b-128 of r (8 bytes) + n (4 bytes), keyed
    with ``"<type>:<seed>"`` (first 64 bytes); the cached keyed hasher must not change them."""

    def expected(seed: Any, request: int, position: int) -> bytes:
        key = f"{type(seed).__name__}:{seed}".encode()[:64]
        return hashlib.blake2b(request.to_bytes(8, "big") + position.to_bytes(4, "big"), digest_size=16, key=key).digest()

    for seed in (0, 42, "ci", "s" * 80):
        for request in (0, 3, 2**40):
            ids = IdSource(seed, request)
            assert ids.next("chatcmpl-") == "chatcmpl-" + expected(seed, request, 1).hex()
            assert ids.next16("resp_") == "resp_" + expected(seed, request, 2)[:8].hex()
            assert ids.digits(6) == str(int.from_bytes(expected(seed, request, 3), "big")).zfill(39)[-6:]
    assert IdSource(0, 1).next() != IdSource(1, 1).next()
