"""The ``vllm-mlx`` profile's rules, each as vllm-mlx 0.6.0's own code gives it (sources in
:mod:`mockoss.profiles.vllm_mlx`); the whole surface is checked byte for byte against the real
server by ``tools/vllm_mlx_diff.py`` and the goldens in ``tests/golden/test_vllm_mlx_goldens.py``."""

from __future__ import annotations

import json

import pytest

from mockoss.endpoints import ENDPOINTS
from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, RequestContext
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.profiles.vllm_mlx.engine import engine_outputs, limited_tokens

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def chat(profile, text: str, **body):
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], **body}
    view = ENDPOINTS["chat"].schema.model_validate(body).view("m", body)  # the server's own request path
    reply = profile.chat(Completion.from_text(text), view, RequestContext(ids=IdSource(0, 0), created=0, prompt_tokens=5))
    if reply.streamed:
        return [json.loads(f[6:]) for f in b"".join(reply.frames).decode().split("\n\n") if f and f != "data: [DONE]"]
    return json.loads(reply.body)


def test_the_engine_emits_one_output_per_token_one_for_the_flush_and_a_finished_one_after_an_eos():
    tokens = limited_tokens(Completion.from_text("<|channel|>final<|message|>Hi<|return|>"), 100)
    outputs = engine_outputs(tokens, 100)
    assert [finished for _, finished, _ in outputs] == [False] * (len(tokens)) + [True]
    assert outputs[-1] == ("", True, "stop") and "".join(t for t, _, _ in outputs) == "<|channel|>final<|message|>Hi"
    # a limit one above the tokens before the EOS is reached by the flush output: a length stop
    assert engine_outputs(tokens, len(tokens))[-1][1:] == (True, "length")


def test_a_script_without_a_stop_token_is_followed_by_return():
    assert limited_tokens(Completion.from_text("<|channel|>final<|message|>Hi"), 100)[-1] == 200002


@pytest.mark.parametrize(
    ("switches", "reasoning"),
    # the harmony parser looks for the channel name in the delta holding <|channel|>; one token at a
    # time it never sees "final", so the answer streams as reasoning too
    [({}, "Think."), ({"reasoning_parser": "harmony"}, "Think.Done."), ({"reasoning_parser": None}, None)],
)
def test_reasoning_reaches_the_stream_only_through_a_reasoning_parser(switches, reasoning):
    text = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>"
    chunks = chat(get_profile("vllm-mlx", switches), text, stream=True)
    streamed = "".join(c["choices"][0]["delta"].get("reasoning_content", "") for c in chunks if c["choices"])
    assert (streamed or None) == reasoning
    body = chat(get_profile("vllm-mlx", switches), text)  # not streamed: the engine cleaned it first
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "Done."}


def test_tool_choice_none_turns_the_tool_parser_off():
    text = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}<|call|>'
    found = chat(get_profile("vllm-mlx", {"reasoning_parser": None}), text, stream=True, tools=TOOLS)
    assert any(c["choices"][0]["delta"].get("tool_calls") for c in found if c["choices"])
    none = chat(get_profile("vllm-mlx", {"reasoning_parser": None}), text, stream=True, tools=TOOLS, tool_choice="none")
    assert not any(c["choices"][0]["delta"].get("tool_calls") for c in none if c["choices"])


def test_declared_string_argument_given_an_object_is_coerced_to_json_text():
    # _coerce_tool_arguments: the call's block never sees an end token in the stream (<|call|> is
    # consumed), so it comes from the end-of-stream parse, which coerces to the declared type
    text = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":{"name":"Oslo"}}<|call|>'
    chunks = chat(get_profile("vllm-mlx", {"reasoning_parser": None}), text, stream=True, tools=TOOLS)
    call = next(c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if c["choices"] and c["choices"][0]["delta"].get("tool_calls"))
    assert call["function"]["arguments"] == '{"city": "{\\"name\\":\\"Oslo\\"}"}'
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls" and chunks[-1]["usage"] is None


@pytest.mark.parametrize(
    ("switches", "message"),
    [
        ({"reasoning_parser": "qwen3"}, "reasoning_parser must be"),
        ({"tool_call_parser": "hermes"}, "tool_call_parser must be"),
        ({"max_tokens": 0}, "max_tokens must be"),
        ({"stream_finish_guard": "yes"}, "stream_finish_guard must be"),
    ],
)
def test_bad_switch_values_are_refused(switches, message):
    with pytest.raises(ProfileError, match=message):
        get_profile("vllm-mlx", switches)


def test_gpt_oss_is_an_alias_of_the_harmony_tool_parser():
    assert get_profile("vllm-mlx", {"tool_call_parser": "gpt-oss"}).tool_call_parser == "harmony"


def test_releases_before_the_timeline_are_refused():
    with pytest.raises(ProfileError, match="starts at 0.4.0"):
        get_profile("vllm-mlx@0.3.0")
