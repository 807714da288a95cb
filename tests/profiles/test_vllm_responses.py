"""vLLM ``POST /v1/responses`` for gpt-oss: exact bodies and SSE streams.

Ids come from ``IdSource(0, 0)`` in vLLM's order (response id, then streamed item ids, then
output item ids), so ``H[i]`` below is the i-th hex the profile draws.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, Reply, RequestContext, ResponsesRequestView, ToolDecl
from mockoss.profiles.vllm import VllmProfile
from mockoss.profiles.vllm.responses import surface_responses

MODEL = "openai/gpt-oss-20b"
CREATED = 1_760_000_000
PROMPT = 80
_src = IdSource(0, 0)
H = [_src.next16() for _ in range(8)]  # 16 hex digits: vLLM 0.32/0.33 random_uuid() (vllm/utils/__init__.py)

ANSWER = (
    "<|channel|>analysis<|message|>User says hi.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>Hello!<|return|>"
)
CALL = (
    "<|channel|>analysis<|message|>Need weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    '{"city":"Paris"}<|call|>'
)
SEED_ARGS = '{"name":"get_current_time","arguments":{"timezone":"America/Los_Angeles"}}'
SEED = (
    "<|channel|>analysis<|message|>Need the time.<|end|>"
    f"<|start|>assistant to=tool.mcp<|channel|>commentary<|message|>{SEED_ARGS}<|call|>"
)
CONSTRAINED_FINAL = '<|channel|>final <|constrain|>json<|message|>{"ok":true}<|return|>'
BAD_HEADER = (
    "<|channel|>analysis<|message|>ok<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.x to=functions.y json<|message|>{}<|call|>"
)
HEADER_ERROR = 'unexpected tokens remaining in message header: Some("to=functions.x")'
WEATHER_PARAMS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER_TOOL = {"type": "function", "name": "get_weather", "description": "Get weather", "parameters": WEATHER_PARAMS}


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=CREATED, prompt_tokens=PROMPT)


def request(*, stream: bool = False, tools: tuple[dict[str, Any], ...] = (), **body: Any) -> ResponsesRequestView:
    full = {"model": MODEL, "input": "hi", **body}
    if tools:
        full["tools"] = list(tools)
    return ResponsesRequestView(
        model=MODEL,
        tools=tuple(ToolDecl(t["type"], t.get("name")) for t in tools),
        stream=stream,
        max_output_tokens=body.get("max_output_tokens"),
        body=full,
    )


def surface(text: str, req: ResponsesRequestView, profile: VllmProfile | None = None) -> Reply:
    return surface_responses(profile or VllmProfile(), Completion.from_text(text), req, ctx())


def usage(output_tokens: int, reasoning_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": PROMPT,
        # cache_write_tokens: vLLM 0.32/0.33 (responses_body_fields; measured on both)
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0, "input_tokens_per_turn": [PROMPT], "cached_tokens_per_turn": [0]},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens, "tool_output_tokens": 0, "output_tokens_per_turn": [output_tokens], "tool_output_tokens_per_turn": [0]},
        "total_tokens": PROMPT + output_tokens,
    }


def response(output: list[Any], *, status: str = "completed", use: dict[str, Any] | None = None, tools: list[Any] | None = None, max_output_tokens: int = 131072 - PROMPT) -> dict[str, Any]:
    """``ResponsesResponse`` fields in vLLM 0.33.0's dump order (vllm-project/vllm@v0.33.0:
    vllm/entrypoints/openai/responses/protocol.py ``from_request``; the 0.33 goldens): prompt-cache
    fields and ``safety_identifier`` (0.33), penalties and transfer params (0.32 and 0.33),
    ``tool_choice: "none"`` without tools (``check_tool_usage``)."""
    return {
        "id": f"resp_{H[0]}",
        "created_at": CREATED,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": None,
        "metadata": None,
        "model": MODEL,
        "object": "response",
        "output": output,
        "parallel_tool_calls": True,
        "temperature": 1.0,
        "tool_choice": "auto" if tools else "none",
        "tools": tools or [],
        "top_p": 1.0,
        "background": False,
        "max_output_tokens": max_output_tokens,
        "max_tool_calls": None,
        "previous_response_id": None,
        "prompt": None,
        "prompt_cache_options": None,
        "prompt_cache_key": None,
        "prompt_cache_retention": None,
        "reasoning": None,
        "safety_identifier": None,
        "service_tier": "auto",
        "status": status,
        "text": None,
        "top_logprobs": None,
        "truncation": "disabled",
        "usage": use,
        "user": None,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "input_messages": None,
        "output_messages": None,
    }


def reasoning(item_id: str, text: str, status: str | None = None) -> dict[str, Any]:
    return {"id": item_id, "summary": [], "type": "reasoning", "content": [{"text": text, "type": "reasoning_text"}], "encrypted_content": None, "status": status}


def message(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    return {"id": item_id, "content": [{"annotations": [], "text": text, "type": "output_text", "logprobs": None}], "role": "assistant", "status": status, "type": "message", "phase": None}


def mcp(item_id: str, arguments: str, name: str, label: str, status: str = "completed") -> dict[str, Any]:
    return {"id": item_id, "arguments": arguments, "name": name, "server_label": label, "type": "mcp_call", "approval_request_id": None, "error": None, "output": None, "status": status}


def events(reply: Reply) -> list[dict[str, Any]]:
    """Parse SSE frames, checking the ``event:`` line matches the payload type."""
    out = []
    for frame in reply.frames:
        head, data = frame.decode().split("\n", 1)
        assert head.startswith("event: ") and data.startswith("data: ") and data.endswith("}\n\n")
        payload = json.loads(data[len("data: ") :])
        assert payload["type"] == head[len("event: ") :]
        out.append(payload)
    return out


def frame(payload: dict[str, Any]) -> bytes:
    return b"event: " + payload["type"].encode() + b"\ndata: " + dumps(payload) + b"\n\n"


# ---------------------------------------------------------------------------------------------
# Non-streamed
# ---------------------------------------------------------------------------------------------


def test_answer_with_reasoning_exact_body() -> None:
    reply = surface(ANSWER, request())
    expected = response(
        [reasoning(f"rs_{H[1]}", "User says hi."), message(f"msg_{H[2]}", "Hello!")],
        use=usage(16, 4),
    )
    assert (reply.status, reply.media_type) == (200, "application/json")
    assert reply.body == dumps(expected)


def test_function_call_with_declared_tool_exact_body() -> None:
    reply = surface(CALL, request(tools=(WEATHER_TOOL,)))
    # async/caller/namespace and the echoed tool's allowed_callers/async/defer_loading/output_schema:
    # vLLM 0.32/0.33 over the newer openai types (responses_body_fields; measured on both).
    call = {"arguments": '{"city":"Paris"}', "call_id": f"call_{H[2]}", "name": "get_weather", "type": "function_call", "id": f"fc_{H[2]}", "async": None, "caller": None, "namespace": None, "status": "completed"}
    echoed_tool = {
        "name": "get_weather", "parameters": WEATHER_PARAMS, "strict": None, "type": "function",
        "allowed_callers": None, "async": None, "defer_loading": None, "description": "Get weather", "output_schema": None,
    }
    expected = response([reasoning(f"rs_{H[1]}", "Need weather."), call], use=usage(27, 8), tools=[echoed_tool])
    assert reply.body == dumps(expected)


def test_seed_no_tools_recipient_becomes_mcp_call_by_default() -> None:
    reply = surface(SEED, request(tool_choice="none"))
    body = json.loads(reply.body)
    assert body["output"] == [reasoning(f"rs_{H[1]}", "Need the time."), mcp(f"mcp_{H[2]}", SEED_ARGS, "mcp", "tool")]
    assert body["tools"] == [] and body["status"] == "completed"
    assert body["usage"] == usage(37, 21)  # the mcp arguments count; <|message|> tokens do not (_is_reasoning_token)


def test_seed_switch_on_classifies_by_channel() -> None:
    profile = VllmProfile(responses_ignore_recipients_without_tools=True)
    reply = surface(SEED, request(), profile)
    assert json.loads(reply.body)["output"] == [reasoning(f"rs_{H[1]}", "Need the time."), message(f"msg_{H[2]}", SEED_ARGS)]


def test_switch_keeps_tool_items_when_tools_are_declared() -> None:
    profile = VllmProfile(responses_ignore_recipients_without_tools=True)
    mcp_tool = {"type": "mcp", "server_label": "time", "server_url": "https://example.invalid/mcp"}
    reply = surface(SEED, request(tools=(mcp_tool,)), profile)
    assert [item["type"] for item in json.loads(reply.body)["output"]] == ["reasoning", "mcp_call"]


def test_constrained_final_is_a_message_not_mcp() -> None:
    """``_normalize_recipient`` turns recipient ``<|constrain|>json`` into none (vllm#45570)."""
    reply = surface(CONSTRAINED_FINAL, request())
    assert json.loads(reply.body)["output"] == [message(f"msg_{H[1]}", '{"ok":true}')]


RAISE = VllmProfile(harmony_errors="raise")  # errors surfaced: mockoss before the comparison with vLLM 0.32


def test_harmony_error_status_and_text() -> None:
    reply = surface(BAD_HEADER, request(), RAISE)
    assert reply.status == 500
    assert reply.body == dumps({"error": {"message": HEADER_ERROR, "type": "InternalServerError", "param": None, "code": 500}})
    earlier = surface(BAD_HEADER, request(), VllmProfile(harmony_error_status=400, harmony_errors="raise"))
    assert earlier.status == 400 and json.loads(earlier.body)["error"]["type"] == "BadRequestError"


def test_unknown_channel_is_a_bad_request() -> None:
    reply = surface("<|channel|>commentary.functions.x<|message|>hi<|end|>", request())
    assert reply.status == 400
    assert json.loads(reply.body)["error"]["message"] == "Unknown channel: commentary.functions.x"


def test_truncated_function_call_is_incomplete() -> None:
    reply = surface(CALL, request(tools=(WEATHER_TOOL,), max_output_tokens=23))
    body = json.loads(reply.body)
    assert body["status"] == "incomplete"
    assert body["incomplete_details"] == {"reason": "max_output_tokens"}
    assert body["max_output_tokens"] == 23
    assert body["output"][1] == {"arguments": '{"city', "call_id": f"call_{H[2]}", "name": "get_weather", "type": "function_call", "id": f"fc_{H[2]}", "async": None, "caller": None, "namespace": None, "status": "incomplete"}


def test_truncated_header_is_recovered_as_raw_final_text() -> None:
    """``flush()`` recovers the EOS HarmonyError as a final message of the decoded tokens."""
    reply = surface(ANSWER, request(max_output_tokens=11))
    body = json.loads(reply.body)
    assert body["output"][1] == message(f"msg_{H[2]}", "<|start|>assistant<|channel|>", status="incomplete")
    assert body["status"] == "incomplete"


def test_echoed_request_fields() -> None:
    req = request(temperature=0, top_p=0.5, instructions="Be brief.", metadata={"k": "v"}, reasoning={"effort": "low"}, request_id="resp_custom", user="u1")
    body = json.loads(surface(ANSWER, req).body)
    assert (body["id"], body["temperature"], body["top_p"]) == ("resp_custom", 0.0, 1.0)
    assert (body["instructions"], body["metadata"], body["user"]) == ("Be brief.", {"k": "v"}, "u1")
    assert body["reasoning"] == {"effort": "low", "generate_summary": None, "summary": None}
    assert body["output"][0]["id"] == f"rs_{H[0]}"  # no id drawn for the response itself


def test_a_header_error_drops_the_message_with_http_200() -> None:
    """vLLM 0.32/0.33: ``HarmonyContext.append_output`` → ``HarmonyParser.process_chunk`` skips tokens
    that raise (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py and
    vllm/entrypoints/openai/responses/context.py); real vLLM 0.32 answered 200 with the reasoning item
    only (shared/reference/vllm-on-cpu.md)."""
    text = BAD_HEADER  # analysis "ok", then a header with two recipients
    skip = VllmProfile(harmony_errors="skip")
    reply = surface(text, request(), skip)
    assert reply.status == 200
    assert [item["type"] for item in json.loads(reply.body)["output"]] == ["reasoning"]
    streamed = surface(text, request(stream=True), skip)
    assert streamed.abort is None and events(streamed)[-1]["type"] == "response.completed"


def test_plan_is_memoised_per_completion() -> None:
    shared = Completion.from_text(ANSWER)
    completion = Completion(text=shared.text, tokens=shared.tokens)  # private: from_text shares by content
    surface_responses(VllmProfile(), completion, request(), ctx())
    keys = [k for k in completion._memo if isinstance(k, tuple) and str(k[0]).startswith("vllm.responses")]
    assert len(keys) == 1
    plan = completion._memo[keys[0]]
    surface_responses(VllmProfile(), completion, request(stream=True), ctx())
    assert completion._memo[keys[0]] is plan


# ---------------------------------------------------------------------------------------------
# Streamed
# ---------------------------------------------------------------------------------------------


def _answer_stream() -> list[dict[str, Any]]:
    initial = response([], status="in_progress")
    # vLLM 0.32/0.33 emit_reasoning_delta_events: rs_ id and response.content_part.* for reasoning
    # (vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/responses/streaming_events.py).
    rid, mid = f"rs_{H[1]}", f"msg_{H[2]}"

    def ev(kind: str, **fields: Any) -> dict[str, Any]:
        return {**fields, "type": kind}

    def delta(kind: str, item: str, index: int, text: str, logprobs: bool) -> dict[str, Any]:
        fields: dict[str, Any] = {"content_index": 0, "delta": text, "item_id": item}
        if logprobs:
            fields["logprobs"] = []
        return ev(kind, **fields, output_index=index, sequence_number=-1)

    out = [
        ev("response.created", response=initial, sequence_number=-1),
        ev("response.in_progress", response=initial, sequence_number=-1),
        ev("response.output_item.added", item={"id": rid, "summary": [], "type": "reasoning", "content": None, "encrypted_content": None, "status": "in_progress"}, output_index=0, sequence_number=-1),
        ev("response.content_part.added", content_index=0, item_id=rid, output_index=0, part={"text": "", "type": "reasoning_text"}, sequence_number=-1),
        *(delta("response.reasoning_text.delta", rid, 0, t, False) for t in ("User", " says", " hi", ".")),
        ev("response.reasoning_text.done", content_index=0, item_id=rid, output_index=0, sequence_number=-1, text="User says hi."),
        ev("response.content_part.done", content_index=0, item_id=rid, output_index=0, part={"text": "User says hi.", "type": "reasoning_text"}, sequence_number=-1),
        ev("response.output_item.done", item=reasoning(rid, "User says hi.", "completed"), output_index=0, sequence_number=-1),
        ev("response.output_item.added", item={"id": mid, "content": [], "role": "assistant", "status": "in_progress", "type": "message", "phase": None}, output_index=1, sequence_number=-1),
        ev("response.content_part.added", content_index=0, item_id=mid, output_index=1, part={"annotations": [], "text": "", "type": "output_text", "logprobs": []}, sequence_number=-1),
        *(delta("response.output_text.delta", mid, 1, t, True) for t in ("Hello", "!")),
        ev("response.output_text.done", content_index=0, item_id=mid, logprobs=[], output_index=1, sequence_number=-1, text="Hello!"),
        ev("response.content_part.done", content_index=0, item_id=mid, output_index=1, part={"annotations": [], "text": "Hello!", "type": "output_text", "logprobs": None}, sequence_number=-1),
        ev("response.output_item.done", item=message(mid, "Hello!"), output_index=1, sequence_number=-1),
        # reuse_streamed_item_ids (vllm/entrypoints/openai/responses/utils.py): the streamed ids again.
        ev("response.completed", response=response([reasoning(rid, "User says hi."), message(mid, "Hello!")], use=usage(16, 4)), sequence_number=-1),
    ]
    for seq, payload in enumerate(out):
        payload["sequence_number"] = seq
    return out


def test_answer_stream_exact_frames() -> None:
    reply = surface(ANSWER, request(stream=True))
    assert (reply.status, reply.media_type, type(reply)) == (200, "text/event-stream", Reply)
    assert list(reply.frames) == [frame(p) for p in _answer_stream()]
    assert not any(f.startswith(b"data: [DONE]") for f in reply.frames)


def test_stream_sequence_numbers_and_order() -> None:
    got = events(surface(CALL, request(stream=True, tools=(WEATHER_TOOL,))))
    assert [e["sequence_number"] for e in got] == list(range(len(got)))
    assert [e["type"] for e in got] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.reasoning_text.delta"] * 3,
        "response.reasoning_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * 5,
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    fc, call = f"fc_{H[2]}", f"call_{H[3]}"  # two uuids when streamed
    nulls = {"async": None, "caller": None, "namespace": None}
    assert got[10]["item"] == {"arguments": "", "call_id": call, "name": "get_weather", "type": "function_call", "id": fc, **nulls, "status": "in_progress"}
    # emit_function_call_done_events (0.32/0.33): ``name`` comes last in the openai event model ...
    assert list(got[16]) == ["arguments", "item_id", "output_index", "sequence_number", "type", "name"]
    assert got[16] == {"arguments": '{"city":"Paris"}', "item_id": fc, "name": "get_weather", "output_index": 1, "sequence_number": 16, "type": "response.function_call_arguments.done"}
    # ... and the done item has its fc_ id (no item_id) plus stray output_index/sequence_number.
    assert got[17]["item"] == {"arguments": '{"city":"Paris"}', "call_id": call, "name": "get_weather", "type": "function_call", "id": fc, **nulls, "status": "completed", "output_index": 1, "sequence_number": -1}
    final = got[-1]["response"]["output"][1]
    assert (final["id"], final["call_id"]) == (fc, call)  # reuse_streamed_item_ids


def test_the_former_stream_shapes_stay_behind_switches() -> None:
    """``responses_stream_events="reasoning_part"``, ``responses_reuse_stream_ids=False``,
    ``responses_body_fields=False``: the stream mockoss emitted before it was compared with vLLM
    0.32/0.33 (unverified against any release; kept for tests that pinned it)."""
    old = VllmProfile(responses_stream_events="reasoning_part", responses_reuse_stream_ids=False, responses_body_fields=False)
    got = events(surface(CALL, request(stream=True, tools=(WEATHER_TOOL,)), old))
    assert got[3]["type"] == "response.reasoning_part.added" and got[2]["item"]["id"] == f"msg_{H[1]}"
    fc, call = f"fc_{H[2]}", f"call_{H[3]}"
    assert got[17]["item"] == {"arguments": '{"city":"Paris"}', "call_id": call, "name": "get_weather", "type": "function_call", "id": None, "status": "completed", "item_id": fc, "output_index": 1, "sequence_number": -1}
    final = got[-1]["response"]["output"][1]
    assert (final["id"], final["call_id"]) == (f"fc_{H[5]}", f"call_{H[5]}")
    assert "presence_penalty" not in got[-1]["response"] and got[-1]["response"]["tool_choice"] == "auto"


def test_seed_stream_default_emits_mcp_events() -> None:
    got = events(surface(SEED, request(stream=True)))
    types = [e["type"] for e in got]
    assert types[10:14] == ["response.output_item.done", "response.output_item.added", "response.mcp_call.in_progress", "response.mcp_call_arguments.delta"]
    assert types[-4:] == ["response.mcp_call_arguments.done", "response.mcp_call.completed", "response.output_item.done", "response.completed"]
    # The stream names the call after the raw recipient; the completed response splits it.
    assert got[11]["item"] == mcp(f"mcp_{H[2]}", "", "tool.mcp", "tool.mcp", "in_progress")
    assert got[-4]["name"] == "tool.mcp" and got[-4]["arguments"] == SEED_ARGS
    # reuse_streamed_item_ids: the completed response keeps the streamed mcp_ id.
    assert got[-1]["response"]["output"][1] == mcp(f"mcp_{H[2]}", SEED_ARGS, "mcp", "tool")


def test_seed_stream_switch_on_has_no_tool_events() -> None:
    profile = VllmProfile(responses_ignore_recipients_without_tools=True)
    got = events(surface(SEED, request(stream=True), profile))
    types = [e["type"] for e in got]
    assert not [t for t in types if "mcp" in t or "function_call" in t]
    assert types[11:13] == ["response.output_item.added", "response.content_part.added"]
    assert "".join(e["delta"] for e in got if e["type"] == "response.output_text.delta") == SEED_ARGS
    assert got[-1]["response"]["output"] == [reasoning(f"rs_{H[1]}", "Need the time."), message(f"msg_{H[2]}", SEED_ARGS)]


def test_stream_final_with_function_recipient_streams_a_call() -> None:
    got = events(surface("<|channel|>final to=functions.x<|message|>{}<|return|>", request(stream=True)))
    assert [e["type"] for e in got][2:6] == ["response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done"]


def test_stream_harmony_error_cuts_the_stream() -> None:
    reply = surface(BAD_HEADER, request(stream=True), RAISE)
    assert reply.streamed
    assert (reply.status, reply.abort) == (200, HEADER_ERROR)
    got = events(reply)
    assert got[-1]["type"] == "response.output_item.done"  # the analysis item, then nothing
    assert not [e for e in got if e["type"] in ("response.completed", "error", "response.failed")]


def test_stream_unknown_channel_cuts_before_completed() -> None:
    reply = surface("<|channel|>commentary.functions.x<|message|>hi<|end|>", request(stream=True))
    assert reply.abort == "Unknown channel: commentary.functions.x"
    assert [e["type"] for e in events(reply)] == ["response.created", "response.in_progress"]


def test_unknown_channel_drop_switch_keeps_the_rest_streamed_and_not() -> None:
    """``responses_unknown_channel="drop"`` (vLLM main after 0.33.0): no item for the stray message,
    no 400, and the stream reaches ``response.completed`` with the same output."""
    text = "<|channel|>comment<|message|>stray<|end|><|start|>assistant<|channel|>final<|message|>answer<|return|>"
    drop = VllmProfile(responses_unknown_channel="drop")
    body = json.loads(surface(text, request(), drop).body)
    assert [(i["type"], i["content"][0]["text"]) for i in body["output"]] == [("message", "answer")]
    streamed = surface(text, request(stream=True), drop)
    assert streamed.abort is None
    completed = events(streamed)[-1]
    assert completed["type"] == "response.completed"
    assert [i["type"] for i in completed["response"]["output"]] == ["message"]
    with pytest.raises(ValueError, match="responses_unknown_channel"):
        VllmProfile(responses_unknown_channel="ignore")


@pytest.mark.parametrize(
    ("extra", "message", "error_type", "param"),
    [
        (
            {"previous_input_messages": [{"role": "user", "content": "x"}], "previous_response_id": "resp_1"},
            "Only one of `previous_input_messages` and `previous_response_id` can be set.",
            "invalid_request_error",
            "previous_response_id",
        ),
        (
            {"previous_input_messages": [{"content": "no role"}]},
            "Message has no 'role' key: {'content': 'no role'} (parameter=input)",
            "BadRequestError",
            "input",
        ),
    ],
)
def test_previous_input_messages_checks_are_400s(extra: dict[str, Any], message: str, error_type: str, param: str) -> None:
    """vLLM 0.33.0: ``_validate_create_responses_input`` (responses/serving.py) and
    ``_parse_chat_format_message`` (responses/harmony.py, a ``VLLMValidationError``)."""
    reply = VllmProfile().surface("responses", Completion.from_text("<|channel|>final<|message|>ok<|return|>"), request(**extra), ctx())
    assert reply.status == 400
    assert json.loads(reply.body)["error"] == {"message": message, "type": error_type, "param": param, "code": 400}


def test_stream_error_event_mode() -> None:
    reply = surface(BAD_HEADER, request(stream=True), VllmProfile(responses_stream_error="error_event", harmony_errors="raise"))
    assert reply.abort is None
    last = events(reply)[-1]
    assert last == {"code": "InternalServerError", "message": HEADER_ERROR, "param": None, "sequence_number": len(reply.frames) - 1, "type": "error"}


def test_stream_truncation_completes_as_incomplete() -> None:
    got = events(surface(CALL, request(stream=True, tools=(WEATHER_TOOL,), max_output_tokens=23)))
    assert got[-2]["type"] == "response.output_item.done" and got[-2]["item"]["arguments"] == '{"city'
    final = got[-1]["response"]
    assert (final["status"], final["incomplete_details"]) == ("incomplete", {"reason": "max_output_tokens"})
    assert final["output"][1]["status"] == "incomplete"


@pytest.mark.parametrize("text", [ANSWER, CALL, SEED, CONSTRAINED_FINAL])
def test_stream_and_json_agree_on_the_final_response(text: str) -> None:
    tools = (WEATHER_TOOL,)
    body = json.loads(surface(text, request(tools=tools)).body)
    completed = events(surface(text, request(stream=True, tools=tools)))[-1]["response"]
    for item in body["output"] + completed["output"]:
        item.pop("id", None)
        item.pop("call_id", None)
    assert completed == body


def test_percent_and_marker_characters_in_content_survive_templating() -> None:
    text = "100% sure %s %d \ue000"
    reply = surface(f"<|channel|>final<|message|>{text}<|return|>", request(stream=True))
    got = events(reply)
    assert got[-2]["item"]["content"][0]["text"] == text
    assert got[-1]["response"]["output"][0]["content"][0]["text"] == text


def test_vllm_0_32_has_no_prompt_cache_fields_and_both_echo_tool_choice_none_without_tools() -> None:
    """``prompt_cache_options/key/retention`` and ``safety_identifier`` arrive with 0.33.0's
    ``from_request`` (vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/protocol.py);
    ``check_tool_usage`` turns ``auto`` into ``none`` without tools in both (v0.32.0 too)."""
    new = json.loads(surface(ANSWER, request(prompt_cache_key="k", safety_identifier="s")).body)
    assert (new["prompt_cache_key"], new["safety_identifier"], new["prompt_cache_options"]) == ("k", "s", None)
    assert new["tool_choice"] == "none" and new["presence_penalty"] == 0.0
    old = json.loads(surface(ANSWER, request(), VllmProfile(responses_prompt_cache_fields=False)).body)
    assert "prompt_cache_key" not in old and "safety_identifier" not in old
    assert old["tool_choice"] == "none" and old["usage"]["input_tokens_details"]["cache_write_tokens"] == 0
    with_tools = json.loads(surface(ANSWER, request(tools=(WEATHER_TOOL,))).body)
    assert with_tools["tool_choice"] == "auto"
