"""vLLM's own Harmony-utils tests, converted: ``tests/entrypoints/openai/parser/test_harmony_utils.py``
at vllm-project/vllm@00b596beebf629ed652055b981f825df4c556896.

What each upstream class exercises, and what here reproduces it:

* ``parse_chat_input_to_harmony_message`` (``TestCommonParseInputToHarmonyMessage`` with the chat
  function, ``TestParseChatInputToHarmonyMessage``) → ``_chat_message`` of
  :mod:`mockoss.harmony.prompt.chat`, the rendering behind the ``vllm`` profile's ``prompt_tokens``.
* ``response_previous_input_to_harmony`` (the same common class with the Responses function) →
  :func:`mockoss.harmony.prompt.render_responses_prompt` with ``previous_input_messages``.
* ``auto_drop_analysis_messages`` → ``_drop_stale_analysis``.
* ``parse_chat_output`` (``TestParseChatOutput``) → the ``vllm`` profile's non-streamed chat reply
  (``MockServer.handle``): ``reasoning`` and ``content`` of the message.
* ``get_system_message`` (``TestGetSystemMessage``) → the rendered system message.
* ``response_input_to_harmony`` for reasoning items → ``_response_item`` of
  :mod:`mockoss.harmony.prompt.responses`.

Left out: ``test_pydantic_model_input`` (a Python object with ``model_dump`` in place of a dict; an
HTTP server only ever sees JSON) and ``test_has_custom_tools`` (an internal predicate with no output
of its own; its effect, the tools in the developer message, is covered by ``tests/harmony/test_prompt.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import Message, Role
from upstream_support import case

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.prompt import render_responses_prompt
from mockoss.harmony.prompt._common import _key, legacy_tool_call_headers
from mockoss.harmony.prompt.chat import _chat_message, _drop_stale_analysis
from mockoss.harmony.prompt.responses import _response_item, previous_input_message

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conformance_support import out

SRC = "vllm-project/vllm@00b596beebf629ed652055b981f825df4c556896:tests/entrypoints/openai/parser/test_harmony_utils.py"


def _case(test: str, *values: Any, xfail: str | None = None) -> Any:
    return case("vllm", SRC, test, *values, xfail=xfail)


def fields(message: Message) -> dict[str, Any]:
    """The fields ``verify_harmony_messages`` compares, plus the content parts."""
    return {
        "role": message.author.role.value,
        "name": message.author.name,
        "channel": message.channel,
        "recipient": message.recipient,
        "content_type": message.content_type,
        "texts": [getattr(part, "text", None) for part in message.content],
    }


def want(role: str, *texts: str, channel=None, recipient=None, content_type=None, name=None) -> dict[str, Any]:
    return {
        "role": role,
        "name": name,
        "channel": channel,
        "recipient": recipient,
        "content_type": content_type,
        "texts": list(texts),
    }


def chat(msg: dict[str, Any], tool_id_names: dict[str, str] | None = None) -> list[dict[str, Any]]:
    names = {_key(k): v for k, v in (tool_id_names or {}).items()}
    return [fields(m) for m in _chat_message(msg, names)]


# --------------------------------------------------------------------------- parse_chat_input_to_harmony_message

WEATHER = {"function": {"name": "get_weather", "arguments": '{"location": "San Francisco"}'}}
WEATHER_CALL = want(
    "assistant",
    '{"location": "San Francisco"}',
    channel="commentary",
    recipient="functions.get_weather",
    content_type="json",
)
THINKING = "I'm thinking about the user's question."

CHAT_INPUT = [
    _case(
        "TestCommonParseInputToHarmonyMessage::test_assistant_message_with_tool_calls[chat]",
        {
            "role": "assistant",
            "tool_calls": [WEATHER, {"function": {"name": "search_web", "arguments": '{"query": "latest news"}'}}],
        },
        None,
        [
            WEATHER_CALL,
            want(
                "assistant",
                '{"query": "latest news"}',
                channel="commentary",
                recipient="functions.search_web",
                content_type="json",
            ),
        ],
    ),
    _case(
        "TestCommonParseInputToHarmonyMessage::test_assistant_message_with_empty_tool_call_arguments[chat]",
        {"role": "assistant", "tool_calls": [{"function": {"name": "get_current_time", "arguments": None}}]},
        None,
        [want("assistant", "", channel="commentary", recipient="functions.get_current_time", content_type="json")],
    ),
    _case(
        "TestCommonParseInputToHarmonyMessage::test_system_message[chat]",
        {"role": "system", "content": "You are a helpful assistant"},
        None,
        "role:system",
        xfail=(
            "vLLM at this commit keeps a system message's role; vLLM 0.32.0 and 0.33.0 turn a non-leading "
            "system message into a developer message (parse_chat_input_to_harmony_message → "
            "get_system_or_developer_message, vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/parser/"
            "harmony_utils.py; a system message only with VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS set), "
            "and so does the vllm profile (mockoss/harmony/prompt/_common.py:_instruction_message)"
        ),
    ),
    _case(
        "TestCommonParseInputToHarmonyMessage::test_developer_message[chat]",
        {"role": "developer", "content": "Use concise language"},
        None,
        "role:developer",
    ),
    _case(
        "TestCommonParseInputToHarmonyMessage::test_user_message_with_string_content[chat]",
        {"role": "user", "content": "What's the weather in San Francisco?"},
        None,
        [want("user", "What's the weather in San Francisco?")],
    ),
    _case(
        "TestCommonParseInputToHarmonyMessage::test_user_message_with_array_content[chat]",
        {"role": "user", "content": [{"text": "What's in this image? "}, {"text": "Please describe it."}]},
        None,
        [want("user", "What's in this image? ", "Please describe it.")],
    ),
    _case(
        "TestCommonParseInputToHarmonyMessage::test_assistant_message_with_string_content[chat]",
        {"role": "assistant", "content": "Hello! How can I help you today?"},
        None,
        "assistant-text:Hello! How can I help you today?",
    ),
    _case(
        "TestCommonParseInputToHarmonyMessage::test_tool_call_with_missing_function_fields[chat]",
        {"role": "assistant", "tool_calls": [{"function": {}}]},
        None,
        [want("assistant", "", channel="commentary", recipient="functions.", content_type="json")],
    ),
    _case(
        "TestCommonParseInputToHarmonyMessage::test_array_content_with_missing_text[chat]",
        {"role": "user", "content": [{}, {"text": "actual text"}]},
        None,
        [want("user", "", "actual text")],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_user_message_with_empty_content",
        {"role": "user", "content": ""},
        None,
        [want("user", "")],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_user_message_with_none_content",
        {"role": "user", "content": None},
        None,
        [want("user", "")],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_assistant_message_with_empty_content",
        {"role": "assistant", "content": ""},
        None,
        [],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_assistant_message_with_none_content",
        {"role": "assistant", "content": None},
        None,
        [],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_assistant_message_with_content_but_empty_reasoning",
        {"role": "assistant", "content": "The answer is 4.", "reasoning": ""},
        None,
        [want("assistant", "The answer is 4.", channel="final")],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_assistant_message_with_reasoning_but_empty_content",
        {"role": "assistant", "reasoning": THINKING, "content": ""},
        None,
        [want("assistant", THINKING, channel="analysis")],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_assistant_message_with_reasoning_but_none_content",
        {"role": "assistant", "reasoning": THINKING, "content": None},
        None,
        [want("assistant", THINKING, channel="analysis")],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_assistant_message_with_tool_calls_but_no_content",
        {"role": "assistant", "tool_calls": [WEATHER]},
        None,
        [WEATHER_CALL],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_assistant_message_with_tool_calls_and_content",
        {"role": "assistant", "tool_calls": [WEATHER], "content": "I'll call the tool."},
        None,
        [want("assistant", "I'll call the tool.", channel="commentary"), WEATHER_CALL],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_assistant_message_with_tool_calls_and_reasoning",
        {"role": "assistant", "tool_calls": [WEATHER], "reasoning": "I should use the get_weather tool."},
        None,
        [want("assistant", "I should use the get_weather tool.", channel="analysis"), WEATHER_CALL],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_assistant_message_with_tool_calls_and_reasoning_and_content",
        {
            "role": "assistant",
            "tool_calls": [WEATHER],
            "reasoning": "I should use the get_weather tool.",
            "content": "I'll call the tool.",
        },
        None,
        [
            want("assistant", "I'll call the tool.", channel="commentary"),
            want("assistant", "I should use the get_weather tool.", channel="analysis"),
            WEATHER_CALL,
        ],
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_tool_message_with_string_content",
        {"role": "tool", "tool_call_id": "call_123", "content": "The weather in San Francisco is sunny, 72°F"},
        {"call_123": "get_weather"},
        "tool:functions.get_weather:The weather in San Francisco is sunny, 72°F",
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_tool_message_with_array_content",
        {
            "role": "tool",
            "tool_call_id": "call_123",
            "content": [
                {"type": "text", "text": "Result 1: "},
                {"type": "text", "text": "Result 2: "},
                {"type": "image", "url": "http://example.com/img.png"},
                {"type": "text", "text": "Result 3"},
            ],
        },
        {"call_123": "search_results"},
        "tool:functions.search_results:Result 1: Result 2: Result 3",
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_tool_message_with_empty_content",
        {"role": "tool", "tool_call_id": "call_123", "content": ""},
        {"call_123": "empty_tool"},
        "tool:functions.empty_tool:",
    ),
    _case(
        "TestParseChatInputToHarmonyMessage::test_tool_message_with_none_content",
        {"role": "tool", "tool_call_id": "call_123", "content": None},
        {"call_123": "empty_tool"},
        "tool:functions.empty_tool:",
    ),
]


@pytest.mark.parametrize(("msg", "tool_id_names", "expected"), CHAT_INPUT)
def test_parse_chat_input_to_harmony_message(msg, tool_id_names, expected):
    got = chat(msg, tool_id_names)
    if isinstance(expected, list):
        assert got == expected
    elif expected.startswith("role:"):  # upstream checks the count and the role only
        assert [m["role"] for m in got] == [expected.removeprefix("role:")]
    elif expected.startswith("assistant-text:"):  # count, role and text
        assert [(m["role"], m["texts"]) for m in got] == [("assistant", [expected.removeprefix("assistant-text:")])]
    else:  # verify_harmony_messages for a tool result: role, author name, content, channel
        _, name, text = expected.split(":", 2)
        assert [(m["role"], m["name"], m["texts"], m["channel"]) for m in got] == [("tool", name, [text], "commentary")]


# --------------------------------------------------------------------------- response_previous_input_to_harmony

#: The common class run with ``response_previous_input_to_harmony``: the same chat-format messages,
#: given as ``previous_input_messages``; what the upstream test asserts must reach the prompt.
PREVIOUS_INPUT = [
    (
        "test_assistant_message_with_tool_calls",
        CHAT_INPUT[0].values[0],
        ["to=functions.get_weather", "to=functions.search_web", "latest news"],
    ),
    (
        "test_assistant_message_with_empty_tool_call_arguments",
        CHAT_INPUT[1].values[0],
        ["to=functions.get_current_time"],
    ),
    ("test_system_message", CHAT_INPUT[2].values[0], ["You are a helpful assistant"]),
    ("test_developer_message", CHAT_INPUT[3].values[0], ["Use concise language"]),
    (
        "test_user_message_with_string_content",
        CHAT_INPUT[4].values[0],
        ["<|start|>user<|message|>What's the weather in San Francisco?"],
    ),
    (
        "test_user_message_with_array_content",
        CHAT_INPUT[5].values[0],
        ["What's in this image? ", "Please describe it."],
    ),
    ("test_assistant_message_with_string_content", CHAT_INPUT[6].values[0], ["Hello! How can I help you today?"]),
    ("test_tool_call_with_missing_function_fields", CHAT_INPUT[7].values[0], ["to=functions.<"]),
    ("test_array_content_with_missing_text", CHAT_INPUT[8].values[0], ["actual text"]),
]


@pytest.mark.parametrize(
    ("msg", "fragments"),
    [
        _case(f"TestCommonParseInputToHarmonyMessage::{name}[responses]", msg, frags)
        for name, msg, frags in PREVIOUS_INPUT
    ],
)
def test_response_previous_input_to_harmony(msg, fragments):
    """Upstream asserts what ``response_previous_input_to_harmony`` returns: here
    :func:`previous_input_message`'s messages, rendered. The rendered prompt then holds them, except
    system/developer messages, which ``construct_harmony_previous_input_messages`` leaves out
    (vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/harmony.py, same at v0.32.0).
    Messages are rendered as vLLM's ``render_for_completion`` renders them (legacy tool-call headers)."""
    enc = load_encoding()
    messages = previous_input_message(msg)
    converted = "".join(enc.decode(legacy_tool_call_headers(enc.render(m))) for m in messages)
    assert all(fragment in converted for fragment in fragments)
    body = {"model": "m", "input": "Next question", "previous_input_messages": [msg]}
    prompt = enc.decode(render_responses_prompt(body))
    in_prompt = msg["role"] not in ("system", "developer")
    assert all((fragment in prompt) is in_prompt for fragment in fragments)


