"""A templated step whose render may be long for the request's body is rendered and its plans
built before the server lock, on a worker thread (mockoss.server.warmup, mockoss.server.template_cost;
issue 9, task O). Before, it was rendered, tokenized, parsed and surfaced under the lock on the
event loop: an echo of a 200,000-character message held every other client ~0.9 s, 24 echoes of
8,000 characters under the default cap ~130-210 ms (``/tmp/o/tmplblk.py``).

Structural checks, not timings: where and whether under the lock the rendered completion is
built, that the bound of a render never falls below what is rendered, and that replies stay
byte for byte what they were on every profile.
"""

from __future__ import annotations

import json
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

from mockoss.profiles.registry import PROFILES
from mockoss.scenario.loader import scenario_from_data
from mockoss.scenario.render import compile_completion
from mockoss.scenario.schema import CompletionSpec
from mockoss.scenario.template import RenderContext
from mockoss.server import warmup
from mockoss.server.core import MockServer
from mockoss.server.offload import Gate


def _scenario(tag: str, content: str = ECHO, extra: tuple[dict, ...] = ()):
    messages = [*extra, {"channel": "final", "content": content}]
    return scenario_from_data({"steps": [{"completion": {"messages": messages}}]}, name=f"tmpl-{tag}", default_version=True)


@pytest.fixture
def long_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    allow_long_templates(monkeypatch)


@pytest.mark.parametrize("stream", [False, True])
def test_a_long_echo_is_rendered_and_built_off_the_loop_before_the_lock(monkeypatch, long_templates, stream):
    server = MockServer(scenario=_scenario(f"off-{stream}"))
    builds: list = []
    watch_builds(monkeypatch, server, builds)
    calls: list = []
    cls = type(server._base_profile)
    real_surface = cls.surface

    def surface(self, endpoint, completion, request, ctx):
        calls.append((threading.get_ident(), server._lock.locked()))
        return real_surface(self, endpoint, completion, request, ctx)

    monkeypatch.setattr(cls, "surface", surface)
    encoded: list = []
    real_encode = warmup.encode_in_worker

    def encode_in_worker(text, special):
        encoded.append((threading.get_ident(), len(text)))
        return real_encode(text, special)

    monkeypatch.setattr(warmup, "encode_in_worker", encode_in_worker)
    reply, loop_thread = anyio.run(through_gate, Gate(), server, chat(server, WORDS, stream=stream))
    assert reply.status == 200
    # The long echoed text was tokenized in the worker process, asked from the worker thread.
    assert [(thread == loop_thread, chars >= len(WORDS)) for thread, chars in encoded] == [(False, True)]
    # Built once, on a worker thread, the lock free; the reply under the lock built nothing new.
    assert [(thread == loop_thread, held) for thread, held, _chars in builds] == [(False, False)]
    assert builds[0][2] > len(WORDS)
    assert [(thread == loop_thread, held) for thread, held in calls] == [(False, False), (False, True)]


def test_a_short_echo_stays_on_the_loop(monkeypatch, long_templates):
    server = MockServer(scenario=_scenario("short"))
    builds: list = []
    watch_builds(monkeypatch, server, builds)
    raw = chat(server, "hi there")
    assert not warmup.wanted(server, "chat", raw, {})
    reply, loop_thread = anyio.run(through_gate, Gate(), server, raw)
    assert reply.status == 200
    assert [(thread == loop_thread, held) for thread, held, _chars in builds] == [(True, True)]


