"""Short conversations take the count's quick paths; their counts still equal the full render.

:func:`mockoss.harmony.prompt.count.count_chat_prompt` keys a message that is exactly
``{"role": "user" | "assistant", "content": <string>}`` by the pair of its two strings, and counts
the preamble of a request without instructions, tools or reasoning effort from a table by start
date. Each case here is counted cold and again from the caches, in orders that would expose a key
shared by two different messages (the same text as user and as assistant, a plain message and the
same message with one more field) or a preamble count shared by two start dates.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockoss.endpoints import clear_prompt_caches
from mockoss.harmony.prompt import render_chat_prompt
from mockoss.harmony.prompt.count import count_chat_prompt

TEXTS = ["What is 2 + 2?", "4.", "", " ", "<|end|>", "日本語 é", "functions.f"]


def _check(body: dict[str, Any], **options: Any) -> None:
    expected = len(render_chat_prompt(body, **options))
    assert count_chat_prompt(body, **options) == expected  # cold (or from another case's entries)
    assert count_chat_prompt(body, **options) == expected  # from the caches


@pytest.fixture(autouse=True)
def _fresh_caches() -> Any:
    clear_prompt_caches()
    yield
    clear_prompt_caches()


@pytest.mark.parametrize("text", TEXTS)
def test_the_same_text_as_user_and_as_assistant_counts_as_each(text: str) -> None:
    for roles in (("user", "assistant"), ("assistant", "user"), ("user", "assistant", "user")):
        _check({"messages": [{"role": role, "content": text} for role in roles]})
    _check({"messages": [{"role": "assistant", "content": text}]})
    _check({"messages": [{"role": "user", "content": text}]})


@pytest.mark.parametrize("text", TEXTS)
def test_a_plain_message_and_the_same_message_with_more_fields_count_apart(text: str) -> None:
    plain = {"role": "assistant", "content": text}
    variants = [
        {"content": text, "role": "assistant"},  # the same data, keys in the other order
        {**plain, "reasoning": "think first"},
        {**plain, "reasoning_content": "think first"},
        {**plain, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {**plain, "name": "someone"},
        {"role": "user", "content": text, "name": "someone"},
        {"role": "tool", "content": text},  # no call id: written by "functions."
        {"role": "system", "content": text},
        {"role": "user", "content": [{"type": "text", "text": text}]},
        {"role": "assistant", "content": None},
    ]
    for variant in variants:
        for messages in ([plain, variant], [variant, plain], [{"role": "user", "content": "hi"}, variant, plain]):
            _check({"messages": messages})


@pytest.mark.parametrize("date", ["2025-06-30", "Wednesday, 1 January 2026", ""])
def test_the_plain_preamble_is_counted_per_start_date(date: str) -> None:
    body = {"messages": [{"role": "user", "content": "What is 2 + 2?"}]}
    if date != "2025-06-30":  # a date of another length has another count (so the test can fail)
        assert len(render_chat_prompt(body, conversation_start_date=date)) != len(render_chat_prompt(body))
    for start_date in ("2026-01-01", date, "2026-01-01", date):
        _check(body, conversation_start_date=start_date)


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"tools": []},
        {"tools": None},
        {"tools": {}},
        {"reasoning_effort": None},
        {"reasoning_effort": "high"},
        {"reasoning_effort": 3},
        {"tools": [{"type": "function", "function": {"name": "f"}}]},
        {"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "none"},
    ],
)
def test_requests_with_and_without_a_plain_preamble_count_as_rendered(extra: dict[str, Any]) -> None:
    for messages in (
        [{"role": "user", "content": "What is 2 + 2?"}],
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2 + 2?"}],
        [{"role": "developer", "content": ""}, {"role": "user", "content": "What is 2 + 2?"}],
        [],
    ):
        for exclude in (False, True):
            _check({"messages": messages, **extra}, exclude_tools_when_tool_choice_none=exclude)
