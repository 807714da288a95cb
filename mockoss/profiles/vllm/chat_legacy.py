"""``POST /v1/chat/completions`` as vLLM served gpt-oss before the unified ``HarmonyParser`` (2025).

Two output paths, chosen by the profile's ``chat_parser`` switch:

* ``"openai_tool_parser"`` (v0.10.2 to late 2025, ``--tool-call-parser openai
  --reasoning-parser openai_gptoss --enable-auto-tool-choice``). Non-streamed
  (``serving_chat.py@003fe593`` ``chat_completion_full_generator``, Harmony branch):
  ``tool_calls`` and ``content`` come from ``OpenAIToolParser.extract_tool_calls``
  (``openai_tool_parser.py@0558e317``): a message whose recipient starts with ``functions.``
  becomes a call named ``recipient.split("functions.")[1]``, arguments re-serialised with
  ``json.dumps(json.loads(text))`` when the content type is absent or mentions json; a ``final``
  message (recipient or not) becomes the content, the last one wins; every other message
  (``commentary`` preambles, bare recipients, ``browser.*``, …) is dropped. The reasoning comes
  from ``parse_chat_output`` (``harmony_utils.py@04750fc2``): no completed message → the open
  message's text; one → its text (the open message is the final content); more → every message
  but the last joined with ``"\\n"``. Before PR #25514 (``tool_call_in_content``) the content was
  ``parse_chat_output``'s final text (a tool call's raw arguments: the call appeared twice,
  vllm-project/vllm#22337) and arguments were not re-serialised. ``tool_choice`` is never read:
  ``"none"`` still returns calls (vllm#30867) and ``"required"`` a prose reply with
  ``"tool_calls":[]`` and ``finish_reason: "stop"`` (vllm#44216).
* ``"reasoning_and_final"`` (v0.10.1, vllm-project/vllm#22403, #22879): no tool support.
  ``parse_chat_output`` raises ``ValueError("Expected 2 output messages (reasoning and final),
  but got N.")`` for more than two messages → HTTP 400 ``BadRequestError``; exactly two with a
  recipient on the second → ``NotImplementedError("Tool call in Chat Completion API is not
  supported for gpt-oss yet. Please use Responses API instead.")`` → HTTP 500.

A ``HarmonyError`` is not caught by ``create_chat_completion`` (it only catches ``ValueError``):
the API router turns it into ``HTTPException(500)`` → ``type: "Internal Server Error"``
(:func:`~mockoss.profiles.vllm.errors.http_exception_reply`). Streams: see
:mod:`mockoss.profiles.vllm.chat_legacy_stream`.

Wire shapes (``protocol.py@0052bed3``, Aug–Oct 2025): the message always carries ``tool_calls``
(``[]`` when empty) and the reasoning field(s) of ``reasoning_field`` last; usage has no
``completion_tokens_details``; ``token_ids`` / ``prompt_token_ids`` only with
``token_ids_fields`` (PR #22587).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from openai_harmony import Message

from mockoss.profiles.base import ChatRequestView, Reply, RequestContext
from mockoss.profiles.vllm.chat_legacy_plan import LegacyPlan, legacy_plan
from mockoss.profiles.vllm.chat_plan import assistant_message
from mockoss.profiles.vllm.errors import http_exception_reply
from mockoss.profiles.wire import dumps as _dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["reasoning_members", "surface_chat_legacy"]

_FUNCTIONS = "functions."
#: ``NotImplementedError`` text of v0.10.1's ``chat_completion_full_generator``.
TOOL_CALL_NOT_SUPPORTED = (
    "Tool call in Chat Completion API is not supported for gpt-oss yet. Please use Responses API instead."
)


def _text(message: Message) -> str:
    return message.content[0].text if message.content else ""  # type: ignore[union-attr]


def parse_chat_output(plan: LegacyPlan) -> tuple[str | None, str | None]:
    """``harmony_utils.parse_chat_output@04750fc2`` → ``(reasoning, final_content)``."""
    messages = plan.messages
    if not messages:
        return plan.current, None
    if len(messages) == 1:
        return _text(messages[0]), plan.current
    return "\n".join(_text(m) for m in messages[:-1]), _text(messages[-1])


def extract_tool_calls(plan: LegacyPlan, reserialise: bool) -> tuple[list[tuple[str, str]], str | None]:
    """``OpenAIToolParser.extract_tool_calls@0558e317`` → ``([(name, arguments)], content)``."""
    calls: list[tuple[str, str]] = []
    final: str | None = None
    for message in plan.messages:
        if not message.content:
            continue
        text = _text(message)
        recipient = message.recipient
        if recipient and recipient.startswith(_FUNCTIONS):
            arguments = text
            content_type = message.content_type
            if reserialise and (not content_type or "json" in content_type):
                try:
                    arguments = json.dumps(json.loads(text))
                except json.JSONDecodeError:
                    arguments = text  # logged: "Error decoding JSON tool call from response."
            calls.append((recipient.split(_FUNCTIONS)[1], arguments))
        elif message.channel == "final":
            final = text
    return calls, final


def reasoning_members(field: str, value: str | None) -> dict[str, str | None]:
    """The reasoning member(s) of a message for the ``reasoning_field`` switch, in field order."""
    if field == "reasoning":
        return {"reasoning": value}
    if field == "reasoning_content":
        return {"reasoning_content": value}
    return {"reasoning": value, "reasoning_content": value}


def _message(profile: VllmProfile, plan: LegacyPlan, request: ChatRequestView) -> tuple[str | None, str | None, list[tuple[str, str]]]:
    """(reasoning, content, calls) of the ``openai_tool_parser`` path."""
    if not profile.enable_auto_tool_choice:  # no tool parser configured
        reasoning, content = parse_chat_output(plan)
        return (reasoning if request.include_reasoning else None), content, []
    calls, final = extract_tool_calls(plan, reserialise=not profile.tool_call_in_content)
    if profile.tool_call_in_content:  # before PR #25514
        reasoning, content = None, final
        if request.include_reasoning:
            reasoning, content = parse_chat_output(plan)
        return reasoning, content, calls
    reasoning, _ = parse_chat_output(plan)
    return (reasoning if request.include_reasoning else None), final, calls


def _full(profile: VllmProfile, plan: LegacyPlan, request: ChatRequestView, ctx: RequestContext) -> Reply:
    if profile.chat_parser == "reasoning_and_final":
        count = len(plan.messages)
        if count > 2:
            return profile.error(400, f"Expected 2 output messages (reasoning and final), but got {count}.")
        reasoning, content = parse_chat_output(plan)
        if count == 2 and plan.messages[1].recipient is not None:
            return http_exception_reply(TOOL_CALL_NOT_SUPPORTED, body=profile.error_body)
        calls: list[tuple[str, str]] = []
        if not request.include_reasoning:
            reasoning = None
    else:
        reasoning, content, calls = _message(profile, plan, request)
    request_id = ctx.ids.next("chatcmpl-")
    message = assistant_message(content)
    message["tool_calls"] = [
        {"id": ctx.ids.next("chatcmpl-tool-"), "type": "function", "function": {"name": n, "arguments": a}}
        for n, a in calls
    ]
    message.update(reasoning_members(profile.reasoning_field, reasoning))
    choice: dict[str, object] = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": "tool_calls" if calls else plan.finish,
        "stop_reason": plan.stop_reason,
    }
    if profile.token_ids_fields:
        choice["token_ids"] = None
    prompt = ctx.prompt_tokens
    body: dict[str, object] = {
        "id": request_id,
        "object": "chat.completion",
        "created": ctx.created,
        "model": request.model,
        "choices": [choice],
        "service_tier": None,
        "system_fingerprint": None,
        "usage": {
            "prompt_tokens": prompt,
            "total_tokens": prompt + plan.completion_tokens,
            "completion_tokens": plan.completion_tokens,
            "prompt_tokens_details": None,
        },
        "prompt_logprobs": None,
    }
    if profile.token_ids_fields:
        body["prompt_token_ids"] = None
    body["kv_transfer_params"] = None
    return Reply(status=200, body=_dumps(body).encode())


def surface_chat_legacy(
    profile: VllmProfile, completion: Completion, request: ChatRequestView, ctx: RequestContext
) -> Reply:
    """Surface ``completion`` as 2025 vLLM's ``/v1/chat/completions`` reply, JSON or SSE.

    Non-streamed body (HTTP 200)::

        {"id":"chatcmpl-<32hex>","object":"chat.completion","created":…,"model":…,
         "choices":[{"index":0,"message":{"role":"assistant","content":…,"refusal":null,
           "annotations":null,"audio":null,"function_call":null,"tool_calls":[…],
           "reasoning_content":…},"logprobs":null,"finish_reason":…,"stop_reason":…,
           "token_ids":null}],"service_tier":null,"system_fingerprint":null,
         "usage":{"prompt_tokens":P,"total_tokens":P+C,"completion_tokens":C,
           "prompt_tokens_details":null},"prompt_logprobs":null,"prompt_token_ids":null,
         "kv_transfer_params":null}

    ``finish_reason`` is ``tool_calls`` when calls were parsed, else the engine's ``stop`` /
    ``length``. Errors: see the module docstring. Streamed: see
    :func:`~mockoss.profiles.vllm.chat_legacy_stream.stream_legacy`.
    """
    plan = legacy_plan(completion, request.max_tokens, profile.strict, profile.harmony_library)
    if request.stream:
        from mockoss.profiles.vllm.chat_legacy_stream import stream_legacy

        return stream_legacy(profile, completion, plan, request, ctx)
    if plan.error is not None:
        return http_exception_reply(plan.error, body=profile.error_body)
    return _full(profile, plan, request, ctx)
