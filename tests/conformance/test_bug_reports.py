"""The public bug reports of harmony-and-servers.md §5 that concern a shipped profile: for each, the
output the report (and the reference's reading of the server's code) describes, per profile.

Rows 21–23 (Codex, Bedrock, LiteLLM) concern no shipped profile. Stream reports are checked frame
by frame: HTTP status, event order and the exact error frame.
"""

from __future__ import annotations

import json

import pytest
from conformance_support import (
    PEG_ERROR,
    Out,
    fail,
    frames,
    out,
    reply,
    sse_data,
    sse_events,
)

TOOL_HEADER_ERROR = (
    "<|channel|>analysis<|message|>Need to browse.<|end|><|start|>assistant<|channel|>commentary "
    'to=functions.web-browsing to=functions.web-browsing json<|message|>{"q":"x"}<|call|>'
)
HEADER_MESSAGE = 'unexpected tokens remaining in message header: Some("to=functions.web-browsing")'


# --------------------------------------------------------------------------- rows 1, 5, 7: HarmonyError on a tool header


@pytest.mark.parametrize(
    ("target", "status", "kind"),
    [
        # The reports ran releases that raised (vllm#51977 on 0.26.0); vLLM 0.32/0.33 skip the token
        # (HarmonyParser.process_chunk, vllm-project/vllm@v0.32.0:vllm/parser/harmony.py): switch harmony_errors=raise.
        pytest.param("vllm harmony_errors=raise", 500, "InternalServerError", id="vllm#51977-vllm-500"),
        pytest.param("vllm harmony_errors=raise harmony_error_status=400", 400, "BadRequestError", id="vllm#51977-vllm-400"),
    ],
)
def test_tool_header_error_is_the_nested_error_body(target, status, kind):
    """Row 5 (vllm#51977, v0.26.0): the mock target of §2.5, byte for byte."""
    answer = reply(target, TOOL_HEADER_ERROR, tools=["web-browsing"])
    assert answer.status == status
    assert json.loads(answer.body) == {"error": {"message": HEADER_MESSAGE, "type": kind, "param": None, "code": status}}


