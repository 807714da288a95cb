"""Exact-output tests for the ollama profile's native API: ``/api/chat`` and ``/api/generate``.

Shapes follow ollama/ollama@fb307609 (server/routes.go, api/types.go): NDJSON by default, Go JSON
(``<`` as ``\\u003c``, no ``.0`` floats), tool calls on the final object, errors as ``{"error": …}``.
"""

from __future__ import annotations

import json

import pytest
from ollama_support import ANSWER, BAD_ARGS, BAD_ARGS_ONLY, BAD_ERROR, TOOL  # tests/profiles is on sys.path

from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, Reply, RequestContext
from mockoss.profiles.ollama import OllamaProfile
from mockoss.profiles.ollama.ids import tool_call_id
from mockoss.schemas.ollama import OllamaChatRequestView, OllamaGenerateRequestView
from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"
CREATED = 1_750_000_000  # 2025-06-15T15:06:40Z
DAY = "2025-06-15T15:06:40"
CALL_ID = tool_call_id(IdSource(0, 0))  # the first id a request draws
# token timeline: load 50 ms + 100 prompt tokens at 2000/s (50 ms), then 20 ms per token
METRICS = (
    '"total_duration":380000000,"load_duration":50000000,"prompt_eval_count":100,'
    '"prompt_eval_duration":50000000,"eval_count":14,"eval_duration":280000000'
)
GO_JSON = (("content-type", "application/json; charset=utf-8"),)


def ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=CREATED, prompt_tokens=100)


def chat(completion: Completion, profile: OllamaProfile | None = None, **view: object) -> Reply:
    request = OllamaChatRequestView(model=MODEL, **view)  # type: ignore[arg-type]
    return (profile or OllamaProfile()).surface("ollama.chat", completion, request, ctx())


def generate(completion: Completion, profile: OllamaProfile | None = None, **view: object) -> Reply:
    request = OllamaGenerateRequestView(model=MODEL, **view)  # type: ignore[arg-type]
    return (profile or OllamaProfile()).surface("ollama.generate", completion, request, ctx())


def lines(reply: Reply) -> list[str]:
    assert reply.status == 200 and reply.media_type == "application/x-ndjson"
    assert all(frame.endswith(b"}\n") and frame.count(b"\n") == 1 for frame in reply.frames)
    return [frame.decode() for frame in reply.frames]


# --------------------------------------------------------------------------- /api/chat


def test_chat_streams_ndjson_by_default_one_object_per_token():
    assert lines(chat(ANSWER)) == [
        f'{{"model":"gpt-oss:20b","created_at":"{DAY}.18Z","message":{{"role":"assistant","content":"","thinking":"Hi"}},"done":false}}\n',
        f'{{"model":"gpt-oss:20b","created_at":"{DAY}.2Z","message":{{"role":"assistant","content":"","thinking":"."}},"done":false}}\n',
        f'{{"model":"gpt-oss:20b","created_at":"{DAY}.34Z","message":{{"role":"assistant","content":"Yes"}},"done":false}}\n',
        f'{{"model":"gpt-oss:20b","created_at":"{DAY}.36Z","message":{{"role":"assistant","content":"."}},"done":false}}\n',
        f'{{"model":"gpt-oss:20b","created_at":"{DAY}.38Z","message":{{"role":"assistant","content":""}},"done":true,"done_reason":"stop",{METRICS}}}\n',
    ]


def test_chat_not_streamed_concatenates_thinking_and_content():
    reply = chat(ANSWER, stream=False)
    assert (reply.status, reply.headers, reply.frames) == (200, GO_JSON, ())
    assert reply.body.decode() == (
        f'{{"model":"gpt-oss:20b","created_at":"{DAY}.38Z","message":{{"role":"assistant","content":"Yes.","thinking":"Hi."}},'
        f'"done":true,"done_reason":"stop",{METRICS}}}'
    )


def test_chat_tool_call_rides_on_the_final_object_with_go_json_arguments():
    frames = lines(chat(TOOL, tool_names=("get-weather",)))
    final = json.loads(frames[-1])
    assert frames[-1].startswith(
        f'{{"model":"gpt-oss:20b","created_at":"{DAY}.66Z","message":{{"role":"assistant","content":"",'
        f'"tool_calls":[{{"id":"{CALL_ID}","function":{{"index":0,"name":"get-weather","arguments":{{"city":"\\u003cParis\\u003e"}}}}}}]}},"done":true,"done_reason":"stop",'
    )
    assert final["message"]["tool_calls"][0]["function"]["arguments"] == {"city": "<Paris>"}
    assert [json.loads(f)["message"].get("thinking") for f in frames[:-1]] == ["Hm", "."]


