"""The SGLang-only exchanges of a golden case: request options only SGLang's serving code reads.

:func:`mockoss.golden.cases.exchanges` is the matrix every server's goldens share. SGLang's
``ChatCompletionRequest`` (sgl-project/sglang v0.5.23, ``python/sglang/srt/entrypoints/openai/
protocol.py:909``) reads more: ``separate_reasoning`` and ``stream_reasoning`` (lines 1018-1019),
``stream_options.continuous_usage_stats`` (line 234), and ``OpenAIServingChat`` streams a required
or named ``tool_choice`` through its own path (``serving_chat.py``: ``_process_tool_calls`` and the
stream's tool-call branch). :func:`sglang_exchanges` asks each case those ways as well, after the
shared matrix; ``tools/goldens/sglang_serving_code.py`` records them and
``tests/golden/test_sglang_serving_goldens.py`` checks the goldens hold exactly these requests.

Exchange ids follow the shared pattern ``<endpoint>-<stream|nostream>-<tools|notools>-<option>``.
"""

from __future__ import annotations

from typing import Any

from mockoss.golden.cases import (
    CHAT,
    MODEL,
    RESPONSES,
    USER_MESSAGE,
    Case,
    Exchange,
    _chat_body,
    _responses_body,
    _tool_definition,
    cut_point,
    exchanges,
)

__all__ = ["PROMPT_CASE", "sglang_exchanges"]

#: The case that also carries the prompt-shape exchanges (:func:`_prompt_shapes`).
PROMPT_CASE = "scenario-clean-answer-0"

_USAGE = {"include_usage": True, "continuous_usage_stats": True}


def _variants(case: Case) -> tuple[Exchange, ...]:
    limit = cut_point(case)
    named = {"type": "function", "function": {"name": case.tools[0]}}
    chat = (
        ("chat-stream-tools-usage", {"stream_options": _USAGE}),
        ("chat-stream-notools-max-tokens", {"max_tokens": limit, "stream_options": {"include_usage": True}}),
        ("chat-stream-tools-choice-required", {"tool_choice": "required"}),
        ("chat-stream-tools-no-stream-reasoning", {"stream_reasoning": False}),
        ("chat-nostream-tools-no-separate-reasoning", {"separate_reasoning": False}),
        ("chat-stream-tools-no-separate-reasoning", {"separate_reasoning": False}),
        ("chat-nostream-tools-choice-named", {"tool_choice": named}),
    )
    out = []
    for ident, options in chat:
        stream = "-stream-" in ident
        tools = case.tools if "-tools-" in ident else ()
        out.append(Exchange(ident, CHAT, stream, _chat_body(tools, stream=stream, **options)))
    out.append(
        Exchange(
            "responses-stream-notools-max-tokens",
            RESPONSES,
            True,
            _responses_body((), stream=True, max_output_tokens=limit),
        )
    )
    return tuple(out)


def _prompt_shapes() -> tuple[Exchange, ...]:
    """Chat requests whose prompt SGLang renders with the model's chat template (conversations,
    tool turns, tool schemas): what ``usage.prompt_tokens`` and a template error depend on."""
    user = {"role": "user", "content": USER_MESSAGE}
    weather = [_tool_definition("get_weather", chat=True)]
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
            }
        ],
    }
    result = {"role": "tool", "tool_call_id": "call_1", "content": "15 C"}
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["c", "f"]},
            "days": {"type": ["integer", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "where": {"type": "object", "properties": {"lat": {"type": "number"}}},
        },
    }
    schemas = [
        {"type": "function", "function": {"name": "forecast", "description": "A forecast.", "parameters": schema}}
    ]
    bare = [
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}
    ]
    shapes: tuple[tuple[str, dict[str, Any]], ...] = (
        ("system", {"messages": [{"role": "system", "content": "Be brief."}, user]}),
        ("developer", {"messages": [{"role": "developer", "content": "Be brief."}, user]}),
        (
            "two-turns",
            {"messages": [user, {"role": "assistant", "content": "Sunny."}, {"role": "user", "content": "Tomorrow?"}]},
        ),
        ("tool-result", {"messages": [user, call, result], "tools": weather}),
        (
            "tool-result-reasoning",
            {"messages": [user, {**call, "reasoning_content": "Need the weather."}, result], "tools": weather},
        ),
        ("effort-low", {"messages": [user], "reasoning_effort": "low"}),
        ("schema-kinds", {"messages": [user], "tools": schemas}),
        ("tool-without-description", {"messages": [user], "tools": bare}),
        ("tool-without-description-choice-none", {"messages": [user], "tools": bare, "tool_choice": "none"}),
    )
    return tuple(
        Exchange(f"chat-nostream-prompt-{name}", CHAT, False, {"model": MODEL, **body}) for name, body in shapes
    )


def sglang_exchanges(case: Case) -> tuple[Exchange, ...]:
    """The shared matrix (:func:`~mockoss.golden.cases.exchanges`), then the SGLang-only requests
    (8 more: streamed usage with ``continuous_usage_stats``, a streamed token limit, streamed
    ``tool_choice: "required"``, ``stream_reasoning: false``, ``separate_reasoning: false``
    streamed and not, a named ``tool_choice``, a streamed Responses ``max_output_tokens``), and
    for :data:`PROMPT_CASE` the 9 prompt shapes of :func:`_prompt_shapes`."""
    return exchanges(case) + _variants(case) + (_prompt_shapes() if case.id == PROMPT_CASE else ())
