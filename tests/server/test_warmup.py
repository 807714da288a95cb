"""The first request of each shape on a long scripted answer builds its plans before the server
lock, on a worker thread (mockoss.server.warmup, issue 9: another client's small request waits at
most 50 ms more than alone). Before, the parser trace, plan and reply template of a 40,000-token
answer were built under the lock, on the event loop: 250-600 ms every other client waited.

Structural checks, not timings: what the reply under the lock finds in the completion's memo, on
which thread ``surface`` runs, and that replies, ids and the request log stay what they were.
"""

from __future__ import annotations

import json
import threading

import anyio
import pytest
from warmup_support import watch_warm_ups  # tests/server is on sys.path

from mockoss.profiles.base import Reply
from mockoss.scenario.loader import scenario_from_data
from mockoss.server import warmup
from mockoss.server.core import MockServer
from mockoss.server.offload import Gate

WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "wise", "owls", "watch", "quietly")


def _long_scenario(tag: str, tokens: int = 1500, steps: int = 1):
    """A scenario of ``steps`` long answers, whose text holds ``tag`` (a completion of its own:
    completions are shared by content, memos included, across the whole process)."""
    text = " ".join(WORDS[i % len(WORDS)] for i in range(tokens))
    answers = [
        {"completion": {"messages": [{"channel": "analysis", "content": f"{tag} {n}"}, {"channel": "final", "content": text}]}}
        for n in range(steps)
    ]
    return scenario_from_data({"steps": answers}, name=f"long-{tag}", default_version=True)


_ONES = bytes.maketrans(b"1", b"2")


def _same_tag(data: bytes) -> bytes:
    """``data`` with the tags 1111 and 2222 (streamed as ``111``, ``1``) alike: every ``1`` a ``2``
    (on both sides of the comparison)."""
    return data.translate(_ONES)


def _chat(server: MockServer, content: str = "hi", **fields) -> bytes:
    model = server.info.served_model_names[0]
    return json.dumps({"model": model, "messages": [{"role": "user", "content": content}], **fields}).encode()


class _WatchedLock:
    """The server lock, noting the completion memo's keys each time it is taken."""

    def __init__(self, memo) -> None:
        self._lock, self._memo, self.keys_at_entry = threading.Lock(), memo, []

    def __enter__(self):
        self._lock.acquire()
        self.keys_at_entry.append(set(self._memo))
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()


def _watch_surface(monkeypatch, server: MockServer, calls: list) -> None:
    """Note (thread id, lock held) for every ``surface`` call of the server's profile class."""
    cls = type(server._base_profile)
    real = cls.surface

    def surface(self, endpoint, completion, request, ctx):
        calls.append((threading.get_ident(), server._lock.locked()))
        return real(self, endpoint, completion, request, ctx)

    monkeypatch.setattr(cls, surface.__name__, surface)


async def _through_gate(gate: Gate, server: MockServer, endpoint: str, raw: bytes, headers=None) -> tuple[Reply, int]:
    reply, _delivery = await gate.respond(server, endpoint, raw, headers or {})
    return reply, threading.get_ident()


@pytest.mark.parametrize(
    ("profile", "endpoint", "fields"),
    [
        ("vllm", "chat", {"stream": True}),
        ("vllm", "chat", {"max_tokens": 900}),  # a limit that cuts the answer: a plan of its own
        ("llamacpp", "chat", {"stream": True}),
        ("ollama", "ollama.chat", {"stream": True}),
    ],
)
def test_the_first_request_of_a_shape_finds_its_plans_built_when_it_takes_the_lock(monkeypatch, profile, endpoint, fields):
    scenario = _long_scenario(f"first-{profile}-{endpoint}-{len(fields)}-{fields.get('max_tokens')}")
    server = MockServer(scenario=scenario, profile=profile)
    completion = scenario.steps[0].completion
    assert completion is not None and len(completion.tokens) >= warmup.LONG_TOKENS
    server._lock = watched = _WatchedLock(completion._memo)  # type: ignore[assignment]
    calls: list = []
    _watch_surface(monkeypatch, server, calls)
    reply, loop_thread = anyio.run(_through_gate, Gate(), server, endpoint, _chat(server, **fields))
    assert reply.status == 200
    built = set(completion._memo)
    assert built, "the profile memoises nothing for this shape: the check below would prove nothing"
    # Under the lock, the reply built nothing new: every plan was there when it took the lock.
    assert watched.keys_at_entry[-1] == built
    # Built by the warm-up, on a worker thread without the lock; then the reply, under it.
    assert [held for _thread, held in calls] == [False, True]
    assert calls[0][0] != loop_thread


