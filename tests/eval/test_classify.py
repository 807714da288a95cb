"""`mockoss.eval.classify`: one outcome key per exchange, over canned bodies in the servers' shapes."""

import json

import pytest

from mockoss.eval.classify import MAX_TEXT, Exchange, classify, sse_data

HARMONY_ERROR = 'unexpected tokens remaining in message header: Some("to=functions.x")'
REASONING = {"id": "rs_1", "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "t"}]}
MCP_CALL = {"id": "mcp_1", "type": "mcp_call", "name": "mcp", "server_label": "tool", "arguments": "{}"}
FUNCTION_CALL = {"id": "fc_1", "type": "function_call", "name": "get_weather", "call_id": "call_1", "arguments": "{}"}
MESSAGE = {
    "id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
    "content": [{"type": "output_text", "text": "It is noon.", "annotations": []}],
}


def responses(status=200, body=None, *, stream=False, media_type="application/json", **kw):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return classify(Exchange("responses", stream, status, raw, media_type, **kw))


def chat(status=200, body=None, *, stream=False, media_type="application/json", **kw):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return classify(Exchange("chat", stream, status, raw, media_type, **kw))


def response(*output, status="completed", **extra):
    return {"id": "resp_1", "object": "response", "status": status, "output": list(output), **extra}


def completion(message, finish_reason="stop"):
    return {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]}


def sse(*events, done=True):
    frames = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events]
    return ("".join(frames) + ("data: [DONE]\n\n" if done else "")).encode()


def responses_sse(*events):
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


# -- Responses, non-streamed -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "key"),
    [
        ([REASONING, MCP_CALL], "200 — reasoning, mcp_call(tool/mcp)"),
        ([REASONING, FUNCTION_CALL], "200 — reasoning, function_call(get_weather)"),
        ([REASONING, MESSAGE], "200 — reasoning, message"),
        ([MESSAGE, FUNCTION_CALL, FUNCTION_CALL], "200 — message, function_call(get_weather), function_call(get_weather)"),
        ([{**MESSAGE, "content": [{"type": "output_text", "text": ""}]}], "200 — message(empty)"),
        ([{**MESSAGE, "content": [{"type": "refusal", "refusal": "No."}]}], "200 — message(refusal)"),
        ([{"type": "web_search_call", "id": "ws_1"}], "200 — web_search_call"),
        ([{"type": "code_interpreter_call", "id": "tool_1"}], "200 — code_interpreter_call"),
        ([], "200 — (no output)"),
        (
            [{**MCP_CALL, "server_label": "<|constrain|>json", "name": "<|constrain|>json"}],
            "200 — mcp_call(<|constrain|>json/<|constrain|>json)",
        ),
    ],
    ids=["mcp", "function", "message", "several", "empty-message", "refusal", "web-search", "code", "none", "constrain"],
)
def test_responses_output_item_types_in_order(output, key):
    assert responses(body=response(*output)) == key


def test_responses_status_other_than_completed_is_appended():
    body = response(REASONING, status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    assert responses(body=body) == "200 — reasoning [status=incomplete: max_output_tokens]"
    assert responses(body=response(REASONING, status="failed")) == "200 — reasoning [status=failed]"


# -- Chat Completions, non-streamed ----------------------------------------------------------------


def _call(name):
    return {"id": "chatcmpl-tool-1", "type": "function", "function": {"name": name, "arguments": "{}"}}


@pytest.mark.parametrize(
    ("message", "finish", "key"),
    [
        ({"content": None, "reasoning": "t", "tool_calls": [_call("get_weather")]}, "tool_calls",
         "200 — reasoning, tool_calls: get_weather"),
        ({"content": None, "tool_calls": [_call("a"), _call("b")]}, "tool_calls", "200 — tool_calls: a, b"),
        ({"content": "It is noon.", "reasoning": "t"}, "stop", "200 — reasoning, content"),
        ({"content": "Hi", "reasoning_content": "t"}, "stop", "200 — reasoning, content"),
        ({"content": "Hi", "tool_calls": []}, "stop", "200 — content"),
        ({"content": None, "reasoning": "t"}, "stop", "200 — reasoning"),
        ({"content": "", "reasoning": None}, "stop", "200 — (empty)"),
        ({"content": "It is", "reasoning": "t"}, "length", "200 — reasoning, content [finish_reason=length]"),
    ],
    ids=["tool-call", "two-calls", "content", "reasoning_content", "empty-tool-calls", "reasoning-only", "empty",
         "length"],
)
def test_chat_choice_zero(message, finish, key):
    assert chat(body=completion({"role": "assistant", **message}, finish)) == key


def test_chat_without_choices():
    assert chat(body={"object": "chat.completion", "choices": []}) == "200 — (no choices)"


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "key"),
    [
        (500, {"error": {"message": HARMONY_ERROR, "type": "InternalServerError", "param": None, "code": 500}},
         f"500 — InternalServerError: {HARMONY_ERROR}"),
        (400, {"object": "error", "message": HARMONY_ERROR, "type": "BadRequestError", "param": None, "code": 400},
         f"400 — BadRequestError: {HARMONY_ERROR}"),
        (500, {"error": "error parsing tool call: raw='ls -R\n', err=invalid character 'l'"},
         "500 — error parsing tool call: raw='ls -R"),
        (404, {"detail": "Not Found"}, "404 — Not Found"),
        (422, {"detail": [{"loc": ["body"], "msg": "bad"}]}, '422 — [{"loc": ["body"], "msg": "bad"}]'),
        (429, {"error": {"message": "Slow down", "type": None}}, "429 — Slow down"),
        (502, b"<html>\n<body>Bad Gateway</body>", "502 — <html>"),
        (503, b"", "503 — (empty body)"),
    ],
    ids=["vllm", "vllm-flat", "ollama", "fastapi", "fastapi-list", "no-type", "html", "empty"],
)
def test_error_bodies(status, body, key):
    assert responses(status, body) == key
    assert chat(status, body) == key


