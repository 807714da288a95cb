"""Exact-output tests for the vLLM ``/v1/chat/completions`` profile (``mockoss.profiles.vllm.chat``)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai_harmony import Message, Role

from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, IdSource, Reply, RequestContext, ToolDecl
from mockoss.profiles.vllm import VllmProfile
from mockoss.profiles.vllm.segments import (
    SegmentType,
    classify,
    is_function_recipient,
    normalize_recipient,
    tool_arguments,
)

CREATED = 1_750_000_000
PROMPT = 100
MODEL = "openai/gpt-oss-20b"
_ids = IdSource(0, 0)
# vLLM 0.32/0.33 ids: random_uuid() is 16 hex digits (vllm-project/vllm@v0.33.0:vllm/utils/__init__.py).
RID = _ids.next16("chatcmpl-")
TID = _ids.next16("chatcmpl-tool-")
#: vllm-<version>-<hash8> (vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/fingerprint.py).
FP = VllmProfile().system_fingerprint()
WEATHER = (ToolDecl("function", "get_weather"),)

ANSWER = (
    "<|channel|>analysis<|message|>User asks 2+2.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
)
TOOL_CALL = (
    "<|channel|>analysis<|message|>Need weather.<|end|>"
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Paris"}<|call|>'
)
MALFORMED = "<|channel|>commentary to=functions.x to=functions.x json<|message|>{}<|call|>"
MALFORMED_ERROR = 'unexpected tokens remaining in message header: Some("to=functions.x")'
CONSTRAINED_FINAL = '<|channel|>final <|constrain|>json<|message|>{"a":1}<|return|>'

REASONING_DELTAS = ["User", " asks", " ", "2", "+", "2", "."]
ANSWER_DELTAS = ["2", " +", " ", "2", " =", " ", "4", "."]
ARGUMENT_DELTAS = ['{"', "location", '":"', "Paris", '"}']


def ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=CREATED, prompt_tokens=PROMPT)


def chat(completion: Completion, profile: VllmProfile | None = None, **request: Any) -> Reply:
    return (profile or VllmProfile()).chat(completion, ChatRequestView(model=MODEL, **request), ctx())


def body(reply: Reply) -> dict[str, Any]:
    assert reply.status == 200 and reply.media_type == "application/json" and not reply.frames
    data = json.loads(reply.body)
    ChatCompletion.model_validate(data)  # the OpenAI SDK accepts it
    return data


def usage(completion_tokens: int, reasoning_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": PROMPT,
        "total_tokens": PROMPT + completion_tokens,
        "completion_tokens": completion_tokens,
        "prompt_tokens_details": None,
        "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
    }


def full(message: dict[str, Any], finish: str, stop_reason: int | None, use: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": RID,
        "object": "chat.completion",
        "created": CREATED,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish,
                "stop_reason": stop_reason,
                "token_ids": None,
                "routed_experts": None,
                "weight_versions": None,  # 0.33.0
            }
        ],
        "service_tier": None,
        "system_fingerprint": FP,
        "usage": use,
        "prompt_logprobs": None,
        "prompt_token_ids": None,
        "prompt_text": None,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }


def msg(content: str | None, reasoning: str | None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "refusal": None,
        "annotations": None,
        "audio": None,
        "function_call": None,
    }
    if tool_calls is not None:
        out["tool_calls"] = tool_calls
    out["reasoning"] = reasoning
    return out


# ---------------------------------------------------------------- expected SSE frames


def _frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


def _head() -> dict[str, Any]:
    return {"id": RID, "object": "chat.completion.chunk", "created": CREATED, "model": MODEL}


def role_frame() -> bytes:
    choice = {"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}
    return _frame({**_head(), "choices": [choice], "prompt_token_ids": None, "prompt_text": None})


def delta_frame(delta: dict[str, Any]) -> bytes:
    """0.33.0 sets ``kv_transfer_params`` (None) on every chunk after the role chunk
    (vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/chat_completion/serving.py)."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None, "token_ids": None}
    return _frame({**_head(), "choices": [choice], "kv_transfer_params": None})


def final_frame(delta: dict[str, Any], finish: str, stop_reason: int | None, *, usage_chunk_follows: bool = False) -> bytes:
    """The finish chunk: ``weight_versions`` (0.33.0), and the fingerprint unless a usage chunk follows."""
    choice = {
        "index": 0,
        "delta": delta,
        "logprobs": None,
        "finish_reason": finish,
        "stop_reason": stop_reason,
        "token_ids": None,
        "weight_versions": None,
    }
    stamp = {} if usage_chunk_follows else {"system_fingerprint": FP}
    return _frame({**_head(), "choices": [choice], **stamp, "kv_transfer_params": None})


