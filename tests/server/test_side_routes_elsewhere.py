"""Side routes that render whole prompts keep off the event loop and the GIL, and a tokenizer
panic the worker process reports is not redone in process.

Issue 9, review (the breaker's finding 5, measured): vLLM's ``/tokenize`` with ``messages`` and
llama-server's ``/apply-template`` rendered the chat prompt in process: 7,000 short messages
(254 KB) held the event loop 480/467 ms, and 40,000 (1.5 MB) held the GIL on a thread for seconds
(another client waited up to 4.2/5.35 s). And when the worker process's tokenizer panicked (a
1,000,000-character word), the server tokenized again in process to raise the same panic: ~90 ms
holding the GIL each time. (Finding 8, a string per token: ``tests/profiles/test_token_strings.py``.)

The replies must not change by a byte: each case here is compared with the in-process path.
"""

from __future__ import annotations

import json
import threading

import httpx
import pytest

import mockoss.harmony.prompt
from mockoss.harmony import encoding
from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.ollama import native
from mockoss.server import offload
from mockoss.server.core import MockServer
from mockoss.server.prompt_worker import PanicException
from mockoss.server.run import ThreadedServer

#: vLLM and SGLang refuse a body not sent as application/json (mockoss.server.content_type).
JSON_TYPE = {"content-type": "application/json"}

MODEL = "openai/gpt-oss-20b"
PANIC_WORD = "a" * 1_000_000  # openai-harmony's pre-tokenizer overflows its stack: a PanicException
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


@pytest.fixture(autouse=True)
def _stop_worker():
    yield
    offload.shutdown()


def _messages(n: int) -> list[dict[str, object]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]


def _raw(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


CHATS = {
    "tools": {"messages": [{"role": "system", "content": "Be brief."}, *_messages(5)], "tools": TOOLS, "reasoning_effort": "high"},
    "no-generation-prompt": {"messages": _messages(3), "add_generation_prompt": False, "continue_final_message": True},
    "tool-call-turn": {
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
        ],
        "tools": TOOLS,
        "tool_choice": "none",
    },
    "unicode-specials": {"messages": [{"role": "user", "content": [{"type": "text", "text": "é😀 中文 <|start|>x"}]}], "chat_template_kwargs": {"x": 1}},
    "empty": {"messages": []},
    "many": {"messages": _messages(300)},
}
#: The side routes that render a chat prompt, and how each body is sent to them.
RENDERERS = {"vllm": ("/tokenize", {"model": MODEL}), "llamacpp": ("/apply-template", {})}


def _side(profile: str, chat: dict[str, object], **extra: object) -> tuple[str, bytes]:
    path, fields = RENDERERS[profile]
    return path, _raw({**fields, **chat, **extra})


# -- the render goes to the worker process (finding 5) ------------------------------------------


@pytest.mark.parametrize("profile", list(RENDERERS))
@pytest.mark.parametrize("name", list(CHATS))
def test_a_side_route_render_in_the_worker_gives_the_same_bytes(profile, name, monkeypatch):
    server = MockServer("clean-answer", profile=profile)
    extra = {"return_token_strs": True} if profile == "vllm" and name != "many" else {}
    path, raw = _side(profile, CHATS[name], **extra)
    alone = server.probe("POST", path, raw)
    assert alone.status == 200
    used: list[str] = []
    real = offload.render_in_worker

    def spy(endpoint: str, body: bytes) -> str | None:
        used.append(endpoint)
        return real(endpoint, body)

    monkeypatch.setattr(offload, "render_in_worker", spy)
    elsewhere = offload.probe_elsewhere(server, "POST", path, raw)
    assert used == ["chat"]  # the chat endpoint's render_prompt: render_chat_prompt(body), as in process
    assert (elsewhere.status, elsewhere.media_type, elsewhere.body) == (alone.status, alone.media_type, alone.body)
    assert encoding.RENDER_ELSEWHERE.get() is None and encoding.ENCODE_ELSEWHERE.get() is None