def test_a_request_of_a_shape_already_warmed_is_answered_on_the_event_loop(monkeypatch):
    scenario = _long_scenario("again")
    server = MockServer(scenario=scenario)
    gate = Gate()
    calls: list = []
    _watch_surface(monkeypatch, server, calls)
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "first turn", stream=True))
    assert len(calls) == 2  # the warm-up, then the reply
    calls.clear()
    # Another conversation, the same shape: nothing to warm, no thread.
    reply, loop_thread = anyio.run(_through_gate, gate, server, "chat", _chat(server, "another turn", stream=True))
    assert reply.status == 200
    assert [(thread == loop_thread, held) for thread, held in calls] == [(True, True)]
    calls.clear()
    # A new shape (a max_tokens that cuts the answer) is warmed, off the loop.
    _reply, loop_thread = anyio.run(_through_gate, gate, server, "chat", _chat(server, "third", stream=True, max_tokens=50))
    assert [(thread == loop_thread, held) for thread, held in calls] == [(False, False), (False, True)]


def test_a_scenario_without_long_answers_stays_on_the_loop_without_reading_the_body(monkeypatch):
    server = MockServer("clean-answer")
    calls: list = []
    _watch_surface(monkeypatch, server, calls)

    def no_parse(raw):
        raise AssertionError("the body was parsed to decide on a warm-up")

    monkeypatch.setattr(warmup, "parse_json_and_hand_on", no_parse)
    reply, loop_thread = anyio.run(_through_gate, Gate(), server, "chat", _chat(server))
    assert reply.status == 200
    assert calls == [(loop_thread, True)]


def test_in_process_calls_are_answered_as_before_without_a_warm_up(monkeypatch):
    server = MockServer(scenario=_long_scenario("in-process"))
    calls: list = []
    _watch_surface(monkeypatch, server, calls)
    assert server.handle("chat", _chat(server, stream=True), {}).status == 200
    assert [held for _thread, held in calls] == [True]


def test_a_warm_up_leaves_replies_ids_and_the_request_log_as_they_were(monkeypatch):
    """The warm-up's throwaway ids and context change nothing a client sees: the same requests
    through the gate (warmed) and in process (not) give the same bytes and log."""
    steps = warmup.PER_REQUEST + 2  # more long answers than one request warms
    bodies = [
        ("chat", {"stream": True}),
        ("chat", {}),
        ("responses", {"stream": True}),
        ("responses", {"max_output_tokens": 700}),
        ("chat", {"stream": True, "max_tokens": 1200, "stream_options": {"include_usage": True}}),
        ("chat", {"stream": True}),
        ("chat", {}),
    ]
    replies = []
    for warmed in (True, False):
        # Two completions (memos of their own) of the same token shape: tags of the same length in tokens.
        server = MockServer(scenario=_long_scenario(f"same-bytes-{1111 if warmed else 2222}", steps=steps), seed=7)
        warm_ups = watch_warm_ups(monkeypatch, server)
        gate = Gate()
        got = []
        for endpoint, fields in bodies:
            model = server.info.served_model_names[0]
            body = {"model": model, "input": "hi", **fields} if endpoint == "responses" else json.loads(_chat(server, **fields))
            raw = json.dumps(body).encode()
            reply = anyio.run(_through_gate, gate, server, endpoint, raw)[0] if warmed else server.handle(endpoint, raw, {})
            got.append((reply.status, _same_tag(reply.body), tuple(map(_same_tag, reply.frames))))
        log = [(r.index, r.step, r.status) for r in server.requests]
        replies.append((got, log))
        assert bool(warm_ups) == warmed  # the gate's run did warm up; the in-process run did not
        monkeypatch.undo()
    assert replies[0] == replies[1]
    assert [status for status, _body, _frames in replies[0][0]] == [200] * len(bodies)


