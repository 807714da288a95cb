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


def test_set_switches_waits_for_a_request_building_a_switch_header_profile(monkeypatch):
    # A review's finding: set_switches() took no lock, so a request building its X-Mockoss-Switch
    # profile from the old server switches cached it after set_switches() had emptied the cache.
    import threading

    from mockoss.server import selection

    body, header = _chat(), {"x-mockoss-switch": "id_digits=32"}
    server = MockServer("clean-answer", switches={"reasoning_field": "reasoning"})
    real = selection.get_profile
    started, release = threading.Event(), threading.Event()

    def gated(name, switches=None, **options):  # options: warn=False (a request's re-resolution)
        if switches and switches.get("id_digits") == 32 and not started.is_set():
            started.set()
            assert release.wait(30)
        return real(name, switches, **options)

    monkeypatch.setattr(selection, "get_profile", gated)
    request = threading.Thread(target=lambda: server.handle("chat", body, header))
    request.start()
    assert started.wait(30)
    switching = threading.Thread(target=lambda: server.set_switches({"reasoning_field": "reasoning_content"}))
    switching.start()
    switching.join(0.5)  # without the lock it is done by now; with it, it waits for the request
    release.set()
    request.join(30)
    switching.join(30)
    monkeypatch.setattr(selection, "get_profile", real)
    later = json.loads(server.handle("chat", body, header).body)["choices"][0]["message"]
    fresh = MockServer("clean-answer", switches={"reasoning_field": "reasoning_content"})
    expected = json.loads(fresh.handle("chat", body, header).body)["choices"][0]["message"]
    assert sorted(k for k in later if "reason" in k) == sorted(k for k in expected if "reason" in k) == ["reasoning_content"]


def test_a_switch_header_of_many_short_entries_is_a_400():
    from mockoss.server.replies import MAX_SWITCH_HEADER_CHARS, MAX_SWITCH_HEADER_ENTRIES

    header = ",".join(["a=1"] * 1024)
    assert len(header) <= MAX_SWITCH_HEADER_CHARS
    reply = MockServer("clean-answer").handle("chat", _chat(), {"x-mockoss-switch": header})
    assert reply.status == 400
    assert f"limit of {MAX_SWITCH_HEADER_ENTRIES}" in json.loads(reply.body)["error"]["message"]


def test_a_switch_value_nested_past_the_yaml_parser_is_a_400_not_a_crash():
    header = "stream_interval=" + "[" * 2000 + "]" * 2000
    assert len(header) <= 4096
    reply = MockServer("clean-answer").handle("chat", _chat(), {"x-mockoss-switch": header})
    assert reply.status == 400
    assert "nested too deep" in json.loads(reply.body)["error"]["message"]