def test_a_long_echo_under_match_rules_is_answered_off_the_loop(monkeypatch, long_templates):
    """Which step a rule with ``match`` checks plays is not known on the event loop (the model is
    resolved by the validation): the request goes to a worker thread, which predicts it from the
    request and renders it there before the lock (tests/server/test_template_predict.py)."""
    scenario = scenario_from_data(
        {"rules": [{"match": {"model": {"regex": "gpt-oss"}}, "steps": [{"completion": {"messages": [{"channel": "final", "content": ECHO}]}}]}]},
        name="tmpl-match", default_version=True,
    )
    server = MockServer(scenario=scenario)
    builds: list = []
    watch_builds(monkeypatch, server, builds)
    raw = chat(server, WORDS)
    assert warmup.wanted(server, "chat", raw, {})
    reply, loop_thread = anyio.run(through_gate, Gate(), server, raw)
    assert reply.status == 200
    assert [(thread == loop_thread, held) for thread, held, _chars in builds] == [(False, False)]


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_replies_are_the_same_bytes_with_the_render_warmed(monkeypatch, long_templates, profile):
    """Every profile, streamed and not, with a Faker value (seeded by the request's index) and
    an echo: the reply of a request warmed before the lock is the reply of the same request on a
    server that never warms (and the next request's too)."""
    content = "{{ faker.name }} said: {{ request.messages[-1].content }} ({{ request.model }})"
    extra = ({"channel": "analysis", "content": "thinking about {{ faker.city }}"},)
    for stream in (False, True):
        tag = f"same-{profile}-{stream}"
        plain, warmed = (MockServer(scenario=_scenario(tag, content, extra), profile=profile) for _ in range(2))
        endpoint = next((name for name in ("chat", "ollama.chat") if name in PROFILES[profile].endpoints), None)
        if endpoint is None:
            pytest.skip(f"{profile} has no chat endpoint")
        for turn in range(2):
            raw = chat(plain, f"{turn} {WORDS[:5000]}", stream=stream)  # long enough to warm
            expected, _ = plain.respond(endpoint, raw, {})
            assert warmup.wanted(warmed, endpoint, raw, {})
            token = warmup.WARM_BEFORE_LOCK.set(True)
            try:
                got, _ = warmed.respond(endpoint, raw, {})
            finally:
                warmup.WARM_BEFORE_LOCK.reset(token)
            assert (got.status, got.body, list(got.frames), got.headers) == (expected.status, expected.body, list(expected.frames), expected.headers)
            assert expected.status == 200


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ("{{ request.messages[-1].content }}", {"messages": [{"role": "user", "content": "é\\n\"x\" " * 500}]}),
        ("{{ request.messages[-1].content | json }}", {"messages": [{"role": "user", "content": "\u0001\"\\ " * 400}]}),
        ("{{ request.messages[-1].content | json | json | json }}", {"messages": [{"role": "user", "content": "\"\\ " * 300}]}),
        ("{{ request['numbers'] }}", {"numbers": [9e15] * 300, "messages": []}),
        ("{{ request.numbers | json }} and {{ request.numbers }}", {"numbers": [1e5, -9e15, 1e-7] * 100, "messages": []}),
        ("{{ request.missing | default(\"a long default text\") }}{{ request.model }}", {"messages": []}),
        ("{{ request.messages }}", {"messages": [{"role": "user", "content": [1, 2.5e15, True, None, {"a": "b"}]}] * 40}),
        ("{{ faker.address }} {{ faker.paragraph }} {{ faker.sentence }} {{ faker.text }}", {"messages": []}),
        ("{{ faker.pyint(min_value=1" + "0" * 4200 + ", max_value=1" + "0" * 4200 + ") }}", {"messages": []}),
        ("{{ faker.sentence(nb_words=300) | json }} {{ faker.pystr(max_chars=90, prefix=\"\u0130\") | json }}", {"messages": []}),
    ],
)
def test_the_bound_of_a_render_is_never_below_what_it_renders(text, body):
    """No false negative (mockoss.server.template_cost): every rendered text is within the bound
    computed from the size of the raw body alone (compact and spaced JSON alike): the whole text
    of the completion built, headers included, not only the template's own text (issue 9,
    eleventh-session review TC, finding 1 (e); more cases in test_template_cost_bound.py)."""
    from mockoss.server import template_cost

    completion = compile_completion(CompletionSpec.model_validate({"messages": [{"channel": "final", "content": text}]}))
    cost = template_cost.TemplateCost(completion)
    for raw in (json.dumps(body, separators=(",", ":")), json.dumps(body, ensure_ascii=False, separators=(",", ":"))):
        for seed in range(5):
            rendered = completion.render(RenderContext(json.loads(raw), "openai/gpt-oss-20b", f"0//{seed}")).text
            assert len(rendered) <= cost.bound(len(raw.encode()), cap=10**9), (text, len(rendered))
