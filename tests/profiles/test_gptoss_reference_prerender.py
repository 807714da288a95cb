"""gptoss-reference renders its prompt before the server lock, off the event loop, with the same tokens.

The profile renders the whole prompt for ``usage.input_tokens`` (openai/gpt-oss@7b58334:
gpt_oss/responses_api/api_server.py ``generate``: ``render_conversation_for_completion``), the
kept turns of a ``previous_response_id`` merged in. mockoss did it under the server lock on the
event loop: a 70,000-character word made another client wait 2.6 s, 1,000 one-letter items
235 ms, a 111-byte continuation of a 2.5M-token kept chain 1.1 s (issue 9: at most 50 ms more
than alone; session 15's breaker, F2 and F3). Now a heavy request is answered on a worker thread
(:func:`mockoss.server.prelock.wanted`) and its prompt rendered there before the lock, in the
prompt worker process (:mod:`mockoss.profiles.gptoss_ref.prerender`); under the lock it is reused
when the kept entry it read is still the one kept. No reply may change by a byte.
"""

from __future__ import annotations

import json
import marshal
import threading

import httpx
import pytest

from mockoss.jsonbody import parse_json
from mockoss.profiles import gptoss_ref
from mockoss.profiles.gptoss_ref import prerender
from mockoss.profiles.gptoss_ref.prompt import PromptError, prompt_tokens
from mockoss.profiles.gptoss_ref.store import merged
from mockoss.server import offload, prelock
from mockoss.server.core import MockServer
from mockoss.server.prompt_client import ask_in_worker
from mockoss.server.run import ThreadedServer
from mockoss.server.warmup import WARM_BEFORE_LOCK

DATE = "2025-08-05"
LIBRARIES = ("openai-harmony-0.0.8", "oss-harmony")


@pytest.fixture(autouse=True)
def _stop_worker():
    yield
    offload.shutdown()


def _call(n: int) -> list[dict[str, object]]:
    return [
        {"type": "function_call", "name": f"f{n % 3}", "arguments": '{"x":1}', "call_id": f"c{n}"},
        {"type": "function_call_output", "call_id": f"c{n}", "output": "ok"},
    ]


TOOLS = [
    {"type": "function", "name": f"f{n}", "description": "d", "parameters": {"type": "object", "properties": {}}}
    for n in range(3)
]
BODIES: dict[str, dict[str, object]] = {
    "text": {"input": "Why is the sky blue?"},
    "word": {"input": "a" * 9_000, "reasoning": {"effort": "high"}},
    "items": {"input": [{"role": "user", "content": "x"} for _ in range(100)]},
    "agent": {"input": [item for n in range(40) for item in _call(n)], "tools": TOOLS, "instructions": "Be brief."},
    "no-call": {"input": [{"type": "function_call_output", "call_id": "nope", "output": "1"}]},  # the server's 500
}


def _in_process(
    body: dict[str, object], library: str, entry: bytes | None = None, instructions: str | None = None
) -> list[int]:
    given = dict(body)
    if entry is not None:
        given["input"], given["instructions"] = merged(entry, given["input"], instructions)
    return prompt_tokens(given, DATE, library)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("name", list(BODIES))
def test_the_worker_answer_is_the_render_in_process(name, library):
    body = {"model": "m", **BODIES[name]}
    raw = json.dumps(body).encode()
    answer = prerender.worker_answer(prerender.worker_payload(DATE, library, None, None, raw), parse_json)
    try:
        expected = _in_process(body, library)
    except PromptError as exc:
        assert answer == prerender.PROMPT_FAILED + str(exc).encode()
        return
    found = prerender.prepare(body, _Checked(), None, DATE, library, raw, lambda payload: answer)
    assert found is not None and list(found.tokens) == expected  # type: ignore[arg-type]


class _Checked:
    """The pydantic model's two fields prepare() reads."""

    def __init__(self, previous: str | None = None, instructions: str | None = None) -> None:
        self.previous_response_id, self.instructions = previous, instructions


@pytest.mark.timeout(120)
def test_the_worker_process_renders_a_continuation_as_in_process():
    entry = marshal.dumps(
        (
            BODIES["agent"]["input"],
            [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}],
            "Old.",
        )
    )
    body = {"model": "m", "input": "and now?", "tools": TOOLS, "previous_response_id": "resp_1"}
    raw = json.dumps(body).encode()
    for library in LIBRARIES:
        found = prerender.prepare(
            body,
            _Checked("resp_1"),
            {"resp_1": entry},
            DATE,
            library,
            raw,
            lambda payload: ask_in_worker(b"gptoss-reference", payload),
        )
        assert found is not None and found.entry is entry
        assert list(found.tokens) == _in_process(body, library, entry)  # type: ignore[arg-type]


