"""The gpt-oss chat template's refusals on llama-server, over HTTP: ``/v1/chat/completions``,
``/v1/responses`` and ``/apply-template``, in each template engine's words
(mockoss.profiles.llamacpp.template_checks).

Sources: the template, openai/gpt-oss-20b@cbf31f6 ``chat_template.jinja`` (EchoCog/gpt-oss-20b@cbf31f62
mirrors its history; ``raise_exception`` at lines 265, 270, 290, 319); llama.cpp's patch of the
content check (PR #15243, ``common_chat_templates_init``); the gpt-oss handler's ``thinking`` copy
(PR #16937, PR #19704, common/parsers/gpt-oss.cpp); the engine's decoration
(ggml-org/llama.cpp@07129346:common/jinja/runtime.cpp ``statement::execute``,
ggml-org/llama.cpp@5c5f166e:common/jinja/utils.h ``peak_source``; PR #18462, b7756 per #19476);
``ex_wrapper`` (tools/server/server.cpp: not an ``std::invalid_argument``, so 500 ``server_error``).
Observed texts: anomalyco/opencode#10805 (the decorated ``Cannot pass both …``, byte for byte but at
line 296 of unsloth's template), ggml-org/llama.cpp#17040 and #15091 (minja: the message first).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from mockoss.profiles.llamacpp.template_checks import (
    CHANNEL_IN_CONTENT,
    CHANNEL_IN_THINKING,
    CONTENT_AND_THINKING,
    TOOL_WITHOUT_CALL,
    error_text,
)
from mockoss.server.app import create_app
from mockoss.server.core import MockServer

MODEL = "ggml-org/gpt-oss-20b-GGUF"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
USER = {"role": "user", "content": "weather?"}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}],
}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
ANSWER = {"role": "assistant", "content": "It is sunny."}
MARKUP = "<|channel|>analysis<|message|>thinking<|end|>"

TOOL_ROLE = "Message has tool role, but there was no previous assistant message with a tool call!"
#: What llama-server (b7756 on) sends for a tool message with no call before it.
TOOL_ROLE_JINJA = (
    "\n------------\nWhile executing CallExpression at line 319, column 32 in source:\n"
    '... none %}↵            {{- raise_exception("Message has tool role, but there was n...\n'
    + " " * 43
    + "^\nError: Jinja Exception: "
    + TOOL_ROLE
)
#: anomalyco/opencode#10805's text (gpt-oss-120b on llama.cpp, 2026-01-27) at the openai template's line.
BOTH_JINJA = (
    "\n------------\nWhile executing CallExpression at line 290, column 36 in source:\n"
    '...g %}↵                {{- raise_exception("Cannot pass both content and thinking ...\n'
    + " " * 43
    + "^\nError: Jinja Exception: Cannot pass both content and thinking in an assistant message with tool calls!"
    + " Put the analysis message in one or the other, but not both."
)


def post(path: str, body: dict[str, Any], profile: str = "llamacpp", **switches: Any) -> tuple[int, str, Any]:
    """``(status, content type, JSON or SSE text)`` of one request to a fresh mockoss app."""
    server = MockServer(scenario="clean-answer", profile=profile, switches=switches)
    with TestClient(create_app(server), base_url="http://127.0.0.1:8080") as client:
        reply = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    kind = reply.headers["content-type"]
    return reply.status_code, kind, reply.text if kind.startswith("text/event-stream") else reply.json()


def chat(
    messages: list[dict[str, Any]], profile: str = "llamacpp", stream: bool = False, **switches: Any
) -> tuple[int, str, Any]:
    body = {"model": MODEL, "messages": messages, "tools": TOOLS, "stream": stream}
    return post("/v1/chat/completions", body, profile, **switches)


def refusal(message: str) -> dict[str, Any]:
    return {"error": {"code": 500, "message": message, "type": "server_error"}}


# ------------------------------------------------------------------ tool role


@pytest.mark.parametrize("stream", [False, True])
def test_chat_tool_message_with_no_call_before_is_the_template_500(stream: bool) -> None:
    """Was a 200 before: the template raises before generating, so a stream gets the JSON error."""
    status, kind, body = chat([USER, RESULT], stream=stream)
    assert (status, kind, body) == (500, "application/json", refusal(TOOL_ROLE_JINJA))


@pytest.mark.parametrize(
    "messages",
    [
        [RESULT, USER],  # a tool message first (it is in the loop: only system/developer are taken out)
        [USER, CALL, ANSWER, RESULT],  # an assistant message without tool_calls forgets the call
        [USER, {**CALL, "tool_calls": []}, RESULT],  # an empty tool_calls is no call (not re-serialised)
        [{"role": "system", "content": "be brief"}, USER, RESULT],
    ],
)
def test_chat_tool_message_the_template_refuses(messages: list[dict[str, Any]]) -> None:
    assert chat(messages)[0::2] == (500, refusal(TOOL_ROLE_JINJA))


@pytest.mark.parametrize(
    "messages",
    [
        [USER, CALL, RESULT],
        [{"role": "system", "content": "be brief"}, USER, CALL, RESULT],
        [USER, CALL, USER, RESULT],  # a user message does not make it forget
        [USER, CALL, RESULT, RESULT],  # two answers to one call: matched by name, not by id
        [USER, CALL, {**RESULT, "tool_call_id": "call_9"}],  # no id check
        [USER, CALL, RESULT, ANSWER, USER],
    ],
)
def test_chat_valid_tool_round_trips_still_answer_200(messages: list[dict[str, Any]]) -> None:
    status, _, body = chat(messages)
    assert status == 200 and body["object"] == "chat.completion", body


def test_engine_era_switches_the_wording_at_b7756() -> None:
    assert chat([USER, RESULT], "llamacpp@b7755")[0::2] == (500, refusal(TOOL_ROLE))
    assert chat([USER, RESULT], "llamacpp@b7756")[0::2] == (500, refusal(TOOL_ROLE_JINJA))
    assert chat([USER, RESULT], "llamacpp@b6100")[0::2] == (500, refusal(TOOL_ROLE))
    assert chat([USER, RESULT], template_engine="minja")[0::2] == (500, refusal(TOOL_ROLE))


@pytest.mark.parametrize(("profile", "message"), [("llamacpp", TOOL_ROLE_JINJA), ("llamacpp@b7755", TOOL_ROLE)])
def test_responses_output_without_call_in_each_era(profile: str, message: str) -> None:
    output = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
    body = {"model": MODEL, "input": [{"role": "user", "content": "weather?"}, output]}
    assert post("/v1/responses", body, profile)[0::2] == (500, refusal(message))


def test_apply_template_refuses_what_the_chat_route_refuses() -> None:
    """``/apply-template`` renders the same template (``handle_apply_template``)."""
    assert post("/apply-template", {"messages": [USER, RESULT]})[0::2] == (500, refusal(TOOL_ROLE_JINJA))
    status, _, body = post("/apply-template", {"messages": [USER, CALL, RESULT]})
    assert status == 200 and "prompt" in body


# ------------------------------------------------------------------ Harmony markup, thinking


def test_markup_in_content_is_accepted_since_the_template_patch() -> None:
    """PR #15243 replaces the content check with ``{%- if false %}``: 500 on the old code."""
    echoed = {"role": "assistant", "content": MARKUP + "Hello"}
    assert chat([USER, echoed, USER])[0] == 200
    launch = chat([USER, echoed, USER], template_channel_check=True, template_engine="minja")
    assert launch[0::2] == (500, refusal(CHANNEL_IN_CONTENT.message))
    assert chat([USER, echoed, USER], template_channel_check=True)[0::2] == (
        500,
        refusal(error_text(CHANNEL_IN_CONTENT, "jinja")),
    )