@pytest.mark.parametrize(
    ("target", "status", "kind"),
    [
        pytest.param("vllm harmony_errors=raise", 500, "InternalServerError", id="harmony#38-vllm-500"),
        pytest.param("vllm harmony_errors=raise harmony_error_status=400", 400, "BadRequestError", id="harmony#38-vllm-400"),
        # 2025: create_streaming_error_response's default status (BAD_REQUEST); the reference leaves
        # type and code open ("type": …, "code": …).
        pytest.param("vllm-2025", 400, "BadRequestError", id="harmony#38-vllm-2025"),
    ],
)
def test_header_error_in_a_chat_stream_is_an_error_chunk_after_http_200(target, status, kind):
    """Rows 1 and 7 (openai/harmony#38, vllm#57099): HTTP 200, the role chunk, the reasoning chunks,
    then ``data: {"error": {…}}`` (``json.dumps`` spacing) and ``data: [DONE]`` (§2.5)."""
    stream = frames(target, TOOL_HEADER_ERROR, tools=["web-browsing"])
    assert sse_data(stream[0])["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    deltas = [sse_data(f)["choices"][0]["delta"] for f in stream[1:-2]]
    assert "".join(d.get("reasoning", d.get("reasoning_content")) or "" for d in deltas) == "Need to browse."
    assert stream[-2] == (
        f'data: {{"error": {{"message": {json.dumps(HEADER_MESSAGE)}, "type": "{kind}", "param": null, '
        f'"code": {status}}}}}\n\n'
    )
    assert stream[-1] == "data: [DONE]\n\n"


@pytest.mark.parametrize(
    ("switch", "abort", "last_event"),
    [
        pytest.param("cut", HEADER_MESSAGE, "response.output_item.done", id="responses-stream-cut"),
        pytest.param("error_event", None, "error", id="responses-stream-error-event"),
    ],
)
def test_header_error_in_a_responses_stream(switch, abort, last_event):
    """Rows 5/7 on ``/v1/responses``: §2.4 says only ``GenerationError`` becomes an error event and
    "other exceptions propagate (exact framing unverified)", hence the switch: ``cut`` drops the
    connection after the reasoning item's events, ``error_event`` ends with an ``error`` event."""
    answer = reply(
        f"vllm harmony_errors=raise responses_stream_error={switch}", TOOL_HEADER_ERROR, endpoint="responses", tools=["web-browsing"], stream=True
    )
    events = sse_events([f.decode() for f in answer.frames])
    assert (answer.status, answer.abort, events[-1]) == (200, abort, last_event)
    assert events[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert "response.completed" not in events
    if last_event == "error":
        assert sse_data(answer.frames[-1].decode()) == {
            "code": "InternalServerError", "message": HEADER_MESSAGE, "param": None, "sequence_number": len(events) - 1, "type": "error",
        }


# --------------------------------------------------------------------------- row 2: stray token after end


def test_missing_start_is_unexpected_token_12606():
    """Row 2 (openai/harmony#60): ``…<|end|>commentary …`` → token 12606 (``comment``)."""
    text = "<|channel|>analysis<|message|>x<|end|>commentary to=functions.f json<|message|>{}<|call|>"
    assert out("vllm harmony_errors=raise", text, tools=["f"]) == fail(500, "Unexpected token 12606 while expecting start token 200006", "InternalServerError")


# --------------------------------------------------------------------------- row 3: constrained final → McpCall

CONSTRAINED_FINAL = (
    "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final <|constrain|>json<|message|>"
    '{"result":true}<|return|>'
)


def test_constrained_final_is_an_mcp_call_in_2025_responses():
    """Row 3 (vllm#45570): the non-streamed Responses output holds an ``mcp_call`` named
    ``<|constrain|>json`` (server_label the same) instead of a message."""
    item = json.loads(reply("vllm-2025", CONSTRAINED_FINAL, endpoint="responses").body)["output"][1]
    assert (item["type"], item["name"], item["server_label"], item["arguments"], item["status"]) == (
        "mcp_call", "<|constrain|>json", "<|constrain|>json", '{"result":true}', "completed",
    )
    assert item["id"].startswith("mcp_")


def test_constrained_final_vanishes_from_the_2025_responses_stream():
    """Reference §2.4 (streaming_events.py@01e4fce0, emit_content_delta_events): in the 2025
    stream a final message with a recipient emits no events at all."""
    events = sse_events(frames("vllm-2025", CONSTRAINED_FINAL, endpoint="responses"))
    assert not any(e.startswith(("response.output_text", "response.content_part")) for e in events)
    assert events[-1] == "response.completed"


# --------------------------------------------------------------------------- rows 4, 8: vLLM 0.10.1


def test_v0101_chat_rejects_more_than_two_messages():
    """Row 8 (vllm#22403, #22879): ``Expected 2 output messages (reasoning and final), but got 7.``
    as the launch build's flat error object."""
    text = "".join(
        f"<|start|>assistant<|channel|>{c}<|message|>m{i}<|end|>" for i, c in enumerate(["analysis", "commentary"] * 3)
    ).removeprefix("<|start|>assistant") + "<|start|>assistant<|channel|>final<|message|>done<|return|>"
    answer = reply("vllm-0.10.1", text)
    assert (answer.status, json.loads(answer.body)) == (
        400,
        {"object": "error", "message": "Expected 2 output messages (reasoning and final), but got 7.",
         "type": "BadRequestError", "param": None, "code": 400},
    )


def test_v0101_multi_turn_header_error():
    """Row 4 (vllm#23567, 0.10.1 chat): ``unexpected tokens remaining in message header``, HTTP 500."""
    text = "<|channel|>commentary to=functions.f <|constrain|> json<|message|>{}<|call|>"
    assert out("vllm-0.10.1", text, tools=["f"]) == fail(
        500, 'unexpected tokens remaining in message header: Some("to=functions.f")', "Internal Server Error"
    )


# --------------------------------------------------------------------------- row 6: stream error after the answer


def test_stray_return_fails_the_stream_after_the_content():
    """Row 6 (vllm#46464, 0.23): the content streams, then the HarmonyError chunk, then [DONE]."""
    stream = frames("vllm harmony_errors=raise", "<|channel|>final<|message|>Hi there<|end|><|return|>")
    content = "".join(sse_data(f)["choices"][0]["delta"].get("content", "") for f in stream[1:-2])
    assert content == "Hi there"
    assert sse_data(stream[-2])["error"]["message"] == "Unexpected token 200002 while expecting start token 200006"
    assert stream[-1] == "data: [DONE]\n\n"


# --------------------------------------------------------------------------- row 9: tool call in content too

CALL = '<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1,\n "b": 2}<|call|>'


@pytest.mark.parametrize(
    ("switch", "expected"),
    [
        pytest.param(True, Out(content='{"a": 1,\n "b": 2}', reasoning="x", calls=(("f", '{"a": 1,\n "b": 2}'),)), id="before-pr-25514"),
        pytest.param(False, Out(reasoning="x", calls=(("f", '{"a": 1, "b": 2}'),)), id="after-pr-25514"),
    ],
)
def test_tool_call_duplicated_in_content(switch, expected):
    """Row 9 (vllm#22337 → PR #25514): before the fix the raw arguments, newlines included, were
    also the content; after it the arguments are re-serialised and content is null."""
    assert out(f"vllm-2025 tool_call_in_content={str(switch).lower()}", CALL, tools=["f"]) == expected


# --------------------------------------------------------------------------- row 10: special tokens in names/content

GLUED = '<|channel|>commentary to=functions.bash<|channel|>commentary <|constrain|>json<|message|>{"cmd":"ls"}<|call|>'


@pytest.mark.parametrize(
    ("target", "endpoint", "expected"),
    [
        # The report's tool name comes from openai-harmony 0.0.8's header parse; vLLM 0.32/0.33 ship
        # oss-harmony 0.0.11, which cuts the second <|channel|> out (the tool `bash`).
        pytest.param("vllm harmony_library=openai-harmony-0.0.8", "chat", Out(calls=(("bash<|channel|>commentary", '{"cmd": "ls"}'),)), id="vllm#32587-vllm-chat"),
        pytest.param("vllm harmony_library=openai-harmony-0.0.8", "responses", Out(items=("function_call",), calls=(("bash<|channel|>commentary", '{"cmd":"ls"}'),)), id="vllm#32587-vllm-responses"),
        pytest.param("vllm", "chat", Out(calls=(("bash", '{"cmd": "ls"}'),)), id="oss-harmony-vllm-chat"),
        pytest.param("vllm-2025 harmony_library=openai-harmony-0.0.8", "chat", Out(reasoning='{"cmd":"ls"}', calls=(("bash<|channel|>commentary", '{"cmd": "ls"}'),)), id="vllm#32587-vllm-2025-chat"),
    ],
)
def test_control_tokens_in_the_tool_name(target, endpoint, expected):
    """Row 10 (vllm#32587): ``to=functions.bash<|channel|>commentary`` → tool ``bash<|channel|>commentary``
    (``_normalize_recipient`` does not strip ``<|channel|>``, §2.3)."""
    assert out(target, GLUED, endpoint=endpoint, tools=["bash"]) == expected


def test_channel_token_streams_inside_content():
    """Row 10: ``<|channel|>`` decoded as text inside the final message reaches streamed content."""
    stream = frames("vllm", "<|channel|>final<|message|>Hello <|channel|>commentary to=functions.x<|return|>")
    content = "".join(sse_data(f)["choices"][0]["delta"].get("content", "") for f in stream[1:-1] if "choices" in sse_data(f))
    assert content == "Hello <|channel|>commentary to=functions.x"


# --------------------------------------------------------------------------- row 11: silent null content

OPEN_HEADER = "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=functions.f"


@pytest.mark.parametrize(
    ("recovery", "expected"),
    [
        pytest.param("false", Out(reasoning="x"), id="vllm#45736"),
        pytest.param("true", Out(content="<|start|>assistant<|channel|>commentary to=functions.f", reasoning="x"), id="flush-raw-recovery"),
    ],
)
def test_output_ending_inside_a_header(recovery, expected):
    """Row 11 (vllm#45736): ``content: null`` with ``finish_reason: "stop"``; the later ``flush()``
    returns the raw header text as content (§2.3). The model of the report stopped there
    (``end_of_script_eos=false``: no ``<|endoftext|>`` from the scripted engine after it)."""
    target = f"vllm flush_raw_recovery={recovery} end_of_script_eos=false"
    assert out(target, OPEN_HEADER, tools=["f"]) == expected
    assert json.loads(reply(target, OPEN_HEADER).body)["choices"][0]["finish_reason"] == "stop"


# --------------------------------------------------------------------------- rows 12, 13: tool_choice

WEATHER_CALL = '<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}<|call|>'
PROSE = "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>Thanks!<|return|>"


@pytest.mark.parametrize(
    ("target", "calls"),
    [
        pytest.param("vllm", (), id="vllm-fixed"),
        pytest.param("vllm tool_choice_none=ignored", (("get_weather", '{"city": "Oslo"}'),), id="vllm#30867"),
        pytest.param("vllm-2025", (("get_weather", '{"city": "Oslo"}'),), id="vllm-2025"),
    ],
)
def test_tool_choice_none(target, calls):
    """Row 12 (vllm#30867): ``tool_choice: "none"`` was ignored; the fix drops parsed calls."""
    assert out(target, WEATHER_CALL, tools=["get_weather"], tool_choice="none").calls == calls


@pytest.mark.parametrize(
    ("target", "finish"),
    [
        pytest.param("vllm-2025", "stop", id="vllm#44216-vllm-2025"),
        pytest.param("vllm tool_choice_required=ignored", "stop", id="vllm#44216-switch"),
        # 0.32 said tool_calls for required + stop (vllm-project/vllm@v0.32.0:.../chat_completion/serving.py);
        # 0.33's resolve_finish_reason needs a call (vllm-project/vllm@v0.33.0:vllm/entrypoints/serve/utils/tool_calls_utils.py).
        pytest.param("vllm finish_tool_calls_needs_calls=false", "tool_calls", id="vllm-0.32-required-stop"),
        pytest.param("vllm", "stop", id="vllm-0.33-required-stop"),
    ],
)
def test_tool_choice_required_with_a_prose_reply(target, finish):
    """Row 13 (vllm#44216): prose, ``"tool_calls": []`` / none, ``finish_reason: "stop"``; vLLM 0.32
    reported ``tool_calls`` for required + stop (§2.3), 0.33 ``stop`` again."""
    choice = json.loads(reply(target, PROSE, tools=["get_weather"], tool_choice="required").body)["choices"][0]
    assert (choice["message"]["content"], choice["message"].get("tool_calls") or [], choice["finish_reason"]) == ("Thanks!", [], finish)


def test_vllm_2025_chat_message_always_carries_tool_calls():
    """Row 13's body: the 2025 message has ``"tool_calls": []`` when there are none."""
    message = json.loads(reply("vllm-2025", PROSE, tools=["get_weather"], tool_choice="required").body)["choices"][0]["message"]
    assert message["tool_calls"] == []


# --------------------------------------------------------------------------- row 14: built-in tools without tools


def test_browser_call_without_tools_is_a_web_search_call_with_a_cursor_query():
    """Row 14 (vllm#27385: a built-in tool called although no tools are declared). The mapping,
    ``browser.search`` → ``web_search_call`` with query ``cursor:…``, is the reference's §2.4 rule 2,
    not something the report shows."""
    text = '<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>analysis to=browser.search code<|message|>{"query":"oslo"}<|call|>'
    item = json.loads(reply("vllm", text, endpoint="responses").body)["output"][1]
    action = item["action"]
    assert (item["type"], item["status"], action["type"], action["query"]) == ("web_search_call", "completed", "search", "cursor:oslo")


# --------------------------------------------------------------------------- rows 15, 16: Ollama tool-call errors

NOT_JSON = "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=functions.terminal<|message|>ls -R\n<|call|>"
OLLAMA_ERROR = "error parsing tool call: raw='ls -R\n', err=invalid character 'l' looking for beginning of value"


def test_ollama_native_chat_answers_500_with_the_tool_call_error():
    """Row 16 (ollama#12884, continuedev/continue#10221): HTTP 500 ``{"error":"error parsing tool call: …"}``."""
    answer = reply("ollama", NOT_JSON, endpoint="ollama.chat", tools=["terminal"])
    assert (answer.status, json.loads(answer.body)) == (500, {"error": OLLAMA_ERROR})


def test_ollama_openai_chat_wraps_the_tool_call_error():
    """§3: on ``/v1`` the same error in ``{"error":{"message","type":"api_error","param":null,"code":null}}``."""
    answer = reply("ollama", NOT_JSON, tools=["terminal"])
    assert (answer.status, json.loads(answer.body)) == (
        500, {"error": {"message": OLLAMA_ERROR, "type": "api_error", "param": None, "code": None}},
    )


@pytest.mark.parametrize(
    ("target", "last"),
    [
        pytest.param("ollama tool_call_error=v0.11.3", {"error parsing tool call": "invalid character 'l' looking for beginning of value"}, id="ollama#11781"),
        pytest.param("ollama", {"error": OLLAMA_ERROR}, id="ollama-current"),
    ],
)
def test_ollama_stream_ends_with_one_error_line_at_http_200(target, last):
    """Row 15 (ollama#11781, #11704; PR #11861): the 0.11.3 NDJSON error line used the wrong key."""
    lines = [json.loads(line) for line in frames(target, NOT_JSON, endpoint="ollama.chat", tools=["terminal"])]
    assert lines[-1] == last
    assert [line["message"]["thinking"] for line in lines[:-1]] == ["x"]


# --------------------------------------------------------------------------- rows 17, 18: llama.cpp


def test_llamacpp_bare_final_is_the_peg_native_500():
    """Row 17 (llama.cpp#25321): the exact body of §4.1."""
    answer = reply("llamacpp", "The answer is 4.<|return|>")
    assert (answer.status, json.loads(answer.body)) == (500, {"error": {"code": 500, "message": PEG_ERROR, "type": "server_error"}})


def test_llamacpp_reasoning_format_none_keeps_markup_in_content():
    """Row 18 (llama.cpp PR #15181): ``<|channel|>analysis<|message|>{reasoning}<|end|>{final}``."""
    assert out("llamacpp reasoning_format=none", "<|channel|>analysis<|message|>The user asks.<|end|><|start|>assistant<|channel|>final<|message|>Hi.<|return|>") == Out(
        content="<|channel|>analysis<|message|>The user asks.<|end|>Hi."
    )


def test_llamacpp_analysis_only_is_reasoning_without_content():
    """An analysis-only completion under the default reasoning format: reasoning, empty content,
    no tools (mockoss's reading of the gpt-oss grammar; no report shows this configuration)."""
    assert out("llamacpp", "<|channel|>analysis<|message|>Thinking.<|end|>", tools=["f"]) == Out(content="", reasoning="Thinking.")


def test_llamacpp_analysis_only_with_reasoning_format_none_is_raw_markup_in_content():
    """Row 18 (llama.cpp#15789): the reporter ran ``--reasoning-format none``; the answer held only
    the analysis, as raw markup in ``content``, with no tool calls."""
    got = out("llamacpp reasoning_format=none", "<|channel|>analysis<|message|>Thinking.<|end|>", tools=["f"])
    assert got == Out(content="<|channel|>analysis<|message|>Thinking.<|end|>")


def test_llamacpp_rejects_channel_markup_echoed_back():
    """Reference §4.1 / §5 row 18 (llama.cpp PR #15091 thread): the gpt-oss chat template refuses
    leaked markup sent back in an assistant message, and llama-server answers HTTP 500. A launch
    build: minja, before llama.cpp patched the check out of the template at load (the default build
    answers 200; mockoss.profiles.llamacpp.template_checks)."""
    mock_body = {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "<|channel|>analysis<|message|>The user asks.<|end|>Hello"},
            {"role": "user", "content": "Again"},
        ]
    }
    answer = reply("llamacpp template_channel_check=true template_engine=minja", "<|channel|>final<|message|>Hi<|return|>", **mock_body)
    assert answer.status == 500
    assert json.loads(answer.body)["error"]["message"].startswith(
        "You have passed a message containing <|channel|> tags in the content field."
    )