def _same(a, b) -> None:
    assert (a.status, a.media_type, a.body, a.frames, a.headers, a.abort, a.log) == (
        b.status,
        b.media_type,
        b.body,
        b.frames,
        b.headers,
        b.abort,
        b.log,
    )


def _chain() -> list[tuple[bytes, dict[str, str]]]:
    """Requests of a chain (store, then continuations: streamed, with ``__debug`` metadata, an
    output without its call, an id never kept) and the heavy bodies."""
    first = {
        "model": "m",
        "input": [item for n in range(40) for item in _call(n)],
        "tools": TOOLS,
        "store": True,
        "instructions": "Be brief.",
    }
    return [
        (json.dumps(b).encode(), {})
        for b in [
            first,
            {"model": "m", "input": "a" * 9_000, "previous_response_id": "PREV", "store": True},
            {"model": "m", "input": "hi", "previous_response_id": "PREV", "stream": True, "store": True},
            {
                "model": "m",
                "input": [{"role": "user", "content": "x"}] * 80,
                "previous_response_id": "PREV",
                "metadata": {"__debug": True},
            },
            {
                "model": "m",
                "input": [{"type": "function_call_output", "call_id": "c3", "output": "again"}],
                "previous_response_id": "PREV",
            },
            {
                "model": "m",
                "input": [{"type": "function_call_output", "call_id": "zz", "output": "1"}],
                "previous_response_id": "PREV",
            },
            {"model": "m", "input": "hi", "previous_response_id": "resp_never_kept"},
            {"model": "m", "input": "hi", "reasoning": None, "tools": None},
        ]
    ]


def _play(server: MockServer, before_lock: bool) -> list[object]:
    replies, previous = [], None
    for raw, headers in _chain():
        if previous is not None:
            raw = raw.replace(b'"PREV"', json.dumps(previous).encode())
        token = WARM_BEFORE_LOCK.set(before_lock)  # on a worker thread: prelock.before_lock runs
        try:
            reply = server.respond("responses", raw, headers)[0]
        finally:
            WARM_BEFORE_LOCK.reset(token)
        replies.append(reply)
        if (
            reply.status == 200 and b'"store": true' in raw and b'"stream": true' not in raw
        ):  # chained to the non-streamed
            previous = json.loads(reply.body)["id"]
    return replies


@pytest.mark.parametrize("library", LIBRARIES)
def test_the_replies_are_the_same_with_the_prompt_rendered_before_the_lock(library, monkeypatch):
    switches = {"harmony_library": library}
    alone = _play(MockServer("clean-answer", profile="gptoss-reference", switches=switches), before_lock=False)
    assert [r.status for r in alone] == [200, 200, 200, 200, 200, 500, 200, 200]  # type: ignore[attr-defined]
    heavy: list[bytes] = []

    def in_worker(payload: bytes) -> bytes:  # the worker's answer, computed here
        heavy.append(payload)
        return prerender.worker_answer(payload, parse_json)

    def under_the_lock(*args, **kwargs):
        raise AssertionError("rendered under the lock")

    monkeypatch.setattr(prelock, "_in_worker", in_worker)
    monkeypatch.setattr(gptoss_ref, "prompt_tokens", under_the_lock)
    before = _play(MockServer("clean-answer", profile="gptoss-reference", switches=switches), before_lock=True)
    for a, b in zip(before, alone, strict=True):
        _same(a, b)
    assert len(heavy) == 6  # the agent turn (80 items) and the continuations of it in the worker; the last two here
    assert prerender.PRERENDERED.get() is None


def test_a_kept_entry_replaced_before_the_lock_is_rendered_again(monkeypatch):
    """The render is reused only for the very entry it read (identity): one kept again under the
    same id meanwhile is read under the lock, as before."""
    server = MockServer("clean-answer", profile="gptoss-reference")
    kept = server.kept
    kept.put("resp_x", prerender_entry("first"))
    other = prerender_entry("second, longer text of the other entry")
    real = prelock._own_prompt

    def then_replaced(*args):
        own = real(*args)
        kept.put("resp_x", other)  # what a request kept under the lock meanwhile would do
        return own

    monkeypatch.setattr(prelock, "_own_prompt", then_replaced)
    raw = json.dumps({"model": "m", "input": "hi", "previous_response_id": "resp_x"}).encode()
    token = WARM_BEFORE_LOCK.set(True)
    try:
        got = server.respond("responses", raw, {})[0]
    finally:
        WARM_BEFORE_LOCK.reset(token)
    expected = MockServer("clean-answer", profile="gptoss-reference")
    expected.kept.put("resp_x", other)
    _same(got, expected.handle("responses", raw, {}))
    assert json.loads(got.body)["usage"]["input_tokens"] == len(_in_process({"input": "hi"}, LIBRARIES[0], other))


