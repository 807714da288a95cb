"""trtllm: which ``function_call`` items of a Responses ``input`` the server finds a call in, and
the ``text/plain`` body's wording (the 14th session breaker's findings A and B).

A. ``construct_harmony_messages`` records an input item as a call only ``if isinstance(input_msg,
ResponseFunctionToolCall)`` (NVIDIA/TensorRT-LLM@83ab45a5:tensorrt_llm/serve/responses_utils.py),
and pydantic validates a ``function_call`` object as the SDK's TypedDict (the union's first
member) unless it carries a key the TypedDict does not declare or a ``null`` it refuses
(:mod:`mockoss.profiles.trtllm.responses_input`). Run with TRT-LLM's models and that function
behind fastapi 0.121.3 under pydantic 2.9.1-2.14.4 and openai 1.99.9-3.57.0 (scratch, not kept):
a call the client writes itself (``type``, ``call_id``, ``name``, ``arguments``, with or without
``id`` and ``status``) -> 400 ``No call message found for call_1``; the server's own
``response.output`` item re-sent by the openai SDK (``"status": null``) -> found, 200. The same
class of bug was fixed in vLLM by vllm-project/vllm#24158; TensorRT-LLM has no such validator.

B. A non-empty body FastAPI does not parse (``text/plain``, form-urlencoded, ...) reaches the
route's model as bytes: ``validation_exception_handler``'s 400 with ``str(exc)``, the error list
with the bytes' ``repr`` as ``input`` (fastapi 0.121.3, the newest of TensorRT-LLM's pin
``fastapi>=0.120.1,<=0.121.3``, NVIDIA/TensorRT-LLM@000867d9:requirements.txt, run byte for byte
by ``tools/fastapi_body_diff.py``'s ``build("trtllm")``). Before, mockoss wrote ``Invalid request:
body: ...``.
"""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from starlette.testclient import TestClient

from mockoss.server.app import create_app
from mockoss.server.core import MockServer
from mockoss.steps import final, rule, script, tool_call

MODEL = "openai/gpt-oss-20b"
TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
USER = {"role": "user", "content": "weather?"}
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
LOOP = script(
    rule(tool_call("get_weather", {"city": "Paris"}), turn=1), *(rule(final("It is sunny."), turn=n) for n in (2, 3))
)


@pytest.fixture
def client():
    with TestClient(create_app(MockServer(scenario=LOOP, profile="trtllm")), base_url="http://127.0.0.1:8000") as http:
        yield http


def _post(client: TestClient, items: list) -> httpx.Response:
    return client.post("/v1/responses", json={"model": MODEL, "input": items, "tools": TOOLS})


NOT_FOUND = {
    "object": "error",
    "message": "No call message found for call_1",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}


@pytest.mark.parametrize(
    "call",
    [CALL, {**CALL, "id": "fc_1"}, {**CALL, "id": "fc_1", "status": "completed"}, {**CALL, "namespace": "x"}],
    ids=["bare", "id", "id-status", "namespace"],
)
def test_a_call_the_client_writes_is_not_found(client: TestClient, call: dict) -> None:
    reply = _post(client, [USER, call, OUTPUT])
    assert (reply.status_code, reply.json()) == (400, NOT_FOUND)


@pytest.mark.parametrize(
    "extra",
    [{"status": None}, {"id": None}, {"namespace": None}, {"async": None}, {"custom": 1}],
    ids=["status-null", "id-null", "namespace-null", "async-null", "unknown-key"],
)
def test_a_call_pydantic_validates_as_the_sdk_model_is_found(client: TestClient, extra: dict) -> None:
    assert _post(client, [USER, {**CALL, **extra}, OUTPUT]).status_code == 200


def test_a_later_output_whose_call_is_only_written_is_still_refused(client: TestClient) -> None:
    found = {**CALL, "status": None}
    second = {**CALL, "call_id": "call_2"}
    reply = _post(client, [USER, found, OUTPUT, second, {**OUTPUT, "call_id": "call_2"}])
    assert (reply.status_code, reply.json()["message"]) == (400, "No call message found for call_2")


def test_the_openai_sdk_tool_loop_re_sending_response_output_continues(client: TestClient) -> None:
    """The SDK loop: ``input += response.output`` then the tool's output. trtllm's call item has
    ``"status": null``, which the SDK sends back (fields set from the JSON), so it is found."""
    sdk = openai.OpenAI(api_key="x", base_url="http://127.0.0.1:8000/v1", http_client=client, max_retries=0)
    items: list = [USER]
    first = sdk.responses.create(model=MODEL, input=items, tools=TOOLS)
    calls = [item for item in first.output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].status is None
    items += first.output
    items.append({"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny"})
    second = sdk.responses.create(model=MODEL, input=items, tools=TOOLS)
    assert second.output_text == "It is sunny."
    # The same call written by hand (as a dict without the null): the server's 400.
    handmade = {
        "type": "function_call",
        "call_id": calls[0].call_id,
        "name": "get_weather",
        "arguments": calls[0].arguments,
    }
    with pytest.raises(openai.BadRequestError) as refused:
        sdk.responses.create(model=MODEL, input=[USER, handmade, items[-1]], tools=TOOLS)
    assert refused.value.response.json()["message"] == f"No call message found for {calls[0].call_id}"


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "text/json"])
def test_an_unparsed_body_is_the_handlers_str_of_the_error_list(client: TestClient, content_type: str) -> None:
    raw = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}).encode()
    reply = client.post("/v1/chat/completions", content=raw, headers={"content-type": content_type})
    entry = {
        "type": "model_attributes_type",
        "loc": ("body",),
        "msg": "Input should be a valid dictionary or object to extract fields from",
        "input": raw,
    }
    assert reply.status_code == 400
    assert reply.json() == {
        "object": "error",
        "message": str([entry]),
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    assert reply.json()["message"].startswith(
        "[{'type': 'model_attributes_type', 'loc': ('body',), 'msg': 'Input should"
    )
    assert "'input': b'{\"model\": " in reply.json()["message"]
