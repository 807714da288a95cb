"""Behaviour differences from d7454b6 found by the session-4 differential review (old and new
packages fed the same requests through ``MockServer.respond``).

Each test states d7454b6's behaviour (or, where d7454b6 itself failed, the intended one); the
comment above it names the change it failed after and the fix.
"""

from __future__ import annotations

import json

import pytest

from mockoss.server.core import MockServer

#: Nesting of ``metadata``: the recursive ``inputs._has_lone_surrogate`` of dcb7de2 took ~2 Python
#: frames a level (the function and its generator), so 600 levels passed the default recursion
#: limit of 1000, while ``json.loads`` and pydantic accept the body and the reply (d7454b6
#: answered it 200).
DEPTH = 600


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


# Found after dcb7de2 (lone_surrogate_field walked metadata recursively on every body: a
# RecursionError, then a 500, no step played); fixed by walking it with a loop.
@pytest.mark.parametrize(
    ("profile", "endpoint", "body"),
    [
        ("vllm", "chat", {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}),
        # sglang, not vllm: vLLM's Responses metadata is Dict[str, str] (a nested value is its 400,
        # tests/profiles/test_deep_nesting.py); SGLang's is Dict[str, Any] and echoes it.
        ("sglang", "responses", {"model": "openai/gpt-oss-20b", "input": "hi"}),
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


# d7454b6 failed here too: an escaped emoji anywhere in the body made it walk metadata recursively
# (a 500 RecursionError, no step played); the loop walk of f8e85dd answers it.
def test_deep_metadata_with_a_surrogate_escape_elsewhere_is_answered() -> None:
    raw = (
        '{"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi \\ud83d\\ude00"}], '
        '"metadata": ' + _nested(DEPTH) + "}"
    ).encode()
    assert b"\\ud83d\\ude00" in raw
    server = MockServer(scenario="clean-answer", profile="vllm", seed=7)
    reply, _ = server.respond("chat", raw, {})
    assert reply.status == 200, reply.body[:200]
