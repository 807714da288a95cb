"""Plain chat messages (``{"role": "user" | "assistant", "content": <string>}``) are counted from
caches keyed by their text alone, one per role (issue 9, unique-body chat: no key tuple per new
message), with exact counts and the same bounds and reset as the other count caches."""

from __future__ import annotations

from mockoss.harmony.prompt import caches, render_chat_prompt
from mockoss.harmony.prompt.count import MESSAGE_CACHE_BYTES, cache_size, clear_caches, count_chat_prompt


def test_plain_messages_are_kept_by_their_text_in_their_role_cache():
    clear_caches()
    text = "How far is the moon? (plain texts test)"
    body = {"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": text}, {"role": "user", "content": "and the sun?"}]}
    assert count_chat_prompt(body) == len(render_chat_prompt(body))
    assert caches._user_texts.get(text) is not None and caches._assistant_texts.get(text) is not None
    assert caches._user_texts.get("and the sun?") is not None and caches._assistant_texts.get("and the sun?") is None
    assert len(caches._messages) == 0  # no (role, text) key anywhere
    # The same text in the other role, or with one more field, is another entry and another count.
    swapped = {"messages": [{"role": "assistant", "content": "and the sun?"}, {"role": "user", "content": text}]}
    named = {"messages": [{"role": "user", "content": text, "name": "x"}]}
    for other in (swapped, named):
        assert count_chat_prompt(other) == len(render_chat_prompt(other))
    assert len(caches._messages) == 1  # the named message
    assert cache_size() >= caches._user_texts.size + caches._assistant_texts.size > 0
    clear_caches()
    assert len(caches._user_texts) == len(caches._assistant_texts) == 0 and cache_size() == 0


def test_the_plain_caches_stay_within_the_message_budget():
    budgets = [caches._messages.limit, caches._user_texts.limit, caches._assistant_texts.limit]
    assert sum(budgets) == MESSAGE_CACHE_BYTES
