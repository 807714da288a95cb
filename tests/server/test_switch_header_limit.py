"""``X-Mockoss-Switch`` values are bounded (issue 9, the breaker's D16): a long value was compiled
under the server lock every request takes (57 ms for 1,000 entries)."""

from __future__ import annotations

import json

import pytest

from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"


def _chat() -> bytes:
    return json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}).encode()


def test_a_switch_header_over_the_limit_is_a_400_and_compiles_nothing():
    from mockoss.server.replies import MAX_SWITCH_HEADER_CHARS

    server = MockServer("clean-answer")
    header = ",".join(f"made_up_{n}=1" for n in range(1000))
    assert len(header) > MAX_SWITCH_HEADER_CHARS
    reply = server.handle("chat", _chat(), {"x-mockoss-switch": header})
    assert reply.status == 400
    message = json.loads(reply.body)["error"]["message"]
    assert f"over mockoss's limit of {MAX_SWITCH_HEADER_CHARS}" in message
    assert len(server._profiles) == 0


def test_unknown_switch_names_are_all_named_but_only_the_first_few_get_hints():
    from mockoss.profiles.registry import ProfileError, get_profile

    names = {f"stream_intervall{n}": 1 for n in range(20)}
    with pytest.raises(ProfileError) as caught:
        get_profile("vllm", names)
    message = str(caught.value)
    assert all(repr(name) in message for name in names)
    assert message.count("did you mean") == 8


def test_a_switch_header_within_the_limit_still_works():
    server = MockServer("clean-answer")
    reply = server.handle("chat", _chat(), {"x-mockoss-switch": "stream_interval=2"})
    assert reply.status == 200
