"""The ``gptoss-reference`` profile's switches and edges that the goldens do not reach.

The goldens (tests/golden/test_gptoss_reference_goldens.py) check the default behaviour and the
timeline's releases against the real server; here: the scripted backend's end (``end_of_script``),
the fixed date of ``metadata.__debug``, the pre-0.0.9 item ids, and the profile contract.
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, RequestContext, ResponsesRequestView, ServerInfo
from mockoss.profiles.registry import get_profile

ANALYSIS_ONLY = Completion.from_text("<|channel|>analysis<|message|>Thinking.<|end|>")
ANSWER = Completion.from_text("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hi.<|return|>")


def _ask(profile, completion, *, stream, **body):
    body = {"model": "m", "input": "hi", **body}
    view = ResponsesRequestView(model="m", stream=stream, body=body)
    return profile.surface("responses", completion, view, RequestContext(IdSource(0, 0), 1700000000, 0))


def _events(reply):
    return [json.loads(frame.decode().split("\ndata: ", 1)[1]) for frame in reply.frames]


def test_end_of_script_return_completes_and_closes_the_last_message_again():
    # After <|end|> the backend's <|return|> is rejected while the parser expects <|start|>: the
    # state stays EXPECT_START, so the reasoning is closed a second time at the next index.
    events = _events(_ask(get_profile("gptoss-reference"), ANALYSIS_ONLY, stream=True))
    done = [(e["output_index"], e["item"]["type"]) for e in events if e["type"] == "response.output_item.done"]
    assert done == [(0, "reasoning"), (1, "reasoning")]
    assert events[-1]["type"] == "response.completed"
    assert [i["type"] for i in events[-1]["response"]["output"]] == ["reasoning"]


def test_end_of_script_error_cuts_the_stream_and_is_a_plain_500():
    profile = get_profile("gptoss-reference", {"end_of_script": "error"})
    reply = _ask(profile, ANALYSIS_ONLY, stream=True)
    assert reply.abort == "RuntimeError: scripted completion exhausted"
    assert "response.completed" not in [e["type"] for e in _events(reply)]
    plain = _ask(profile, ANALYSIS_ONLY, stream=False)
    assert (plain.status, plain.body, dict(plain.headers)["content-type"]) == (500, b"Internal Server Error", "text/plain; charset=utf-8")


def test_debug_metadata_holds_the_prompt_with_the_conversation_start_date():
    profile = get_profile("gptoss-reference", {"conversation_start_date": "2031-02-03"})
    body = json.loads(_ask(profile, ANSWER, stream=False, metadata={"__debug": True}).body)
    assert "Current date: 2031-02-03" in body["metadata"]["__debug_input"]
    assert body["metadata"]["__debug_output"].startswith("<|channel|>analysis<|message|>Think.")
    assert body["usage"]["input_tokens"] == json.loads(_ask(get_profile("gptoss-reference"), ANSWER, stream=False).body)["usage"]["input_tokens"]


def test_release_0_0_8_events_carry_the_default_item_id():
    events = _events(_ask(get_profile("gptoss-reference@0.0.8"), ANSWER, stream=True))
    assert {e["item_id"] for e in events if "item_id" in e} == {"item_1234"}
    message = events[-1]["response"]["output"][1]
    assert message["type"] == "message" and "id" not in message
    assert events[-1]["response"]["output"][0]["id"].startswith("rs_")


def test_release_0_0_5_default_token_limit():
    body = json.loads(_ask(get_profile("gptoss-reference@0.0.5"), ANSWER, stream=False).body)
    assert body["max_output_tokens"] == 10000
    assert json.loads(_ask(get_profile("gptoss-reference"), ANSWER, stream=False).body)["max_output_tokens"] == 131072


def test_contract_no_probes_fastapi_errors():
    profile = get_profile("gptoss-reference")
    assert profile.probe("GET", "/v1/models", ServerInfo(("gpt-oss-120b",), 0)) is None
    assert json.loads(profile.route_error(404, "GET", "/v1/models").body) == {"detail": "Not Found"}
    assert json.loads(profile.error(429, "Slow down").body) == {"detail": "Slow down"}
    invalid = profile.error(400, "Invalid request: input: Field required", param="input")
    assert invalid.status == 422 and json.loads(invalid.body)["detail"][0]["loc"] == ["body", "input"]
    with pytest.raises(ValueError):
        profile.surface("chat", ANSWER, None, RequestContext(IdSource(0, 0), 0, 0))


# --- Bad input: the reference server's own answers (seen from it: openai/gpt-oss@7b58334's
# gpt_oss.responses_api under uvicorn with a scripted backend, openai-harmony 0.0.8, pydantic
# 2.14.4, FastAPI 0.165; tools/goldens/gptoss_reference_server.py). Answered through MockServer
# with the raw JSON bytes, so the server core's checks run as they do for `mockoss serve`.

_PLAIN_500 = (500, b"Internal Server Error", "text/plain; charset=utf-8")


def _respond(raw: str, switches=None):
    from mockoss.scenario.loader import Step
    from mockoss.server.core import MockServer

    server = MockServer(profile="gptoss-reference", switches=switches or {}, request_log_limit=1)
    reply, _ = server.respond("responses", raw.encode(), {}, step=Step(index=0, completion=ANSWER, error=None))
    return reply


def _triple(reply):
    return reply.status, reply.body, dict(reply.headers).get("content-type")


@pytest.mark.parametrize("raw", [
    r'{"input":"\ud800"}',
    r'{"input":"\ud800","stream":true}',  # the prompt is rendered before the stream starts
    r'{"input":[{"role":"user","content":"\udc00x"}]}',
    r'{"input":[{"role":"user","content":[{"type":"input_text","text":"\ud800"}]}]}',
    r'{"input":[{"type":"function_call","name":"f","arguments":"{}","call_id":"c1"},{"type":"function_call_output","call_id":"c1","output":"\ud800"}]}',
    r'{"input":"hi","tools":[{"type":"function","name":"f","description":"\ud800","parameters":{}}]}',
    r'{"input":"hi","tools":[{"type":"function","name":"f","parameters":{"x":"\ud800"}}]}',
    r'{"input":"hi","instructions":"\ud800"}',
    r'{"input":"hi","previous_response_id":"\ud800"}',  # echoed: FastAPI cannot serialise the response
])
def test_lone_surrogate_the_server_cannot_render_is_starlettes_plain_500(raw):
    # openai-harmony hands the conversation to Rust as JSON, which refuses the lone escape
    # ("ValueError: invalid conversation JSON: unexpected end of hex escape"), inside the route.
    assert _triple(_respond(raw)) == _PLAIN_500


def test_lone_surrogate_in_echoed_id_of_a_stream_cuts_it_before_the_first_event():
    reply = _respond(r'{"input":"hi","stream":true,"previous_response_id":"\ud800"}')
    assert reply.status == 200 and reply.frames == () and reply.abort  # the real server: headers, then the connection drops


@pytest.mark.parametrize("raw", [
    r'{"input":"hi","model":"\ud800"}',  # never echoed: every response says gpt-oss-120b
    r'{"input":"hi","metadata":{"a":"\ud800"}}',  # read for __debug only, never echoed
    r'{"input":[{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"\ud800"}]},{"role":"user","content":"x"}]}',
])
def test_lone_surrogate_where_the_server_only_reads_is_answered(raw):
    reply = _respond(raw)
    assert reply.status == 200
    assert json.loads(reply.body)["output"][-1]["content"][0]["text"] == "Hi."


# (body, entries the real server listed, the entry for the offending field: loc after the item index, type, msg)
_UNION = "list[union[Item,ReasoningItem,FunctionCallItem,FunctionCallOutputItem,WebSearchCallItem,CodeInterpreterCallItem]]"


@pytest.mark.parametrize(("body", "count", "loc", "kind", "msg"), [
    ({"input": [{"role": "wizard", "content": "x"}]}, 13, ["Item", "role"], "literal_error", "Input should be 'user', 'assistant' or 'system'"),
    ({"input": [{"role": "user", "content": 5}]}, 14, ["Item", "content", "str"], "string_type", "Input should be a valid string"),
    ({"input": [{"type": "nope"}]}, 14, ["Item", "type"], "literal_error", "Input should be 'message'"),
    ({"input": [{"content": "x"}]}, 13, ["Item", "role"], "missing", "Field required"),
    ({"input": [{"type": "function_call", "arguments": "{}"}]}, 12, ["FunctionCallItem", "name"], "missing", "Field required"),
])
def test_badly_typed_input_items_get_fastapis_422_for_the_reference_models(body, count, loc, kind, msg):
    reply = _respond(json.dumps(body))
    assert reply.status == 422
    detail = json.loads(reply.body)["detail"]
    assert len(detail) == count
    assert detail[0] == {"type": "string_type", "loc": ["body", "input", "str"], "msg": "Input should be a valid string", "input": body["input"]}
    entry = next(e for e in detail if e["loc"] == ["body", "input", _UNION, 0, *loc])
    assert (entry["type"], entry["msg"]) == (kind, msg)


def test_request_fields_the_reference_accepts_and_those_its_route_trips_over():
    assert _respond('{"input":"hi","tools":null,"tool_choice":null}').status == 200  # Optional[...] in types.py
    assert _respond('{"input":"hi","top_p":"abc","max_output_tokens":0}').status == 200  # top_p is not a field; no bound on the limit
    assert json.loads(_respond('{"input":"hi","max_output_tokens":"500"}').body)["max_output_tokens"] == 500  # pydantic's lax int
    assert _triple(_respond('{"input":"hi","tools":null,"instructions":"x"}')) == _PLAIN_500  # for tool in body.tools
    assert _triple(_respond('{"input":"hi","metadata":null}')) == _PLAIN_500  # request_body.metadata.get("__debug")
    assert _triple(_respond('{"input":"hi","metadata":null,"stream":true}')) == _PLAIN_500
    described = '{"input":"hi","tools":[{"type":"function","name":"f","description":null,"parameters":{}}]}'
    assert _triple(_respond(described)) == _PLAIN_500  # openai-harmony's ToolDescription rejects description None
    literal = json.loads(_respond('{"input":"hi","tool_choice":"required"}').body)["detail"]
    assert literal == [{"type": "literal_error", "loc": ["body", "tool_choice"], "msg": "Input should be 'auto' or 'none'", "input": "required",
                        "ctx": {"expected": "'auto' or 'none'"}}]


@pytest.mark.parametrize(("switch", "value", "allowed"), [
    ("harmony_library", "bogus", "'openai-harmony-0.0.8' or 'oss-harmony'"),
    ("end_of_script", "bogus", "'return' or 'error'"),
    ("event_item_ids", "maybe", "true or false"),
    ("analysis_recipient_reasoning", 1, "true or false"),
    ("default_max_output_tokens", "abc", "a positive integer"),
    ("default_max_output_tokens", 0, "a positive integer"),
    ("conversation_start_date", "2025-13-01", "a date as YYYY-MM-DD"),
    ("conversation_start_date", 20250805, "a date as YYYY-MM-DD"),
])
def test_switch_values_are_checked_and_the_error_lists_the_allowed_ones(switch, value, allowed):
    from mockoss.profiles.registry import ProfileError

    with pytest.raises(ProfileError, match=f"{switch} must be {allowed}, got {value!r}"):
        get_profile("gptoss-reference", {switch: value})
    with pytest.raises(ProfileError):
        get_profile("gptoss-reference@0.0.8", {switch: value})


def test_bad_switch_header_is_an_error_reply_not_a_500():
    from mockoss.server.core import MockServer

    server = MockServer(profile="gptoss-reference", scenario="clean-answer")
    reply, _ = server.respond("responses", b'{"input":"hi"}', {"x-mockoss-switch": "harmony_library=bogus"})
    assert reply.status == 422
    assert "harmony_library must be 'openai-harmony-0.0.8' or 'oss-harmony'" in json.loads(reply.body)["detail"][0]["msg"]


def test_start_date_switch_given_as_yaml_date_is_the_prompts_date():
    import datetime

    profile = get_profile("gptoss-reference", {"conversation_start_date": datetime.date(2031, 2, 3)})
    assert profile.conversation_start_date == "2031-02-03"
    body = json.loads(_ask(profile, ANSWER, stream=False, metadata={"__debug": True}).body)
    assert "Current date: 2031-02-03" in body["metadata"]["__debug_input"]


@pytest.mark.parametrize(("raw", "status", "detail"), [
    (b"[1]", 422, [{"type": "model_attributes_type", "loc": ["body"], "msg": "Input should be a valid dictionary or object to extract fields from",
                    "input": [1]}]),
    (b"null", 422, [{"type": "model_attributes_type", "loc": ["body"], "msg": "Input should be a valid dictionary or object to extract fields from",
                     "input": None}]),
    (b"", 422, [{"type": "missing", "loc": ["body"], "msg": "Field required", "input": None}]),
    (b'{"input":"hi",}', 422, [{"type": "json_invalid", "loc": ["body", 14], "msg": "JSON decode error", "input": {},
                                "ctx": {"error": "Expecting property name enclosed in double quotes"}}]),
    (b'{"input":"\xff"}', 400, "There was an error parsing the body"),  # not UTF-8
    (b"[" * 100000 + b"]" * 100000, 400, "There was an error parsing the body"),  # too deep for json.loads
])
def test_body_that_is_not_a_json_object_gets_fastapis_answer(raw, status, detail):
    from mockoss.scenario.loader import Step
    from mockoss.server.core import MockServer

    server = MockServer(profile="gptoss-reference", request_log_limit=1)
    reply, _ = server.respond("responses", raw, {}, step=Step(index=0, completion=ANSWER, error=None))
    assert (reply.status, json.loads(reply.body)) == (status, {"detail": detail})


@pytest.mark.parametrize("raw", [r'{"input":[{"role":"wizard","content":"\ud800"}]}', r'{"input":"hi","tool_choice":"\ud800"}', r'[{"a":"\ud800"}]'])
def test_validation_error_echoing_a_lone_surrogate_is_a_plain_500(raw):
    assert _triple(_respond(raw)) == _PLAIN_500  # FastAPI cannot write the 422 it built


def test_long_input_list_is_validated_in_slices_with_the_same_result():
    from mockoss.profiles.gptoss_ref import request as validation

    items = [{"type": "function_call", "name": "f", "arguments": "{}"}, {"role": "assistant", "content": "x", "type": None}] * 400
    body = {"input": items, "max_output_tokens": "7"}
    checked, errors = validation.validation_errors(body)
    assert errors == [] and checked == validation.ResponsesRequest.model_validate(body, from_attributes=True)
    assert len(items) > validation.SLICE_ITEMS
    items[650] = {"role": "wizard", "content": "x"}
    _, errors = validation.validation_errors(body)  # a failing slice: pydantic's own locations for the whole body
    assert errors[1]["loc"][3:] == [650, "Item", "role"] and len(errors) == 13


def test_assistant_item_without_content_marks_the_message_before_it_final():
    # api_server.py: `messages[-1] = messages[-1].with_channel("final")` runs for an assistant item
    # that added no message, so the system message gets the channel: the real server counted 70
    # prompt tokens for this input against 68 for "hi" alone.
    def prompt(given):
        return json.loads(_ask(get_profile("gptoss-reference"), ANSWER, stream=False, input=given).body)["usage"]["input_tokens"]

    assert prompt([{"role": "assistant", "content": []}, {"role": "user", "content": "hi"}]) == prompt("hi") + 2 == 70


def test_reasoning_item_with_null_content_before_a_call_output_is_a_plain_500():
    items = [{"type": "reasoning", "summary": [], "content": None}, {"type": "function_call", "name": "f", "arguments": "{}"},
             {"type": "function_call_output", "output": "r"}]
    assert _triple(_respond(json.dumps({"input": items}))) == _PLAIN_500  # for content_item in item.content
    assert _respond(json.dumps({"input": [items[0], {"role": "user", "content": "x"}]})).status == 200  # not read: no call output last


def test_debug_prompt_puts_recipients_where_the_harmony_library_does():
    """openai-harmony 0.0.8 (the default) writes `` to=R`` after the role, oss-harmony 0.0.11
    after the channel: the same tokens (usage), another ``__debug_input``. Seen from the real server
    (tests/golden/chains-gptoss-reference/agent-loop.json, step 1) and by rendering one conversation
    with each library."""
    items = [{"role": "user", "content": "Weather?"},
             {"type": "function_call", "name": "get_weather", "arguments": "{}", "call_id": "call_1"},
             {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]
    default = json.loads(_ask(get_profile("gptoss-reference"), ANSWER, stream=False, input=items, metadata={"__debug": True}).body)
    fork = json.loads(_ask(get_profile("gptoss-reference", {"harmony_library": "oss-harmony"}), ANSWER, stream=False, input=items,
                           metadata={"__debug": True}).body)
    assert ("<|start|>assistant to=functions.get_weather<|channel|>commentary<|message|>{}<|call|>"
            "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>sunny<|end|>") in default["metadata"]["__debug_input"]
    assert ("<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{}<|call|>"
            "<|start|>functions.get_weather<|channel|>commentary to=assistant<|message|>sunny<|end|>") in fork["metadata"]["__debug_input"]
    assert default["usage"] == fork["usage"]


def test_a_recipient_holding_special_token_text_is_rendered_as_text() -> None:
    """A function name with ``<|end|>`` in it: openai-harmony's Rust renderer writes header text as
    ordinary tokens (``<|end|>`` as 5 text tokens), but mockoss encoded the moved `` to=…`` suffix
    with the Python ``encode()``'s default ``disallowed_special="all"``, which raised: an unscripted
    500 "mockoss internal error" (found this session while fixing the breaker's F1: that
    ``encode()`` also rebuilt its special-token regex on every call, 1.7 ms each, once per message
    with a recipient, so a 40-call agent turn held every client for 140-250 ms)."""
    from mockoss.harmony.encoding import load_encoding
    from mockoss.profiles.gptoss_ref.prompt import prompt_tokens

    name = "a<|end|>b"
    items = [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c", "name": name, "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "x"},
    ]
    tokens = prompt_tokens({"input": items}, "2025-08-05")
    encoding = load_encoding()
    text = encoding.decode(tokens)
    # openai-harmony 0.0.8's order: the recipient before <|channel|>, its "<|end|>" as text
    assert f"<|start|>assistant to=functions.{name}<|channel|>commentary" in text
    suffix = encoding.encode(f" to=functions.{name}", disallowed_special=())
    assert any(tokens[i : i + len(suffix)] == suffix for i in range(len(tokens)))
    reply = _respond(json.dumps({"model": "gpt-oss-120b", "input": items}))
    assert reply.status == 200, reply.body