def test_the_step_a_script_will_play_is_the_one_warmed(monkeypatch):
    scenario = _long_scenario("predicted", steps=3)
    server = MockServer(scenario=scenario)
    seen = watch_warm_ups(monkeypatch, server)
    gate = Gate()
    longs = [step.completion for step in scenario.steps]
    for turn in range(3):
        anyio.run(_through_gate, gate, server, "chat", _chat(server, f"turn {turn}"))
        assert seen == longs[: turn + 1]  # this request's step, not the ones after it
    # The script is used up and repeats its last step (warmed for this shape): nothing more.
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "again"))
    assert seen == longs


def test_without_a_prediction_long_answers_are_warmed_in_file_order_a_few_per_request(monkeypatch):
    """A session's cursors are the player's to move: the first request warms the first
    PER_REQUEST long answers, the next one the rest."""
    scenario = _long_scenario("order", steps=warmup.PER_REQUEST + 1)
    server = MockServer(scenario=scenario)
    seen = watch_warm_ups(monkeypatch, server)
    gate = Gate()
    longs = [step.completion for step in scenario.steps]
    session = {"x-mockoss-session": "s1"}
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "one"), session)
    assert seen == longs[: warmup.PER_REQUEST]
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "two"), session)
    assert seen == longs


def test_the_http_short_path_hands_the_first_long_request_to_the_gate(monkeypatch):
    """The app's short path (mockoss.server.fastpath) answers on the event loop: the first request
    of a shape on a long answer goes to the gate's worker thread instead, a repeat stays."""
    from starlette.testclient import TestClient

    from mockoss.server.app import create_app

    server = MockServer(scenario=_long_scenario("http"))
    calls: list = []
    _watch_surface(monkeypatch, server, calls)
    with TestClient(create_app(server), base_url="http://127.0.0.1:8000") as client:
        for content in ("one", "two"):
            response = client.post("/v1/chat/completions", content=_chat(server, content, stream=True), headers={"content-type": "application/json"})
            assert response.status_code == 200
    (warm_thread, warm_held), (first_thread, first_held), (loop_thread, repeat_held) = calls
    assert (warm_held, first_held, repeat_held) == (False, True, True)
    assert warm_thread == first_thread != loop_thread  # the first on a worker thread, the repeat on the loop


def test_two_first_requests_of_a_shape_build_its_plans_once(monkeypatch):
    """The second waits (on its worker thread) for the first one's warm-up instead of building
    the same plans beside it."""
    server = MockServer(scenario=_long_scenario("twice"))
    first_inside, release_first, second_moved = threading.Event(), threading.Event(), threading.Event()
    unlocked: list = []
    cls = type(server._base_profile)
    real_surface, real_wait = cls.surface, warmup._wait

    def surface(self, endpoint, completion, request, ctx):
        if not server._lock.locked():
            unlocked.append(threading.get_ident())
            if len(unlocked) == 1:
                first_inside.set()
                assert release_first.wait(30)
        return real_surface(self, endpoint, completion, request, ctx)

    def wait(events):
        second_moved.set()
        real_wait(events)

    monkeypatch.setattr(cls, "surface", surface)
    monkeypatch.setattr(warmup, "_wait", wait)
    statuses: dict[str, int] = {}

    def send(name: str) -> None:
        warmup.WARM_BEFORE_LOCK.set(True)  # as the gate's worker thread has it
        statuses[name] = server.handle("chat", _chat(server, name, stream=True), {}).status
        second_moved.set()

    first = threading.Thread(target=send, args=("first",))
    first.start()
    assert first_inside.wait(30)
    second = threading.Thread(target=send, args=("second",))
    second.start()
    assert second_moved.wait(30)  # waiting for the first one's warm-up (or, without the wait, done)
    release_first.set()
    first.join(30)
    second.join(30)
    assert statuses == {"first": 200, "second": 200}
    assert len(unlocked) == 1


