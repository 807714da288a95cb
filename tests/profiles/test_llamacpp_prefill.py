"""llama-server's prefill check: two assistant messages at the end of the list are a 400.

``oaicompat_chat_params_parse`` (ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp) pops
a trailing assistant message to prefill it (``--prefill-assistant``, on by default) and refuses
another assistant message before it with ``std::invalid_argument`` (HTTP 400,
``invalid_request_error``), after the message and field checks and before the chat template. Agents
meet it in the field (compaction leaving two assistant turns last). Found by the second breaker of
issue 9's 14th session (M4): mockoss answered 200, or the template's 500 when the earlier message
held markup.
"""

from __future__ import annotations

import json

from mockoss import steps
from mockoss.server.core import MockServer

WANT = {
    "error": {
        "code": 400,
        "message": "Cannot have 2 or more assistant messages at the end of the list.",
        "type": "invalid_request_error",
    }
}


def _chat(server: MockServer, messages: list) -> tuple[int, dict]:
    reply = server.handle(
        "chat", json.dumps({"model": "m", "messages": messages}).encode(), {"content-type": "application/json"}
    )
    return reply.status, json.loads(reply.body)


def test_two_trailing_assistant_messages_are_a_400_that_plays_no_step() -> None:
    server = MockServer("clean-answer", profile="llamacpp")
    user = {"role": "user", "content": "u"}
    status, body = _chat(server, [user, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}])
    assert (status, body) == (400, WANT)
    # before the template: markup the template would refuse (500) in the earlier one is never read
    marked = {"role": "assistant", "content": "a", "reasoning_content": "<|channel|>final<|message|>x"}
    assert _chat(server, [user, marked, {"role": "assistant", "content": "b"}]) == (400, WANT)
    # one trailing assistant message is a prefill, answered; the refused requests drew no step
    status, body = _chat(server, [user, {"role": "assistant", "content": "a"}])
    assert status == 200 and body["choices"][0]["message"]["content"].startswith("a")
    assert [entry.step for entry in server.requests if entry.step is not None] == [0]


def test_one_assistant_message_between_others_is_not_refused() -> None:
    server = MockServer("clean-answer", profile="llamacpp")
    messages = [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "v"},
    ]
    assert _chat(server, messages)[0] == 200


# ------------------------------------------------ the other checks before the template (breaker L1)

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def _body(server: MockServer, **fields: object) -> tuple[int, dict]:
    body = {"model": "m", "messages": [{"role": "user", "content": "u"}], **fields}
    reply = server.handle("chat", json.dumps(body).encode(), {"content-type": "application/json"})
    return reply.status, json.loads(reply.body)


def _error(status: int, message: str) -> tuple[int, dict]:
    kind = "server_error" if status == 500 else "invalid_request_error"
    return status, {"error": {"code": status, "message": message, "type": kind}}


def test_the_checks_before_the_template_in_llama_servers_order() -> None:
    """``oaicompat_chat_params_parse`` (ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp):
    mockoss answered 200 to each of these, or the template's 500 when a message also held what the
    template refuses (the second breaker's L1, 14th session)."""
    server = MockServer(steps.script(steps.final("zero"), steps.final("one"), steps.final("two")), profile="llamacpp")
    assert _body(server, json_schema={"type": "object"}, grammar="root ::= x") == _error(
        500, "Cannot use both json_schema and grammar"
    )
    # json_schema with grammar comes before response_format
    assert _body(server, json_schema={}, grammar="g", response_format={"type": "xml"})[0] == 500
    assert _body(server, tools=TOOLS, grammar=None) == _error(400, "Cannot use custom grammar constraints with tools.")
    assert _body(server, tools=TOOLS, tool_choice="none", grammar="g")[0] == 200
    assert _body(server, chat_template_kwargs={"enable_thinking": "yes"}) == _error(
        400, 'invalid type for "enable_thinking" (expected boolean, got string)'
    )
    assert _body(server, chat_template_kwargs={"enable_thinking": False})[0] == 200
    image = [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]
    status, body = _body(server, messages=[{"role": "user", "content": image}])
    assert (status, body) == _error(
        500, "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"
    )
    assert _body(server, messages=[{"role": "user", "content": [{"type": "video", "x": 1}]}]) == _error(
        400, "unsupported content[].type"
    )
    # response_format comes before the messages, reasoning_format after them
    bad_message = [{"role": "user"}]
    assert _body(server, messages=bad_message, response_format={"type": "xml"})[1]["error"]["message"].startswith(
        "response_format type must be"
    )
    assert _body(server, messages=bad_message, reasoning_format="nope")[1]["error"]["message"] == (
        "All non-assistant messages must contain 'content'"
    )
    # none of the refusals drew a step: the two answered requests got steps 0 and 1
    assert [(entry.step, entry.status) for entry in server.requests if entry.status == 200] == [(0, 200), (1, 200)]
    assert all(entry.step is None for entry in server.requests if entry.status != 200)