def test_markup_in_reasoning_content_is_the_thinking_refusal() -> None:
    """The handler copies ``reasoning_content`` to ``thinking``, which the template still checks."""
    plain = {"role": "assistant", "content": "Hi", "reasoning_content": MARKUP}
    thinking = error_text(CHANNEL_IN_THINKING, "jinja")
    assert thinking.startswith("\n------------\nWhile executing CallExpression at line 270, column 36 in source:\n")
    assert chat([USER, plain, USER])[0::2] == (500, refusal(thinking))
    # The 2025 handler gave ``thinking`` only to a message with tool calls.
    assert chat([USER, plain, USER], thinking_field="with_tool_calls")[0] == 200
    with_call = {**CALL, "reasoning_content": MARKUP}
    assert chat([USER, with_call, RESULT], thinking_field="with_tool_calls")[0::2] == (500, refusal(thinking))


def test_content_reasoning_and_tool_calls_together() -> None:
    """opencode#10805 / #17040 before PR #19704; accepted since (the content is dropped)."""
    both = {**CALL, "content": "Let me check.", "reasoning_content": "Need weather."}
    assert chat([USER, both, RESULT])[0] == 200
    assert chat([USER, both, RESULT], "llamacpp@b7756")[0::2] == (500, refusal(BOTH_JINJA))
    assert chat([USER, both, RESULT], "llamacpp@b7755")[0::2] == (500, refusal(CONTENT_AND_THINKING.message))
    # the first raise in message order wins: here the call's own check, before the tool message
    assert chat([USER, both, ANSWER, RESULT], "llamacpp@b7756")[0::2] == (500, refusal(BOTH_JINJA))


