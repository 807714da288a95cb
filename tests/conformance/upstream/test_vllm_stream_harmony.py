"""vLLM's own streaming-delta tests, converted: ``tests/entrypoints/openai/chat_completion/
test_serving_chat_stream_harmony.py`` at vllm-project/vllm@0847a95f7ff542cb8c7e8b517841c5a29d84ff1f.

Upstream calls ``extract_harmony_streaming_delta`` with hand-made token states (channel, recipient,
text) for one engine step and asserts the ``DeltaMessage`` it returns. Here the same channels,
recipients and texts are written as a Harmony completion and played through the ``vllm`` profile's
chat stream (``MockServer.handle``, ``stream: true``, the request declares the called functions).
One engine step with several tokens is the server's ``--stream-interval``: the profile's
``stream_interval`` switch groups token 0 alone and then ``N`` tokens per chunk, so a case whose
upstream step holds several token states runs with an interval that puts them in one chunk; a
"previous recipient" / "previous messages" case puts the earlier messages in earlier chunks. The
mocked ``make_tool_call_id`` is not reproduced: ids are checked for presence, not value.

Left out (token states no Harmony completion produces): ``test_final_channel_returns_content_delta[-]``
(an empty delta text on the final channel), ``test_tool_call_empty_arguments_returns_none`` (an
empty text on a tool call's channel) and ``test_returns_none_for_invalid_inputs[None-None]`` (a
token with no channel at all, outside a header).
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
from conformance_support import frames, sse_data

SRC = "vllm-project/vllm@0847a95f7ff542cb8c7e8b517841c5a29d84ff1f:tests/entrypoints/openai/chat_completion/test_serving_chat_stream_harmony.py"
ONE_STEP = 100_000  # a stream interval longer than any completion here: one chunk after token 0
ARGS = '{"location": "Paris"}'


def _case(test: str, *values: Any, xfail: str | None = None) -> Any:
    return case("vllm", SRC, test, *values, xfail=xfail)


def deltas(text: str, tools=(), interval: int = 1, **extra: Any) -> list[dict[str, Any]]:
    """The ``delta`` of every chunk after the role chunk that carries something."""
    target = f"vllm stream_interval={interval}" if interval > 1 else "vllm"
    out = []
    for frame in frames(target, text, tools=tools, **extra):
        data = sse_data(frame)
        if data == "[DONE]" or not data.get("choices"):
            continue
        delta = {k: v for k, v in data["choices"][0]["delta"].items() if v is not None}
        if delta and delta != {"role": "assistant", "content": ""}:
            out.append(delta)
    return out


def tokens(text: str) -> int:
    return len(load_encoding().encode(text, allowed_special="all"))


def calls(ds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [call for d in ds for call in d.get("tool_calls", ())]


# --------------------------------------------------------------------------- content and reasoning


@pytest.mark.parametrize(
    "text",
    [
        _case(
            "TestExtractHarmonyStreamingDelta::test_final_channel_returns_content_delta[Hello, world!-Hello, world!]",
            "Hello, world!",
        )
    ],
)
def test_final_channel_returns_content_delta(text):
    ds = deltas(f"<|channel|>final<|message|>{text}<|return|>", interval=ONE_STEP)
    assert ds == [{"content": text}]


@pytest.mark.parametrize(
    "include_reasoning",
    [
        _case("TestExtractHarmonyStreamingDelta::test_analysis_channel_reasoning[True-True]", True),
        _case("TestExtractHarmonyStreamingDelta::test_analysis_channel_reasoning[False-False]", False),
    ],
)
def test_analysis_channel_reasoning(include_reasoning):
    text = "Let me think..."
    ds = deltas(f"<|channel|>analysis<|message|>{text}<|end|>", include_reasoning=include_reasoning, interval=ONE_STEP)
    assert ds == ([{"reasoning": text}] if include_reasoning else [])


@pytest.mark.parametrize("x", [_case("TestExtractHarmonyStreamingDelta::test_returns_preambles_as_content", None)])
def test_returns_preambles_as_content(x):
    ds = deltas("<|channel|>commentary<|message|>some text<|end|>", include_reasoning=True, interval=ONE_STEP)
    assert ds == [{"content": "some text"}]


@pytest.mark.parametrize("x", [_case("TestExtractHarmonyStreamingDelta::test_consecutive_token_grouping", None)])
def test_consecutive_token_grouping(x):
    assert deltas("<|channel|>final<|message|>Hello, World<|return|>", interval=ONE_STEP) == [
        {"content": "Hello, World"}
    ]


@pytest.mark.parametrize(
    ("channel", "recipient"),
    [
        _case(
            "TestExtractHarmonyStreamingDelta::test_returns_none_for_invalid_inputs[unknown_channel-None]",
            "unknown_channel",
            None,
        ),
        _case(
            "TestExtractHarmonyStreamingDelta::test_returns_none_for_invalid_inputs[commentary-browser.search]",
            "commentary",
            "browser.search",
        ),
        _case(
            "TestExtractHarmonyStreamingDelta::test_returns_none_for_invalid_inputs[commentary-assistant]",
            "commentary",
            "assistant",
        ),
    ],
)
def test_returns_none_for_invalid_inputs(channel, recipient):
    header = f"<|channel|>{channel}" + (f" to={recipient}" if recipient else "")
    ds = deltas(f"{header}<|message|>some text<|end|>", include_reasoning=True)
    assert ds == []


# --------------------------------------------------------------------------- tool calls


def _new_call(channel: str, recipient: str, name: str, test: str):
    return _case(f"{test}[{channel}]", channel, recipient, name)


@pytest.mark.parametrize(
    ("channel", "recipient", "name"),
    [
        _new_call(
            "commentary", "functions.get_weather", "get_weather", "TestExtractHarmonyStreamingDelta::test_new_tool_call"
        ),
        _new_call(
            "analysis", "functions.get_weather", "get_weather", "TestExtractHarmonyStreamingDelta::test_new_tool_call"
        ),
        _new_call(
            "commentary",
            "get_weather",
            "get_weather",
            "TestExtractHarmonyStreamingDelta::test_new_tool_call_without_functions_prefix",
        ),
        _new_call(
            "analysis",
            "get_weather",
            "get_weather",
            "TestExtractHarmonyStreamingDelta::test_new_tool_call_without_functions_prefix",
        ),
        _new_call(
            "commentary",
            "math.sum",
            "math.sum",
            "TestExtractHarmonyStreamingDelta::test_new_tool_call_dotted_function_name",
        ),
        _new_call(
            "analysis",
            "math.sum",
            "math.sum",
            "TestExtractHarmonyStreamingDelta::test_new_tool_call_dotted_function_name",
        ),
        _new_call(
            "comment",
            "functions.get_weather",
            "get_weather",
            "TestToolCallsOnNonStandardChannels::test_prefixed_tool_call_on_comment_channel",
        ),
        _new_call(
            "comment",
            "get_weather",
            "get_weather",
            "TestToolCallsOnNonStandardChannels::test_bare_tool_call_on_comment_channel",
        ),
    ],
)
def test_new_tool_call(channel, recipient, name):
    """The header token of a call: id, type, name, empty arguments, index 0 (per-token stream)."""
    ds = deltas(f"<|channel|>{channel} to={recipient}<|message|>{ARGS}<|call|>", tools=[name])
    first = ds[0]["tool_calls"]
    assert len(first) == 1
    assert first[0]["id"] and first[0]["type"] == "function" and first[0]["index"] == 0
    assert first[0]["function"] == {"name": name, "arguments": ""}


@pytest.mark.parametrize(
    ("channel", "recipient", "name"),
    [
        _new_call(
            "commentary",
            "functions.get_weather",
            "get_weather",
            "TestExtractHarmonyStreamingDelta::test_tool_call_argument_streaming",
        ),
        _new_call(
            "analysis",
            "functions.get_weather",
            "get_weather",
            "TestExtractHarmonyStreamingDelta::test_tool_call_argument_streaming",
        ),
        _new_call(
            "commentary",
            "get_weather",
            "get_weather",
            "TestExtractHarmonyStreamingDelta::test_tool_call_argument_streaming_without_functions_prefix",
        ),
        _new_call(
            "analysis",
            "get_weather",
            "get_weather",
            "TestExtractHarmonyStreamingDelta::test_tool_call_argument_streaming_without_functions_prefix",
        ),
        _new_call(
            "comment",
            "functions.get_weather",
            "get_weather",
            "TestToolCallsOnNonStandardChannels::test_tool_call_arguments_on_comment_channel",
        ),
    ],
)
def test_tool_call_argument_streaming(channel, recipient, name):
    """The arguments, one engine step after the header (prev_recipient is the same call): no id,
    index 0, the whole text."""
    header = f"<|channel|>{channel} to={recipient}<|message|>"
    ds = deltas(header + ARGS + "<|call|>", tools=[name], interval=tokens(header) - 1)
    assert all(len(d["tool_calls"]) == 1 for d in ds)
    following = [d["tool_calls"][0] for d in ds[1:]]  # the steps after the header's (one, or two when
    assert following  # the arguments outgrow the interval)
    assert all("id" not in t and t["index"] == 0 and set(t["function"]) == {"arguments"} for t in following)
    assert "".join(t["function"]["arguments"] for t in following) == ARGS


@pytest.mark.parametrize(
    ("earlier", "recipient"),
    [
        _case(
            "TestExtractHarmonyStreamingDelta::test_tool_call_index_from_previous_messages",
            "<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>commentary to=functions.tool1<|message|>{}<|end|>"
            "<|start|>assistant<|channel|>final<|message|>ok<|end|>",
            "functions.tool2",
        ),
        _case(
            "TestExtractHarmonyStreamingDelta::test_tool_call_index_from_previous_messages_without_functions_prefix",
            "<|channel|>commentary to=tool1<|message|>{}<|end|>",
            "tool2",
        ),
        _case(
            "TestToolCallsOnNonStandardChannels::test_base_index_counts_tool_calls_on_comment_channel",
            "<|channel|>comment to=functions.tool1<|message|>{}<|end|>",
            "functions.tool2",
        ),
    ],
)
def test_tool_call_index_counts_previous_calls(earlier, recipient):
    text = f"{earlier}<|start|>assistant<|channel|>commentary to={recipient}<|message|>args<|call|>"
    got = calls(deltas(text, tools=["tool1", "tool2"]))
    second = [c for c in got if c.get("function", {}).get("name") == "tool2"]
    assert second and second[0]["index"] == 1
    assert all(c["index"] == 1 for c in got[got.index(second[0]) :])


BATCH_SPLIT = (
    "upstream's extract_harmony_streaming_delta (chat_completion/stream_harmony.py, gone from 0.32/0.33) "
    "returns a new call's header (id, name, arguments '') and its arguments as two tool_calls entries; "
    "vLLM 0.32/0.33 stream through HarmonyParser.parse_delta, which appends a chunk's argument deltas to "
    "the call's header entry (vllm-project/vllm@v0.33.0:vllm/parser/harmony.py), and so does the vllm "
    "profile (one entry with the name and the whole arguments; tests/profiles/test_vllm_stream_interval_calls.py)"
)


@pytest.mark.parametrize(
    "x", [_case("TestExtractHarmonyStreamingDelta::test_complex_batch_permutation", None, xfail=BATCH_SPLIT)]
)
def test_complex_batch_permutation(x):
    text = (
        "<|channel|>analysis<|message|>Reasoning about query...<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.search<|message|>{"query": "vllm"}<|end|>'
        "<|start|>assistant<|channel|>final<|message|>.<|return|>"
    )
    ds = deltas(text, tools=["search"], include_reasoning=True, interval=ONE_STEP)
    assert len(ds) == 1
    delta = ds[0]
    assert delta["reasoning"] == "Reasoning about query..."
    assert delta["content"] == "."
    header, payload = delta["tool_calls"]
    assert header["id"] and header["index"] == 0 and header["function"]["name"] == "search"
    assert "id" not in payload and payload["index"] == 0 and payload["function"]["arguments"] == '{"query": "vllm"}'


MULTI_CALL_STEP = (
    "the vllm profile now merges a chunk spanning several calls into one delta as vLLM 0.32/0.33's "
    "HarmonyParser.parse_delta does (vllm-project/vllm@v0.33.0:vllm/parser/harmony.py): content joined, "
    "tool_a's arguments as an index-only entry, one entry per new call with its name AND its arguments; "
    "upstream's older extract_harmony_streaming_delta (stream_harmony.py, gone from 0.32/0.33) also gives "
    "tool_b and tool_c a separate arguments-only entry, which this case checks"
)


@pytest.mark.parametrize(
    "x",
    [
        _case(
            "TestExtractHarmonyStreamingDelta::test_tool_call_index_consistency_with_ongoing_call",
            None,
            xfail=MULTI_CALL_STEP,
        )
    ],
)
def test_tool_call_index_consistency_with_ongoing_call(x):
    # Step 1 (padded with reasoning so that it is the longer one): a previous call and tool_a's header.
    step1 = (
        "<|channel|>analysis<|message|>" + "think " * 40 + "<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.previous_tool<|message|>{}<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.tool_a<|message|>"
    )
    step2 = (
        '{"key_a": "val_a"}<|end|><|start|>assistant<|channel|>final<|message|>Thinking...<|end|>'
        '<|start|>assistant<|channel|>commentary to=functions.tool_b<|message|>{"key_b": "val_b"}<|end|>'
        "<|start|>assistant<|channel|>final<|message|> Thinking again...<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.tool_c<|message|>{"key_c": "val_c"}<|call|>'
    )
    interval = tokens(step1) - 1  # token 0 alone, then step 1, then step 2 in one chunk
    assert tokens(step2) <= interval
    ds = deltas(step1 + step2, tools=["previous_tool", "tool_a", "tool_b", "tool_c"], interval=interval)
    delta = ds[-1]
    entries = delta["tool_calls"]
    tool_a = [t for t in entries if t["index"] == 1]
    assert tool_a and "id" not in tool_a[0] and tool_a[0]["function"]["arguments"] == '{"key_a": "val_a"}'
    b_header = next(t for t in entries if t.get("id") and t["function"].get("name") == "tool_b")
    assert b_header["index"] == 2
    assert (
        next(t for t in entries if t["index"] == 2 and "id" not in t)["function"]["arguments"] == '{"key_b": "val_b"}'
    )
    c_header = next(t for t in entries if t.get("id") and t["function"].get("name") == "tool_c")
    assert c_header["index"] == 3
    assert (
        next(t for t in entries if t["index"] == 3 and "id" not in t)["function"]["arguments"] == '{"key_c": "val_c"}'
    )
    assert delta["content"] == "Thinking... Thinking again..."
    assert json.dumps(delta)  # serialisable as sent
