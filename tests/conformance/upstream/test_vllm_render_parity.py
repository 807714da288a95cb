"""vLLM's own chat/Responses render-parity and input-validation tests, converted:

* ``tests/entrypoints/openai/parser/test_harmony_render_parity.py`` at
  vllm-project/vllm@2506874329a019238f255fb8227ba1f9fc61998b: the chat input path
  (``parse_chat_input_to_harmony_message``) and the Responses input path
  (``response_input_to_harmony``) give the same Harmony messages and the same rendered prompt.
  Here: ``_chat_message`` of :mod:`mockoss.harmony.prompt.chat` and ``_response_item`` of
  :mod:`mockoss.harmony.prompt.responses` (the rendering behind the ``vllm`` profile's
  ``prompt_tokens``), rendered with openai-harmony's ``render_conversation_for_completion`` after
  the system message vLLM builds for a fixed date.
* ``tests/entrypoints/openai/parser/test_harmony_validation.py`` at
  vllm-project/vllm@27bad8e4e24419ba319ed0682430481f16415061: an unsupported content-part type is a
  validation error (HTTP 400 naming the part type). Here: the ``vllm`` profile's reply to the
  same request (``MockServer.handle``).

Left out: ``tests/entrypoints/openai/parser/test_responses_parser_json_fallback.py`` (the
``ResponsesParser`` of models with a tool parser, not the Harmony path gpt-oss takes).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import Conversation, Message, Role
from upstream_support import case

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.prompt._common import _key, _system_message
from mockoss.harmony.prompt.chat import _chat_message
from mockoss.harmony.prompt.responses import _response_item

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conformance_support import reply

PARITY = "vllm-project/vllm@2506874329a019238f255fb8227ba1f9fc61998b:tests/entrypoints/openai/parser/test_harmony_render_parity.py"
VALIDATION = "vllm-project/vllm@27bad8e4e24419ba319ed0682430481f16415061:tests/entrypoints/openai/parser/test_harmony_validation.py"
DATE = "2025-01-01"
WEATHER_ARGS = '{"location": "Paris"}'
FORECAST_ARGS = '{"location": "Paris", "days": 7}'


def render(messages: list[Message]) -> list[int]:
    conversation = Conversation.from_messages([_system_message(None, DATE), *messages])
    return load_encoding().render_conversation_for_completion(conversation, Role.ASSISTANT)


def chat_path(msgs: list[dict[str, Any]], tool_id_names: dict[str, str] | None = None) -> list[Message]:
    names = {_key(k): v for k, v in (tool_id_names or {}).items()}
    return [m for msg in msgs for m in _chat_message(msg, names)]


def responses_path(items: list[dict[str, Any]], calls_by_id: dict[str, str] | None = None) -> list[Message]:
    names = {_key(k): v for k, v in (calls_by_id or {}).items()}
    out = [_response_item(item, names) for item in items]
    assert all(m is not None for m in out)
    return out  # type: ignore[return-value]


def fields(m: Message) -> dict[str, Any]:
    part = m.content[0]
    text = getattr(part, "instructions", None) if m.author.role == Role.DEVELOPER else getattr(part, "text", None)
    return {
        "role": m.author.role.value,
        "name": m.author.name,
        "channel": m.channel,
        "recipient": m.recipient,
        "content_type": m.content_type,
        "text": text,
    }


def want(role: str, text: str, **kw: Any) -> dict[str, Any]:
    return {"role": role, "name": None, "channel": None, "recipient": None, "content_type": None, "text": text} | kw


CALL = {"id": "call_1", "function": {"name": "get_weather", "arguments": WEATHER_ARGS}}
CALL_MSG = want("assistant", WEATHER_ARGS, channel="commentary", recipient="functions.get_weather", content_type="json")
T = "TestResponseInputToHarmonyRenderParity::"

SINGLE = [
    case(
        "vllm",
        PARITY,
        T + "test_developer_message",
        [{"role": "developer", "content": "Be concise."}],
        [{"type": "message", "role": "developer", "content": "Be concise."}],
        {},
        [want("developer", "Be concise.")],
    ),
    case(
        "vllm",
        PARITY,
        T + "test_user_message",
        [{"role": "user", "content": "What's the weather in Paris?"}],
        [{"type": "message", "role": "user", "content": "What's the weather in Paris?"}],
        {},
        [want("user", "What's the weather in Paris?")],
    ),
    case(
        "vllm",
        PARITY,
        T + "test_assistant_final_message",
        [{"role": "assistant", "content": "It is 18°C in Paris."}],
        [{"type": "message", "role": "assistant", "content": "It is 18°C in Paris."}],
        {},
        [want("assistant", "It is 18°C in Paris.", channel="final")],
    ),
    case(
        "vllm",
        PARITY,
        T + "test_reasoning_item",
        [{"role": "assistant", "reasoning": "I should call get_weather.", "content": ""}],
        [{"type": "reasoning", "content": [{"type": "reasoning_text", "text": "I should call get_weather."}]}],
        {},
        [want("assistant", "I should call get_weather.", channel="analysis")],
    ),
    case(
        "vllm",
        PARITY,
        T + "test_function_call",
        [{"role": "assistant", "tool_calls": [CALL]}],
        [{"type": "function_call", "name": "get_weather", "arguments": WEATHER_ARGS}],
        {},
        [CALL_MSG],
    ),
    case(
        "vllm",
        PARITY,
        T + "test_tool_output",
        [{"role": "tool", "tool_call_id": "call_1", "content": "18°C, clear skies."}],
        [{"type": "function_call_output", "call_id": "call_1", "output": "18°C, clear skies."}],
        {"call_1": "get_weather"},
        [want("tool", "18°C, clear skies.", name="functions.get_weather", channel="commentary", recipient="assistant")],
    ),
    case(
        "vllm",
        PARITY,
        T + "test_reasoning_combined_with_function_call",
        [{"role": "assistant", "reasoning": "I should get the weather for Paris.", "tool_calls": [CALL]}],
        [
            {
                "type": "reasoning",
                "content": [{"type": "reasoning_text", "text": "I should get the weather for Paris."}],
            },
            {"type": "function_call", "name": "get_weather", "arguments": WEATHER_ARGS},
        ],
        {},
        [want("assistant", "I should get the weather for Paris.", channel="analysis"), CALL_MSG],
    ),
]


@pytest.mark.parametrize(("chat_msgs", "items", "calls", "expected"), SINGLE)
def test_render_parity(chat_msgs, items, calls, expected):
    from_chat = chat_path(chat_msgs, calls)
    from_responses = responses_path(items, calls)
    assert [fields(m) for m in from_chat] == expected
    assert [fields(m) for m in from_responses] == expected
    assert render(from_chat) == render(from_responses)


@pytest.mark.parametrize("x", [case("vllm", PARITY, T + "test_full_multi_turn_tool_call_conversation", None)])
def test_full_multi_turn_tool_call_conversation(x):
    answer = "It is currently 18°C in Paris with clear skies."
    from_chat = chat_path(
        [
            {"role": "user", "content": "What's the weather in Paris?"},
            {"role": "assistant", "reasoning": "I should call get_weather for Paris.", "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18°C, clear skies."},
            {"role": "assistant", "content": answer},
        ],
        {"call_1": "get_weather"},
    )
    from_responses = responses_path(
        [
            {"type": "message", "role": "user", "content": "What's the weather in Paris?"},
            {
                "type": "reasoning",
                "content": [{"type": "reasoning_text", "text": "I should call get_weather for Paris."}],
            },
            {"type": "function_call", "name": "get_weather", "arguments": WEATHER_ARGS},
            {"type": "function_call_output", "call_id": "call_1", "output": "18°C, clear skies."},
            {"type": "message", "role": "assistant", "content": answer},
        ],
        {"call_1": "get_weather"},
    )
    assert render(from_chat) == render(from_responses)


@pytest.mark.parametrize("x", [case("vllm", PARITY, T + "test_multi_turn_two_tool_calls_with_reasoning_between", None)])
def test_multi_turn_two_tool_calls_with_reasoning_between(x):
    first, second = "I need current weather first.", "Now I need the weekly forecast."
    names = {"call_1": "get_weather", "call_2": "get_forecast"}
    forecast = {"id": "call_2", "function": {"name": "get_forecast", "arguments": FORECAST_ARGS}}
    from_chat = chat_path(
        [
            {"role": "user", "content": "What's the weather and forecast for Paris?"},
            {"role": "assistant", "reasoning": first, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18°C, clear skies."},
            {"role": "assistant", "reasoning": second, "tool_calls": [forecast]},
            {"role": "tool", "tool_call_id": "call_2", "content": "Mon 17°C, Tue 19°C, Wed 16°C"},
        ],
        names,
    )
    from_responses = responses_path(
        [
            {"type": "message", "role": "user", "content": "What's the weather and forecast for Paris?"},
            {"type": "reasoning", "content": [{"type": "reasoning_text", "text": first}]},
            {"type": "function_call", "name": "get_weather", "arguments": WEATHER_ARGS},
            {"type": "function_call_output", "call_id": "call_1", "output": "18°C, clear skies."},
            {"type": "reasoning", "content": [{"type": "reasoning_text", "text": second}]},
            {"type": "function_call", "name": "get_forecast", "arguments": FORECAST_ARGS},
            {"type": "function_call_output", "call_id": "call_2", "output": "Mon 17°C, Tue 19°C, Wed 16°C"},
        ],
        names,
    )
    tokens = render(from_chat)
    assert tokens == render(from_responses)
    prompt = load_encoding().decode(tokens)
    assert first in prompt and second in prompt


@pytest.mark.parametrize("x", [case("vllm", PARITY, T + "test_completed_turns_drop_reasoning", None)])
def test_completed_turns_drop_reasoning(x):
    from mockoss.harmony.prompt import render_chat_prompt, render_responses_prompt

    first, second = "FIRST_TURN_REASONING", "SECOND_TURN_REASONING"
    call = {"id": "call_1", "function": {"name": "calc", "arguments": '{"a":3,"b":3}'}}
    chat_messages = [
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "reasoning": first, "content": "The answer is 4."},
        {"role": "user", "content": "Now what is 3+3?"},
        {"role": "assistant", "reasoning": second, "tool_calls": [call]},
    ]
    previous = [
        {"author": {"role": "user"}, "content": [{"type": "text", "text": "What is 2+2?"}]},
        {"author": {"role": "assistant"}, "channel": "analysis", "content": [{"type": "text", "text": first}]},
        {
            "author": {"role": "assistant"},
            "channel": "final",
            "content": [{"type": "text", "text": "The answer is 4."}],
        },
        {"author": {"role": "user"}, "content": [{"type": "text", "text": "Now what is 3+3?"}]},
        {"author": {"role": "assistant"}, "channel": "analysis", "content": [{"type": "text", "text": second}]},
        {
            "author": {"role": "assistant"},
            "channel": "commentary",
            "recipient": "functions.calc",
            "content_type": "json",
            "content": [{"type": "text", "text": '{"a":3,"b":3}'}],
        },
    ]
    enc = load_encoding()
    chat_prompt = enc.decode(render_chat_prompt({"model": "m", "messages": chat_messages}))
    responses_prompt = enc.decode(
        render_responses_prompt({"model": "m", "input": [], "previous_input_messages": previous})
    )
    assert first not in chat_prompt and second in chat_prompt
    assert first not in responses_prompt and second in responses_prompt


# --------------------------------------------------------------------------- validation

NO_PART_CHECK = (
    "a later vLLM check (this commit) on the Harmony input path; vLLM 0.32.0 and 0.33.0 raise "
    "\"Unsupported chat content part type\" only in the generic chat renderer gpt-oss does not take "
    "(vllm-project/vllm@v0.33.0:vllm/renderers/chat_utils/chat_message.py); their Harmony converters read "
    "each part's 'text' whatever its type (vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/parser/"
    "harmony_utils.py, responses/harmony.py), so the request is rendered and answered 200, as the vllm profile does"
)
PDF = {"filename": "test.pdf", "file_data": "data:application/pdf;base64,dGVzdA=="}


@pytest.mark.parametrize(
    ("endpoint", "extra", "part_type"),
    [
        case(
            "vllm",
            VALIDATION,
            "test_parse_chat_input_unsupported_content_type",
            "chat",
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_file", "file": PDF},
                            {"type": "text", "text": "Summarize the document"},
                        ],
                    }
                ]
            },
            "input_file",
            xfail=NO_PART_CHECK,
        ),
        case(
            "vllm",
            VALIDATION,
            "test_response_previous_input_unsupported_content_type",
            "responses",
            {"previous_input_messages": [{"role": "user", "content": [{"type": "file", "file": PDF}]}]},
            "file",
            xfail=NO_PART_CHECK,
        ),
        case(
            "vllm",
            VALIDATION,
            "test_response_input_unsupported_content_type",
            "responses",
            {"input": [{"type": "message", "role": "user", "content": [{"type": "invalid_type", "text": "test"}]}]},
            "invalid_type",
            xfail=(
                "vLLM 0.33.0 rejects this body earlier, in its request model (ResponsesRequest: the part type "
                "matches no input type), with a 400 listing pydantic's validation errors, not this message "
                "(checked by validating the body with vllm 0.33.0's ResponsesRequest); the vllm profile answers "
                "200 (mockoss's request schema is lenient there); the upstream message is a later vLLM check"
            ),
        ),
    ],
)
def test_unsupported_content_part_type_is_a_400(endpoint, extra, part_type):
    answer = reply("vllm", "<|channel|>final<|message|>ok<|return|>", endpoint=endpoint, **extra)
    assert answer.status == 400
    error = json.loads(answer.body)["error"]
    assert f"Unsupported chat content part type: '{part_type}'" in error["message"]
