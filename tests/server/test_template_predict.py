"""Which templated step a request plays is predicted before the lock for ``rules:`` with ``match``
checks too, and a Faker-seeded warm-up that another request overtook is not repeated for the
next requests (issue 9, eleventh-session breaker, finding 3).

Before: a long templated answer on a ``rules:`` scenario with ``match`` checks was answered on a
worker thread but rendered and built under the lock (another client waited 140-290 ms for a
100,000-character answer); a Faker-seeded one beside a busy client was rendered and surfaced
before the lock for an index another request then took, and again under the lock for its own
(the templated request 1.3-3x slower, the other client's wait unchanged).

Structural checks, not timings: where (which thread, lock held or not) each rendered completion
is built and surfaced, and that replies stay the same bytes.
"""

from __future__ import annotations

import threading

import anyio
import pytest
from template_support import (  # tests/server is on sys.path
    ECHO,
    WORDS,
    allow_long_templates,
    chat,
    through_gate,
    watch_builds,
)

from mockoss.scenario import render as render_module
from mockoss.scenario.loader import scenario_from_data
from mockoss.server import warm_record, warmup
from mockoss.server.core import MockServer
from mockoss.server.offload import Gate


@pytest.fixture(autouse=True)
def long_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    allow_long_templates(monkeypatch)


def _rules(tag: str, long_content: str = ECHO):
    """A short rule for messages starting with 'hi ', else a long templated one."""
    return scenario_from_data(
        {
            "rules": [
                {"name": "short", "match": {"last_user": "^hi "}, "steps": [{"completion": {"messages": [{"channel": "final", "content": "hi"}]}}]},
                {"name": "long", "match": {"model": {"regex": "gpt-oss"}}, "steps": [{"completion": {"messages": [{"channel": "final", "content": long_content}]}}]},
            ]
        },
        name=f"predict-{tag}",
        default_version=True,
    )


def _watch_surfaces(monkeypatch: pytest.MonkeyPatch, server: MockServer, calls: list) -> None:
    cls = type(server._base_profile)
    real = cls.surface

    def surface(self, endpoint, completion, request, ctx):
        calls.append((threading.get_ident(), server._lock.locked()))
        return real(self, endpoint, completion, request, ctx)

    monkeypatch.setattr(cls, "surface", surface)


def test_a_long_echo_under_match_rules_is_built_before_the_lock(monkeypatch):
    server = MockServer(scenario=_rules("echo"))
    builds: list = []
    watch_builds(monkeypatch, server, builds)
    raw = chat(server, WORDS)
    assert warmup.wanted(server, "chat", raw, {})
    reply, loop_thread = anyio.run(through_gate, Gate(), server, raw)
    assert reply.status == 200
    # Built once, on a worker thread, the lock free (was: under the lock).
    assert [(thread == loop_thread, held) for thread, held, _chars in builds] == [(False, False)]
    assert builds[0][2] > len(WORDS)


def test_match_rules_are_predicted_from_the_request():
    """The rule the player will pick: a long body the short rule matches renders nothing before
    the lock; a session is still unknown (its cursors and turn are the player's)."""
    server = MockServer(scenario=_rules("which"))
    scenario, _profile, cursors, _index = server.warm_target({})
    model = server.info.served_model_names[0]
    state = server._warmup
    long_body = {"model": model, "messages": [{"role": "user", "content": WORDS}]}
    hi_body = {"model": model, "messages": [{"role": "user", "content": "hi " + WORDS}]}
    raw_bytes = len(WORDS) + 100
    assert state.long_templates(scenario, raw_bytes, long_body, {}, cursors, False) is None  # no model yet: unknown
    played = state.long_templates(scenario, raw_bytes, long_body, {}, cursors, False, ("chat", model))
    assert played is not None and [step.template is not None for step in played] == [True]
    assert state.long_templates(scenario, raw_bytes, hi_body, {}, cursors, False, ("chat", model)) == ()
    assert state.long_templates(scenario, raw_bytes, long_body, {"x-mockoss-session": "s"}, cursors, False, ("chat", model)) is None
    assert state.long_templates(scenario, raw_bytes, long_body, {}, cursors, True, ("chat", model)) is None