# --------------------------------------------------------------------------- auto_drop_analysis_messages


def A(text: str, channel: str, role: Role = Role.ASSISTANT) -> Message:
    return Message.from_role_and_content(role, text).with_channel(channel)


T1, T2, T3 = "I'm thinking about the user's question.", "I'm thinking more.", "I'm thinking even more."
FOUR, HARDER = "The answer is 4.", "I should think harder."

AUTO_DROP = [
    _case("TestAutoDropAnalysisMessages::test_no_analysis_messages", [A(FOUR, "final")], [0]),
    _case("TestAutoDropAnalysisMessages::test_only_analysis_message", [A(T1, "analysis")], [0]),
    _case(
        "TestAutoDropAnalysisMessages::test_multiple_analysis_messages_without_final_message",
        [A(T1, "analysis"), A(T2, "analysis"), A(T3, "analysis")],
        [0, 1, 2],
    ),
    _case("TestAutoDropAnalysisMessages::test_only_final_message", [A(FOUR, "final")], [0]),
    _case(
        "TestAutoDropAnalysisMessages::test_drops_one_analysis_messages_before_final_message",
        [A(T1, "analysis"), A(FOUR, "final"), A(HARDER, "analysis")],
        [1, 2],
    ),
    _case(
        "TestAutoDropAnalysisMessages::test_drops_all_analysis_messages_before_final_message",
        [A(T1, "analysis"), A(T2, "analysis"), A(T3, "analysis"), A(FOUR, "final"), A(HARDER, "analysis")],
        [3, 4],
    ),
    _case(
        "TestAutoDropAnalysisMessages::test_multiple_analysis_messages_with_multiple_final_messages",
        [
            A(T1, "analysis"),
            A(T2, "analysis"),
            A(T3, "analysis"),
            A(FOUR, "final"),
            A(HARDER, "analysis"),
            A("The answer is 5.", "final"),
        ],
        [3, 5],
    ),
    _case(
        "TestAutoDropAnalysisMessages::test_drops_non_assistant_analysis_messages",
        [A("The tool thinks we should think harder.", "analysis", Role.TOOL), A(FOUR, "final")],
        [1],
    ),
]


