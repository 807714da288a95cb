"""Behaviour differences from d7454b6 found by the session-4 differential review (old and new
packages fed the same requests through ``MockServer.respond``).

Each test states the old behaviour and fails on the current code (``xfail(strict=True)``), so the
suite stays green until the lead fixes it; a fix makes the test pass, and strict xfail then asks
for the marker to be removed.
"""

from __future__ import annotations

import json

import pytest

from mockoss.server.core import MockServer

#: Nesting of ``metadata``: ~2 Python frames a level in ``inputs._has_lone_surrogate`` (the
#: function and its generator), so 600 levels pass the default recursion limit of 1000, while
#: ``json.loads`` and pydantic accept the body and the reply (d7454b6 answered it 200).
DEPTH = 600


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


# Found after dcb7de2 (lone_surrogate_field walked metadata recursively on every body: a
# RecursionError, then a 500, no step played); fixed by walking it with a loop.
@pytest.mark.parametrize(
    ("profile", "endpoint", "body"),
    [
        ("vllm", "chat", {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}),
        ("vllm", "responses", {"model": "openai/gpt-oss-20b", "input": "hi"}),
        ("sglang", "chat", {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}),
        ("vllm", "completions", {"model": "openai/gpt-oss-20b", "prompt": "hi"}),
    ],
)
def test_deep_metadata_is_answered(profile: str, endpoint: str, body: dict) -> None:
    raw = (json.dumps(body)[:-1] + ', "metadata": ' + _nested(DEPTH) + "}").encode()
    assert b"\\u" not in raw  # no escape at all: d7454b6 never looked at metadata here
    server = MockServer(scenario="clean-answer", profile=profile, seed=7)
    reply, _ = server.respond(endpoint, raw, {})
    assert reply.status == 200, reply.body[:200]
    assert server.requests[-1].step == 0  # the scenario's step was played


def test_deep_metadata_still_counts_a_session_turn() -> None:
    server = MockServer(scenario="clean-answer", profile="vllm", seed=7)
    headers = {"x-mockoss-session": "s1"}
    deep = ('{"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], "metadata": ' + _nested(DEPTH) + "}").encode()
    plain = b'{"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}'
    server.respond("chat", deep, headers)
    server.respond("chat", plain, headers)
    assert server.requests[-1].turn == 2  # d7454b6: the deep request was turn 1, this one turn 2
