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

from mockoss.golden.cases import CHAT, RESPONSES, Case, Exchange, _chat_body, _responses_body, cut_point, exchanges

__all__ = ["sglang_exchanges"]

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


def sglang_exchanges(case: Case) -> tuple[Exchange, ...]:
    """The shared matrix (:func:`~mockoss.golden.cases.exchanges`), then the SGLang-only requests
    (8 more: streamed usage with ``continuous_usage_stats``, a streamed token limit, streamed
    ``tool_choice: "required"``, ``stream_reasoning: false``, ``separate_reasoning: false``
    streamed and not, a named ``tool_choice``, a streamed Responses ``max_output_tokens``)."""
    return exchanges(case) + _variants(case)
