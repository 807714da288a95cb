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