def test_chat_tool_call_kept_without_declared_tools_since_it_is_on_the_last_object():
    body = json.loads(chat(TOOL, stream=False).body)
    assert body["message"]["tool_calls"][0]["function"]["name"] == "get_weather"  # no mapping: raw name
    assert body["message"]["thinking"] == "Hm."


def test_chat_bad_arguments_not_streamed_is_a_500_with_the_raw_text():
    reply = chat(BAD_ARGS, stream=False)
    assert (reply.status, reply.headers) == (500, GO_JSON)
    assert reply.body.decode() == '{"error":"' + BAD_ERROR + '"}'


def test_chat_bad_arguments_streamed_ends_with_an_error_line():
    frames = lines(chat(BAD_ARGS))
    assert [json.loads(f)["message"]["thinking"] for f in frames[:-1]] == ["Hm", "."]
    assert frames[-1] == '{"error":"' + BAD_ERROR + '"}\n'


def test_chat_bad_arguments_streamed_before_any_output_is_a_500():
    reply = chat(BAD_ARGS_ONLY)
    assert (reply.status, reply.headers, reply.body.decode()) == (500, GO_JSON, '{"error":"' + BAD_ERROR + '"}')


@pytest.mark.parametrize("completion", [BAD_ARGS, BAD_ARGS_ONLY])
def test_v0_11_3_streams_the_error_under_the_wrong_key_at_200(completion):
    frames = lines(chat(completion, OllamaProfile(tool_call_error="v0.11.3")))
    assert frames[-1] == '{"error parsing tool call":"invalid character \'l\' looking for beginning of value"}\n'


def test_v0_11_3_not_streamed_loses_the_message():
    reply = chat(BAD_ARGS, OllamaProfile(tool_call_error="v0.11.3"), stream=False)
    assert (reply.status, reply.body) == (500, b'{"error":"unexpected error format in response"}')


def test_chat_truncated_by_num_predict_reports_length():
    final = json.loads(chat(ANSWER, stream=False, max_tokens=4).body)
    assert (final["done_reason"], final["eval_count"], final["message"]) == (
        "length",
        4,
        {"role": "assistant", "content": "", "thinking": "Hi"},
    )


@pytest.mark.parametrize(("keep_alive", "reason"), [(None, "load"), ("5m", "load"), (0, "unload"), ("0s", "unload")])
def test_chat_without_messages_only_loads_or_unloads(keep_alive, reason):
    reply = chat(ANSWER, load_only=True, body={"keep_alive": keep_alive})
    assert reply.body.decode() == (
        f'{{"model":"gpt-oss:20b","created_at":"{DAY}Z","message":{{"role":"assistant","content":""}},'
        f'"done":true,"done_reason":"{reason}"}}'
    )


def test_rates_are_switches():
    frames = lines(chat(ANSWER, OllamaProfile(eval_rate=100, prompt_eval_rate=1000, load_duration_ms=0)))
    assert json.loads(frames[0])["created_at"] == f"{DAY}.14Z"  # 100 ms of prompt, then 4 tokens at 10 ms
    final = json.loads(frames[-1])
    assert "load_duration" not in final  # a zero duration is omitted, as Go's omitempty does
    assert (final["prompt_eval_duration"], final["eval_duration"], final["total_duration"]) == (
        100_000_000,
        140_000_000,
        240_000_000,
    )


@pytest.mark.parametrize(
    ("switches", "message"),
    [
        ({"tool_call_error": "v0.12"}, "tool_call_error must be 'current' or 'v0.11.3'"),
        ({"eval_rate": 0}, "eval_rate must be a positive integer"),
        ({"load_duration_ms": -1}, "load_duration_ms must be an integer from 0 to"),
        ({"version": ""}, "version must be a non-empty string"),
    ],
)
def test_bad_switch_values_are_rejected(switches, message):
    with pytest.raises(ValueError, match=message):
        OllamaProfile(**switches)


# --------------------------------------------------------------------------- /api/generate


