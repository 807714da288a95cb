"""The official openai SDK against the ``mlx-lm`` profile over HTTP, through the project's pytest
marker. Each expectation is what mlx-lm 0.32.2's ``mlx_lm/server.py`` gives for the scripted text
(see :mod:`mockoss.profiles.mlxlm`): no Harmony parsing, markup verbatim in ``content``."""

from __future__ import annotations

import json
import uuid

import openai
import pytest
from profile_e2e_support import use_raw

MODEL = "mlx-community/gpt-oss-20b-MXFP4-Q8"
USER = [{"role": "user", "content": "Weather in Paris?"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
ANALYSIS = "<|channel|>analysis<|message|>Need the weather.<|end|>"
CALL = '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'
CLEAN = (
    "<|channel|>analysis<|message|>User asks: What is 2 + 2? Simple arithmetic. Provide answer.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4."
)

pytestmark = pytest.mark.mockoss(profile="mlx-lm")


def use(server, *raw: str) -> None:
    use_raw(server, *raw, name="mlxlm-e2e")


@pytest.mark.mockoss(scenario="clean-answer")
def test_harmony_markup_is_content_and_the_return_token_is_not(client):
    reply = client.chat.completions.create(model=MODEL, messages=USER)
    choice = reply.choices[0]
    assert (choice.message.content, choice.finish_reason) == (CLEAN, "stop")
    assert "reasoning" not in (choice.message.model_extra or {}) and choice.message.tool_calls is None
    assert reply.id.startswith("chatcmpl-") and uuid.UUID(reply.id.removeprefix("chatcmpl-")).version == 4
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert reply.usage.prompt_tokens_details.cached_tokens == 0


def test_tool_call_is_flattened_into_content_with_finish_stop(server, client):
    use(server, ANALYSIS + CALL)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    choice = reply.choices[0]
    assert (choice.message.content, choice.message.tool_calls, choice.finish_reason) == ((ANALYSIS + CALL).removesuffix("<|call|>"), None, "stop")


def test_report_875_channel_markup_and_an_analysis_channel_call_reach_content(server, client):
    # ml-explore/mlx-lm#875 (0.30.6, mlx-community/gpt-oss-20b-MXFP4-Q8): channel tokens leak into
    # message.content. A call addressed on the analysis channel (the form of waybarrios/vllm-mlx#562)
    # is no different for mlx-lm: no parser looks at either.
    text = ANALYSIS + '<|start|>assistant<|channel|>analysis to=functions.get_weather code<|message|>{"city":"Paris"}<|call|>'
    use(server, text, text)
    reply = client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER)
    assert (reply.choices[0].message.content, reply.choices[0].message.tool_calls) == (text.removesuffix("<|call|>"), None)
    with client.chat.completions.create(model=MODEL, messages=USER, tools=WEATHER, stream=True) as stream:
        chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == text.removesuffix("<|call|>")
    assert not any(c.choices[0].delta.tool_calls for c in chunks) and chunks[-1].choices[0].finish_reason == "stop"


@pytest.mark.mockoss(scenario="clean-answer")
def test_stream_repeats_role_in_every_delta_and_ends_with_usage_then_done(client):
    content, chunks = "", []
    with client.chat.completions.create(model=MODEL, messages=USER, stream=True, stream_options={"include_usage": True}) as stream:
        for chunk in stream:
            chunks.append(chunk)
            if chunk.choices:
                content += chunk.choices[0].delta.content or ""
    assert content == CLEAN
    deltas = [c for c in chunks if c.choices]
    assert all(c.choices[0].delta.role == "assistant" for c in deltas)
    assert deltas[-1].choices[0].finish_reason == "stop" and deltas[-1].choices[0].delta.content is None
    assert chunks[-1].choices == [] and chunks[-1].object == "chat.completion"  # mlx-lm labels the usage chunk so
    assert len({c.id for c in chunks}) == 1


@pytest.mark.mockoss(scenario="clean-answer")
def test_stream_options_without_include_usage_ends_the_stream_before_done(http, client):
    # server.py reads stream_options["include_usage"] after the finish chunk: a KeyError, and the
    # close-delimited body just ends.
    body = {"model": MODEL, "messages": USER, "stream": True, "stream_options": {}}
    frames = [f for f in http.post("/v1/chat/completions", json=body).text.split("\n\n") if f]
    assert "[DONE]" not in frames[-1] and json.loads(frames[-1].removeprefix("data: "))["choices"][0]["finish_reason"] == "stop"
    with client.chat.completions.create(model=MODEL, messages=USER, stream=True, stream_options={}) as stream:
        assert "".join(c.choices[0].delta.content or "" for c in stream) == CLEAN


@pytest.mark.mockoss(scenario="clean-answer")
def test_default_max_tokens_is_512_and_a_request_limit_wins(client):
    reply = client.chat.completions.create(model=MODEL, messages=USER, max_tokens=5)
    assert (reply.choices[0].finish_reason, reply.usage.completion_tokens) == ("length", 5)
    assert reply.choices[0].message.content == "<|channel|>analysis<|message|>User asks"


@pytest.mark.mockoss(scenario="clean-answer")
def test_text_completions_return_the_raw_text(client):
    reply = client.completions.create(model=MODEL, prompt="<|start|>user<|message|>2+2?<|end|><|start|>assistant")
    assert (reply.choices[0].text, reply.choices[0].finish_reason) == (CLEAN, "stop")
    assert reply.id.startswith("cmpl-") and reply.object == "text_completion"


@pytest.mark.mockoss(scenario="clean-answer")
def test_body_is_python_json_dumps_and_errors_are_flat(http):
    raw = http.post("/v1/chat/completions", json={"model": MODEL, "messages": USER}).text
    assert raw.startswith('{"id": "chatcmpl-') and '"system_fingerprint": ' in raw
    bad = http.post("/v1/chat/completions", content=b"[1]", headers={"content-type": "application/json"})
    assert bad.status_code == 400 and set(bad.json()) == {"error"} and isinstance(bad.json()["error"], str)


def test_probes_and_unknown_routes(http):
    assert (http.get("/health").status_code, http.get("/health").json()) == (200, {"status": "ok"})
    models = http.get("/v1/models").json()
    assert models["object"] == "list" and models["data"][0]["id"] == MODEL and set(models["data"][0]) == {"id", "object", "created"}
    missing = http.get("/v1/responses")
    assert (missing.status_code, missing.text) == (404, "Not Found")
    assert http.post("/v1/responses", json={"model": MODEL, "input": "hi"}).status_code == 404


def test_sdk_surfaces_the_flat_error_message(client):
    with pytest.raises(openai.BadRequestError) as exc:
        client.chat.completions.create(model=MODEL, messages=USER, max_tokens=0)
    assert exc.value.status_code == 400 and isinstance(json.loads(exc.value.response.text)["error"], str)