def prerender_entry(text: str) -> bytes:
    """A kept entry as :func:`mockoss.profiles.gptoss_ref.store.keep` writes it."""
    return marshal.dumps(
        ([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}], [], None)
    )


def test_handed_tokens_need_the_same_body_entry_date_and_library():
    body, entry = {"input": "x"}, prerender_entry("a")
    token = prerender.PRERENDERED.set(prerender.Prerendered(body, entry, DATE, LIBRARIES[0], [1, 2]))
    try:
        assert prerender.handed(body, entry, DATE, LIBRARIES[0]) == [1, 2]
        assert prerender.handed(dict(body), entry, DATE, LIBRARIES[0]) is None
        assert prerender.handed(body, bytes(bytearray(entry)), DATE, LIBRARIES[0]) is None  # equal, not the same
        assert prerender.handed(body, None, DATE, LIBRARIES[0]) is None
        assert prerender.handed(body, entry, "2025-08-06", LIBRARIES[0]) is None
        assert prerender.handed(body, entry, DATE, LIBRARIES[1]) is None
    finally:
        prerender.PRERENDERED.reset(token)


def test_the_http_layer_sends_heavy_renders_off_the_loop():
    server = MockServer("clean-answer", profile="gptoss-reference")
    small = json.dumps({"model": "m", "input": [{"role": "user", "content": "x"}] * 10}).encode()
    items = json.dumps({"model": "m", "input": [{"role": "user", "content": "x"}] * prerender.ITEMS}).encode()
    assert not prelock.wanted(server, "responses", small)
    assert prelock.wanted(server, "responses", items)
    server.kept.put("resp_small", prerender_entry("short"))
    server.kept.put("resp_big", prerender_entry("words " * 6_000))
    server.kept.put("resp_word", prerender_entry("w" * 9_000))  # one long pre-tokenizer piece
    for previous, heavy in (("resp_small", False), ("resp_big", True), ("resp_word", True), ("resp_unknown", False)):
        raw = json.dumps({"model": "m", "input": "hi", "previous_response_id": previous}).encode()
        assert prelock.wanted(server, "responses", raw) is heavy, previous
    assert not prelock.wanted(MockServer("clean-answer", profile="vllm"), "responses", items)


@pytest.mark.timeout(120)
def test_a_continuation_of_a_big_kept_chain_is_rendered_in_the_worker_not_on_the_loop(monkeypatch):
    """Over HTTP: the 100-byte continuation goes to a worker thread, whose render asks the worker
    process; nothing renders under the lock (the breaker's F3: 1.1 s on the loop, under the lock)."""
    server = MockServer("clean-answer", profile="gptoss-reference")
    server.kept.put("resp_big", prerender_entry("words and more words " * 3_000))
    raw = json.dumps({"model": "m", "input": "hi", "previous_response_id": "resp_big"}).encode()
    expected = MockServer("clean-answer", profile="gptoss-reference")
    expected.kept.put("resp_big", prerender_entry("words and more words " * 3_000))
    direct = expected.handle("responses", raw, {})
    threads: list[str] = []
    locked: list[str] = []
    real_worker, real_render = prelock._in_worker, gptoss_ref.prompt_tokens

    def spy_worker(payload):
        threads.append(threading.current_thread().name)
        return real_worker(payload)

    def spy_render(*args):
        locked.append(threading.current_thread().name)
        return real_render(*args)

    monkeypatch.setattr(prelock, "_in_worker", spy_worker)
    monkeypatch.setattr(gptoss_ref, "prompt_tokens", spy_render)
    threaded = ThreadedServer(server).start()
    try:
        got = httpx.post(
            threaded.url + "/v1/responses", content=raw, headers={"content-type": "application/json"}, timeout=100
        )
    finally:
        threaded.stop()
    assert (got.status_code, got.content) == (200, direct.body)
    assert threads == ["mockoss-offload"] and locked == []