@pytest.mark.parametrize(("messages", "kept"), AUTO_DROP)
def test_auto_drop_analysis_messages(messages, kept):
    assert _drop_stale_analysis(list(messages)) == [messages[i] for i in kept]


# --------------------------------------------------------------------------- parse_chat_output (through the chat reply)

CHAT_OUTPUT = [
    _case(
        "TestParseChatOutput::test_parse_chat_output_interrupted_first_message",
        "<|channel|>final<|message|>I'm in the middle of answering",
        None,
        "I'm in the middle of answering",
    ),
    _case(
        "TestParseChatOutput::test_parse_chat_output_interrupted_reasoning_first_message",
        "<|channel|>analysis<|message|>I'm in the middle of thinking",
        "I'm in the middle of thinking",
        None,
    ),
    _case(
        "TestParseChatOutput::test_parse_chat_output_complete_reasoning_interrupted_content",
        "<|channel|>analysis<|message|>I'm thinking.<|end|><|start|>assistant<|channel|>final<|message|>I'm in the middle of answering",
        "I'm thinking.",
        "I'm in the middle of answering",
    ),
    _case(
        "TestParseChatOutput::test_parse_chat_output_complete_content",
        "<|channel|>final<|message|>The answer is 4.<|end|>",
        None,
        "The answer is 4.",
    ),
    _case(
        "TestParseChatOutput::test_parse_chat_output_complete_commentary",
        "<|channel|>commentary<|message|>I need to call some tools.<|end|>",
        None,
        "I need to call some tools.",
    ),
    _case(
        "TestParseChatOutput::test_parse_chat_output_complete_reasoning",
        "<|channel|>analysis<|message|>I've thought hard about this.<|end|>",
        "I've thought hard about this.",
        None,
    ),
    _case(
        "TestParseChatOutput::test_parse_chat_output_complete_reasoning_and_content",
        "<|channel|>analysis<|message|>I've thought hard about this.<|end|><|start|>assistant<|channel|>final<|message|>The answer is 4.<|end|>",
        "I've thought hard about this.",
        "The answer is 4.",
    ),
    _case(
        "TestParseChatOutput::test_parse_chat_output_commentary_with_recipient_excluded",
        "<|channel|>commentary<|message|>Let me check the weather.<|end|><|start|>assistant to=functions.get_weather"
        '<|channel|>commentary<|message|>{"location": "SF"}<|end|>',
        None,
        "Let me check the weather.",
    ),
    _case(
        "TestParseChatOutput::test_parse_chat_output_interrupted_preamble",
        "<|channel|>commentary<|message|>I'll search for that",
        None,
        "I'll search for that",
    ),
    _case(
        "TestParseChatOutput::test_parse_chat_output_preamble_then_final",
        "<|channel|>commentary<|message|>Let me look that up.<|end|><|start|>assistant<|channel|>final<|message|>The answer is 42.<|end|>",
        None,
        "Let me look that up.\nThe answer is 42.",
    ),
]


