"""Ollama's ``/api/generate`` ``context`` of a big prompt is rendered before the server lock, in
the worker process, and its cache is bounded in bytes and emptied by ``reset``.

``context`` holds the prompt's token ids (``ollama/ollama@fb307609:server/routes.go``,
``GenerateHandler``: ``r.Tokenize(prompt + generated)`` on the last response, unless ``raw``).
mockoss rendered them in process under the server lock: one 50,000-character word took ~0.8-1.4 s,
and another client's small request waited 736-753 ms (``benchmarks/bench_isolation.py`` case
``ollamaword``, measured before this change). The reply must not change by a byte.
"""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from mockoss.endpoints import ENDPOINTS, prompt_tokens
from mockoss.harmony.lru import BytesLRU
from mockoss.profiles.ollama import native
from mockoss.profiles.ollama.prompt import render_native_generate_prompt
from mockoss.server import offload, prelock
from mockoss.server.core import MockServer
from mockoss.server.prompt_worker import PanicException
from mockoss.server.run import ThreadedServer

MODEL = "gpt-oss:20b"
PANIC_WORD = "a" * 1_000_000  # openai-harmony's pre-tokenizer overflows its stack: a PanicException


@pytest.fixture(autouse=True)
def _fresh():
    native.clear_context_cache()
    yield
    native.clear_context_cache()
    offload.shutdown()


def _raw(**fields: object) -> bytes:
    return json.dumps({"model": MODEL, **fields}).encode()


BODIES = {
    "plain": _raw(prompt="Why is the sky blue?", stream=False),
    "streamed": _raw(prompt="Why is the sky blue?"),
    "system-think": _raw(prompt="Hi", system="Be brief.", think="high", stream=False),
    "think-true": _raw(prompt="Hi", think=True, stream=False),
    "specials": _raw(prompt="<|start|>assistant<|channel|>final<|message|>x", stream=False),
    "unicode": _raw(prompt="é😀 中文 " * 50, system="système", stream=False),
    "long-word": _raw(prompt="a" * 20_000, stream=False),
    "raw": _raw(prompt="a" * 9_000, raw=True, stream=False),  # no context: nothing rendered for it
    "load-only": _raw(prompt="", stream=False),
}


def _same(a, b) -> None:
    assert (a.status, a.media_type, a.body, a.frames, a.headers) == (b.status, b.media_type, b.body, b.frames, b.headers)


def _render_in_process(endpoint: str, raw: bytes) -> str:
    return ",".join(map(str, ENDPOINTS[endpoint].render_prompt(json.loads(raw))))


@pytest.mark.parametrize("name", [name for name in BODIES if name not in ("raw", "load-only")])
def test_the_worker_renders_a_generate_prompt_as_in_process(name):
    raw = BODIES[name]
    assert offload.render_in_worker("ollama.generate", raw) == ",".join(map(str, render_native_generate_prompt(json.loads(raw))))


def test_a_prompt_the_tokenizer_cannot_render_raises_the_workers_panic_here():
    """Not rendered again in process (issue 9, review: ~90 ms holding the GIL and the lock each time)."""
    with pytest.raises(PanicException, match="StackOverflow"):  # it panicked there: raised here with its text
        offload.render_in_worker("ollama.generate", _raw(prompt=PANIC_WORD))
    assert offload.render_in_worker("ollama.generate", BODIES["plain"]) == _render_in_process("ollama.generate", BODIES["plain"])


@pytest.mark.parametrize("name", list(BODIES))
def test_the_reply_is_the_same_with_the_prompt_rendered_before_the_lock(name, monkeypatch):
    raw = BODIES[name]
    alone = MockServer("clean-answer", profile="ollama").handle("ollama.generate", raw, {})
    assert alone.status == 200
    native.clear_context_cache()
    rendered: list[str] = []
    counted: list[str] = []

    def renderer(endpoint: str, body: bytes) -> str:
        rendered.append(endpoint)
        return _render_in_process(endpoint, body)

    def counter(endpoint: str, body: bytes) -> int:
        counted.append(endpoint)
        return prompt_tokens(endpoint, body)

    def in_process(body):  # under the lock: must not be reached when the ids were handed on
        raise AssertionError("rendered in process under the lock")

    server = MockServer("clean-answer", profile="ollama")
    needs = name not in ("raw", "load-only")
    if needs:
        monkeypatch.setattr(native, "render_native_generate_prompt", in_process)
    count_token, render_token = prelock.PROMPT_COUNTER.set(counter), prelock.PROMPT_RENDERER.set(renderer)
    try:
        before = server.respond("ollama.generate", raw, {})[0]
    finally:
        prelock.PROMPT_RENDERER.reset(render_token)
        prelock.PROMPT_COUNTER.reset(count_token)
    _same(before, alone)
    # The ids rendered once, before the lock, and counted from them (no second render for the count).
    assert (rendered, counted) == ((["ollama.generate"], []) if needs else ([], ["ollama.generate"]))
    assert native.PRERENDERED_PROMPT.get() is None


