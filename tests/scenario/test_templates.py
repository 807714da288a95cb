"""Templates: Faker values and request echo, seeded and reproducible; bad templates fail at load."""

import json
import textwrap

import pytest

from mockoss.scenario.fakers import FAKER_LOCK, FAKER_PROVIDERS
from mockoss.scenario.loader import ScenarioError, load_scenario, scenario_from_data
from mockoss.scenario.template import RenderContext, TemplateError, parse_template
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
CHAT = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": 'Say "hi" to Ada'}]}).encode()
GREETING = {
    "channel": "final",
    "content": "{{ faker.name }} from {{ faker.city }}, lucky number {{ faker.pyint(min_value=1, max_value=9) }}.",
}


def _scenario(*messages, **extra):
    return scenario_from_data(
        {"steps": [{"completion": {"messages": list(messages)}}], **extra}, name="t", default_version=True
    )


def _content(reply):
    return json.loads(reply.body)["choices"][0]["message"]["content"]


def test_same_seed_gives_byte_identical_replies_across_fresh_servers():
    one, two = MockServer(scenario=_scenario(GREETING), seed=7), MockServer(scenario=_scenario(GREETING), seed=7)
    first = [one.handle("chat", CHAT, {}).body for _ in range(3)]
    second = [two.handle("chat", CHAT, {}).body for _ in range(3)]
    assert first == second
    assert len({_content_of(body) for body in first}) == 3  # each request draws new values


def _content_of(body):
    return json.loads(body)["choices"][0]["message"]["content"]


def test_different_seeds_give_different_values_and_a_scenario_seed_wins():
    contents = {
        _content(MockServer(scenario=_scenario(GREETING), seed=seed).handle("chat", CHAT, {})) for seed in (1, 2, 3)
    }
    assert len(contents) == 3
    pinned = {
        _content(MockServer(scenario=_scenario(GREETING, seed="fixed"), seed=seed).handle("chat", CHAT, {}))
        for seed in (1, 2)
    }
    assert len(pinned) == 1


def test_session_values_do_not_depend_on_other_sessions():
    alone = MockServer(scenario=_scenario(GREETING))
    a = {"x-mockoss-session": "a"}
    expected = [_content(alone.handle("chat", CHAT, a)) for _ in range(2)]
    mixed = MockServer(scenario=_scenario(GREETING))
    got = []
    for headers in (a, {"x-mockoss-session": "b"}, {}, a):
        reply = mixed.handle("chat", CHAT, headers)
        if headers is a:
            got.append(_content(reply))
    assert got == expected


def test_request_echo_and_the_json_filter_in_tool_arguments():
    scenario = _scenario(
        {"channel": "analysis", "content": "Model {{ request.model }} was asked: {{ request.messages[-1].content }}"},
        {
            "channel": "commentary",
            "recipient": "functions.reply",
            "content_type": "<|constrain|>json",
            "content": '{"text": {{ request.messages[-1].content | json }}, "n": {{ faker.random_int(min=5, max=5) }}}',
        },
    )
    server = MockServer(scenario=scenario)
    body = {
        "messages": [{"role": "user", "content": 'Say "hi" to Ada'}],
        "tools": [{"type": "function", "function": {"name": "reply"}}],
    }
    reply = json.loads(server.handle("chat", json.dumps(body).encode(), {}).body)  # no model: the served name
    message = reply["choices"][0]["message"]
    assert message["reasoning"] == f'Model {MODEL} was asked: Say "hi" to Ada'
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"text": 'Say "hi" to Ada', "n": 5}
    assert server.requests[0].completion.endswith('{"text": "Say \\"hi\\" to Ada", "n": 5}<|call|>')


