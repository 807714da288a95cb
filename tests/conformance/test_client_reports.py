"""Public reports of client libraries failing on a server's gpt-oss output, reproduced on the
profile of that server: the server-side part each report rests on (the client's own failure was
reproduced with the client by the seventeenth session's newcomer: LiteLLM 1.110.2, the Vercel AI
SDK 6.0.333, pydantic-ai 2.68.0; those clients are not test dependencies, so the bytes they choke on
are checked here).
"""

from __future__ import annotations

import json

import pytest

from mockoss.server.core import MockServer

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def _send(server: MockServer, endpoint: str, body: dict) -> object:
    return server.handle(endpoint, json.dumps(body).encode(), {"content-type": "application/json"})


def test_litellm_33622_ollama_stream_ends_in_an_error_line_without_message():
    """BerriAI/litellm#33622: ``ollama_chat`` streaming does ``chunk["message"]`` on every line and
    raises ``KeyError: 'message'`` (surfaced as ``APIConnectionError``) when Ollama ends the stream
    with ``{"error": "error parsing tool call: …"}`` after HTTP 200: tool-call arguments that are not
    JSON (Ollama's ``ChatHandler``, ollama/ollama@fb307609:server/routes.go)."""
    server = MockServer(scenario="tool-arguments-not-json", profile="ollama")
    reply = _send(server, "ollama.chat", {"model": "gpt-oss:20b", "stream": True, "tools": TOOLS,
                                          "messages": [{"role": "user", "content": "list files"}]})  # fmt: skip
    assert reply.status == 200 and reply.media_type == "application/x-ndjson"
    lines = [json.loads(frame) for frame in reply.frames]
    assert all("message" in line for line in lines[:-1])
    assert set(lines[-1]) == {"error"} and lines[-1]["error"].startswith("error parsing tool call: raw=")


def test_ai_sdk_item_reference_is_refused_by_vllm_responses():
    """vercel/ai#11803 ("tools do not work with vllm"): the AI SDK's ``.responses()`` model sends the
    previous turn's function call back as ``{"type": "item_reference", "id": …}`` unless
    ``providerOptions.openai.store`` is false; vLLM's Responses input conversion knows no such
    item (``Unknown input type``, vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/
    serving.py) and answers 400, which ``streamText`` hides: the loop ends after one tool step."""
    server = MockServer(scenario="clean-tool-call")
    body = {"model": "openai/gpt-oss-20b", "input": [{"role": "user", "content": "weather?"},
                                                     {"type": "item_reference", "id": "fc_1"}]}  # fmt: skip
    reply = _send(server, "responses", body)
    assert reply.status == 400
    assert json.loads(reply.body)["error"]["message"] == "Unknown input type: item_reference (parameter=input)"
    without = {"model": "openai/gpt-oss-20b", "input": [{"role": "user", "content": "weather?"}]}
    assert _send(server, "responses", without).status == 200


@pytest.mark.parametrize("profile", ["llamacpp", "llamacpp@b9553"])
def test_llamacpp_20607_responses_stream_events_carry_no_output_index(profile):
    """ggml-org/llama.cpp#20607: llama-server's Responses stream events have no ``output_index``
    and ``response.created`` no ``model`` or ``created_at``, so typed clients reject them (the AI SDK: "Type
    validation failed"; pydantic-ai: ``TypeError`` comparing ``None``; the openai SDK's
    ``responses.stream()`` helper). Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-task.cpp,
    ``to_json_oaicompat_resp_stream`` and the partial's events (b9553); still so in the later
    server-task.cpp the default build's function-call ids are read from (ggml-org/llama.cpp#24882)."""
    server = MockServer(scenario="clean-answer", profile=profile)
    reply = _send(server, "responses", {"model": "gpt-oss", "input": "hi", "stream": True})
    assert reply.status == 200
    events = [json.loads(frame.split(b"data: ", 1)[1]) for frame in reply.frames]
    kinds = [event["type"] for event in events]
    assert "response.output_item.added" in kinds and kinds[-1] == "response.completed"
    assert not any("output_index" in event for event in events)
    assert set(events[0]["response"]) == {"id", "object", "status"}  # response.created


def test_an_unknown_endpoint_name_is_a_value_error_naming_the_endpoints():
    """``MockServer.handle("ollama_chat", …)`` (for ``"ollama.chat"``) was a logged internal error and an
    unscripted 500; a caller's mistake is an exception naming the valid names."""
    server = MockServer(scenario="clean-answer", profile="ollama")
    with pytest.raises(ValueError, match=r"unknown endpoint 'ollama_chat'; endpoints: chat, responses, .*ollama\.chat"):
        server.handle("ollama_chat", b"{}", {})
    with pytest.raises(ValueError, match=r"unknown endpoint 'ollama_chat'"):
        server.respond("ollama_chat", b"{}", {})  # the HTTP layer's entry too
    with pytest.raises(ValueError, match=r"unknown endpoint 'ollama_chat'"):
        server.play("ollama_chat", b"{}", {})  # the real engines' entry
