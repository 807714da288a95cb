"""llama-server's Responses route and ``/apply-template`` run the chat route's parse, and the parse's
checks around the template (a review of the 14th session's llama.cpp refusals).

``post_responses_oai`` converts the body (``server_chat_convert_responses_to_chatcmpl``,
ggml-org/llama.cpp@03eb25f3:tools/server/server-chat.cpp, its own 400s) and then calls
``oaicompat_chat_params_parse`` on the converted body; ``post_apply_template`` calls it on the body
(tools/server/server-context.cpp, read in the copy vendored at
Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-context.cpp). mockoss ran only two field
checks on a Responses body and only the message checks and template on ``/apply-template``, so each
request below got a 200. The parse also refuses a prefill with ``enable_thinking`` on and reads
``logprobs`` after the template (ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp);
"Assistant response prefill is incompatible with enable_thinking." is an error agent loops meet when
they send the last assistant turn back. None of these plays a scripted step.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockoss import steps
from mockoss.profiles.llamacpp import refusals
from mockoss.server.core import MockServer

USER = {"role": "user", "content": "u"}
TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
CHAT_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
IMAGE_REFUSAL = "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"
SCRIPT = steps.script(steps.final("zero"), steps.final("one"))


def _send(server: MockServer, endpoint: str, body: dict[str, Any]) -> tuple[int, Any]:
    reply = server.handle(endpoint, json.dumps({"model": "m", **body}).encode(), {"content-type": "application/json"})
    return reply.status, json.loads(reply.body)


def _error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    kind = "server_error" if status == 500 else "invalid_request_error"
    return status, {"error": {"code": status, "message": message, "type": kind}}


# Each: a Responses body, and llama-server's answer (the converter's or the parse's).
CONVERTER_REFUSALS = [
    # an assistant message without "type": "message" (what clients send from an EasyInputMessage)
    ({"input": [{"role": "assistant", "content": "hi"}, USER]}, _error(400, "Cannot determine type of 'item'")),
    # @ai-sdk/openai sends a reasoning item back with its summary only
    (
        {"input": [USER, {"type": "reasoning", "summary": [{"type": "summary_text", "text": "t"}]}, USER]},
        _error(400, "item['content'] is not an array"),
    ),
    (
        {"input": [USER, {"type": "reasoning", "summary": [], "content": []}, USER]},
        _error(400, "item['content'] is empty"),
    ),
    # a function_call whose arguments is an object, not the JSON string
    (
        {"input": [USER, {"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]},
        _error(400, "Cannot determine type of 'item'"),
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]},
        _error(400, "'input_file' is not supported by llamacpp at this moment"),
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_audio"}]}]},
        _error(400, "'type' must be one of 'input_text', 'input_image', or 'input_file'"),
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_text"}]}]},
        _error(400, "'Input text' requires 'text'"),
    ),
    (
        {"input": [USER, {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]}]},
        _error(400, "'Output text' requires 'text'"),
    ),
    (
        {"input": [USER, {"type": "function_call_output", "call_id": "c", "output": [{"type": "output_text"}]}]},
        _error(400, "Output of tool call should be 'Input text'"),
    ),
    ({"input": [USER, {"text": "hello"}]}, _error(400, "Cannot determine type of 'item'")),
]


@pytest.mark.parametrize(("body", "want"), CONVERTER_REFUSALS)
def test_the_converters_refusals(body: dict[str, Any], want: tuple[int, dict[str, Any]]) -> None:
    server = MockServer(SCRIPT, profile="llamacpp")
    assert _send(server, "responses", body) == want
    assert _send(server, "responses", {"input": "fine"})[0] == 200
    assert [r.step for r in server.requests] == [None, 0]  # the refusal drew no step


def test_the_chat_parse_runs_on_the_converted_body() -> None:
    server = MockServer(SCRIPT, profile="llamacpp")
    send = lambda **fields: _send(server, "responses", {"input": "u", **fields})
    assert send(tools=[TOOL], grammar="root ::= x") == _error(400, "Cannot use custom grammar constraints with tools.")
    # a tool the converter drops (not a function) leaves no tools: the grammar is allowed
    assert send(tools=[{"type": "web_search_preview"}], grammar="root ::= x")[0] == 200
    assert send(chat_template_kwargs={"enable_thinking": "yes"}) == _error(
        400, 'invalid type for "enable_thinking" (expected boolean, got string)'
    )
    assert send(json_schema={}, grammar="g") == _error(500, "Cannot use both json_schema and grammar")
    image = {"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,AA=="}]}
    assert _send(server, "responses", {"input": [image]}) == _error(500, IMAGE_REFUSAL)
    # response_format before reasoning_format, as on the chat route
    assert send(response_format={"type": "xml"}, reasoning_format="nope")[1]["error"]["message"].startswith(
        "response_format type must be"
    )
    # the Responses API's own top_logprobs meets the parse's logprobs check
    assert send(top_logprobs=2) == _error(400, "top_logprobs requires logprobs to be set to true")
    assert [r.step for r in server.requests if r.step is not None] == [0]


def test_a_prefill_with_thinking_on_is_a_400_on_both_routes() -> None:
    server = MockServer(SCRIPT, profile="llamacpp")
    thinking = {"chat_template_kwargs": {"enable_thinking": True}}
    messages = [USER, {"role": "assistant", "content": "a"}]
    want = _error(400, refusals.PREFILL_WITH_THINKING)
    assert _send(server, "chat", {"messages": messages, **thinking}) == want
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]}
    assert _send(server, "responses", {"input": [USER, answer], **thinking}) == want
    # two trailing assistant messages are refused first; thinking off (the gpt-oss default) prefills
    assert _send(server, "chat", {"messages": [*messages, messages[-1]], **thinking})[1]["error"]["message"] == (
        refusals.TWO_ASSISTANTS_AT_END
    )
    assert _send(server, "chat", {"messages": messages, "chat_template_kwargs": {"enable_thinking": False}})[0] == 200
    assert _send(server, "chat", {"messages": messages})[0] == 200
    # thinking on with a user message last is no prefill
    assert _send(server, "chat", {"messages": [USER], **thinking})[0] == 200
    assert [r.step for r in server.requests if r.step is not None] == [0, 1, 1]


def test_the_logprobs_checks_come_after_the_template() -> None:
    server = MockServer(SCRIPT, profile="llamacpp")
    tool_message = {"role": "tool", "tool_call_id": "c", "content": "x"}  # the template's 500
    assert _send(server, "chat", {"messages": [USER, tool_message], "top_logprobs": 1})[0] == 500
    assert _send(server, "chat", {"messages": [USER], "top_logprobs": 1}) == _error(
        400, "top_logprobs requires logprobs to be set to true"
    )
    assert _send(server, "chat", {"messages": [USER], "top_logprobs": None})[0] == 200
    streamed = {"messages": [USER], "logprobs": True, "tools": [CHAT_TOOL], "stream": True}
    assert _send(server, "chat", streamed) == _error(400, "logprobs is not supported with tools + stream")


def test_apply_template_refuses_what_the_chat_route_refuses() -> None:
    server = MockServer(SCRIPT, profile="llamacpp")
    app_reply = lambda body: server.probe("POST", "/apply-template", json.dumps(body).encode())
    two = {"messages": [USER, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]}
    reply = app_reply(two)
    assert (reply.status, json.loads(reply.body)) == _error(400, refusals.TWO_ASSISTANTS_AT_END)
    reply = app_reply({"messages": [USER], "tools": [CHAT_TOOL], "grammar": "g"})
    assert (reply.status, json.loads(reply.body)) == _error(400, "Cannot use custom grammar constraints with tools.")
    reply = app_reply({"messages": [USER]})
    assert reply.status == 200 and "prompt" in json.loads(reply.body)


def test_a_checked_body_is_released_with_its_http_request() -> None:
    """The record that lets ``chat``/``responses`` skip a second check lived in a process-wide slot:
    a request that played an ``error:`` step never emptied it, so its body (any size) stayed in
    memory until the next llama.cpp request, across servers and resets. Over HTTP each request is
    answered in its own context now: once it is answered, nothing holds its body."""
    import gc

    from starlette.testclient import TestClient

    from mockoss.server.app import create_app

    marker = "body-marker-5f1c2a"
    server = MockServer(steps.script(steps.error(503, "busy")), profile="llamacpp")
    with TestClient(create_app(server), base_url="http://127.0.0.1:8080") as http:
        reply = http.post("/v1/chat/completions", json={"model": "m", "messages": [USER], "user": marker})
        assert reply.status_code == 503
        gc.collect()
        held = [o for o in gc.get_objects() if type(o) is dict and o.get("user") == marker]
    assert held == []


def test_a_responses_input_ending_with_an_assistant_item_is_prefilled_as_on_chat() -> None:
    """The Responses route runs the chat route's parse on the converted messages, prefill included:
    an ``input`` ending with an assistant message is continued, its text first in the answer, as a
    chat request ending with that message is (mockoss answered it as if the item were not last)."""
    server = MockServer(steps.script(steps.raw(" and more.<|return|>")), profile="llamacpp")
    chat = _send(server, "chat", {"messages": [USER, {"role": "assistant", "content": "Start"}]})
    assert chat[0] == 200 and chat[1]["choices"][0]["message"]["content"] == "Start and more."
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Start"}]}
    status, reply = _send(server, "responses", {"input": [USER, answer]})
    texts = [part["text"] for item in reply["output"] if item["type"] == "message" for part in item["content"]]
    assert status == 200 and texts == ["Start and more."]
    # an input ending with a user message is no prefill: the same text, with no channel header
    # before it, does not parse (llama-server's 500)
    status, reply = _send(server, "responses", {"input": [answer, USER]})
    assert status == 500 and "peg-native format" in reply["error"]["message"]


def test_a_responses_bodys_own_messages_field_is_not_prefilled() -> None:
    """The converter replaces a Responses body's ``messages`` with the converted ``input``: a
    ``messages`` field ending with an assistant message is no prefill there (a review: mockoss
    continued it)."""
    server = MockServer(steps.script(steps.final("answer")), profile="llamacpp")
    junk = [USER, {"role": "assistant", "content": "JUNK"}]
    status, reply = _send(server, "responses", {"input": "hi", "messages": junk})
    texts = [part["text"] for item in reply["output"] if item["type"] == "message" for part in item["content"]]
    assert status == 200 and texts == ["answer"]


def test_the_prefill_thinking_check_is_a_switch() -> None:
    """Read at 006639c3; whether the build the profile follows still has it is not settled, so it
    is the switch ``prefill_thinking_check`` (on by default)."""
    thinking = {"chat_template_kwargs": {"enable_thinking": True}}
    messages = [USER, {"role": "assistant", "content": "a"}]
    body = json.dumps({"model": "m", "messages": messages, **thinking}).encode()
    server = MockServer(SCRIPT, profile="llamacpp")
    headers = {"content-type": "application/json"}
    assert server.handle("chat", body, headers).status == 400
    off = server.handle("chat", body, {**headers, "x-mockoss-switch": "prefill_thinking_check=false"})
    assert off.status == 200, off.body


@pytest.mark.parametrize("stream", [False, True])
def test_a_response_cut_at_max_output_tokens_still_says_completed(stream: bool) -> None:
    """llama-server's Responses status is a constant, ``"completed"``, also when generation stopped at
    the token limit (``to_json_oaicompat_resp`` and the stream's ``response.completed``,
    Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-task.cpp:998, b9553), where OpenAI's
    API says ``"incomplete"`` with ``incomplete_details``: a client that checks ``status`` sees no cut."""
    server = MockServer(
        steps.script(steps.final("one two three four five six seven eight nine ten")), profile="llamacpp"
    )
    body = json.dumps({"model": "m", "input": "u", "max_output_tokens": 3, "stream": stream}).encode()
    reply = server.handle("responses", body, {"content-type": "application/json"})
    assert reply.status == 200
    if stream:
        last = reply.frames[-1].decode() if isinstance(reply.frames[-1], bytes) else reply.frames[-1]
        assert last.startswith("event: response.completed\n")
        response = json.loads(last.split("data: ", 1)[1])["response"]
    else:
        response = json.loads(reply.body)
    assert response["status"] == "completed" and "incomplete_details" not in response
    assert response["usage"]["output_tokens"] == 3