def test_error_messages_are_cut_to_the_first_line_and_max_text():
    long = "x" * 300
    key = responses(500, {"error": {"message": long + "\nTraceback", "type": "InternalServerError"}})
    assert key == "500 — InternalServerError: " + "x" * (MAX_TEXT - 1) + "…"


def test_an_error_body_with_status_200():
    body = {"error": {"message": "boom", "type": "InternalServerError"}}
    assert chat(body=body) == "200 — error body: InternalServerError: boom"


def test_a_non_json_200_body():
    assert responses(body=b"OK\nmore", media_type="text/plain") == "200 — unparseable body: OK"


# -- streams ---------------------------------------------------------------------------------------


def test_responses_stream_classified_from_response_completed():
    body = responses_sse(
        {"type": "response.created", "sequence_number": 0, "response": response(status="in_progress")},
        {"type": "response.output_item.added", "output_index": 0, "item": REASONING},
        {"type": "response.completed", "sequence_number": 9, "response": response(REASONING, MCP_CALL)},
    )
    assert responses(body=body, stream=True, media_type="text/event-stream") == "200 — reasoning, mcp_call(tool/mcp)"


def test_responses_stream_incomplete():
    body = responses_sse({"type": "response.incomplete", "response": response(MESSAGE, status="incomplete")})
    assert responses(body=body, stream=True, media_type="text/event-stream") == "200 — message [status=incomplete]"


def test_responses_stream_failed_and_error_events():
    failed = {"type": "response.failed", "response": {**response(), "error": {"code": "server_error", "message": "x"}}}
    error = {"type": "error", "code": "invalid_prompt", "message": HARMONY_ERROR, "sequence_number": 3}
    sse_kw = {"stream": True, "media_type": "text/event-stream"}
    assert responses(body=responses_sse(failed), **sse_kw) == "200 — stream response.failed: server_error: x"
    assert responses(body=responses_sse(error), **sse_kw) == f"200 — stream error event: invalid_prompt: {HARMONY_ERROR}"
    vllm_chunk = sse({"error": {"message": HARMONY_ERROR, "type": "InternalServerError"}})
    assert responses(body=vllm_chunk, **sse_kw) == f"200 — stream error event: InternalServerError: {HARMONY_ERROR}"


def test_responses_stream_dropped_lists_the_items_so_far():
    events = responses_sse(
        {"type": "response.created", "response": response(status="in_progress")},
        {"type": "response.output_item.added", "output_index": 0, "item": {**REASONING, "content": []}},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
        {"type": "response.output_item.added", "output_index": 1, "item": MCP_CALL},
    )
    partial = events + b'event: response.mcp_call_arguments.delta\ndata: {"type": "resp'
    kw = {"stream": True, "media_type": "text/event-stream"}
    assert responses(body=partial, failure="connection", failure_text="RemoteProtocolError: peer closed", **kw) == (
        "200 — stream dropped after reasoning, mcp_call(tool/mcp)"
    )
    assert responses(body=events, **kw) == "200 — stream ended without response.completed after reasoning, mcp_call(tool/mcp)"
    assert responses(body=b"", failure="connection", **kw) == "200 — stream dropped before any output"