@pytest.mark.parametrize("count", [0, 1, 2, 9_000, 13_107, 13_108, 40_000])
def test_the_workers_ids_text_is_read_back_in_slices_as_one_split(count):
    """``ids_from_text`` converts ~64 Ki characters per step (one ``split`` of the 319,000 ids of
    40,000 messages held the GIL ~0.1 s); the same ids, whatever falls on a slice's edge."""
    ids = [(i * 7919) % encoding.VOCABULARY_SIZE for i in range(count)]
    joined = ",".join(map(str, ids))
    assert encoding.ids_from_text(joined) == ids == ([int(part) for part in joined.split(",")] if joined else [])


def test_many_messages_make_a_side_route_body_heavy_and_a_small_one_is_not(monkeypatch):
    assert not offload.side_route_heavy(_raw({"model": MODEL, "prompt": "hi", "return_token_strs": True}))
    assert not offload.side_route_heavy(json.dumps({"messages": _messages(100)}).encode())
    # Whatever is_heavy says of a body (its own business: size, long pieces, batches), many
    # messages or 32 KiB make a side route's body heavy.
    monkeypatch.setattr(offload, "is_heavy", lambda endpoint, raw, offload_bytes=offload.OFFLOAD_BYTES: False)
    assert offload.side_route_heavy(json.dumps({"messages": _messages(offload.SIDE_ROUTE_OBJECTS)}).encode())  # ~5 KB
    seven_thousand = json.dumps({"model": MODEL, "messages": _messages(7000)}, separators=(",", ":")).encode()
    assert len(seven_thousand) < offload.OFFLOAD_BYTES and offload.side_route_heavy(seven_thousand)  # the breaker's 254 KB body
    words = _raw({"model": MODEL, "prompt": " ".join(f"w{i}" for i in range(6000)), "return_token_strs": True})
    assert len(words) >= offload.SIDE_ROUTE_BYTES and offload.side_route_heavy(words)
    assert not offload.side_route_heavy(words[: offload.SIDE_ROUTE_BYTES - 1])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("profile", list(RENDERERS))
def test_many_messages_over_http_are_rendered_in_the_worker_off_the_loop(profile, monkeypatch):
    path, raw = _side(profile, {"messages": _messages(400), "tools": TOOLS})  # ~12 KB: small, but 400 messages
    direct = MockServer("clean-answer", profile=profile).probe("POST", path, raw)
    workers: list[str] = []
    real = offload.render_in_worker

    def spy(endpoint: str, body: bytes) -> str | None:
        workers.append(threading.current_thread().name)
        return real(endpoint, body)

    def in_process(*args: object, **kwargs: object) -> list[int]:
        raise AssertionError("rendered in process")

    monkeypatch.setattr(offload, "render_in_worker", spy)
    monkeypatch.setattr(mockoss.harmony.prompt, "render_chat_prompt", in_process)
    threaded = ThreadedServer(MockServer("clean-answer", profile=profile)).start()
    try:
        got = httpx.post(threaded.url + path, headers=JSON_TYPE, content=raw, timeout=100)
    finally:
        threaded.stop()
    assert (got.status_code, got.content) == (200, direct.body)
    assert workers == ["mockoss-offload"]  # the gate's daemon threads (mockoss.workers)


# -- a tokenizer panic in the worker is not redone in process (3) ---------------------------------


def _library_panic(call) -> BaseException:
    try:
        call()
    except BaseException as exc:  # noqa: BLE001  (pyo3's PanicException is a BaseException)
        assert type(exc).__name__ == "PanicException"
        return exc
    raise AssertionError("no panic")


