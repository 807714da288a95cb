"""A request that began before a reset and still waits for the server lock is not answered from
the state after it (issue 9, eleventh-session breaker, finding 1): no step, no log entry, no index
of the new state; it gets 503 in its profile's error shape with ``x-should-retry: false``
(mockoss/server/selection.py ``Selection.reset``, ``reset_refusal``).

The request is held before the lock where a big body waits in the server: its prompt count
(``mockoss.server.offload.count_in_worker``, replaced by a counter that waits for the test's
signal), so the reset lands deterministically while it waits. On the old code the held request
took the new state's first step (the next test got "B") and was logged as its request #0.
"""

import contextvars
import threading

import httpx

from mockoss.server import offload
from mockoss.server.core import MockServer
from mockoss.server.prelock import PROMPT_COUNTER
from mockoss.server.run import ThreadedServer

TWO_STEPS = """\
version: 1
steps:
  - completion: {raw: "<|channel|>final<|message|>A<|return|>"}
  - completion: {raw: "<|channel|>final<|message|>B<|return|>"}
"""
BIG = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "from test 1 " + "word " * 60000}]}
SMALL = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "from test 2"}]}


class _HeldCount:
    """A prompt counter that signals it was entered, then waits for :meth:`release` (counted under the lock)."""

    def __init__(self) -> None:
        self.entered, self.go = threading.Event(), threading.Event()

    def __call__(self, endpoint, raw):
        self.entered.set()
        self.go.wait(30)  # then None: counted under the lock, in process

    def release(self):
        self.go.set()


def test_a_request_held_before_the_lock_across_a_reset_is_refused_and_leaves_the_new_state_alone(tmp_path):
    scenario = tmp_path / "two.yaml"
    scenario.write_text(TWO_STEPS)
    server = MockServer(scenario="clean-answer")
    held, out = _HeldCount(), {}
    context = contextvars.copy_context()
    context.run(PROMPT_COUNTER.set, held)
    raw = httpx.Request("POST", "http://x", json=BIG).content
    thread = threading.Thread(target=lambda: out.setdefault("reply", context.run(server.respond, "chat", raw, {})[0]))
    thread.start()
    assert held.entered.wait(30)
    server.reset()  # the next test
    server.use_scenario(str(scenario))
    held.release()
    thread.join(30)
    assert list(server.requests) == []  # not logged into the new state
    reply = server.handle("chat", httpx.Request("POST", "http://x", json=SMALL).content, {})
    assert reply.status == 200 and b'"A"' in reply.body  # its first step, not "B"
    assert [r.index for r in server.requests] == [0]
    fresh = MockServer(scenario=str(scenario))
    assert reply.body == fresh.handle("chat", httpx.Request("POST", "http://x", json=SMALL).content, {}).body  # same ids
    refused = out["reply"]
    assert refused.status == 503
    assert dict(refused.headers)["x-should-retry"] == "false"
    assert b"was reset while this request waited" in refused.body and b'"error"' in refused.body


def test_a_warm_up_held_across_a_reset_is_refused(tmp_path, monkeypatch):
    """The other wait before the lock: the first request on a long answer, warmed on a worker
    thread (mockoss.server.warmup.warmed, here held until the reset is done)."""
    import contextlib

    from mockoss.server import core
    from mockoss.server.warmup import WARM_BEFORE_LOCK

    scenario = tmp_path / "two.yaml"
    scenario.write_text(TWO_STEPS)
    held = _HeldCount()

    @contextlib.contextmanager
    def warmed(server, endpoint, raw, body, headers, checked, view):
        held(endpoint, raw)
        yield view

    monkeypatch.setattr(core, "warmed", warmed)
    server, out = MockServer(scenario="clean-answer"), {}
    context = contextvars.copy_context()
    context.run(WARM_BEFORE_LOCK.set, True)
    raw = httpx.Request("POST", "http://x", json=SMALL).content
    thread = threading.Thread(target=lambda: out.setdefault("reply", context.run(server.respond, "chat", raw, {})[0]))
    thread.start()
    assert held.entered.wait(30)
    server.reset()
    server.use_scenario(str(scenario))
    held.release()
    thread.join(30)
    assert list(server.requests) == []
    assert b'"A"' in server.handle("chat", raw, {}).body
    assert out["reply"].status == 503