def _chunk(delta, finish=None):
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_chat_stream_accumulates_deltas():
    body = sse(
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"reasoning": "Need"}),
        _chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "get_weather"}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
        _chunk({"tool_calls": [{"index": 1, "id": "c2", "type": "function", "function": {"name": "get_time"}}]}),
        _chunk({}, "tool_calls"),
    )
    key = chat(body=body, stream=True, media_type="text/event-stream")
    assert key == "200 — reasoning, tool_calls: get_weather, get_time"


def test_chat_stream_finish_reason_length():
    body = sse(_chunk({"content": "It"}), _chunk({}, "length"))
    assert chat(body=body, stream=True, media_type="text/event-stream") == "200 — content [finish_reason=length]"


def test_chat_stream_error_chunk_is_its_own_class():
    error = {"error": {"message": HARMONY_ERROR, "type": "InternalServerError", "param": None, "code": 500}}
    body = sse(_chunk({"reasoning": "Need"}), error)
    key = chat(body=body, stream=True, media_type="text/event-stream")
    assert key == f"200 — stream error chunk: InternalServerError: {HARMONY_ERROR}"


def test_chat_stream_dropped_or_without_done():
    body = sse(_chunk({"reasoning": "Need"}), done=False)
    kw = {"stream": True, "media_type": "text/event-stream"}
    assert chat(body=body + b"data: {", failure="connection", **kw) == "200 — stream dropped after reasoning"
    assert chat(body=body, **kw) == "200 — stream ended without [DONE] after reasoning"
    assert chat(body=b"", **kw) == "200 — stream ended without [DONE] before any output"


def test_a_stream_request_answered_with_json_is_classified_as_json():
    body = completion({"role": "assistant", "content": "Hi"})
    assert chat(body=body, stream=True, media_type="application/json") == "200 — content"


def test_error_status_on_a_stream_request():
    body = {"error": {"message": HARMONY_ERROR, "type": "InternalServerError"}}
    assert responses(500, body, stream=True) == f"500 — InternalServerError: {HARMONY_ERROR}"


# -- no HTTP answer --------------------------------------------------------------------------------


def test_connection_errors_and_timeouts():
    refused = Exchange("chat", False, None, failure="connection", failure_text="ConnectError: [Errno 111] Connection refused")
    assert classify(refused) == "connection error — ConnectError: [Errno 111] Connection refused"
    timeout = Exchange("chat", True, None, failure="timeout", failure_text="no complete answer within 30 s")
    assert classify(timeout) == "timeout — no complete answer within 30 s"
    late = Exchange("responses", True, 200, b"data: {}\n\n", "text/event-stream", "timeout", "no complete answer within 2 s")
    assert classify(late) == "timeout — no complete answer within 2 s"
    assert classify(Exchange("chat", False, 200, b"{", failure="connection")) == "200 — body dropped mid-transfer"


# -- totality --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"null", b"[]", b"3", b'"x"', b'{"output": "x"}', b'{"output": [1, null, {"type": 5}]}',
        b'{"choices": {"0": 1}}', b'{"choices": [{"message": "x"}]}',
        b'{"choices": [{"message": {"tool_calls": 3, "content": 5}}]}',
        b'{"choices": [{"message": {"tool_calls": [null, {"function": "f"}]}}]}',
        b'{"status": "incomplete", "incomplete_details": "x", "output": []}',
        b'{"error": [1]}', b'{"error": {"message": {"a": 1}, "type": 3}}', b"\xff\xfe",
    ],
)
@pytest.mark.parametrize("endpoint", ["responses", "chat"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("status", [200, 500])
def test_classify_never_raises(body, endpoint, stream, status):
    media_type = "text/event-stream" if stream else "application/json"
    frames = b"data: " + body + b"\n\n" if stream else body
    events = b'data: {"type": "response.output_item.added", "output_index": "x", "item": {}}\n\n'
    for raw in (frames, events, frames + b"data: {\"choices\": [{\"delta\": 3, \"index\": 0}]}\n\n"):
        key = classify(Exchange(endpoint, stream, status, raw, media_type))
        assert key.startswith(f"{status} — ")


def test_sse_data_joins_multiline_data_and_skips_a_partial_event():
    body = b"event: a\r\ndata: {\"x\":\r\ndata: 1}\r\n\r\n: comment\n\ndata:[DONE]\n\ndata: {\"partial"
    assert list(sse_data(body)) == ['{"x":\n1}', "[DONE]"]