def test_the_worker_reports_a_panic_with_its_text():
    library = load_encoding()
    panic = _library_panic(lambda: library.encode(PANIC_WORD, allowed_special="all"))
    with pytest.raises(PanicException) as encoded:
        offload.encode_in_worker(PANIC_WORD, True)
    with pytest.raises(PanicException) as rendered:
        offload.render_in_worker("chat", _raw({"messages": [{"role": "user", "content": PANIC_WORD}]}))
    with pytest.raises(PanicException) as generated:
        offload.render_in_worker("ollama.generate", _raw({"model": "gpt-oss:20b", "prompt": PANIC_WORD}))
    assert str(encoded.value) == str(rendered.value) == str(generated.value) == str(panic)
    assert "StackOverflow" in str(panic)
    assert offload.encode_in_worker("hi", True) == list(library.encode("hi", allowed_special="all"))  # still serving


PANICS = {
    "vllm-prompt": ("vllm", "/tokenize", {"model": MODEL, "prompt": PANIC_WORD}),
    "vllm-messages": ("vllm", "/tokenize", {"model": MODEL, "messages": [{"role": "user", "content": PANIC_WORD}]}),
    "llamacpp-content": ("llamacpp", "/tokenize", {"content": PANIC_WORD, "with_pieces": True}),
    "llamacpp-template": ("llamacpp", "/apply-template", {"messages": [{"role": "user", "content": PANIC_WORD}]}),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(PANICS))
def test_a_panic_in_the_worker_is_the_same_400_without_tokenizing_again_in_process(name, monkeypatch):
    profile, path, body = PANICS[name]
    raw = _raw(body)
    server = MockServer("clean-answer", profile=profile)
    alone = server.probe("POST", path, raw)  # in process: openai-harmony's own panic
    assert alone.status == 400 and b"openai-harmony cannot tokenize this request" in alone.body

    def in_process(*args: object, **kwargs: object) -> object:
        raise AssertionError("tokenized in process")

    monkeypatch.setattr(encoding, "load_encoding", in_process)  # encode_text's, in this process only
    monkeypatch.setattr(mockoss.harmony.prompt, "render_chat_prompt", in_process)
    elsewhere = offload.probe_elsewhere(server, "POST", path, raw)
    assert (elsewhere.status, elsewhere.media_type, elsewhere.body) == (alone.status, alone.media_type, alone.body)


@pytest.mark.timeout(120)
def test_a_panic_in_a_generate_context_is_the_same_400_without_rendering_again_in_process(monkeypatch):
    raw = _raw({"model": "gpt-oss:20b", "prompt": PANIC_WORD, "stream": False})
    alone_server = MockServer("clean-answer", profile="ollama")
    alone = alone_server.handle("ollama.generate", raw, {})
    assert alone.status == 400 and b"openai-harmony cannot tokenize this request" in alone.body
    native.clear_context_cache()

    def in_process(body: object) -> list[int]:
        raise AssertionError("rendered in process")

    monkeypatch.setattr(native, "render_native_generate_prompt", in_process)
    server = MockServer("clean-answer", profile="ollama")
    reply, _ = offload._respond_counting(server, "ollama.generate", raw, {})
    assert (reply.status, reply.body) == (alone.status, alone.body)
    assert native.PRERENDERED_PROMPT.get() is None
    # The request log says the same as when the panic happened in process.
    assert [r.status for r in server.requests] == [r.status for r in alone_server.requests] == [400]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["vllm-messages", "llamacpp-template"])
def test_a_panic_in_a_side_route_render_over_http_is_the_same_400(name):
    profile, path, body = PANICS[name]
    raw = _raw(body)
    direct = MockServer("clean-answer", profile=profile).probe("POST", path, raw)
    threaded = ThreadedServer(MockServer("clean-answer", profile=profile)).start()
    try:
        got = httpx.post(threaded.url + path, headers=JSON_TYPE, content=raw, timeout=100)
        after = httpx.post(threaded.url + path, headers=JSON_TYPE, content=_side(profile, CHATS["tools"])[1], timeout=100)
    finally:
        threaded.stop()
    assert (got.status_code, got.content) == (400, direct.body)
    assert after.status_code == 200
