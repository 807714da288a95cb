"""The bound of a templated completion (mockoss.server.template_cost) has no false negative for
the inputs a reviewer found below it, and no longer counts a sized Faker call as the cap (issue 9,
eleventh-session review TC, findings 1 and 2); a ``raw`` or faulted templated completion's long
text is encoded where ``ENCODE_ELSEWHERE`` says (finding 8). Structure only: what the bound says,
what is rendered, which texts were asked elsewhere; no timings.
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony.completion import Completion
from mockoss.harmony.encoding import ENCODE_ELSEWHERE, load_encoding
from mockoss.scenario import template as template_module
from mockoss.scenario.loader import scenario_from_data
from mockoss.scenario.render import compile_completion
from mockoss.scenario.schema import CompletionSpec
from mockoss.scenario.template import RenderContext
from mockoss.server import template_cost, warmup
from mockoss.server.core import MockServer
from mockoss.server.warm_record import Warmup

RAW = b'{"model":"m","messages":[{"role":"user","content":"hi"}]}'  # 57 bytes
BODY = json.loads(RAW)
BIG = "1" + "0" * 4200
X = "x" * 6000

# Each renders over 4,096 characters for a 57-byte body; the old bound said it could not.
LONG = {
    "pyint": {"messages": [{"channel": "final", "content": f"{{{{ faker.pyint(min_value={BIG}, max_value={BIG}) }}}}"}]},
    "random_int": {"messages": [{"channel": "final", "content": f"{{{{ faker.random_int(min={BIG}, max={BIG}) }}}}"}]},
    "fault_arguments": {
        "messages": [{"channel": "commentary", "recipient": "functions.f", "content_type": "<|constrain|>json", "content": '{"a":"{{ request.model }}"}'}],
        "fault": {"kind": "arguments_not_json", "arguments": X},
    },
    "fault_stray_text": {"messages": [{"channel": "final", "content": "{{ request.model }}"}], "fault": {"kind": "stray_token_after_end", "text": X}},
    "recipient": {"messages": [{"channel": "commentary", "recipient": "functions." + X, "content_type": "<|constrain|>json", "content": '{"a":"{{ request.model }}"}'}]},
    "channel": {"messages": [{"channel": "final " + X, "content": "{{ request.model }}"}]},
}


@pytest.mark.parametrize("tag", sorted(LONG))
def test_a_step_that_renders_long_for_a_short_body_is_said_to_maybe(tag):
    """Finding 1 (a)-(c): integer Faker arguments, a fault's string parameters and message headers
    count; each of these renders >= 4,096 characters for a 57-byte body (fails on 0f6de40's bound)."""
    scenario = scenario_from_data({"steps": [{"completion": LONG[tag]}]}, name=f"tc-long-{tag}", default_version=True)
    rendered = scenario.steps[0].template.render(RenderContext(BODY, "m", "0//0"))
    assert len(rendered.text) >= template_cost.LONG_CHARS
    assert Warmup().may_render_long(scenario, len(RAW))
    assert template_cost.TemplateCost(scenario.steps[0].template).bound(len(RAW)) >= len(rendered.text)


def test_the_server_model_name_counts_when_longer():
    """Finding 1 (d): with no model in the body, ``request.model`` is the server's name, of any length."""
    completion = compile_completion(CompletionSpec.model_validate({"messages": [{"channel": "final", "content": "model: {{ request.model }}"}]}))
    name = "m" * 6000
    rendered = completion.render(RenderContext({"messages": []}, name, "0//0"))
    cost = template_cost.TemplateCost(completion)
    assert cost.bound(len(b'{"messages":[]}'), model_chars=len(name)) >= len(rendered.text) > template_cost.LONG_CHARS
    assert template_cost.min_raw_bytes(cost, model_chars=len(name)) == 0


SIZED = [
    "{{ faker.sentence(nb_words=5) }}",
    "{{ faker.pystr(max_chars=10) }}",
    '{{ faker.email(domain="x.io") }}',
    "{{ faker.paragraph(nb_sentences=2) }}",
    "{{ faker.text(max_nb_chars=300) }}",
    '{{ faker.bothify(text="##-??") }}',
    "{{ faker.file_path(depth=3) }}",
]


@pytest.mark.parametrize("content", SIZED)
def test_a_short_sized_faker_call_stays_on_the_short_path(content):
    """Finding 2: a size argument no longer counts as the cap (0f6de40: every request of such a
    step was parsed on the loop and sent to a worker thread with a warm-up)."""
    scenario = scenario_from_data({"steps": [{"completion": {"messages": [{"channel": "final", "content": content}]}, "times": 10}]}, name=f"tc-sized-{content}", default_version=True)
    server = MockServer(scenario=scenario)
    raw = json.dumps({"model": server.info.served_model_names[0], "messages": [{"role": "user", "content": "hi"}]}).encode()
    assert not Warmup().may_render_long(scenario, len(raw))
    assert not warmup.wanted(server, "chat", raw, {})
    reply, _ = server.respond("chat", raw, {})
    assert reply.status == 200


EXTREMES = [
    "{{ faker.sentence(nb_words=1000) }}",
    "{{ faker.sentence(nb_words=1000, variable_nb_words=false) | json }}",
    "{{ faker.sentence(nb_words=0) }}{{ faker.sentence(nb_words=1) }}",
    "{{ faker.paragraph(nb_sentences=1000) | json }}",
    "{{ faker.paragraph(nb_sentences=1, variable_nb_sentences=false) }}",
    "{{ faker.text(max_nb_chars=10000) | json }}",
    "{{ faker.text(max_nb_chars=5) }}{{ faker.text(max_nb_chars=24) }}{{ faker.text(max_nb_chars=99) }}",
    '{{ faker.pystr(min_chars=1000, max_chars=1000, prefix="\u0001\u0130", suffix="\\"") | json }}',
    '{{ faker.email(domain="\u0130\u0130\u0130") | json }}',
    '{{ faker.bothify(text="\u0001#?%!@", letters="\u0001") | json }}{{ faker.numerify(text="####") }}',
    '{{ faker.file_path(depth=20, extension="\u0001x") | json }}{{ faker.file_name(category="audio") }}',
    "{{ faker.hostname(levels=10) }}{{ faker.domain_name(levels=10) | json }}",
    "{{ faker.pyint(min_value=-99999999999999999999, max_value=99999999999999999999) | json }}",
    "{{ faker.pyfloat(left_digits=7, right_digits=8) }}{{ faker.random_int(min=-5, max=5, step=3) }}",
]


@pytest.mark.parametrize("content", EXTREMES)
def test_a_sized_faker_call_never_renders_past_its_bound(content, monkeypatch):
    """Finding 2's mend keeps no false negative: Faker's sizes at their schema maxima, escapes and
    ``lower()`` expansions included, over several seeds, within the bound of the whole text."""
    monkeypatch.setattr(template_module, "MAX_RENDERED_CHARS", 10**6)
    completion = compile_completion(CompletionSpec.model_validate({"messages": [{"channel": "final", "content": content}]}))
    bound = template_cost.TemplateCost(completion).bound(0, cap=10**9)
    for seed in range(8):
        assert len(completion.render(RenderContext({}, "m", f"0//{seed}")).text) <= bound, (content, seed)


def test_the_longest_lorem_word_is_the_installed_fakers():
    """:data:`template_cost.LOREM_WORD_CHARS` is read from the installed Faker's en_US lorem list
    (ASCII: ``title()`` keeps a word's length)."""
    from faker import Faker

    words = Faker("en_US").provider("faker.providers.lorem").word_list
    assert max(map(len, words)) <= template_cost.LOREM_WORD_CHARS
    assert all(word.isascii() for word in words)


@pytest.mark.parametrize(
    "spec",
    [
        {"raw": "<|channel|>final<|message|>{{ request.messages[-1].content }}<|return|>"},
        {"messages": [{"channel": "final", "content": "{{ request.messages[-1].content }}"}], "fault": {"kind": "truncated"}},
    ],
)
def test_a_raw_or_faulted_template_encodes_its_long_text_elsewhere(spec):
    """Finding 8: Completion.from_text, which builds a ``raw`` or faulted completion, encodes a
    text over CACHED_TEXT_CHARS through encode_text (ENCODE_ELSEWHERE), with the same ids
    (0f6de40/e6ce674: encoded in process)."""
    asked: list[str] = []

    def elsewhere(text: str, special: bool) -> list[int]:
        asked.append(text)
        return list(load_encoding().encode(text, allowed_special="all") if special else load_encoding().encode(text, disallowed_special=()))

    body = {"messages": [{"role": "user", "content": f"tc8 {json.dumps(spec)} " + "w " * 3000}]}
    completion = compile_completion(CompletionSpec.model_validate(spec))
    token = ENCODE_ELSEWHERE.set(elsewhere)
    try:
        built = completion.render(RenderContext(body, "m", "0//0"))
    finally:
        ENCODE_ELSEWHERE.reset(token)
    assert built.text in asked
    assert built.tokens == tuple(load_encoding().encode(built.text, allowed_special="all"))
    assert isinstance(built, Completion)


def test_a_long_served_name_sends_a_model_echo_off_the_loop():
    """Finding 1 (d), through the server: with no model in the body, ``{{ request.model }}`` is
    the served name (6,000 characters here): the request is warmed before the lock (0f6de40: not)."""
    scenario = scenario_from_data({"steps": [{"completion": {"messages": [{"channel": "final", "content": "model: {{ request.model }}"}]}}]}, name="tc-model", default_version=True)
    server = MockServer(scenario=scenario, served_model_names=["m" * 6000])
    raw = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    assert warmup.wanted(server, "chat", raw, {})
    reply, _ = server.respond("chat", raw, {})
    assert len(json.loads(reply.body)["choices"][0]["message"]["content"]) > template_cost.LONG_CHARS
    server.served_model_names = ("short",)  # names may change (the pytest plugin's cassettes)
    assert not warmup.wanted(server, "chat", raw, {})