def usage_frame(completion_tokens: int, reasoning_tokens: int) -> bytes:
    use = {
        "prompt_tokens": PROMPT,
        "total_tokens": PROMPT + completion_tokens,
        "completion_tokens": completion_tokens,
        "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
    }
    return _frame({**_head(), "choices": [], "usage": use, "system_fingerprint": FP})


DONE = b"data: [DONE]\n\n"


def frames(reply: Reply) -> list[bytes]:
    assert reply.status == 200 and reply.media_type == "text/event-stream" and not reply.body
    for frame in reply.frames[:-1]:
        data = json.loads(frame.removeprefix(b"data: "))
        if "error" not in data:
            ChatCompletionChunk.model_validate(data)
    assert reply.frames[-1] == DONE
    return list(reply.frames)


# ---------------------------------------------------------------- fixtures


@pytest.fixture
def answer() -> Completion:
    """The canonical reasoning + answer completion, rendered by openai-harmony itself."""
    return Completion.from_messages(
        [
            Message.from_role_and_content(Role.ASSISTANT, "User asks 2+2.").with_channel("analysis"),
            Message.from_role_and_content(Role.ASSISTANT, "2 + 2 = 4.").with_channel("final"),
        ]
    )


# ---------------------------------------------------------------- clean answer


def test_answer_non_stream(answer: Completion) -> None:
    assert answer.text == ANSWER
    assert body(chat(answer)) == full(msg("2 + 2 = 4.", "User asks 2+2."), "stop", None, usage(25, 7))


def test_answer_stream_with_usage(answer: Completion) -> None:
    expected = [
        role_frame(),
        *(delta_frame({"reasoning": d}) for d in REASONING_DELTAS),
        *(delta_frame({"content": d}) for d in ANSWER_DELTAS),
        final_frame({}, "stop", None, usage_chunk_follows=True),
        usage_frame(25, 7),
        DONE,
    ]
    assert frames(chat(answer, stream=True, include_usage=True)) == expected


def test_stream_without_usage_has_no_usage_chunk(answer: Completion) -> None:
    got = frames(chat(answer, stream=True))
    assert got[-2] == final_frame({}, "stop", None)
    assert len(got) == 1 + 7 + 8 + 1 + 1


