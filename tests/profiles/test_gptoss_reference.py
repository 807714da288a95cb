"""The ``gptoss-reference`` profile's switches and edges that the goldens do not reach.

The goldens (tests/golden/test_gptoss_reference_goldens.py) check the default behaviour and the
timeline's releases against the real server; here: the scripted backend's end (``end_of_script``),
the fixed date of ``metadata.__debug``, the pre-0.0.9 item ids, and the profile contract.
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, RequestContext, ResponsesRequestView, ServerInfo
from mockoss.profiles.registry import get_profile

ANALYSIS_ONLY = Completion.from_text("<|channel|>analysis<|message|>Thinking.<|end|>")
ANSWER = Completion.from_text("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hi.<|return|>")


def _ask(profile, completion, *, stream, **body):
    body = {"model": "m", "input": "hi", **body}
    view = ResponsesRequestView(model="m", stream=stream, body=body)
    return profile.surface("responses", completion, view, RequestContext(IdSource(0, 0), 1700000000, 0))


def _events(reply):
    return [json.loads(frame.decode().split("\ndata: ", 1)[1]) for frame in reply.frames]


def test_end_of_script_return_completes_and_closes_the_last_message_again():
    # After <|end|> the backend's <|return|> is rejected while the parser expects <|start|>: the
    # state stays EXPECT_START, so the reasoning is closed a second time at the next index.
    events = _events(_ask(get_profile("gptoss-reference"), ANALYSIS_ONLY, stream=True))
    done = [(e["output_index"], e["item"]["type"]) for e in events if e["type"] == "response.output_item.done"]
    assert done == [(0, "reasoning"), (1, "reasoning")]
    assert events[-1]["type"] == "response.completed"
    assert [i["type"] for i in events[-1]["response"]["output"]] == ["reasoning"]


def test_end_of_script_error_cuts_the_stream_and_is_a_plain_500():
    profile = get_profile("gptoss-reference", {"end_of_script": "error"})
    reply = _ask(profile, ANALYSIS_ONLY, stream=True)
    assert reply.abort == "RuntimeError: scripted completion exhausted"
    assert "response.completed" not in [e["type"] for e in _events(reply)]
    plain = _ask(profile, ANALYSIS_ONLY, stream=False)
    assert (plain.status, plain.body, dict(plain.headers)["content-type"]) == (500, b"Internal Server Error", "text/plain; charset=utf-8")


def test_debug_metadata_holds_the_prompt_with_the_conversation_start_date():
    profile = get_profile("gptoss-reference", {"conversation_start_date": "2031-02-03"})
    body = json.loads(_ask(profile, ANSWER, stream=False, metadata={"__debug": True}).body)
    assert "Current date: 2031-02-03" in body["metadata"]["__debug_input"]
    assert body["metadata"]["__debug_output"].startswith("<|channel|>analysis<|message|>Think.")
    assert body["usage"]["input_tokens"] == json.loads(_ask(get_profile("gptoss-reference"), ANSWER, stream=False).body)["usage"]["input_tokens"]


def test_release_0_0_8_events_carry_the_default_item_id():
    events = _events(_ask(get_profile("gptoss-reference@0.0.8"), ANSWER, stream=True))
    assert {e["item_id"] for e in events if "item_id" in e} == {"item_1234"}
    message = events[-1]["response"]["output"][1]
    assert message["type"] == "message" and "id" not in message
    assert events[-1]["response"]["output"][0]["id"].startswith("rs_")


def test_release_0_0_5_default_token_limit():
    body = json.loads(_ask(get_profile("gptoss-reference@0.0.5"), ANSWER, stream=False).body)
    assert body["max_output_tokens"] == 10000
    assert json.loads(_ask(get_profile("gptoss-reference"), ANSWER, stream=False).body)["max_output_tokens"] == 131072


def test_contract_no_probes_fastapi_errors():
    profile = get_profile("gptoss-reference")
    assert profile.probe("GET", "/v1/models", ServerInfo(("gpt-oss-120b",), 0)) is None
    assert json.loads(profile.route_error(404, "GET", "/v1/models").body) == {"detail": "Not Found"}
    assert json.loads(profile.error(429, "Slow down").body) == {"detail": "Slow down"}
    invalid = profile.error(400, "Invalid request: input: Field required", param="input")
    assert invalid.status == 422 and json.loads(invalid.body)["detail"][0]["loc"] == ["body", "input"]
    with pytest.raises(ValueError):
        profile.surface("chat", ANSWER, None, RequestContext(IdSource(0, 0), 0, 0))
