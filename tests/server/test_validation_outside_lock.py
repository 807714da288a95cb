"""A request is parsed and validated before ``MockServer.respond`` takes the server lock.

Issue 9's isolation target: a big body of many short messages takes seconds to validate, on a
worker thread (``mockoss.server.offload``); under the lock, every other request waited for it.
"""

from __future__ import annotations

import json
import threading

import pytest

from mockoss.server import prelock, request_check
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"


def _chat(content: str) -> bytes:
    return json.dumps({"model": MODEL, "messages": [{"role": "user", "content": content}]}).encode()


def test_validation_runs_without_the_server_lock(monkeypatch):
    server = MockServer("clean-answer")
    held: list[bool] = []
    real = request_check.validate_request

    def watched(schema, body):
        held.append(server._lock.locked())
        return real(schema, body)

    monkeypatch.setattr(request_check, "validate_request", watched)
    assert server.handle("chat", _chat("hi"), {}).status == 200
    assert held == [False]


def test_another_request_is_answered_while_one_is_being_validated(monkeypatch):
    server = MockServer("clean-answer")
    slow_started, release = threading.Event(), threading.Event()
    real = request_check.validate_request

    def gated(schema, body):
        if body["messages"][0]["content"] == "slow":
            slow_started.set()
            assert release.wait(30)
        return real(schema, body)

    monkeypatch.setattr(request_check, "validate_request", gated)
    results: dict[str, int] = {}
    slow = threading.Thread(target=lambda: results.setdefault("slow", server.handle("chat", _chat("slow"), {}).status))
    slow.start()
    try:
        assert slow_started.wait(30)
        fast = threading.Thread(target=lambda: results.setdefault("fast", server.handle("chat", _chat("fast"), {}).status))
        fast.start()
        fast.join(10)  # with the validation under the lock, this waited for the slow one (which waits for it)
        answered_meanwhile = not fast.is_alive()
    finally:
        release.set()
        slow.join(30)
    assert answered_meanwhile
    assert results == {"fast": 200, "slow": 200}
    # Indices follow the order the lock was taken: the fast request first.
    assert [(r.index, json.loads(r.raw)["messages"][0]["content"]) for r in server.requests] == [(0, "fast"), (1, "slow")]


def test_an_invalid_transport_header_is_still_answered_before_the_body_is_judged():
    server = MockServer("clean-answer")
    reply = server.handle("chat", b"not json", {"x-mockoss-transport": "ttft_ms=-5"})
    assert reply.status == 400
    assert "mockoss:" in json.loads(reply.body)["error"]["message"]
    assert "ttft" in json.loads(reply.body)["error"]["message"]


def test_a_validation_crash_is_still_a_reply_in_the_error_shape(monkeypatch):
    server = MockServer("clean-answer")

    def broken(schema, body):
        raise RuntimeError("boom")

    monkeypatch.setattr(request_check, "validate_request", broken)
    reply = server.handle("chat", _chat("hi"), {})
    assert reply.status == 500
    error = json.loads(reply.body)["error"]  # vLLM's error shape, the exception named
    assert error["message"] == "mockoss internal error (a bug, please report it): RuntimeError: boom"
    assert error["code"] == 500
    assert "boom" in server.requests[-1].problem


@pytest.mark.parametrize(
    ("before", "after", "endpoint", "body"),
    [
        ("vllm", "gptoss-reference", "chat", {"messages": [{"role": "user", "content": "hi"}]}),
        ("ollama", "vllm", "ollama.chat", {"model": "gpt-oss:20b", "messages": [{"role": "user", "content": "hi"}], "stream": False}),
        ("vllm", "ollama", "chat", {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}),
    ],
)
def test_a_request_validated_while_the_profile_changes_is_answered_by_the_new_profile_alone(monkeypatch, before, after, endpoint, body):
    # A review's finding: validated against the old profile before the lock, answered by the new one
    # under it, such a request got a reply mixing the two (vllm -> gptoss-reference: an unscripted 500).
    server = MockServer("clean-answer", profile=before)
    started, release = threading.Event(), threading.Event()
    real = request_check.validate_request

    def gated(schema, data):
        if not started.is_set():
            started.set()
            assert release.wait(30)
        return real(schema, data)

    monkeypatch.setattr(request_check, "validate_request", gated)
    raw = json.dumps(body).encode()
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("reply", server.handle(endpoint, raw, {})))
    worker.start()
    assert started.wait(30)
    server.set_profile(after)  # the request holds no lock while it is validated
    release.set()
    worker.join(30)
    monkeypatch.setattr(request_check, "validate_request", real)
    expected = MockServer("clean-answer", profile=after).handle(endpoint, raw, {})
    assert (out["reply"].status, out["reply"].body) == (expected.status, expected.body)