@pytest.mark.parametrize(("text", "reasoning", "content"), CHAT_OUTPUT)
def test_parse_chat_output(text, reasoning, content):
    """The completion as the model's output (no tools declared): the chat message's two fields.

    Upstream hands the token ids straight to ``parse_chat_output``; an "interrupted" text (no
    ``<|end|>``) is what a server sees when ``max_tokens`` cuts the completion, so the request sets
    ``max_tokens`` to the text's token count (otherwise the scripted completion would go on to its
    stop token).
    """
    tokens = len(load_encoding().encode(text, allowed_special="all"))
    got = out("vllm", text, max_tokens=tokens)
    assert got.status == 200, got.error
    assert (got.reasoning, got.content) == (reasoning, content)


# --------------------------------------------------------------------------- get_system_message


@pytest.mark.parametrize(
    "tools",
    [
        _case("TestGetSystemMessage::test_commentary_channel_present_without_custom_tools", False),
        _case("TestGetSystemMessage::test_commentary_channel_present_with_custom_tools", True),
    ],
)
def test_system_message_channels(tools):
    from mockoss.harmony.prompt import render_chat_prompt

    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
    if tools:
        body["tools"] = [
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
        ]
    system = load_encoding().decode(render_chat_prompt(body)).split("<|end|>", 1)[0]
    assert "# Valid channels: analysis, commentary, final." in system