def test_a_shape_is_warmed_again_for_a_new_profile(monkeypatch):
    """Memo entries are the profile object's (vLLM's hold ``id(profile)``): after set_switches the
    first request of a shape builds its plans off the lock again."""
    server = MockServer(scenario=_long_scenario("switched"))
    seen = watch_warm_ups(monkeypatch, server)
    gate = Gate()
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "one"))
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "two"))
    assert len(seen) == 1
    server.set_switches({"strict": False})
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "three"))
    assert len(seen) == 2


def test_a_switch_header_profile_made_again_after_reset_is_warmed_again(monkeypatch):
    server = MockServer(scenario=_long_scenario("header"))
    seen = watch_warm_ups(monkeypatch, server)
    gate = Gate()
    header = {"x-mockoss-switch": "strict=false"}
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "one"), header)
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "two"), header)
    assert len(seen) == 1
    server.reset()  # forgets the per-header profiles: the next one is a new object
    anyio.run(_through_gate, gate, server, "chat", _chat(server, "three"), header)
    assert len(seen) == 2


def test_a_long_scenario_named_by_the_header_and_not_loaded_yet_is_loaded_and_built_off_the_loop(monkeypatch, tmp_path):
    """``X-Mockoss-Scenario`` naming a file not loaded yet: the server could not tell it was long
    without reading it, so the first streamed reply of a long completion was built on the event
    loop, under the lock (the breaker's finding: llamacpp, 3,000 short messages, >40 s; sglang
    with tools, 6,000 tokens, 2.7 s, every other client waiting). Now the request goes to a
    worker thread, which loads the scenario and warms the step before the lock; a repeat stays
    on the loop."""
    from starlette.testclient import TestClient

    from mockoss.server.app import create_app

    text = " ".join(WORDS[i % len(WORDS)] for i in range(1500))
    messages = [{"channel": "analysis", "content": "header-named"}, {"channel": "final", "content": text}]
    (tmp_path / "hdrlong.yaml").write_text(json.dumps({"version": 1, "steps": [{"completion": {"messages": messages}}]}))
    server = MockServer(scenario="clean-answer", profile="llamacpp", scenario_dirs=[tmp_path])
    calls: list = []
    _watch_surface(monkeypatch, server, calls)
    headers = {"content-type": "application/json", "x-mockoss-scenario": "hdrlong"}
    with TestClient(create_app(server), base_url="http://127.0.0.1:8000") as client:
        for content in ("one", "two"):
            response = client.post("/v1/chat/completions", content=_chat(server, content, stream=True), headers=headers)
            assert response.status_code == 200 and "lazy" in response.text  # the long answer, not clean-answer
    (warm_thread, warm_held), (first_thread, first_held), (loop_thread, repeat_held) = calls
    assert (warm_held, first_held, repeat_held) == (False, True, True)
    assert warm_thread == first_thread != loop_thread  # the first on a worker thread, the repeat on the loop


@pytest.mark.parametrize("profile, path", [("ollama", "/v1/responses"), ("vllm", "/v1/chat/completions")])
def test_a_header_named_request_whose_last_role_is_not_a_string_is_answered_as_without_the_header(profile, path):
    """bench_fuzz's case (ollama, ``X-Mockoss-Scenario: clean-answer`` not loaded yet, an input
    item with ``"role": [1e-400]``): since header-named scenarios go to the warm-up's worker
    thread, :func:`warmup.shape_of` hashed the unhashable role and the request ended in an
    unscripted 500. Such a body gets no warm-up and the answer it gets without the header (Ollama
    accepts it, vLLM refuses it)."""
    from starlette.testclient import TestClient

    from mockoss.server.app import create_app

    key = "input" if path.endswith("responses") else "messages"
    body = {key: [{"role": [1e-400], "content": "hi"}]}
    assert warmup.shape_of("responses", body, {}) is None
    statuses = []
    for extra in ({}, {"x-mockoss-scenario": "clean-answer"}):
        server = MockServer(scenario="clean-answer", profile=profile)
        raw = json.dumps({**body, "model": server.info.served_model_names[0]})
        with TestClient(create_app(server), base_url="http://127.0.0.1:8000", raise_server_exceptions=False) as client:
            statuses.append(client.post(path, content=raw, headers={"content-type": "application/json", **extra}).status_code)
    assert statuses[0] == statuses[1] != 500
