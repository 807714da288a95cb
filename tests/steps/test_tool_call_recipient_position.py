"""``tool_call(…, recipient_position="channel")`` / YAML ``recipient_position: channel`` over HTTP.

A newcomer's ``reasoning(…) + tool_call("get_weather", …)`` came back as text on ``sglang``: the
default header puts the recipient after the role (``<|start|>assistant to=functions.x<|channel|>…``,
openai-harmony 0.0.8's renderer layout), and SGLang's chat tool parser reads only the recipient
after the channel (sgl-project/sglang@v0.5.23:python/sglang/srt/function_call/gpt_oss_detector.py,
:mod:`mockoss.profiles.sglang.detectors`), as do vllm-mlx's
(waybarrios/vllm-mlx@v0.6.0:vllm_mlx/tool_parsers/harmony_tool_parser.py). vLLM parses both with
openai-harmony. mlx-lm parses neither (no Harmony handling, ml-explore/mlx-lm#875). The role form
stays the default, so each case also pins what the role form gives (text where the parser needs the
channel form: these cases fail on a mockoss without ``recipient_position``).
"""

from __future__ import annotations

import json
import textwrap

import openai
import pytest

from mockoss.scenario.loader import ScenarioError, load_scenario, scenario_from_data
from mockoss.server.core import MockServer
from mockoss.steps import Message, Step, fault, final, reasoning, script, tool_call

USER = [{"role": "user", "content": "Weather in Oslo?"}]
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": {"type": "object"}}}]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
ARGS = {"city": "Oslo"}


def _call(position: str) -> Step:
    return reasoning("Need the weather.") + tool_call("get_weather", ARGS, recipient_position=position)


def _chat(mockoss, stream: bool) -> tuple[list[tuple[str, dict]], str]:
    """``([(name, arguments)], content)`` of one chat completion, streamed or not (calls joined by index)."""
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        if not stream:
            message = (
                client.chat.completions.create(model=mockoss.model, messages=USER, tools=CHAT_TOOLS).choices[0].message
            )
            calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()]
            return calls, message.content or ""
        parts: dict[int, list[str]] = {}
        content = ""
        with client.chat.completions.create(
            model=mockoss.model, messages=USER, tools=CHAT_TOOLS, stream=True
        ) as chunks:
            for chunk in chunks:
                for choice in chunk.choices:
                    content += choice.delta.content or ""
                    for call in choice.delta.tool_calls or ():
                        name, args = parts.setdefault(call.index, ["", ""])
                        parts[call.index] = [name + (call.function.name or ""), args + (call.function.arguments or "")]
        return [(name, json.loads(args)) for name, args in parts.values()], content


def _responses(mockoss, stream: bool) -> list[tuple[str, dict]]:
    """``[(name, arguments)]`` of the ``function_call`` items of one Responses request."""
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        if not stream:
            output = client.responses.create(
                model=mockoss.model, input="Weather in Oslo?", tools=RESPONSES_TOOLS
            ).output
        else:
            output = []
            for event in client.responses.create(
                model=mockoss.model, input="Weather in Oslo?", tools=RESPONSES_TOOLS, stream=True
            ):
                if event.type == "response.output_item.done":
                    output.append(event.item)
    return [(item.name, json.loads(item.arguments)) for item in output if item.type == "function_call"]


CALL = [("get_weather", ARGS)]


