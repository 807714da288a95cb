"""Memo keys hold the effective token limit, not the request's ``max_tokens`` (issue 9 review, finding 2).

The breaker measured that every new ``max_tokens`` value re-ran the emission, the parser trace and
the deltas on the event loop: a 10,500-token answer stalled other clients 55-85 ms per new value
(chat, stream, Responses), a 119,000-token one 1.1-1.4 s. :meth:`Completion.cap` maps every limit
that does not cut the answer (at least its emitted length, stop token included) to ``None``, so
those requests share one plan; a cutting limit is a :class:`~mockoss.harmony.completion.Cut`, of
which a memo keeps at most :data:`~mockoss.harmony.completion.MEMO_CUT_ENTRIES` entries, dropped
before the uncut ones.

The replies must stay byte for byte what the raw-keyed memos gave, for every limit: each profile
and endpoint, streamed and not, is answered for limits around the answer's length by a server
with the new keys and by one whose ``cap`` is the identity (the old keys) and whose memos serve
nothing (every reply computed afresh), and compared.
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import Completion
from mockoss.harmony import completion as completion_module
from mockoss.harmony.completion import MEMO_CUT_ENTRIES, Cut, Memo, clear_completion_cache
from mockoss.profiles.registry import PROFILES
from mockoss.server.core import MockServer

ANSWER = (
    "<|channel|>analysis<|message|>Let me think about it a little.<|end|><|start|>assistant<|channel|>final"
    "<|message|>The answer is forty-two, friend.<|return|>words after the stop token"
)
NO_STOP = "<|channel|>analysis<|message|>Thinking.<|end|><|start|>assistant<|channel|>final<|message|>Cut off here"
CALL = (
    "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant to=functions.get_weather"
    '<|channel|>commentary <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
)
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
MODELS = {"mlx-lm": "mlx-community/gpt-oss-20b-MXFP4-Q8", "vllm-mlx": "mlx-community/gpt-oss-20b-MXFP4-Q8", "ollama": "gpt-oss:20b"}


def _scenario(tmp_path, raw: str) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(f"version: 1\nrules:\n  - steps: [{{completion: {{raw: {json.dumps(raw)}}}}}]\n    when_exhausted: repeat_last\n")
    return str(path)


def _body(endpoint: str, model: str, limit: int | None, stream: bool, tools: bool, extra: dict) -> bytes:
    messages = [{"role": "user", "content": "hi"}]
    if endpoint in ("chat", "lmstudio.chat"):
        body = {"model": model, "messages": messages, "stream": stream, **({"tools": TOOLS} if tools else {})}
        if limit is not None:
            body["max_tokens"] = limit
    elif endpoint in ("completions", "lmstudio.completions"):
        body = {"model": model, "prompt": "hi", "stream": stream}
        if limit is not None:
            body["max_tokens"] = limit
    elif endpoint == "responses":
        body = {"model": model, "input": "hi", "stream": stream}
        if tools:
            body["tools"] = [{"type": "function", "name": "get_weather", "parameters": TOOLS[0]["function"]["parameters"]}]
        if limit is not None:
            body["max_output_tokens"] = limit
    else:  # ollama.chat, ollama.generate
        body = {"model": model, "stream": stream, **({"messages": messages} if endpoint == "ollama.chat" else {"prompt": "hi"})}
        if limit is not None:
            body["options"] = {"num_predict": limit}
    return json.dumps({**body, **extra}).encode()


def _replies(scenario: str, profile: str, requests: list[bytes], endpoint: str) -> list[tuple]:
    clear_completion_cache()  # fresh completions, fresh memos
    server = MockServer(scenario, profile=profile)
    out = []
    for raw in requests:
        reply, _ = server.respond(endpoint, raw, {})
        out.append((reply.status, reply.body, reply.frames, reply.log, reply.abort))
    return out


def _limits(raw: str) -> list[int | None]:
    n = len(Completion.from_text(raw).emit(None).tokens)  # the engine may add <|endoftext|> after NO_STOP: n + 1 too
    values = [None, 10**6, n + 1025, n + 1024, n + 1023, n + 64, n + 2, n + 1, n, n - 1, n - 2, 3, 1, 0]  # 64, 1024: ignore_eos's tails
    return values + values[::-1]


CASES = [
    (profile, endpoint, stream)
    for profile in PROFILES
    if profile not in ("vllm-0.10.1", "vllm-2025")
    for endpoint in sorted(PROFILES[profile].endpoints)
    for stream in (False, True)
    if (profile, endpoint, stream) != ("lmstudio", "lmstudio.completions", True)  # refused: not emulated
] + [("vllm-2025", "chat", False), ("vllm-2025", "chat", True)]


@pytest.mark.parametrize(("profile", "endpoint", "stream"), CASES)
@pytest.mark.parametrize("raw", [ANSWER, NO_STOP, CALL], ids=["answer", "no-stop", "call"])
def test_replies_equal_the_raw_keyed_memos_for_every_limit(tmp_path, monkeypatch, profile, endpoint, stream, raw):
    model = MODELS.get(profile, "openai/gpt-oss-20b")
    extras: list[dict] = [{}]
    if profile == "vllm" and endpoint == "chat":
        extras.append({"stream_interval": 1})  # the full path, not the per-shape reply cache
    if profile in ("vllm", "vllm-2025") and endpoint in ("chat", "completions"):
        extras.append({"ignore_eos": True})  # the stop token repeated up to the limit (options.ignore_eos_completion)
    if stream and endpoint in ("chat", "completions") and not profile.startswith("ollama"):
        extras.append({"stream_options": {"include_usage": True}})
    requests = [_body(endpoint, model, limit, stream, raw is CALL, extra) for extra in extras for limit in _limits(raw)]
    scenario = _scenario(tmp_path, raw)
    new = _replies(scenario, profile, requests, endpoint)
    assert new[0][0] == 200, new[0][1][:300]  # the unlimited request is answered
    from mockoss.profiles.openai.normalize import NormalisedCompletion

    for kind in (Completion, NormalisedCompletion):  # the raw request value as the key
        monkeypatch.setattr(kind, "cap", lambda self, max_tokens: max_tokens)
    monkeypatch.setattr(Memo, "get", lambda self, key, default=None: default)  # and nothing served from a memo
    old = _replies(scenario, profile, requests, endpoint)
    for request, a, b in zip(requests, new, old, strict=True):
        assert a == b, request


def test_distinct_uncut_limits_share_one_plan(tmp_path, monkeypatch):
    """The breaker's sequence (chat, then max_tokens 99999, 99998, a stream with 99997, Responses
    with 99999): the parser runs once per request shape, not once per value."""
    from mockoss.harmony import library

    runs = []
    parse_with = library.parse_with
    monkeypatch.setattr(library, "parse_with", lambda *a, **k: runs.append(1) or parse_with(*a, **k))
    clear_completion_cache()
    server = MockServer(_scenario(tmp_path, ANSWER), profile="vllm")
    chat = lambda **kw: json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], **kw}).encode()
    server.respond("chat", chat(), {})
    first = len(runs)
    for limit in (99999, 99998, 10**9):
        assert server.respond("chat", chat(max_tokens=limit), {})[0].status == 200
    server.respond("chat", chat(stream=True), {})
    for limit in (99997, 5000):
        server.respond("chat", chat(stream=True, max_tokens=limit), {})
    server.respond("responses", json.dumps({"model": "openai/gpt-oss-20b", "input": "hi"}).encode(), {})
    server.respond("responses", json.dumps({"model": "openai/gpt-oss-20b", "input": "hi", "max_output_tokens": 99999}).encode(), {})
    assert len(runs) == first  # every parse was the first request's


def test_cut_limits_are_a_small_fifo_and_the_uncut_plan_stays():
    """A client cycling max_tokens through values below the answer's length makes one plan per
    value (their outputs differ) but the memo keeps at most MEMO_CUT_ENTRIES of them, and the
    uncut plan stays."""
    from mockoss.profiles.vllm.chat_plan import plan_completion

    completion = Completion(text="x", tokens=Completion.from_text(ANSWER).tokens)  # its own memo
    full = plan_completion(completion, None, True)
    length = len(completion.emit(None).tokens)
    assert plan_completion(completion, length + 100, True) is full
    assert plan_completion(completion, length - 1, True) is not full
    for limit in range(1, length):
        plan_completion(completion, limit, True)
    memo = completion._memo
    cut = [key for key in memo if isinstance(key, tuple) and any(type(part) is Cut for part in key)]
    assert 0 < len(cut) <= MEMO_CUT_ENTRIES
    assert plan_completion(completion, None, True) is full  # not rebuilt
    assert completion.cap(length) is None and completion.cap(length - 1) == length - 1 and type(completion.cap(0)) is Cut
    assert completion_module.MEMO_CUT_ENTRIES < completion_module.MEMO_ENTRIES


def _emit_token_by_token(tokens: tuple[int, ...], max_tokens: int | None) -> tuple[tuple[int, ...], str]:
    """The emission rule as the engine applies it, token by token (the former ``Completion.emit``)."""
    from mockoss.harmony.completion import CALL as CALL_ID
    from mockoss.harmony.completion import RETURN

    limit = len(tokens) if max_tokens is None else max(0, max_tokens)
    emitted: list[int] = []
    for token in tokens:
        if len(emitted) == limit:
            return tuple(emitted), "length"
        emitted.append(token)
        if token in (RETURN, CALL_ID):
            break
    return tuple(emitted), "stop"


def test_emit_searches_the_stop_token_as_the_engine_stops():
    """``emit`` finds the first stop token with ``tuple.index`` (a 119,000-token script took
    ~14 ms token by token); the same emission for every script and limit."""
    import random

    from mockoss.harmony.completion import CALL as CALL_ID
    from mockoss.harmony.completion import RETURN

    rng = random.Random(9)
    for _ in range(1500):
        tokens = tuple(rng.choice([1, 2, 3, RETURN, CALL_ID]) for _ in range(rng.randint(0, 10)))
        completion = Completion(text="t", tokens=tokens)
        for limit in (None, -1, 0, 1, 2, 3, 5, 9, 10, 11, 30):
            emission = completion.emit(limit)
            assert (emission.tokens, emission.finish_reason) == _emit_token_by_token(tokens, limit), (tokens, limit)