def test_echo_of_responses_input_and_of_non_string_values():
    server = MockServer(
        scenario=_scenario(
            {
                "channel": "final",
                "content": '{{ request.input }} / {{ request.tools }} / {{ request.x | default("none") }}',
            }
        )
    )
    raw = json.dumps({"model": MODEL, "input": "What time is it?", "tools": []}).encode()
    output = json.loads(server.handle("responses", raw, {}).body)["output"]
    assert output[-1]["content"][0]["text"] == "What time is it? / [] / none"


def test_a_missing_request_value_is_a_400_naming_the_template(tmp_path):
    path = tmp_path / "echo.yaml"
    path.write_text(
        "version: 1\nsteps:\n  - completion:\n      raw: '<|channel|>final<|message|>{{ request.messages[3].content }}<|return|>'\n"
    )
    server = MockServer(scenario=str(path))
    reply = server.handle("chat", CHAT, {})
    assert reply.status == 400
    assert json.loads(reply.body)["error"]["message"] == (
        f"mockoss: rule #1 (scenario {path}:2), step 0: template '{{{{ request.messages[3].content }}}}': "
        "the request has no messages[3]"
    )


def test_untemplated_steps_are_compiled_once_templated_ones_per_request():
    scenario = _scenario({"channel": "final", "content": "plain"})
    assert scenario.steps[0].completion is not None and scenario.steps[0].template is None
    templated = _scenario({"channel": "final", "content": "{{ request.model }}"})
    assert templated.steps[0].completion is None and templated.steps[0].template is not None
    server = MockServer(scenario=templated)
    server.handle("chat", CHAT, {})
    assert server.requests[0].completion == f"<|channel|>final<|message|>{MODEL}<|return|>"


def test_literal_braces_and_string_escapes():
    with FAKER_LOCK:
        text = parse_template('{{ "{{" }} x {{ "}}" }} {{ \'a\\tb\' }}').render(RenderContext({}, MODEL, "s"))
    assert text == "{{ x }} a\tb"


def test_every_allowed_provider_is_reproducible():
    for name in FAKER_PROVIDERS:
        template = parse_template(f"{{{{ faker.{name} }}}}")
        with FAKER_LOCK:
            first = template.render(RenderContext({}, MODEL, "seed"))
            again = template.render(RenderContext({}, MODEL, "seed"))
        assert first == again, name


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{{ faker.citi }}", "unknown Faker provider 'citi'; allowed: address, boolean,"),
        ("{{ faker.date }}", "unknown Faker provider 'date'"),
        ("{{ faker.pyint(min_value=9, max_value=1) }}", "faker.pyint refused the arguments: empty range"),
        (
            "{{ faker.pyint(colour=1) }}",
            "faker.pyint takes no argument 'colour'; arguments: min_value, max_value, step",
        ),
        ("{{ faker.text(max_nb_chars=10**9) }}", "unexpected '**9)'"),
        (
            "{{ faker.text(max_nb_chars=1000000) }}",
            "faker.text(max_nb_chars=…): expected an integer from 5 to 10000, got 1000000",
        ),
        ("{{ faker.pyint(1) }}", "expected a name, found '1'"),
        (
            "{{ __import__('os').system('x') }}",
            "unknown name '__import__'; an expression starts with faker., request or a string",
        ),
        ("{{ request }}", "'request' needs a field"),
        ("{{ request.model | upper }}", "unknown filter 'upper'; filters: json, default(VALUE)"),
        ("{{ request.model", "'{{' is never closed by '}}'"),
        ("{{ }}", "empty expression"),
    ],
)
def test_bad_templates_are_refused(text, problem):
    with pytest.raises(TemplateError) as info:
        parse_template(text)
    assert problem in str(info.value)


def test_a_bad_template_is_a_load_error_with_file_line_and_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            version: 1
            rules:
              - steps:
                  - completion:
                      messages:
                        - channel: final
                          content: "Hello {{ faker.citi }}"
            """
        )
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(
        f"{path}:7: rules[0].steps[0].completion.messages[0].content: template '{{{{ faker.citi }}}}': unknown Faker provider 'citi'"
    )