@pytest.mark.parametrize("name", ["plain", "system-think", "long-word"])
def test_when_the_worker_fails_the_prompt_is_rendered_under_the_lock_as_before(name):
    raw = BODIES[name]
    alone = MockServer("clean-answer", profile="ollama").handle("ollama.generate", raw, {})
    native.clear_context_cache()
    server = MockServer("clean-answer", profile="ollama")
    count_token = prelock.PROMPT_COUNTER.set(lambda endpoint, body: None)
    render_token = prelock.PROMPT_RENDERER.set(lambda endpoint, body: None)
    try:
        _same(server.respond("ollama.generate", raw, {})[0], alone)
    finally:
        prelock.PROMPT_RENDERER.reset(render_token)
        prelock.PROMPT_COUNTER.reset(count_token)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("stream", [False, True])
def test_a_long_word_over_http_is_rendered_in_the_worker_process_with_the_same_bytes(stream, monkeypatch):
    raw = _raw(prompt="a" * 20_000, system="Answer.", stream=stream)  # a long run: off the event loop
    direct = MockServer("clean-answer", profile="ollama").handle("ollama.generate", raw, {})
    native.clear_context_cache()
    in_process: list[str] = []
    workers: list[str] = []
    real_render, real_worker = native.render_native_generate_prompt, offload.render_in_worker

    def spy_render(body):
        in_process.append(threading.current_thread().name)
        return real_render(body)

    def spy_worker(endpoint, body):
        workers.append(threading.current_thread().name)
        return real_worker(endpoint, body)

    monkeypatch.setattr(native, "render_native_generate_prompt", spy_render)
    monkeypatch.setattr(offload, "render_in_worker", spy_worker)
    threaded = ThreadedServer(MockServer("clean-answer", profile="ollama")).start()
    try:
        got = httpx.post(threaded.url + "/api/generate", content=raw, timeout=100)
    finally:
        threaded.stop()
    assert got.status_code == direct.status == 200
    assert got.content == (direct.body or b"".join(direct.frames))
    assert json.loads(got.content.splitlines()[-1])["context"][:3] == [200006, 17360, 200008]  # <|start|>system<|message|>
    assert in_process == []  # never under the lock
    assert len(workers) == 1 and workers[0] == "mockoss-offload"  # the off-loop gate's threads (mockoss.workers)


@pytest.mark.timeout(120)
def test_a_tokenizer_panic_in_context_is_the_documented_400_over_http_too():
    """A 1,000,000-character word makes openai-harmony panic: the profile's 400 (replies.failure_reply),
    in process as over HTTP (where the worker's render panics and the lock's side raises that panic),
    and the server goes on answering."""
    raw = _raw(prompt=PANIC_WORD, stream=False)
    direct = MockServer("clean-answer", profile="ollama").handle("ollama.generate", raw, {})
    assert direct.status == 400
    assert "openai-harmony cannot tokenize this request" in json.loads(direct.body)["error"]
    threaded = ThreadedServer(MockServer("clean-answer", profile="ollama")).start()
    try:
        got = httpx.post(threaded.url + "/api/generate", content=raw, timeout=100)
        after = httpx.post(threaded.url + "/api/generate", content=BODIES["plain"], timeout=100)
    finally:
        threaded.stop()
    assert (got.status_code, got.content) == (400, direct.body)
    assert after.status_code == 200 and "context" in after.json()


def test_the_context_cache_is_bounded_in_bytes(monkeypatch):
    assert isinstance(native._prompt_ids, BytesLRU) and native._prompt_ids.limit == native.CONTEXT_CACHE_BYTES
    limit = 1_000_000  # a smaller budget than the real one's 16 MiB, to fill it quickly
    monkeypatch.setattr(native, "_prompt_ids", BytesLRU(limit))
    server = MockServer("clean-answer", profile="ollama")
    prompt_chars = 100_000
    for n in range(20):  # 2 MB of distinct prompts, each sent twice (a key is kept from its second time)
        raw = _raw(prompt=f"{n} " + "new words every time " * (prompt_chars // 21), stream=False)
        for _ in range(2):
            assert server.handle("ollama.generate", raw, {}).status == 200
    cache = native._prompt_ids
    assert 0 < cache.size <= limit
    assert 1 <= len(cache) <= limit // prompt_chars
    assert cache.size >= len(cache) * prompt_chars  # each entry is counted at least its prompt's bytes


def test_a_cached_prompt_is_not_rendered_again_and_reset_empties_the_cache(monkeypatch):
    rendered: list[int] = []
    real = native.render_native_generate_prompt

    def spy(body):
        rendered.append(1)
        return real(body)

    monkeypatch.setattr(native, "render_native_generate_prompt", spy)
    server = MockServer("clean-answer", profile="ollama")
    replies = [server.handle("ollama.generate", BODIES["system-think"], {}) for _ in range(4)]
    assert all(reply.body == replies[0].body for reply in replies)
    assert len(rendered) == 2  # kept from its second time (the doorkeeper), then found
    assert len(native._prompt_ids) == 1 and native._prompt_ids.size > 0
    server.reset()
    assert (len(native._prompt_ids), native._prompt_ids.size) == (0, 0)