@pytest.mark.parametrize("profile", ["vllm", "ollama"])
def test_predicted_match_rules_keep_the_bytes(profile):
    content = "{{ faker.name }}: {{ request.messages[-1].content }}"
    plain, warmed = (MockServer(scenario=_rules(f"bytes-{profile}", content), profile=profile) for _ in range(2))
    endpoint = "chat" if profile == "vllm" else "ollama.chat"
    for text in (f"a {WORDS[:6000]}", f"hi {WORDS[:6000]}", f"b {WORDS[:6000]}"):
        raw = chat(plain, text)
        expected, _ = plain.respond(endpoint, raw, {})
        token = warmup.WARM_BEFORE_LOCK.set(True)
        try:
            got, _ = warmed.respond(endpoint, raw, {})
        finally:
            warmup.WARM_BEFORE_LOCK.reset(token)
        assert (got.status, got.body, list(got.frames)) == (expected.status, expected.body, list(expected.frames))
        assert expected.status == 200


def _faker_server(monkeypatch: pytest.MonkeyPatch, taken: int) -> tuple[MockServer, list, list]:
    """A long Faker-seeded step; while a warm-up builds it (off the lock), ``taken`` other
    requests take an index (simulated: the server's count moves)."""
    content = "Dear {{ faker.name }}, " + WORDS
    data = {"steps": [{"completion": {"messages": [{"channel": "final", "content": content}]}}]}
    server = MockServer(scenario=scenario_from_data(data, name=f"predict-faker-{taken}", default_version=True))
    builds: list = []
    real_build = render_module._build

    def build(*args):  # the real one's arguments (messages, fault, positions)
        if not server._lock.locked():
            server._handled += taken
        built = real_build(*args)
        builds.append(server._lock.locked())
        return built

    monkeypatch.setattr(render_module, "_build", build)
    calls: list = []
    _watch_surfaces(monkeypatch, server, calls)
    return server, builds, calls


def test_a_faker_warm_up_overtaken_by_a_busy_client_is_not_surfaced_nor_repeated(monkeypatch):
    """Two requests take the index the warm-up renders for: that warm-up surfaces nothing, and
    the next SEEDED_SKIPS requests of the step are not rendered before the lock; the one after is."""
    server, builds, calls = _faker_server(monkeypatch, 2)
    gate = Gate()
    for _ in range(1 + warm_record.SEEDED_SKIPS + 1):
        reply, _loop = anyio.run(through_gate, gate, server, chat(server, "x"))
        assert reply.status == 200
    # Request 1: built before the lock, not surfaced there, built again under it; the next
    # SEEDED_SKIPS: under the lock only; the one after tries again.
    assert builds == [False, True] + [True] * warm_record.SEEDED_SKIPS + [False, True]
    assert [held for _thread, held in calls] == [True] * (2 + warm_record.SEEDED_SKIPS)


def test_a_faker_warm_up_overtaken_by_one_request_is_not_surfaced_but_tried_again(monkeypatch):
    server, builds, calls = _faker_server(monkeypatch, 1)
    gate = Gate()
    for _ in range(2):
        reply, _loop = anyio.run(through_gate, gate, server, chat(server, "x"))
        assert reply.status == 200
    assert builds == [False, True, False, True]
    assert [held for _thread, held in calls] == [True, True]


def test_a_faker_warm_up_that_keeps_its_index_is_used_under_the_lock(monkeypatch):
    server, builds, calls = _faker_server(monkeypatch, 0)
    gate = Gate()
    for _ in range(2):
        reply, _loop = anyio.run(through_gate, gate, server, chat(server, "x"))
        assert reply.status == 200
    assert builds == [False, False]  # the render under the lock found the warm-up's completion
    assert [held for _thread, held in calls] == [False, True, False, True]