@pytest.mark.mockoss(profiles=["sglang", "vllm"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_channel_form_is_a_chat_tool_call(mockoss, stream):
    mockoss.use(_call("channel"), _call("role"))
    assert _chat(mockoss, stream) == (CALL, "")
    calls, content = _chat(mockoss, stream)
    if mockoss.profile == "sglang":  # the role form: no call (non-streamed, the markup is the content)
        assert calls == []
        assert stream or "<|start|>assistant to=functions.get_weather<|channel|>commentary" in content
    else:  # vLLM parses both positions with openai-harmony
        assert (calls, content) == (CALL, "")


@pytest.mark.mockoss(profiles=["sglang", "vllm"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_both_forms_are_a_responses_function_call(mockoss, stream):
    mockoss.use(_call("channel"), _call("role"))
    assert _responses(mockoss, stream) == CALL
    assert _responses(mockoss, stream) == CALL  # both parse Responses output with openai-harmony


@pytest.mark.mockoss(profile="sglang")
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_sglang_first_message_call_is_parsed_only_when_streamed(mockoss, stream):
    # Non-streamed, SGLang looks for calls only after `<|start|>assistant<|channel|>commentary`.
    mockoss.use(tool_call("get_weather", ARGS, recipient_position="channel"))
    calls, content = _chat(mockoss, stream)
    if stream:
        assert (calls, content) == (CALL, "")
    else:
        assert calls == [] and content.startswith("<|channel|>commentary to=functions.get_weather <|constrain|>json")


@pytest.mark.mockoss(profile="vllm-mlx", switches={"reasoning_parser": None})
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_vllm_mlx_chat_call_needs_the_channel_form_and_a_stream(mockoss, stream):
    mockoss.use(_call("channel"), _call("role"))
    channel, role = _chat(mockoss, stream), _chat(mockoss, stream)
    if stream:
        assert channel[0] == CALL and role[0] == []
    else:  # clean_output_text runs before the parsers: no call in either form (waybarrios/vllm-mlx#562)
        assert channel == role == ([], 'Need the weather.{"city":"Oslo"}')


@pytest.mark.mockoss(profile="vllm-mlx")
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_vllm_mlx_responses_call_needs_the_channel_form_and_a_stream(mockoss, stream):
    mockoss.use(_call("channel"), _call("role"))
    assert _responses(mockoss, stream) == (CALL if stream else [])
    assert _responses(mockoss, stream) == []


@pytest.mark.mockoss(profile="mlx-lm")
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_mlx_lm_returns_the_header_as_written(mockoss, stream):
    mockoss.use(_call("channel"))
    calls, content = _chat(mockoss, stream)
    assert calls == []
    assert "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" in content


YAML = """\
version: 1
steps:
  - completion:
      messages:
        - {channel: analysis, content: Need the weather.}
        - channel: commentary
          recipient: functions.get_weather
          content_type: <|constrain|>json
          content: '{"city":"Oslo"}'
          recipient_position: %s
"""


def test_yaml_equals_the_builder_and_is_a_call_on_sglang(tmp_path):
    path = tmp_path / "channel.yaml"
    path.write_text(YAML % "channel", encoding="utf-8")
    from_yaml = load_scenario(path).steps[0].completion
    built = MockServer(scenario=script(_call("channel"))).scenario.steps[0].completion
    assert (from_yaml.text, from_yaml.tokens) == (built.text, built.tokens)
    assert (
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        in from_yaml.text
    )
    server = MockServer(scenario=load_scenario(path), profile="sglang")
    body = json.dumps({"model": "openai/gpt-oss-20b", "messages": USER, "tools": CHAT_TOOLS}).encode()
    [call] = json.loads(server.handle("chat", body, {}).body)["choices"][0]["message"]["tool_calls"]
    assert (call["function"]["name"], call["function"]["arguments"]) == ("get_weather", '{"city": "Oslo"}')


def test_yaml_role_and_absent_are_the_default(tmp_path):
    texts = []
    for value in ("role", "null"):
        path = tmp_path / f"{value}.yaml"
        path.write_text(YAML % value, encoding="utf-8")
        texts.append(load_scenario(path).steps[0].completion.text)
    default = MockServer(scenario=script(_call("role"))).scenario.steps[0].completion.text
    assert texts == [default, default]
    assert "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json" in default


def test_a_bad_value_is_a_scenario_error_with_file_line_and_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(YAML % "header", encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value).startswith(
        f"{path}:10: steps[0].completion.messages[1].recipient_position: Input should be 'role' or 'channel'"
    )
    with pytest.raises(ValueError, match="recipient_position: expected 'role' or 'channel', got 'header'"):
        tool_call("get_weather", ARGS, recipient_position="header")


def test_a_fault_decides_the_position_and_a_conflict_is_refused():
    # The fault library renders every header with its own recipient_position (default channel).
    channel = tool_call("get_weather", ARGS, recipient_position="channel")
    assert fault("duplicate_recipient", channel).to_dict() == fault("duplicate_recipient", channel).to_dict()
    MockServer(scenario=script(fault("duplicate_recipient", channel)))
    with pytest.raises(ValueError, match=r"messages\[0\]\.recipient_position: 'channel', but the fault renders"):
        fault("duplicate_recipient", channel, recipient_position="role")
    data = {
        "steps": [
            {
                "completion": {
                    "messages": [channel.to_dict()],
                    "fault": {"kind": "duplicate_recipient", "recipient_position": "role"},
                }
            }
        ]
    }
    with pytest.raises(ScenarioError, match=r"steps\[0\]\.completion: messages\[0\]\.recipient_position: 'channel'"):
        scenario_from_data(data, name="t", default_version=True)


def test_builder_round_trips_and_prints_the_option():
    step = _call("channel") + final("x")
    assert step.to_dict()["completion"]["messages"][1]["recipient_position"] == "channel"
    assert Step.from_dict(step.to_dict()) == step
    assert "tool_call('get_weather', {'city': 'Oslo'}, recipient_position='channel')" in step._python()
    assert "recipient_position" not in tool_call("get_weather", ARGS).to_dict()
    assert Message.from_dict({**tool_call("x").to_dict(), "recipient_position": None}) == tool_call("x")
    assert textwrap.dedent(script(step).to_yaml()).count("recipient_position: channel") == 1
