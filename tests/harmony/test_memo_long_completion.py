"""A long scripted answer's plans are kept: requests after the first do not parse it again.

A completion's memo held 8 MB (``MEMO_BYTES``); the usual shapes of a 40,000-token answer take
~52 MB, so none was kept and every request parsed the whole answer again on the event loop
(0.5 s each, twice for a non-streamed chat: the reply and the recovery log), every other client
waiting (issue 9 review, seventh session). A long completion's memo now holds
``MEMO_BYTES_PER_TOKEN`` bytes per token, at most a quarter of ``MEMO_TOTAL_BYTES``.
"""

from __future__ import annotations

import json

from mockoss.harmony import library
from mockoss.harmony.completion import MEMO_BYTES, MEMO_BYTES_PER_TOKEN, MEMO_TOTAL_BYTES, Completion
from mockoss.server.core import MockServer

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "wise", "owls", "watch", "quietly"]


def _scenario(tmp_path, tokens: int):
    text = " ".join(WORDS[i % len(WORDS)] for i in range(tokens))
    messages = [{"channel": "analysis", "content": "Write a long answer."}, {"channel": "final", "content": text}]
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"version": 1, "steps": [{"completion": {"messages": messages}}]}))
    return path


def test_a_long_answer_is_parsed_once_across_requests_and_shapes(tmp_path, monkeypatch):
    server = MockServer(scenario=str(_scenario(tmp_path, 12_000)))
    parses: list[int] = []
    real = library.parse_tokens
    monkeypatch.setattr(library, "parse_tokens", lambda tokens, **kw: parses.append(len(tokens)) or real(tokens, **kw))
    chat = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}
    bodies = [("chat", chat), ("chat", {**chat, "stream": True}), ("responses", {"model": "openai/gpt-oss-20b", "input": "hi"})]
    for endpoint, body in bodies:  # the first request of each shape
        assert server.respond(endpoint, json.dumps(body).encode(), {})[0].status == 200
    first = len(parses)
    assert first >= 1
    for endpoint, body in bodies * 3:  # the same shapes again: from the memo
        assert server.respond(endpoint, json.dumps(body).encode(), {})[0].status == 200
    assert len(parses) == first, f"parsed {len(parses) - first} more times after the first requests (memo too small)"


def test_the_memo_limit_grows_with_the_answer_and_stays_bounded():
    short = Completion(text="x", tokens=(1,) * 100)
    assert short._memo.limit == MEMO_BYTES  # type: ignore[attr-defined]
    long = Completion(text="x", tokens=(1,) * 20_000)
    assert long._memo.limit == 20_000 * MEMO_BYTES_PER_TOKEN  # type: ignore[attr-defined]
    huge = Completion(text="x", tokens=(1,) * 1_000_000)
    assert huge._memo.limit == MEMO_TOTAL_BYTES // 4  # type: ignore[attr-defined]
