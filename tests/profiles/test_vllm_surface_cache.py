"""The vLLM profile's per-request caches give the bytes the full path gives (issue 9).

``VllmProfile.surface`` answers a non-streamed chat request without ``ignore_eos`` or
``stream_interval`` from :func:`mockoss.profiles.vllm.chat.cached_full_reply`, and a non-streamed
Responses request without echoed fields from
:func:`mockoss.profiles.vllm.responses_cached.cached_reply` (one memo lookup, then the ids and
usage formatted into the finished body). Here every golden case's completion (and one with ``%``
in its text) is surfaced through ``surface`` and through the full path (the caches switched off),
for several profiles and request shapes, twice each (cold, then from the cache, with other ids),
and the replies must be equal in every field. The ids themselves are checked against the keyed
BLAKE2b that :class:`mockoss.profiles.base.IdSource` documents.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

import mockoss.profiles.vllm as vllm_package
import mockoss.profiles.vllm.chat as chat_module
import mockoss.profiles.vllm.request_checks as request_checks_module
import mockoss.profiles.vllm.responses_cached as responses_cached_module
from mockoss.golden.cases import all_cases
from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, IdSource, Reply, RequestContext, ResponsesRequestView, ToolDecl
from mockoss.profiles.registry import get_profile
from mockoss.profiles.vllm import VllmProfile
from mockoss.profiles.vllm.chat import cached_full_reply
from mockoss.profiles.vllm.responses_cached import BODY_KEYS, cached_reply
from mockoss.profiles.vllm.responses_echo import usage_json
from mockoss.profiles.wire import dumps

PROFILES = [
    ("vllm", {}),
    ("vllm@0.32.0", {}),
    ("vllm-2025", {}),
    ("vllm", {"id_digits": 32, "reasoning_field": "both", "fingerprint_mode": "none", "weight_versions_field": False}),
    ("vllm", {"finish_tool_calls_needs_calls": False, "end_of_script_eos": False, "tool_choice_required": "ignored"}),
    ("vllm", {"enable_auto_tool_choice": False, "tool_choice_none": "ignored", "flush_raw_recovery": False}),
    ("vllm", {"harmony_errors": "raise", "harmony_library": "openai-harmony-0.0.8", "strict": False}),
    ("vllm", {"responses_body_fields": False, "responses_ignore_recipients_without_tools": True, "max_model_len": 90}),
    ("vllm", {"responses_prompt_cache_fields": False, "responses_unknown_channel": "drop", "responses_mapping": "2025"}),
]
#: Text with ``%`` sequences, which the cached formats must keep as they are.
PERCENT = Completion.from_text(
    "<|channel|>analysis<|message|>100% sure: %s %(id)s %%<|end|>"
    "<|start|>assistant<|channel|>final<|message|>It is 100%(total)s %d.<|return|>"
)
#: Text holding what the cached Responses template's markers are made of (mockoss.profiles.replay),
#: raw and as JSON escapes them: its replies must still be the full path's.
MARKED = Completion.from_text(
    "<|channel|>final<|message|>a \x00mockoss-id:0\x00 b \x00mockoss-val:1\x00 c \\u0000mockoss-id:2\\u0000<|return|>"
)
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
#: The same for Responses; the last ones carry fields that bypass the cache.
RESPONSES_REQUESTS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, {"input": "hi"}),
    ({"max_output_tokens": 3}, {"store": False}),
    ({"max_output_tokens": 500, "tool_choice": "none"}, {}),
    ({"tool_choice": "required", "model": "m%(id)s"}, {}),
    ({"model": "m\x00mockoss-id:0\x00 \x00mockoss-val:1\x00"}, {}),
    ({"tools": WEATHER}, {"tools": [{"type": "function", "name": "get_weather"}]}),
    ({}, {"request_id": "req-1"}),
    ({}, {"temperature": 0.0, "metadata": {"k": "%s"}}),
    ({"tool_choice": NAMED}, {}),
    ({"stream": True}, {}),
]


def _ctx(index: int, prompt: int) -> RequestContext:
    return RequestContext(ids=IdSource(7, index), created=1_767_225_600, prompt_tokens=prompt)


def _completions() -> list[Completion]:
    return [Completion(text=case.completion.text, tokens=case.completion.tokens) for case in all_cases()] + [PERCENT, MARKED]


def _fields(reply: Reply) -> tuple[Any, ...]:
    return (reply.status, reply.media_type, reply.body, reply.frames, reply.headers, reply.abort, reply.log)


@pytest.mark.parametrize(("name", "switches"), PROFILES, ids=lambda p: str(p))
def test_cached_chat_reply_is_the_full_paths_reply(name: str, switches: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    profile = get_profile(name, switches)
    cases = _completions()
    cached: list[tuple[Any, ...]] = []
    hits = 0
    for completion in cases:
        for n, (fields, body) in enumerate(REQUESTS):
            view = ChatRequestView(**{"model": "openai/gpt-oss-20b", **fields, "body": body})
            for attempt in range(2):
                cached.append(_fields(profile.surface("chat", completion, view, _ctx(attempt, 50 + n))))
                hits += cached_full_reply(profile, completion, view, _ctx(attempt, 50 + n)) is not None
    monkeypatch.setattr(vllm_package, "cached_full_reply", lambda *args: None)
    full = []
    for completion in _completions():
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


@pytest.mark.parametrize(("name", "switches"), PROFILES, ids=lambda p: str(p))
def test_cached_responses_reply_is_the_full_paths_reply(name: str, switches: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    profile = get_profile(name, switches)

    def answers() -> list[tuple[Any, ...]]:
        out = []
        for completion in _completions():
            for n, (fields, body) in enumerate(RESPONSES_REQUESTS):
                view = ResponsesRequestView(**{"model": "openai/gpt-oss-20b", **fields, "body": body})
                for attempt in range(2):
                    raw = f"request {n}".encode()  # the echo templates are cached per raw body
                    ctx = RequestContext(ids=IdSource(7, attempt), created=1_767_225_600, prompt_tokens=40 + n, raw_body=raw)
                    out.append(_fields(profile.surface("responses", completion, view, ctx)))
        return out

    hits = sum(
        cached_reply(profile, completion, ResponsesRequestView(model="m", body={}), _ctx(0, 10)) is not None
        for completion in _completions()
    )
    cached = answers()
    monkeypatch.setattr(responses_cached_module, "cached_reply", lambda *args: None)  # (loaded on first use)
    full = answers()
    assert len(cached) == len(full) == len(_completions()) * len(RESPONSES_REQUESTS) * 2
    for index, (got, want) in enumerate(zip(cached, full)):
        assert got == want, f"request {index}: cached {got!r} != full {want!r}"
    assert hits > len(_completions()) // 2  # most replies are not errors, so the cache answers them


class _Recording(dict):
    """A request body that notes every field read from it."""

    read: set[str]

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def test_responses_cache_key_covers_every_body_field_the_full_path_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A body field the full path reads and the cache does not bypass on would be served stale."""
    monkeypatch.setattr(responses_cached_module, "cached_reply", lambda *args: None)  # (loaded on first use)
    # The request checks run before the cache (a refused body never reaches it): not the cache's concern.
    monkeypatch.setattr(request_checks_module, "responses_request_error", lambda *args: None)
    body = _Recording(model="m", input="hi")
    body.read = set()
    for profile in (VllmProfile(), get_profile("vllm-2025", {})):
        profile.surface("responses", PERCENT, ResponsesRequestView(model="m", body=body), _ctx(0, 10))
    assert body.read, "the full path reads the body"
    assert body.read <= BODY_KEYS, f"read but not in BODY_KEYS: {sorted(body.read - BODY_KEYS)}"