def test_an_engine_answer_ending_after_a_reset_is_not_logged_in_the_new_state():
    server = MockServer(scenario="clean-answer")
    reply, step, log = server.play("chat", httpx.Request("POST", "http://x", json=SMALL).content, {})
    assert reply is None and step is not None  # an engine would answer it now
    server.reset()
    log(200)
    assert list(server.requests) == []


def test_serve_a_session_reset_while_a_big_body_waits(monkeypatch):
    held = _HeldCount()
    monkeypatch.setattr(offload, "count_in_worker", held)  # looked up per request (offload._respond_counting)
    running = ThreadedServer(MockServer(scenario="clean-answer")).start()
    try:
        url, out = running.url, {}
        session = {"x-mockoss-test-id": "t1"}

        def first():
            out["first"] = httpx.post(url + "/v1/chat/completions", json=BIG, headers=session, timeout=60)

        thread = threading.Thread(target=first)
        thread.start()
        assert held.entered.wait(30)
        assert httpx.post(url + "/mockoss/reset?test_id=t1").status_code == 204  # "test 2" starts
        yaml = {"content-type": "application/yaml"}
        for test_id in ("t1", "t2"):
            assert httpx.post(url + f"/mockoss/scenario?name=two&test_id={test_id}", content=TWO_STEPS, headers=yaml).status_code < 300
        held.release()
        thread.join(60)
        second = httpx.post(url + "/v1/chat/completions", json=SMALL, headers=session, timeout=30)
        assert second.json()["choices"][0]["message"]["content"] == "A"
        log = httpx.get(url + "/mockoss/requests?test_id=t1").json()
        assert [(e["index"], e["status"]) for e in log] == [(0, 200)]
        alone = httpx.post(url + "/v1/chat/completions", json=SMALL, headers={"x-mockoss-test-id": "t2"}, timeout=30)
        assert second.content == alone.content  # the bytes a session of its own gives: same ids
        assert out["first"].status_code == 503
        assert out["first"].headers["x-should-retry"] == "false"
        assert out["first"].json()["error"]["message"].startswith("mockoss: the server was reset while this request waited")
    finally:
        running.stop()


FIXTURE_SUITE = '''
import threading
import httpx
import pytest
from mockoss.server import offload

entered, go, out = threading.Event(), threading.Event(), {}


def held(endpoint, raw):
    entered.set()
    go.wait(30)
    return None


offload.count_in_worker = held  # the big body's prompt count waits for test 2 (looked up per request)


def test_fire_and_forget(mockoss):
    mockoss.use([{"completion": {"messages": [{"channel": "final", "content": "from test 1's scenario"}]}}])
    body = {"model": mockoss.model, "messages": [{"role": "user", "content": "from test 1 " + "word " * 60000}]}
    threading.Thread(target=lambda: out.setdefault("r", httpx.post(mockoss.base_url + "/chat/completions", json=body, timeout=60)), daemon=True).start()
    assert entered.wait(30)  # the test ends while its app's request waits


def test_next_is_clean(mockoss):
    mockoss.use([{"completion": {"messages": [{"channel": "final", "content": "A"}]}}, {"completion": {"messages": [{"channel": "final", "content": "B"}]}}])
    go.set()
    for _ in range(600):
        if "r" in out:
            break
        threading.Event().wait(0.05)
    r = httpx.post(mockoss.base_url + "/chat/completions", json={"model": mockoss.model, "messages": [{"role": "user", "content": "from test 2"}]}, timeout=30)
    assert r.json()["choices"][0]["message"]["content"] == "A"
    assert [(q.index, q.messages[-1]["content"]) for q in mockoss.requests] == [(0, "from test 2")]
    assert out["r"].status_code == 503
'''


def test_fixture_the_next_test_sees_only_its_own_requests_and_its_first_step(pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(FIXTURE_SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