def test_generate_streams_response_and_thinking_then_context():
    frames = lines(generate(ANSWER, body={"prompt": "hi"}))
    assert (
        frames[0] == f'{{"model":"gpt-oss:20b","created_at":"{DAY}.18Z","response":"","thinking":"Hi","done":false}}\n'
    )
    assert frames[2] == f'{{"model":"gpt-oss:20b","created_at":"{DAY}.34Z","response":"Yes","done":false}}\n'
    final = json.loads(frames[-1])
    assert list(final) == [
        "model",
        "created_at",
        "response",
        "done",
        "done_reason",
        "context",
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    ]
    # the prompt's tokens, then the generated text re-tokenised: ...<|channel|>analysis<|message|>Hi.<|end|>...Yes.
    tail = [200006, 173781, 200005, 35644, 200008, 12194, 13, 200007, 200006, 173781, 200005, 17196, 200008, 13022, 13]
    assert final["context"][-15:] == tail  # <|start|>assistant (end of prompt) then the text as streamed
    assert final["context"][:3] == [200006, 17360, 200008]  # <|start|>system<|message|>


def test_generate_tool_call_has_no_id_and_comes_after_the_metrics():
    body = generate(TOOL, stream=False, body={"prompt": "weather?"}).body.decode()
    assert body.endswith(
        ',"eval_duration":560000000,"tool_calls":[{"function":{"index":0,"name":"get_weather","arguments":{"city":"\\u003cParis\\u003e"}}}]}'
    )
    assert json.loads(body)["thinking"] == "Hm."


def test_generate_raw_skips_the_parser_and_drops_special_tokens():
    body = json.loads(generate(ANSWER, stream=False, raw=True, body={"prompt": "x", "raw": True}).body)
    assert (body["response"], "thinking" in body, "context" in body) == ("analysisHi.assistantfinalYes.", False, False)


def test_generate_bad_arguments_fail_like_chat():
    reply = generate(BAD_ARGS, stream=False, body={"prompt": "x"})
    assert (reply.status, reply.body.decode()) == (500, '{"error":"' + BAD_ERROR + '"}')


def test_generate_empty_prompt_only_loads():
    reply = generate(ANSWER, load_only=True, body={})
    assert (
        reply.body.decode()
        == f'{{"model":"gpt-oss:20b","created_at":"{DAY}Z","response":"","done":true,"done_reason":"load"}}'
    )


# --------------------------------------------------------------------------- through MockServer


@pytest.fixture(scope="module")
def server() -> MockServer:
    return MockServer(scenario="clean-answer", profile="ollama", served_model_names=[MODEL])


def _post(server: MockServer, endpoint: str, body: object) -> Reply:
    return server.handle(endpoint, json.dumps(body).encode(), {})


def test_unknown_model_is_ollamas_404(server):
    reply = _post(server, "ollama.chat", {"model": "llama3", "messages": [{"role": "user", "content": "hi"}]})
    assert (reply.status, reply.headers, reply.body) == (404, GO_JSON, b'{"error":"model \'llama3\' not found"}')


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"messages": []}, "model"),
        ({"model": "", "messages": []}, "model"),
        ({"model": MODEL, "think": "extreme"}, "think"),
        ({"model": MODEL, "think": "true"}, "think"),
        ({"model": MODEL, "top_logprobs": 21}, "top_logprobs"),
        ({"model": MODEL, "messages": [{"role": "user", "content": ["a"]}]}, "messages.0.content"),
        ({"model": MODEL, "stream": "yes"}, "stream"),
    ],
)
def test_invalid_native_requests_are_400_in_ollamas_shape(server, body, where):
    reply = _post(server, "ollama.chat", body)
    assert reply.status == 400 and reply.headers == GO_JSON
    message = json.loads(reply.body)["error"]
    assert message.startswith("Invalid request: " + where)


def test_raw_generate_with_a_template_is_rejected(server):
    reply = _post(server, "ollama.generate", {"model": MODEL, "prompt": "x", "raw": True, "system": "s"})
    assert reply.status == 400
    assert "raw mode does not support template, system, or context" in json.loads(reply.body)["error"]


def test_valid_think_values_are_accepted(server):
    for think in (True, False, "low", "medium", "high", "max"):
        server.reset()
        body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "think": think, "stream": False}
        assert json.loads(_post(server, "ollama.chat", body).body)["message"]["content"] == "2 + 2 = 4."


def test_same_request_same_bytes(server):
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    server.reset()
    first = _post(server, "ollama.chat", body)
    server.reset()
    assert _post(server, "ollama.chat", body).frames == first.frames
