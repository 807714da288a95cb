"""trtllm's switch ``openai_sdk_keys``: the openai SDK beside trtllm-serve (``openai`` is unpinned in
TensorRT-LLM's ``requirements.txt``) decides which ``function_call`` items of a Responses ``input``
the server finds a call in (:mod:`mockoss.profiles.trtllm.responses_input`).

Run, not only read: TRT-LLM's ``ResponsesRequest`` and ``construct_harmony_messages`` copied from
NVIDIA/TensorRT-LLM@83ab45a5 (``openai_protocol.py``, ``responses_utils.py``) under pydantic 2.14.4,
each openai wheel below installed in turn, one ``function_call`` then its ``function_call_output``:
``ResponsesRequest.model_validate`` then ``construct_harmony_messages`` (a ``ValueError`` is the 400
``No call message found for call_1``). The table is that run's outcome, for every value.
"""

from __future__ import annotations

import json

import pytest

from mockoss.profiles.orphan_output import first_orphan_output
from mockoss.profiles.trtllm.responses_input import first_unfound_output
from mockoss.server.core import MockServer
from mockoss.steps import final, script

CALL = {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "x"}
VARIANTS = {
    "plain": {},
    "status-null": {"status": None},
    "namespace": {"namespace": "x"},
    "namespace-null": {"namespace": None},
    "caller-null": {"caller": None},
    "caller-direct": {"caller": {"type": "direct"}},
    "async-true": {"async": True},
    "async-null": {"async": None},
    "unknown-key": {"foo": 1},
}
# value -> variants found (200); the others are the 400. openai 2.24.0, 2.40.0, 2.54.0, 3.22.1, 3.57.0.
FOUND = {
    "openai-2.24": set(VARIANTS) - {"plain"},
    "openai-2.40": set(VARIANTS) - {"plain", "namespace"},
    "openai-2.54": set(VARIANTS) - {"plain", "namespace", "caller-null", "caller-direct"},
    "openai-3.57": {"status-null", "namespace-null", "async-null", "unknown-key"},
}


@pytest.mark.parametrize("keys", sorted(FOUND))
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_which_call_trtllm_finds_under_each_sdk(keys: str, variant: str) -> None:
    server = MockServer(scenario=script(final("ok")), profile="trtllm", switches={"openai_sdk_keys": keys})
    body = {"model": "openai/gpt-oss-20b", "input": [{**CALL, **VARIANTS[variant]}, OUTPUT]}
    reply = server.handle("responses", json.dumps(body).encode(), {"content-type": "application/json"})
    if variant in FOUND[keys]:
        assert reply.status == 200, reply.body
    else:
        assert (reply.status, json.loads(reply.body)["message"]) == (400, "No call message found for call_1")


def test_the_default_is_the_newest_sdk_read() -> None:
    """Without the switch, every variant is answered as under ``openai-3.57`` (sent, not read off
    the profile)."""
    for variant in sorted(VARIANTS):
        body = json.dumps({"model": "openai/gpt-oss-20b", "input": [{**CALL, **VARIANTS[variant]}, OUTPUT]}).encode()
        replies = [
            MockServer(scenario=script(final("ok")), profile="trtllm", switches=switches).handle(
                "responses", body, {"content-type": "application/json"}
            )
            for switches in ({}, {"openai_sdk_keys": "openai-3.57"})
        ]
        assert replies[0].status == replies[1].status == (200 if variant in FOUND["openai-3.57"] else 400), variant
        assert replies[0].body == replies[1].body


def test_trtllm_s_search_is_the_orphan_search_with_its_test_of_a_call() -> None:
    items = [{**CALL, "status": None}, OUTPUT, {**CALL, "call_id": "c2"}, {**OUTPUT, "call_id": "c2"}]
    assert first_orphan_output(items) is None
    assert first_orphan_output(items, is_call=lambda item: item["call_id"] != "c2") == "c2"
    assert first_unfound_output(items) == "c2"
