"""vLLM's own Responses output-mapping tests, converted: ``tests/entrypoints/openai/responses/
test_harmony_utils.py`` at vllm-project/vllm@0f9357a923067e0675da5a0fff8ec633d83316e2.

Upstream hands one Harmony ``Message`` to ``harmony_to_response_output(message, function_names,
incomplete=…)`` and asserts the output items. Here the message is written as the model's completion
and played through the ``vllm`` profile's ``/v1/responses`` (``MockServer.handle``): the declared
function tools are upstream's ``function_names``; a complete message ends with ``<|end|>`` (or
``<|call|>`` when addressed), an incomplete one is cut there by ``max_output_tokens`` (the request
ends inside the message, as a server sees it). ``response_previous_input_to_harmony`` cases go
through ``previous_input_messages``.

Left out (messages no completion produces): ``test_commentary_with_multiple_contents_and_no_recipient``
and ``test_commentary_with_multiple_function_calls`` (a message with several text contents; a
completion's message has one), ``test_non_assistant_message_returns_empty`` (a tool-authored message
in the model's own output).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from upstream_support import case

from mockoss.harmony.encoding import load_encoding

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conformance_support import frames, reply

SRC = "vllm-project/vllm@0f9357a923067e0675da5a0fff8ec633d83316e2:tests/entrypoints/openai/responses/test_harmony_utils.py"
T = "TestHarmonyToResponseOutput::"
CHANNELS = ("commentary", "comment", "analysis", "final")
WEATHER = '{"location": "San Francisco"}'


def _case(test: str, *values: Any, xfail: str | None = None) -> Any:
    return case("vllm", SRC, test, *values, xfail=xfail)


def output(
    header: str, content: str, *, tools=(), incomplete: bool = False, end: str = "<|end|>", target: str = "vllm"
) -> list[dict[str, Any]]:
    """The Responses ``output`` for a completion that is one message (``header`` after ``<|start|>assistant``)."""
    text = f"{header}<|message|>{content}"
    extra = {"max_output_tokens": len(load_encoding().encode(text, allowed_special="all"))} if incomplete else {}
    answer = reply(target, text if incomplete else text + end, endpoint="responses", tools=tools, **extra)
    assert answer.status == 200, answer.body
    return json.loads(answer.body)["output"]


def status(incomplete: bool) -> str:
    return "incomplete" if incomplete else "completed"


@pytest.mark.parametrize(
    "incomplete",
    [_case(f"{T}test_commentary_with_no_recipient_creates_message[{i}]", i) for i in (False, True)],
)
def test_commentary_with_no_recipient_creates_message(incomplete):
    text = "I will now search for the weather information."
    (item,) = output("<|channel|>commentary", text, incomplete=incomplete)
    assert (item["type"], item["role"], item["status"]) == ("message", "assistant", status(incomplete))
    assert [(c["type"], c["text"]) for c in item["content"]] == [("output_text", text)]


FUNCTION_RECIPIENTS = [
    ("functions.get_weather", (), "get_weather", WEATHER),
    ("get_weather", ("get_weather",), "get_weather", WEATHER),
    ("math.sum", ("math.sum",), "math.sum", '{"a": 1, "b": 2}'),
]


@pytest.mark.parametrize(
    ("channel", "recipient", "tools", "name", "content", "incomplete"),
    [
        _case(f"{T}test_function_recipient_creates_function_call[{i}-{rec}-{ch}]", ch, rec, tools, name, content, i)
        for ch in CHANNELS
        for rec, tools, name, content in FUNCTION_RECIPIENTS
        for i in (False, True)
    ],
)
def test_function_recipient_creates_function_call(channel, recipient, tools, name, content, incomplete):
    (item,) = output(
        f"<|channel|>{channel} to={recipient}", content, tools=tools, incomplete=incomplete, end="<|call|>"
    )
    assert (item["type"], item["name"], item["arguments"], item["status"]) == (
        "function_call",
        name,
        content,
        status(incomplete),
    )
    assert item["call_id"].startswith("call_") and item["id"].startswith("fc_")


BUILTINS = [
    ("python", "import numpy as np\nprint(np.array([1, 2, 3]))"),
    ("browser", "Navigating to the specified URL"),
    ("container", "Running command in container"),
]


@pytest.mark.parametrize(
    ("channel", "recipient", "content", "incomplete"),
    [
        _case(f"{T}test_builtin_recipient_creates_reasoning[{i}-{rec}-{ch}]", ch, rec, content, i)
        for ch in CHANNELS
        for rec, content in BUILTINS
        for i in (False, True)
    ],
)
def test_builtin_recipient_creates_reasoning(channel, recipient, content, incomplete):
    (item,) = output(f"<|channel|>{channel} to={recipient}", content, incomplete=incomplete, end="<|call|>")
    assert item["type"] == "reasoning"
    assert item["content"][0]["text"] == content
    assert item.get("status") is None


MCP_RECIPIENTS = [
    ("get_weather", (), '{"arg": "value"}', "get_weather", "get_weather"),
    ("not_get_weather", ("get_weather",), '{"arg": "value"}', "not_get_weather", "not_get_weather"),
    ("repo_browser.list", (), '{"cmd": "ls"}', "list", "repo_browser"),
]


@pytest.mark.parametrize(
    ("channel", "recipient", "tools", "content", "name", "label", "incomplete"),
    [
        _case(
            f"{T}test_non_function_non_builtin_recipient_creates_mcp_call[{i}-{rec}-{ch}]",
            ch,
            rec,
            tools,
            content,
            name,
            label,
            i,
        )
        for ch in CHANNELS
        for rec, tools, content, name, label in MCP_RECIPIENTS
        for i in (False, True)
    ],
)
def test_non_function_non_builtin_recipient_creates_mcp_call(
    channel, recipient, tools, content, name, label, incomplete
):
    (item,) = output(
        f"<|channel|>{channel} to={recipient}", content, tools=tools, incomplete=incomplete, end="<|call|>"
    )
    got = (item["type"], item["name"], item["server_label"], item["arguments"], item["status"])
    assert got == ("mcp_call", name, label, content, status(incomplete))


@pytest.mark.parametrize(
    "incomplete", [_case(f"{T}test_browser_search_recipient_respects_incomplete[{i}]", i) for i in (False, True)]
)
def test_browser_search_recipient_respects_incomplete(incomplete):
    items = output(
        "<|channel|>commentary to=browser.search",
        '{"query": "weather in San Francisco"}',
        incomplete=incomplete,
        end="<|call|>",
    )
    if incomplete:
        assert items == []
        return
    (item,) = items
    assert (item["type"], item["status"], item["action"]["type"]) == ("web_search_call", "completed", "search")
    assert item["action"]["query"] == "cursor:weather in San Francisco"


@pytest.mark.parametrize("x", [_case(f"{T}test_browser_find_recipient_uses_responses_action_type", None)])
def test_browser_find_recipient_uses_responses_action_type(x):
    (item,) = output("<|channel|>analysis to=browser.find", '{"pattern": "vLLM", "cursor": 42}', end="<|call|>")
    assert (item["type"], item["action"]["type"], item["action"]["pattern"]) == (
        "web_search_call",
        "find_in_page",
        "vLLM",
    )


@pytest.mark.parametrize("x", [_case(f"{T}test_commentary_with_empty_content_and_no_recipient", None)])
def test_commentary_with_empty_content_and_no_recipient(x):
    (item,) = output("<|channel|>commentary", "")
    assert item["type"] == "message" and item["content"][0]["text"] == ""


@pytest.mark.parametrize("x", [_case(f"{T}test_analysis_channel_creates_reasoning", None)])
def test_analysis_channel_creates_reasoning(x):
    (item,) = output("<|channel|>analysis", "Analyzing the problem step by step...")
    assert item["type"] == "reasoning" and item["content"][0]["text"] == "Analyzing the problem step by step..."


#: The fix these upstream tests pin is on vLLM's main branch after 0.33.0 (0.32.0 and 0.33.0 raise
#: ``Unknown channel``: a 400, the ``vllm`` default, checked below); it is the profile switch
#: ``responses_unknown_channel=drop`` (see :class:`mockoss.profiles.vllm.VllmProfile`).
DROP = "vllm responses_unknown_channel=drop"


@pytest.mark.parametrize(
    ("channel", "incomplete"),
    [
        _case(f"{T}test_unknown_channel_with_no_recipient_is_dropped[{i}-{ch}]", ch, i)
        for ch in ("comment", "commentaryanalysis")
        for i in (False, True)
    ],
)
def test_unknown_channel_with_no_recipient_is_dropped(channel, incomplete):
    assert output(f"<|channel|>{channel}", "some text", incomplete=incomplete, target=DROP) == []


@pytest.mark.parametrize("channel", ["comment", "commentaryanalysis"])
def test_released_vllm_answers_400_for_an_unknown_channel(channel):
    """vLLM 0.32.0/0.33.0 (the default): ``_parse_message_no_recipient`` raises, HTTP 400
    (vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/harmony.py)."""
    answer = reply("vllm", f"<|channel|>{channel}<|message|>some text<|end|>", endpoint="responses")
    assert answer.status == 400
    assert json.loads(answer.body)["error"]["message"] == f"Unknown channel: {channel}"


@pytest.mark.parametrize("x", [_case(f"{T}test_unknown_channel_does_not_affect_neighbouring_messages", None)])
def test_unknown_channel_does_not_affect_neighbouring_messages(x):
    items = output(
        "<|channel|>analysis",
        "thinking<|end|><|start|>assistant<|channel|>comment<|message|>stray text<|end|>"
        "<|start|>assistant<|channel|>final<|message|>answer",
        end="<|return|>",
        target=DROP,
    )
    assert [(i["type"], i["content"][0]["text"]) for i in items] == [("reasoning", "thinking"), ("message", "answer")]


# --------------------------------------------------------------------------- response_previous_input_to_harmony

P = "TestResponsePreviousInputToHarmony::"


@pytest.mark.parametrize(
    ("msg", "fragments"),
    [
        _case(
            f"{P}test_message_with_empty_content",
            {"role": "user", "content": ""},
            ["<|start|>user<|message|><|end|>"],
        ),
        _case(
            f"{P}test_tool_message_with_string_content",
            {"role": "tool", "name": "get_weather", "content": "The weather in San Francisco is sunny, 72°F"},
            ["<|start|>functions.get_weather", "The weather in San Francisco is sunny, 72°F"],
        ),
        _case(
            f"{P}test_tool_message_with_array_content",
            {
                "role": "tool",
                "name": "search_results",
                "content": [
                    {"type": "text", "text": "Result 1: "},
                    {"type": "text", "text": "Result 2: "},
                    {"type": "image", "url": "http://example.com/img.png"},
                    {"type": "text", "text": "Result 3"},
                ],
            },
            ["<|start|>functions.search_results", "Result 1: Result 2: Result 3"],
        ),
        _case(
            f"{P}test_tool_message_with_empty_content",
            {"role": "tool", "name": "empty_tool", "content": None},
            ["<|start|>functions.empty_tool"],
        ),
    ],
)
def test_response_previous_input_to_harmony(msg, fragments):
    from mockoss.harmony.prompt import render_responses_prompt

    body = {"model": "m", "input": "Next", "previous_input_messages": [msg]}
    rendered = load_encoding().decode(render_responses_prompt(body))
    assert all(fragment in rendered for fragment in fragments)


@pytest.mark.parametrize(
    "x",
    [
        _case(f"{P}test_chat_message_without_role_raises_validation_error", None)
    ],
)
def test_chat_message_without_role_is_a_400(x):
    answer = reply(
        "vllm",
        "<|channel|>final<|message|>ok<|return|>",
        endpoint="responses",
        previous_input_messages=[{"content": "hello, no role here"}],
    )
    assert answer.status == 400
    assert "Message has no 'role' key" in json.loads(answer.body)["error"]["message"]


# --------------------------------------------------------------------------- streaming events

EVENTS = "vllm-project/vllm@0af939b5d9d62089b07a13b6560e51bfce27cd7c:tests/entrypoints/openai/responses/test_streaming_events.py"
STREAM_BROWSER_FIND = (
    "vLLM 0.32.0/0.33.0 stream a browser.* message as an MCP call (emit_content_delta_events: a recipient "
    "that is not a function is_mcp_tool_by_namespace → mcp_call added/done), and add the web_search_call "
    "events only when a tool server serves 'browser' (emit_tool_action_events, "
    "vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/streaming_events.py); the vllm profile "
    "emulates no tool server, so it streams the mcp_call; the single web_search_call item (url from "
    "'cursor') this case pins is a later vLLM"
)


@pytest.mark.parametrize(
    "x", [case("vllm", EVENTS, "test_browser_find_uses_responses_action_type", None, xfail=STREAM_BROWSER_FIND)]
)
def test_streamed_browser_find_uses_responses_action_type(x):
    """Left out from that file: the ``split_delta`` / ``SimpleStreamingEventProcessor`` classes, which
    stream ``DeltaMessage`` objects of models with reasoning/tool parsers, not the Harmony path."""
    text = '<|channel|>analysis to=browser.find<|message|>{"pattern": "vLLM", "cursor": 42}<|call|>'
    items = []
    for frame in frames("vllm", text, endpoint="responses"):
        event = frame.split("\n", 1)[0].removeprefix("event: ")
        if event in ("response.output_item.added", "response.output_item.done"):
            items.append((event, json.loads(frame.split("data: ", 1)[1])["item"]))
    assert [event for event, _ in items] == ["response.output_item.added", "response.output_item.done"]
    for _, item in items:
        assert item["type"] == "web_search_call"
        assert item["action"] == item["action"] | {"type": "find_in_page", "pattern": "vLLM", "url": "cursor:42"}