def test_every_raise_window_is_40_bytes_each_side() -> None:
    for raised in (CHANNEL_IN_CONTENT, CHANNEL_IN_THINKING, CONTENT_AND_THINKING, TOOL_WITHOUT_CALL):
        assert len(raised.before.encode()) == len(raised.after.encode()) == 40
        assert raised.before.endswith("{{- raise_exception") and raised.after.startswith("(")
        assert raised.after[2:].startswith(raised.message[:38])


# ------------------------------------------------------------------ Responses items


def responses(items: list[dict[str, Any]], profile: str = "llamacpp") -> tuple[int, Any]:
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    status, _, body = post("/v1/responses", {"model": MODEL, "input": items, "tools": tools}, profile)
    return status, body


R_USER = {"role": "user", "content": "weather?"}
R_CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
R_OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
R_PREAMBLE = {"role": "assistant", "type": "message", "content": [{"type": "output_text", "text": "Checking."}]}


def r_reasoning(text: str) -> dict[str, Any]:
    return {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": text}]}


def test_responses_items_merge_into_the_message_the_template_checks() -> None:
    """``server_chat_convert_responses_to_chatcmpl`` (ggml-org/llama.cpp@03eb25f3:tools/server/server-chat.cpp)
    merges reasoning, an assistant message and a call into one assistant message: reasoning_content,
    content and tool_calls together, which the 2025 handler refused."""
    replayed = [R_USER, r_reasoning("Need weather."), R_PREAMBLE, R_CALL, R_OUTPUT]
    assert responses(replayed)[0] == 200
    assert responses(replayed, "llamacpp@b7756") == (500, refusal(BOTH_JINJA))
    assert responses(replayed, "llamacpp@b7755") == (500, refusal(CONTENT_AND_THINKING.message))
    # without the preamble there is no content: accepted in every era
    assert responses([R_USER, r_reasoning("Need weather."), R_CALL, R_OUTPUT], "llamacpp@b7756")[0] == 200


def test_responses_reasoning_item_with_markup_is_the_thinking_refusal() -> None:
    assert responses([R_USER, r_reasoning(MARKUP), R_PREAMBLE, R_USER]) == (
        500,
        refusal(error_text(CHANNEL_IN_THINKING, "jinja")),
    )


def test_request_field_errors_come_before_the_template() -> None:
    """``oaicompat_chat_params_parse`` (tools/server/server-common.cpp@006639c3) reads
    ``response_format`` and ``reasoning_format`` before it applies the template."""
    body = {"model": MODEL, "messages": [USER, RESULT], "response_format": {"type": "xml"}}
    status, _, reply = post("/v1/chat/completions", body)
    assert status == 400 and reply["error"]["message"].startswith("response_format type must be one of")
    body = {"model": MODEL, "messages": [USER, RESULT], "reasoning_format": "loud"}
    assert post("/v1/chat/completions", body)[0::2] == (500, refusal("Unknown reasoning format: loud"))


def test_a_trailing_assistant_message_is_prefilled_not_templated() -> None:
    """``oaicompat_chat_params_parse`` pops a trailing assistant message before the template runs
    (``--prefill-assistant``, ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp)."""
    both = {**CALL, "content": "Let me check.", "reasoning_content": "Need weather."}
    assert chat([USER, both], "llamacpp@b7756")[0] == 200
    marked = {"role": "assistant", "content": "Hi", "reasoning_content": MARKUP}
    assert chat([USER, marked], parser="regex")[0] == 200  # (the PEG parser continues the prefill: its own 500)
    assert chat([USER, marked, USER], parser="regex")[0] == 500
    assert chat([USER, both, RESULT], "llamacpp@b7756")[0] == 500  # not trailing: templated
