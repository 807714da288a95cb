"""An unknown ``X-Mockoss-Transport`` field gets the "did you mean" a misspelt YAML field gets
(session 15's newcomer, finding 11: switches, profiles and scenario fields had one, the header not)."""

import httpx
import pytest

from mockoss.scenario.loader import ScenarioError, scenario_from_data
from mockoss.scenario.transport import TransportError, TransportSpec
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

FINAL = {"messages": [{"channel": "final", "content": "Hi."}]}


@pytest.mark.parametrize(
    ("header", "hint"),
    [
        ("ttf_ms=300", "ttf_ms: unknown field (did you mean 'ttft_ms'?); the fields are ttft_ms, "),
        ("tokens_per_sec=50", "tokens_per_sec: unknown field (did you mean 'tokens_per_s'?); the fields are "),
        ("ttft_ms=1,jiter=0.1", "jiter: unknown field (did you mean 'jitter'?); the fields are "),
        ("zzz=1", "zzz: unknown field; the fields are ttft_ms, "),  # nothing close: the list alone
    ],
)
def test_unknown_header_field_gets_the_closest_names(header, hint):
    with pytest.raises(TransportError) as caught:
        TransportSpec.from_header(header)
    assert str(caught.value).startswith("X-Mockoss-Transport: " + hint)


def test_header_and_yaml_name_the_same_field():
    """The scenario loader's hint for the same typo (mockoss.scenario.field_hints) names the same field."""
    with pytest.raises(ScenarioError, match=r"transport\.ttf_ms: unknown field \(did you mean 'ttft_ms'\?\)"):
        scenario_from_data(
            {"version": 1, "rules": [{"steps": [{"completion": FINAL, "transport": {"ttf_ms": 3}}]}]}, name="t"
        )
    with pytest.raises(TransportError, match=r"ttf_ms: unknown field \(did you mean 'ttft_ms'\?\)"):
        TransportSpec.from_header("ttf_ms=3")


def test_server_answers_the_hint_in_its_400():
    running = ThreadedServer(MockServer(scenario="clean-answer")).start()
    try:
        body = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}
        reply = httpx.post(
            running.url + "/v1/chat/completions", json=body, headers={"X-Mockoss-Transport": "stall_after=2"}
        )
    finally:
        running.stop()
    assert reply.status_code == 400
    assert (
        "stall_after: unknown field (did you mean 'stall_after_frames' or 'stall_ms'?)"
        in reply.json()["error"]["message"]
    )