def test_a_big_requests_view_and_count_are_made_without_the_lock(monkeypatch):
    """With a prompt counter set (a big body, mockoss.server.offload), the request's view (100,000
    tools: ~170 ms) and the count are made before the lock; an invalid request is never counted."""
    from mockoss.schemas import chat

    server = MockServer("clean-answer")
    held: dict[str, list[bool]] = {"view": [], "count": []}

    def counter(endpoint: str, raw: bytes) -> int:
        held["count"].append(server._lock.locked())
        return 7

    views = [cls for cls in vars(chat).values() if isinstance(cls, type) and "view" in vars(cls)]
    assert views
    for cls in views:
        original = vars(cls)["view"]

        def watched(self, model, body, _original=original):
            held["view"].append(server._lock.locked())
            return _original(self, model, body)

        monkeypatch.setattr(cls, "view", watched)
    token = prelock.PROMPT_COUNTER.set(counter)
    try:
        ok = server.handle("chat", _chat("hi"), {})
        bad = server.handle("chat", json.dumps({"model": "nope", "messages": [{"role": "user", "content": "hi"}]}).encode(), {})
    finally:
        prelock.PROMPT_COUNTER.reset(token)
    assert ok.status == 200 and json.loads(ok.body)["usage"]["prompt_tokens"] == 7
    assert bad.status == 404
    assert held == {"view": [False], "count": [False]}


def test_a_big_requests_declared_tools_are_walked_without_the_lock(monkeypatch):
    """A scripted tool call is checked against the declared tools; for a big body (a prompt
    counter set) they are found before the lock (tool_check.DECLARED): 100,000 tools took
    58-98 ms, which every other request waited for. A small body walks them under the lock."""
    from mockoss.scenario import tool_check

    servers = [MockServer("clean-tool-call"), MockServer("clean-tool-call")]  # its first step calls the tool
    held: list[bool] = []
    real = tool_check._walk

    def watched(body):
        held.append(any(s._lock.locked() for s in servers))
        return real(body)

    monkeypatch.setattr(tool_check, "_walk", watched)
    tools = [{"type": "function", "function": {"name": f"tool_{i}", "parameters": {"type": "object"}}} for i in range(50)]
    tools.append({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"location": {"type": "integer"}}}}})
    raw = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": tools}).encode()
    token = prelock.PROMPT_COUNTER.set(lambda endpoint, raw: 11)
    try:
        big = servers[0].respond("chat", raw, {})[0]
    finally:
        prelock.PROMPT_COUNTER.reset(token)
    assert big.status == 200 and held == [False]
    small = servers[1].respond("chat", raw, {})[0]
    assert small.status == 200 and held == [False, True]
    warned = [r.warnings for s in servers for r in s.requests]
    assert len(warned) == 2 and warned[0] == warned[1] and any("location" in w for w in warned[0])  # checked the same way
    assert tool_check.DECLARED.get() is None


def test_a_failing_prompt_counter_means_counting_in_process():
    server = MockServer("clean-answer")

    def broken(endpoint: str, raw: bytes) -> int:
        raise ValueError("the worker answered nonsense")

    token = prelock.PROMPT_COUNTER.set(broken)
    try:
        reply = server.handle("chat", _chat("What is 2 + 2?"), {})
    finally:
        prelock.PROMPT_COUNTER.reset(token)
    assert reply.status == 200
    assert json.loads(reply.body)["usage"] == json.loads(MockServer("clean-answer").handle("chat", _chat("What is 2 + 2?"), {}).body)["usage"]