# --------------------------------------------------------------------------- rows 19, 20: agents


@pytest.mark.parametrize("target", ["vllm", "ollama"])
def test_leaked_call_reaches_content_unchanged(target):
    """Row 19 (hermes-agent#84158, via Ollama/vLLM): ``to=functions.<tool> {...}`` is plain content."""
    text = '<|channel|>final<|message|>to=functions.terminal {"command":"ls"}<|return|>'
    assert out(target, text, tools=["terminal"]).content == 'to=functions.terminal {"command":"ls"}'


def test_commentary_preamble_streams_as_user_visible_text_before_the_call():
    """Row 20 (hermes-agent#24933): the preamble is a message item whose ``output_text`` deltas come
    before the function call's events (§2.4 event order)."""
    text = (
        "<|channel|>commentary<|message|>Need verify. Use terminal.<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.terminal <|constrain|>json<|message|>{"c":1}<|call|>'
    )
    events = sse_events(frames("vllm", text, endpoint="responses", tools=["terminal"]))
    start = ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]
    assert events[:4] == start
    text_done = events.index("response.output_text.done")
    assert events[text_done : text_done + 4] == [
        "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.output_item.added",
    ]
    assert events.index("response.function_call_arguments.delta") > text_done
    assert events[-3:] == ["response.function_call_arguments.done", "response.output_item.done", "response.completed"]