def test_chat_cache_bypass_covers_every_body_field_the_full_path_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The non-streamed chat path reads nothing from the body but the options the cache steps aside for."""
    monkeypatch.setattr(vllm_package, "cached_full_reply", lambda *args: None)
    body = _Recording(model="m", messages=[])
    body.read = set()
    for profile in (VllmProfile(), VllmProfile(stream_interval=4)):
        for fields in ({}, {"tools": WEATHER, "tool_choice": "required"}, {"max_tokens": 2}):
            profile.surface("chat", PERCENT, ChatRequestView(model="m", body=body, **fields), _ctx(0, 10))
    assert body.read, "the full path reads the options"
    assert body.read <= chat_module._OPTION_KEYS, f"read but not bypassed: {sorted(body.read - chat_module._OPTION_KEYS)}"


def test_an_entry_left_by_another_profile_object_is_not_served() -> None:
    """The caches key on ``id(profile)`` (:func:`mockoss.profiles.memos.held` for Responses); an
    entry under that id built for another profile (as after the id's reuse) is rebuilt, not served."""
    mine, other = VllmProfile(), VllmProfile(reasoning_field="both", fingerprint_mode="none")
    for endpoint, view in (("chat", ChatRequestView(model="m")), ("responses", ResponsesRequestView(model="m"))):
        completion = Completion(text=PERCENT.text, tokens=PERCENT.tokens)
        want = _fields(mine.surface(endpoint, Completion(text=PERCENT.text, tokens=PERCENT.tokens), view, _ctx(0, 10)))
        other.surface(endpoint, completion, view, _ctx(0, 10))
        forged = 0
        for key, entry in list(completion._memo.items()):
            if isinstance(key, tuple) and id(other) in key:
                completion._memo[tuple(id(mine) if part == id(other) else part for part in key)] = entry
                forged += 1
        assert forged, f"no {endpoint} entry keyed by the profile's id"
        assert _fields(mine.surface(endpoint, completion, view, _ctx(0, 10))) == want


def test_usage_json_is_dumps_of_the_usage_object() -> None:
    for prompt, output, reasoning, cache_write in ((0, 0, 0, True), (12, 345, 6, False), (10**6, 1, 1, True)):
        details: dict[str, Any] = {"cached_tokens": 0, "cache_write_tokens": 0} if cache_write else {"cached_tokens": 0}
        usage = {
            "input_tokens": prompt,
            "input_tokens_details": {**details, "input_tokens_per_turn": [prompt], "cached_tokens_per_turn": [0]},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": reasoning, "tool_output_tokens": 0, "output_tokens_per_turn": [output], "tool_output_tokens_per_turn": [0]},
            "total_tokens": prompt + output,
        }
        assert usage_json(str(prompt), str(prompt + output), output, reasoning, cache_write) == dumps(usage)


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
    responses = ResponsesRequestView(model="m", body={"input": "hi"})
    assert cached_reply(profile, answer, responses, ctx) is not None
    assert cached_reply(profile, answer, ResponsesRequestView(model="m", stream=True), ctx) is None
    assert cached_reply(profile, answer, ResponsesRequestView(model="m", tools=WEATHER), ctx) is None
    assert cached_reply(profile, answer, ResponsesRequestView(model="m", body={"user": "u"}), ctx) is None
    assert cached_reply(profile, answer, ResponsesRequestView(model="m", tool_choice=NAMED), ctx) is None
    assert cached_reply(profile.with_switches(harmony_errors="raise"), broken, ResponsesRequestView(model="m"), ctx) is None


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


def test_echo_templates_are_bounded_in_bytes_and_served_again() -> None:
    """Their keys hold whole request bodies: 64 distinct 1 MB bodies stay within the byte budget,
    and a body seen again gets the very templates built for it."""
    from mockoss.profiles.vllm import responses_echo

    profile = get_profile("vllm")
    responses_echo._ECHO_TEMPLATES.clear()
    request = ResponsesRequestView(model="m", body={"instructions": "Be brief."})
    for k in range(64):
        raw = b"%d" % k + b" " * (1 << 20)
        ctx = RequestContext(ids=IdSource(7, k), created=1_767_225_600, prompt_tokens=5, raw_body=raw)
        templates = responses_echo.echo_templates(profile, request, ctx)
        assert responses_echo.echo_templates(profile, request, ctx) is templates
    assert 0 < responses_echo._ECHO_TEMPLATES.size <= responses_echo._ECHO_TEMPLATES_BYTES
    assert len(responses_echo._ECHO_TEMPLATES) < 64