def test_continuous_usage_stats(answer: Completion) -> None:
    got = frames(chat(answer, stream=True, include_usage=True, continuous_usage_stats=True))
    first = json.loads(got[0].removeprefix(b"data: "))
    assert list(first) == ["id", "object", "created", "model", "choices", "usage", "prompt_token_ids", "prompt_text"]
    assert first["usage"] == {
        "prompt_tokens": PROMPT,
        "total_tokens": PROMPT,
        "completion_tokens": 0,
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    # "User" is token 4 (after <|channel|> analysis <|message|>): 4 tokens out, 1 counted as reasoning:
    # HarmonyParser._is_reasoning_token skips special tokens such as <|message|>
    # (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py; real vLLM 0.32 counted 17 where mockoss said 18).
    second = json.loads(got[1].removeprefix(b"data: "))
    assert second["usage"]["completion_tokens"] == 4
    assert second["usage"]["completion_tokens_details"] == {"reasoning_tokens": 1}
    final = json.loads(got[-3].removeprefix(b"data: "))
    assert final["choices"][0]["finish_reason"] == "stop"
    assert final["usage"]["completion_tokens"] == 25
    assert final["usage"]["completion_tokens_details"] == {"reasoning_tokens": 7}
    assert got[-2] == usage_frame(25, 7)


def test_continuous_usage_needs_include_usage(answer: Completion) -> None:
    assert b'"usage"' not in b"".join(frames(chat(answer, stream=True, continuous_usage_stats=True)))


# ---------------------------------------------------------------- tool call


def test_tool_call_non_stream() -> None:
    completion = Completion.from_text(TOOL_CALL)
    call = {"id": TID, "type": "function", "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}}
    expected = full(msg(None, "Need weather.", [call]), "tool_calls", 200012, usage(27, 8))
    assert body(chat(completion, tools=WEATHER)) == expected


def test_tool_call_stream() -> None:
    completion = Completion.from_text(TOOL_CALL)
    first = {"id": TID, "type": "function", "index": 0, "function": {"name": "get_weather", "arguments": ""}}
    expected = [
        role_frame(),
        *(delta_frame({"reasoning": d}) for d in ["Need", " weather", "."]),
        delta_frame({"tool_calls": [first]}),
        *(delta_frame({"tool_calls": [{"index": 0, "function": {"arguments": d}}]}) for d in ARGUMENT_DELTAS),
        final_frame({}, "tool_calls", 200012, usage_chunk_follows=True),
        usage_frame(27, 8),
        DONE,
    ]
    assert frames(chat(completion, tools=WEATHER, stream=True, include_usage=True)) == expected


def test_tool_choice_none_drops_calls() -> None:
    completion = Completion.from_text(TOOL_CALL)
    assert body(chat(completion, tools=WEATHER, tool_choice="none")) == full(
        msg(None, "Need weather."), "stop", 200012, usage(27, 8)
    )
    got = frames(chat(completion, tools=WEATHER, tool_choice="none", stream=True))
    assert got == [
        role_frame(),
        *(delta_frame({"reasoning": d}) for d in ["Need", " weather", "."]),
        final_frame({}, "stop", 200012),
        DONE,
    ]


def test_absent_tool_choice_without_tools_drops_the_call() -> None:
    # vLLM's check_tool_usage: no tools and no tool_choice means tool_choice "none".
    data = body(chat(Completion.from_text(TOOL_CALL)))
    assert data["choices"][0]["message"] == msg(None, "Need weather.")
    assert data["choices"][0]["finish_reason"] == "stop"
    data = body(chat(Completion.from_text(TOOL_CALL), tools=WEATHER))
    assert [c["function"]["name"] for c in data["choices"][0]["message"]["tool_calls"]] == ["get_weather"]
    assert data["choices"][0]["finish_reason"] == "tool_calls"


def test_without_auto_tool_choice_calls_are_dropped() -> None:
    profile = VllmProfile().with_switches(enable_auto_tool_choice=False)
    completion = Completion.from_text(TOOL_CALL)
    data = body(chat(completion, profile, tools=WEATHER))
    assert data["choices"][0]["message"] == msg(None, "Need weather.")
    assert data["choices"][0]["finish_reason"] == "stop"
    # required: content "" and no calls. 0.33 resolve_finish_reason says tool_calls only with calls
    # (vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/tool_calls_utils.py): "stop".
    data = body(chat(completion, profile, tools=WEATHER, tool_choice="required"))
    assert data["choices"][0]["message"] == msg("", "Need weather.")
    assert data["choices"][0]["finish_reason"] == "stop"
    # 0.32: required + engine stop → tool_calls even without a call
    # (vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/chat_completion/serving.py, full generator).
    v032 = profile.with_switches(finish_tool_calls_needs_calls=False)
    assert body(chat(completion, v032, tools=WEATHER, tool_choice="required"))["choices"][0]["finish_reason"] == "tool_calls"


def test_named_tool_choice_finishes_with_stop() -> None:
    named = {"type": "function", "function": {"name": "get_weather"}}
    completion = Completion.from_text(TOOL_CALL)
    choice = body(chat(completion, tools=WEATHER, tool_choice=named))["choices"][0]
    assert choice["message"]["content"] == ""
    assert [c["function"]["name"] for c in choice["message"]["tool_calls"]] == ["get_weather"]
    assert choice["finish_reason"] == "stop"
    got = frames(chat(completion, tools=WEATHER, tool_choice=named, stream=True))
    assert got[-2] == final_frame({}, "stop", 200012)


# ---------------------------------------------------------------- HarmonyError


RAISE = VllmProfile().with_switches(harmony_errors="raise")  # the error surfaced (mockoss before the comparison)


@pytest.mark.parametrize("status", [500, 400])
def test_malformed_header_non_stream(status: int) -> None:
    profile = RAISE.with_switches(harmony_error_status=status)
    reply = chat(Completion.from_text(MALFORMED), profile, tools=(ToolDecl("function", "x"),))
    kind = {500: "InternalServerError", 400: "BadRequestError"}[status]
    assert reply.status == status
    assert json.loads(reply.body) == {"error": {"message": MALFORMED_ERROR, "type": kind, "param": None, "code": status}}


def test_malformed_header_stream() -> None:
    reply = chat(Completion.from_text(MALFORMED), RAISE, tools=(ToolDecl("function", "x"),), stream=True, include_usage=True)
    error = json.dumps({"error": {"message": MALFORMED_ERROR, "type": "InternalServerError", "param": None, "code": 500}})
    assert frames(reply) == [role_frame(), f"data: {error}\n\n".encode(), DONE]


def test_error_after_streamed_content() -> None:
    text = "<|channel|>final<|message|>Hi<|end|><|return|>"
    reply = chat(Completion.from_text(text), RAISE, stream=True)
    error = json.dumps(
        {
            "error": {
                "message": "Unexpected token 200002 while expecting start token 200006",
                "type": "InternalServerError",
                "param": None,
                "code": 500,
            }
        }
    )
    assert frames(reply) == [role_frame(), delta_frame({"content": "Hi"}), f"data: {error}\n\n".encode(), DONE]


SKIP = VllmProfile().with_switches(harmony_errors="skip")  # vLLM 0.32/0.33 (measured); default pending, see the switch
DUPLICATE_RECIPIENT = (
    "<|channel|>analysis<|message|>Need x.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.x to=functions.x<|message|>{}<|call|>"
)


def test_a_header_harmony_error_drops_the_message_and_answers_200() -> None:
    """vLLM 0.32/0.33 ``HarmonyParser.process_chunk`` catches ``HarmonyError`` per token and skips it
    (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py, same at v0.33.0); the rejected header leaves
    the parser expecting ``<|start|>``, so the tool call is dropped. Real vLLM 0.32 answered the
    duplicate recipient with HTTP 200, reasoning only, ``finish_reason: "stop"``
    (shared/reference/vllm-on-cpu.md, measured)."""
    completion = Completion.from_text(DUPLICATE_RECIPIENT)
    reply = chat(completion, SKIP, tools=(ToolDecl("function", "x"),))
    assert reply.status == 200
    choice = json.loads(reply.body)["choices"][0]
    assert choice["message"]["reasoning"] == "Need x."
    assert choice["message"]["content"] is None and "tool_calls" not in choice["message"]
    assert choice["finish_reason"] == "stop"
    streamed = frames(chat(completion, SKIP, tools=(ToolDecl("function", "x"),), stream=True))
    assert streamed[-1] == DONE and b'"error"' not in b"".join(streamed)
    assert b'"tool_calls"' not in b"".join(streamed)
    assert json.loads(streamed[-2].removeprefix(b"data: "))["choices"][0]["finish_reason"] == "stop"


def test_a_stray_stop_token_after_the_answer_is_skipped_too() -> None:
    reply = chat(Completion.from_text("<|channel|>final<|message|>Hi<|end|><|return|>"), SKIP, stream=True)
    assert frames(reply)[1] == delta_frame({"content": "Hi"})
    assert b'"error"' not in b"".join(frames(reply))


# ---------------------------------------------------------------- request options and edge cases


def test_include_reasoning_false(answer: Completion) -> None:
    assert body(chat(answer, include_reasoning=False)) == full(msg("2 + 2 = 4.", None), "stop", None, usage(25, 7))
    # vLLM sets delta.reasoning = None on every kept delta, so the key is written as null.
    expected = [
        role_frame(),
        *(delta_frame({"content": d, "reasoning": None}) for d in ANSWER_DELTAS),
        final_frame({}, "stop", None),
        DONE,
    ]
    assert frames(chat(answer, stream=True, include_reasoning=False)) == expected


def test_max_tokens_truncation(answer: Completion) -> None:
    # 11 analysis tokens + <|start|>assistant<|channel|>final<|message|> (5) + "2", " +", " " = 19.
    assert body(chat(answer, max_tokens=19)) == full(msg("2 + ", "User asks 2+2."), "length", None, usage(19, 7))
    expected = [
        role_frame(),
        *(delta_frame({"reasoning": d}) for d in REASONING_DELTAS),
        delta_frame({"content": "2"}),
        delta_frame({"content": " +"}),
        final_frame({"content": " "}, "length", None),
        DONE,
    ]
    assert frames(chat(answer, stream=True, max_tokens=19)) == expected


def test_truncated_header_is_recovered_as_raw_content() -> None:
    # EOS inside the second header: process_eos raises, flush() returns the raw decoded tokens.
    completion = Completion.from_text(TOOL_CALL)
    data = body(chat(completion, tools=WEATHER, max_tokens=14))
    assert data["choices"][0]["message"] == msg("<|start|>assistant<|channel|>commentary to=", "Need weather.")
    assert data["choices"][0]["finish_reason"] == "length"
    got = frames(chat(completion, tools=WEATHER, max_tokens=14, stream=True))
    assert got[-2] == final_frame({"content": "<|start|>assistant<|channel|>commentary to="}, "length", None)


def test_constrain_json_on_final_is_content() -> None:
    completion = Completion.from_text(CONSTRAINED_FINAL)
    assert completion.trace().messages[0].recipient == "<|constrain|>json"
    assert body(chat(completion)) == full(msg('{"a":1}', None), "stop", None, usage(12, 0))
    expected = [
        role_frame(),
        *(delta_frame({"content": d}) for d in ['{"', "a", '":', "1", "}"]),
        final_frame({}, "stop", None),
        DONE,
    ]
    assert frames(chat(completion, stream=True)) == expected


def test_non_ascii_is_written_as_utf8() -> None:
    reply = chat(Completion.from_text("<|channel|>final<|message|>héllo 世界<|return|>"))
    assert "héllo 世界".encode() in reply.body
    assert json.loads(reply.body)["choices"][0]["message"]["content"] == "héllo 世界"


def test_per_completion_work_is_memoised(answer: Completion) -> None:
    answer = Completion(text=answer.text, tokens=answer.tokens)  # private: from_messages shares by content
    first = chat(answer, stream=True)
    keys = [k for k in answer._memo if isinstance(k, tuple) and k[0] == "vllm.chat"]
    assert keys and all(k[1:3] == (None, True) for k in keys)
    again = chat(answer, stream=True)
    assert again.frames == first.frames
    assert [k for k in answer._memo if isinstance(k, tuple) and k[0] == "vllm.chat"] == keys
    other = VllmProfile().chat(answer, ChatRequestView(model=MODEL, stream=True), RequestContext(IdSource(1, 7), 5, 3))
    assert other.frames[1] != first.frames[1] and b'"created":5,' in other.frames[1]


# ---------------------------------------------------------------- segment helpers


@pytest.mark.parametrize(
    ("recipient", "normalised"),
    [
        (None, None),
        ("<|constrain|>json", None),
        ("functions.x <|constrain|>json", "functions.x"),
        ("functions.x<|channel|>commentary", "functions.x<|channel|>commentary"),
        ("json", "json"),
    ],
)
def test_normalize_recipient(recipient: str | None, normalised: str | None) -> None:
    assert normalize_recipient(recipient) == normalised


@pytest.mark.parametrize(
    ("recipient", "expected"),
    [
        ("functions.get_weather", True),
        ("functions.", False),
        ("get_weather", True),
        ("repo_browser.open_file", True),
        ("json", True),
        ("python", False),
        ("browser.search", False),
        ("container.exec", False),
        ("assistant", False),
        ("<|constrain|>json", False),
        ("", False),
    ],
)
def test_is_function_recipient_chat_path(recipient: str, expected: bool) -> None:
    assert is_function_recipient(recipient) is expected


def test_is_function_recipient_responses_path() -> None:
    assert is_function_recipient("get_weather", frozenset({"get_weather"})) is True
    assert is_function_recipient("lookup", frozenset({"get_weather"})) is False


@pytest.mark.parametrize(
    ("channel", "recipient", "kind"),
    [
        ("analysis", None, SegmentType.REASONING),
        ("analysis", "functions.f", SegmentType.TOOL),
        ("analysis", "python", SegmentType.REASONING),
        ("commentary", None, SegmentType.CONTENT),
        ("commentary", "python", SegmentType.IGNORE),
        ("final", None, SegmentType.CONTENT),
        ("final", "json", SegmentType.TOOL),
        (None, None, SegmentType.IGNORE),
    ],
)
def test_classify(channel: str | None, recipient: str | None, kind: SegmentType) -> None:
    assert classify(channel, recipient) is kind


def test_tool_arguments() -> None:
    assert tool_arguments('{"a":1}', "<|constrain|>json") == '{"a": 1}'
    assert tool_arguments('{"a":1}', None) == '{"a": 1}'
    assert tool_arguments("{broken", "json") == "{broken"
    assert tool_arguments('{"a":1}', "code") == '{"a":1}'
    assert tool_arguments("", None) == ""


# ---------------------------------------------------------------- vLLM 0.33.0 vs 0.32.0 (switches)

V032 = VllmProfile().with_switches(
    weight_versions_field=False, stream_kv_transfer_params=False, stream_tool_calls_need_tools=False, finish_tool_calls_needs_calls=False
)


def test_ids_are_16_hex_digits_and_deterministic(answer: Completion) -> None:
    """random_uuid() is ``uuid4().int & MASK_64_BITS`` as 16 hex digits in vLLM 0.32/0.33
    (vllm-project/vllm@v0.32.0:vllm/utils/__init__.py); ``id_digits=32`` gives ``uuid4().hex`` shapes."""
    data = body(chat(Completion.from_text(TOOL_CALL), tools=WEATHER))
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{16}", data["id"])
    assert re.fullmatch(r"chatcmpl-tool-[0-9a-f]{16}", data["choices"][0]["message"]["tool_calls"][0]["id"])
    assert body(chat(answer))["id"] == data["id"]  # same seed and request index, same id
    old = body(chat(answer, VllmProfile().with_switches(id_digits=32)))["id"]
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{32}", old)


def test_system_fingerprint_names_the_version_on_the_body_and_the_last_chunk(answer: Completion) -> None:
    """``vllm-<version>-<hash8>`` (vllm-project/vllm@v0.32.0:vllm/entrypoints/serve/utils/fingerprint.py,
    ``--fingerprint-mode full`` on one device); real vLLM 0.32 sent it on the body and the last chunk."""
    assert re.fullmatch(r"vllm-\d+\.\d+\.\d+-[0-9a-f]{8}", body(chat(answer))["system_fingerprint"])
    streamed = [json.loads(f.removeprefix(b"data: ")) for f in frames(chat(answer, stream=True))[:-1]]
    assert [c.get("system_fingerprint") for c in streamed] == [None] * (len(streamed) - 1) + [FP]
    assert body(chat(answer, VllmProfile().with_switches(fingerprint_mode="none")))["system_fingerprint"] is None


def test_vllm_0_32_has_no_weight_versions_nor_chunk_kv_transfer_params(answer: Completion) -> None:
    """``weight_versions`` and per-chunk ``kv_transfer_params`` arrive with 0.33.0
    (vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/chat_completion/serving.py; absent at v0.32.0)."""
    assert "weight_versions" not in body(chat(answer, V032))["choices"][0]
    old = frames(chat(answer, V032, stream=True))
    assert b"kv_transfer_params" not in b"".join(old) and b"weight_versions" not in b"".join(old)
    new = frames(chat(answer, stream=True))
    assert all(b'"kv_transfer_params":null' in f for f in new[1:-1]) and b"kv_transfer_params" not in new[0]


def test_a_tool_call_with_no_tools_declared_streams_in_0_32_not_in_0_33() -> None:
    """0.32.0 streamed every call ``HarmonyParser.parse_delta`` yields and ended ``tool_calls``
    (vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/chat_completion/serving.py; measured on real
    vLLM 0.32 with no tools declared); 0.33.0's ``ChatStreamProcessor`` drops calls
    ``keeps_tool_calls`` rejects (vllm-project/vllm@v0.33.0:.../chat_completion/stream_processor.py).
    Non-streamed, both drop them."""
    completion = Completion.from_text(TOOL_CALL)
    new = [json.loads(f.removeprefix(b"data: ")) for f in frames(chat(completion, stream=True))[:-1]]
    assert not any("tool_calls" in c["choices"][0]["delta"] for c in new)
    assert new[-1]["choices"][0]["finish_reason"] == "stop"
    old = [json.loads(f.removeprefix(b"data: ")) for f in frames(chat(completion, V032, stream=True))[:-1]]
    names = [t["function"].get("name") for c in old for t in c["choices"][0]["delta"].get("tool_calls", [])]
    assert names[0] == "get_weather"
    assert old[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert "tool_calls" not in body(chat(completion, V032))["choices"][0]["message"]


def test_a_script_without_a_stop_token_ends_with_endoftext() -> None:
    """The scripted engine emits ``<|endoftext|>`` (199999) when the script runs out
    (mockoss.engines.vllm.sidechannel.END_OF_SCRIPT); vLLM counts it and reports it as
    ``stop_reason`` (a generation-config EOS other than the tokenizer's), as the 0.33 goldens show."""
    completion = Completion.from_text("<|channel|>analysis<|message|>Only thinking.<|end|>")
    choice = body(chat(completion))["choices"][0]
    assert (choice["finish_reason"], choice["stop_reason"]) == ("stop", 199999)
    assert body(chat(completion))["usage"]["completion_tokens"] == len(completion.tokens) + 1
    plain = body(chat(completion, VllmProfile().with_switches(end_of_script_eos=False)))
    assert plain["choices"][0]["stop_reason"] is None and plain["usage"]["completion_tokens"] == len(completion.tokens)