# --------------------------------------------------------------------------- response_input_to_harmony, reasoning items

REASONING_ITEMS = [
    _case(
        "TestResponseInputToHarmonyReasoningItem::test_reasoning_with_single_content",
        {"type": "reasoning", "id": "rs_123", "content": [{"type": "reasoning_text", "text": "Thinking step by step"}]},
        "Thinking step by step",
    ),
    _case(
        "TestResponseInputToHarmonyReasoningItem::test_reasoning_with_multiple_content_items",
        {
            "type": "reasoning",
            "id": "rs_123",
            "content": [
                {"type": "reasoning_text", "text": "First, let me analyze"},
                {"type": "reasoning_text", "text": "Second, I should consider"},
                {"type": "reasoning_text", "text": "Finally, the answer is"},
            ],
        },
        "First, let me analyze\nSecond, I should consider\nFinally, the answer is",
    ),
    _case(
        "TestResponseInputToHarmonyReasoningItem::test_reasoning_without_content_returns_none",
        {"type": "reasoning", "id": "rs_123", "summary": [{"type": "summary_text", "text": "Thinking about math"}]},
        None,
    ),
    _case(
        "TestResponseInputToHarmonyReasoningItem::test_reasoning_with_none_content_returns_none",
        {
            "type": "reasoning",
            "id": "rs_123",
            "content": None,
            "summary": [{"type": "summary_text", "text": "Thinking about math"}],
        },
        None,
    ),
    _case(
        "TestResponseInputToHarmonyReasoningItem::test_reasoning_with_empty_content_returns_none",
        {"type": "reasoning", "id": "rs_123", "content": []},
        None,
    ),
]


@pytest.mark.parametrize(("item", "text"), REASONING_ITEMS)
def test_response_input_reasoning_item(item, text):
    msg = _response_item(item, {})
    if text is None:
        assert msg is None
    else:
        assert msg is not None
        assert (msg.author.role, msg.channel, msg.content[0].text) == (Role.ASSISTANT, "analysis", text)
