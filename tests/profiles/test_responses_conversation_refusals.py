"""What each server (other than vLLM, tests/profiles/test_vllm_responses_input.py) answers to a
Responses ``previous_response_id`` it does not hold, to one it stored, and to a
``function_call_output`` whose call is not in the input. Each refusal here was a 200 before.

Sources, per profile (details in each module's docstring):

* openai (mockoss.profiles.openai.responses_input): unknown id 400 ``previous_response_not_found``
  (maximhq/bifrost#2441); orphaned output 400 ``No tool call found for function call output with
  call_id <id>.`` (continuedev/continue#10092, microsoft/vscode#320060).
* lmstudio (mockoss.profiles.lmstudio.responses_input): unknown id 400, a recorded LM Studio reply
  (``Prediction history node with id '<id>' not found …``, Content-Length 287); ``resp_`` stripped
  (lmstudio-bug-tracker#1188's log).
* llamacpp (mockoss.profiles.llamacpp.responses_input): ggml-org/llama.cpp@03eb25f3
  tools/server/server-chat.cpp (``server_chat_convert_responses_to_chatcmpl``) and the gpt-oss
  ``chat_template.jinja`` (``raise_exception("Message has tool role, …")``).
* ollama: ollama/ollama@fb30760 (v0.33.0-rc2) openai/responses.go: ``ResponsesRequest`` has no
  ``previous_response_id`` (ignored; the response echoes ``null``), ``FromResponsesRequest`` turns
  any ``function_call_output`` into a tool message: nothing refused, as mockoss already answered.
* trtllm (mockoss.profiles.trtllm.responses_input): NVIDIA/TensorRT-LLM
  tensorrt_llm/serve/openai_server.py ``_create_response_id_not_found_error`` and
  responses_utils.py@83ab45a5 ``parse_response_input``.
* vllm-mlx (mockoss.profiles.vllm_mlx.responses_input):
  waybarrios/vllm-mlx@v0.6.0:vllm_mlx/server.py ``_responses_input_to_chat_messages``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockoss.profiles.response_store import PREVIOUS_STORED
from mockoss.profiles.trtllm import TrtllmProfile
from mockoss.profiles.trtllm.responses_input import responses_input_error as trtllm_input_error
from mockoss.profiles.vllm_mlx import VllmMlxProfile
from mockoss.profiles.vllm_mlx.responses_input import previous_response_error as vllm_mlx_previous_error
from mockoss.server.core import MockServer
from mockoss.steps import final, rule, script

TURNS = script(*(rule(final(f"turn {n}"), name=f"t{n}", turn=n) for n in (1, 2, 3)))
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
USER = {"role": "user", "content": "weather?"}
TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
MODELS = {
    "openai": "openai/gpt-oss-20b",
    "lmstudio": "openai/gpt-oss-20b",
    "llamacpp": "ggml-org/gpt-oss-20b-GGUF",
    "ollama": "gpt-oss:20b",
    "trtllm": "openai/gpt-oss-20b",
    "vllm-mlx": "mlx-community/gpt-oss-20b-MXFP4-Q8",
}


def _post(server: MockServer, profile: str, **body: Any) -> tuple[int, Any]:
    reply = server.handle("responses", json.dumps({"model": MODELS[profile], "tools": TOOLS, **body}).encode(), {})
    if reply.frames:
        return reply.status, {"streamed": True}
    return reply.status, json.loads(reply.body)


# ------------------------------------------------------------------ openai


@pytest.mark.parametrize("stream", [False, True])
def test_openai_unknown_previous_response_id_is_400(stream: bool) -> None:
    server = MockServer(scenario=TURNS, profile="openai")
    status, unstored = _post(server, "openai", input="hi", store=False)
    assert status == 200
    for previous in ("resp_nope", unstored["id"]):  # never given, or given without storing
        status, body = _post(server, "openai", input="and now?", previous_response_id=previous, stream=stream)
        assert (status, body) == (
            400,
            {
                "error": {
                    "message": f"Previous response with id '{previous}' not found.",
                    "type": "invalid_request_error",
                    "param": "previous_response_id",
                    "code": "previous_response_not_found",
                }
            },
        )


def test_openai_stored_response_continues_and_its_calls_are_not_checked() -> None:
    server = MockServer(scenario=TURNS, profile="openai")
    status, first = _post(server, "openai", input="weather?")
    assert status == 200
    # The call is in the stored response's output (not kept by mockoss): the output is not refused.
    status, second = _post(server, "openai", input=[OUTPUT], previous_response_id=first["id"])
    assert status == 200 and second["output"][-1]["content"][0]["text"] == "turn 2"
    server.reset()  # the ids given before a reset are forgotten
    assert _post(server, "openai", input="again", previous_response_id=second["id"])[0] == 400


def test_openai_function_call_output_without_its_call_is_400() -> None:
    server = MockServer(scenario=TURNS, profile="openai")
    status, body = _post(server, "openai", input=[USER, OUTPUT])
    assert (status, body) == (
        400,
        {
            "error": {
                "message": "No tool call found for function call output with call_id call_1.",
                "type": "invalid_request_error",
                "param": "input",
                "code": None,
            }
        },
    )
    assert _post(server, "openai", input=[USER, {**CALL, "call_id": "call_2"}, OUTPUT])[0] == 400
    assert _post(server, "openai", input=[USER, CALL, OUTPUT])[0] == 200


# ------------------------------------------------------------------ lmstudio


def test_lmstudio_unknown_previous_response_id_is_its_recorded_400() -> None:
    server = MockServer(scenario=TURNS, profile="lmstudio")
    reply = server.handle(
        "responses",
        json.dumps({"model": MODELS["lmstudio"], "input": "hi", "previous_response_id": "not_a_stored_reply"}).encode(),
        {},
    )
    # The recorded reply's body, byte for byte (Express pretty-prints it: Content-Length 287).
    assert reply.status == 400 and len(reply.body) == 287
    assert json.loads(reply.body) == {
        "error": {
            "message": "Prediction history node with id 'not_a_stored_reply' not found while attempting to build chat history chain that includes this node.",
            "type": "invalid_request_error",
            "param": "previous_response_id",
            "code": "previous_response_not_found",
        }
    }
    # A response id is a prediction-history node id with resp_ in front: the message names the node.
    status, body = _post(server, "lmstudio", input="hi", previous_response_id="resp_abc", stream=True)
    assert status == 400 and "with id 'abc' not found" in body["error"]["message"]


def test_lmstudio_stored_response_continues_and_unstored_ones_are_refused() -> None:
    server = MockServer(scenario=TURNS, profile="lmstudio")
    status, first = _post(server, "lmstudio", input="weather?")
    status, second = _post(server, "lmstudio", input=[OUTPUT], previous_response_id=first["id"])
    assert status == 200 and second["output"][-1]["content"][0]["text"] == "turn 2"
    status, unstored = _post(server, "lmstudio", input="hi", store=False)
    assert status == 200
    assert _post(server, "lmstudio", input="again", previous_response_id=unstored["id"])[0] == 400
    # Not known for LM Studio: an orphaned output is answered as before.
    assert _post(server, "lmstudio", input=[USER, OUTPUT])[0] == 200


# ------------------------------------------------------------------ llamacpp


@pytest.mark.parametrize("stream", [False, True])
def test_llamacpp_function_call_output_with_no_call_before_is_the_template_500(stream: bool) -> None:
    server = MockServer(scenario=TURNS, profile="llamacpp")
    status, body = _post(server, "llamacpp", input=[USER, OUTPUT], stream=stream)
    # llama.cpp's Jinja engine (b7756 on) decorates the template's message with its source position
    # (mockoss.profiles.llamacpp.template_checks; the bare message is llamacpp@b7755's).
    message = (
        "\n------------\nWhile executing CallExpression at line 319, column 32 in source:\n"
        '... none %}↵            {{- raise_exception("Message has tool role, but there was n...\n'
        + " " * 43
        + "^\nError: Jinja Exception: Message has tool role, but there was no previous assistant message with a tool call!"
    )
    assert (status, body) == (500, {"error": {"code": 500, "message": message, "type": "server_error"}})
    # An assistant message between the call and its output makes the template forget the call ...
    answer = {"role": "assistant", "type": "message", "content": [{"type": "output_text", "text": "ok"}]}
    assert _post(server, "llamacpp", input=[USER, CALL, USER, answer, OUTPUT])[0] == 500
    assert _post(server, "llamacpp", input=[OUTPUT, CALL])[0] == 500


def test_llamacpp_accepts_what_its_template_accepts() -> None:
    server = MockServer(scenario=TURNS, profile="llamacpp")
    answer = {"role": "assistant", "type": "message", "content": [{"type": "output_text", "text": "ok"}]}
    reasoning = {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "hm"}]}
    for items in (
        [USER, CALL, OUTPUT],
        [USER, {**CALL, "call_id": "call_2"}, OUTPUT],  # the template matches by name, not call_id
        [USER, reasoning, CALL, OUTPUT],  # the call merges into the reasoning's assistant message
        [USER, CALL, answer, OUTPUT],  # the answer merges into the call's assistant message
        [USER, CALL, USER, OUTPUT],  # a user message does not make it forget
    ):
        assert _post(server, "llamacpp", input=items)[0] == 200, items
    # previous_response_id, known or not, is still the converter's 400 (llama-server keeps nothing).
    first = _post(server, "llamacpp", input="hi")[1]
    assert _post(server, "llamacpp", input=[OUTPUT], previous_response_id=first["id"])[0] == 400


# ------------------------------------------------------------------ ollama


def test_ollama_ignores_previous_response_id_and_accepts_any_function_call_output() -> None:
    server = MockServer(scenario=TURNS, profile="ollama")
    for body in ({"input": "hi", "previous_response_id": "resp_nope"}, {"input": [USER, OUTPUT]}):
        status, reply = _post(server, "ollama", **body)
        assert status == 200 and reply["previous_response_id"] is None, reply


# ------------------------------------------------------------------ trtllm and vllm-mlx


def test_trtllm_unknown_previous_response_id_is_404_and_orphaned_output_400() -> None:
    profile = TrtllmProfile()
    refused = trtllm_input_error(profile, {"input": "hi", "previous_response_id": "resp_nope"})
    assert refused is not None and refused.status == 404
    assert json.loads(refused.body) == {
        "object": "error",
        "message": "Response with id 'resp_nope' not found.",
        "type": "InvalidRequestError",
        "param": None,
        "code": 404,
    }
    refused = trtllm_input_error(profile, {"input": [USER, OUTPUT]})
    assert refused is not None and (refused.status, json.loads(refused.body)["message"]) == (
        400,
        "No call message found for call_1",
    )
    assert json.loads(refused.body)["type"] == "BadRequestError"
    # A call is found only as pydantic reads it as the SDK model: as trtllm returns it ("status":
    # null); written without the null it is not (tests/profiles/test_trtllm_function_call_union.py).
    assert trtllm_input_error(profile, {"input": [USER, {**CALL, "status": None}, OUTPUT]}) is None
    # TRTLLM_RESPONSES_API_DISABLE_STORE: the id is not looked at; the outputs are checked.
    assert trtllm_input_error(profile, {"input": "hi", "previous_response_id": "resp_nope"}, store=False) is None
    token = PREVIOUS_STORED.set("resp_kept")
    try:  # a stored response: its calls may be in its output, not checked
        assert trtllm_input_error(profile, {"input": [OUTPUT], "previous_response_id": "resp_kept"}) is None
    finally:
        PREVIOUS_STORED.reset(token)


def test_vllm_mlx_unknown_previous_response_id_is_fastapis_404() -> None:
    profile = VllmMlxProfile()
    refused = vllm_mlx_previous_error(profile, {"input": "hi", "previous_response_id": "resp_nope"})
    assert refused is not None and refused.status == 404
    assert json.loads(refused.body) == {"detail": "Previous response `resp_nope` not found"}
    assert vllm_mlx_previous_error(profile, {"input": "hi", "previous_response_id": ""}) is None
    token = PREVIOUS_STORED.set("resp_kept")
    try:
        assert vllm_mlx_previous_error(profile, {"input": "hi", "previous_response_id": "resp_kept"}) is None
    finally:
        PREVIOUS_STORED.reset(token)


@pytest.mark.parametrize("stream", [False, True])
def test_trtllm_and_vllm_mlx_answer_their_refusals_and_continue_stored_responses(stream: bool) -> None:
    """Through the server: an id never given is refused, one given continues the conversation
    (turn 2), and on trtllm an output whose call is not in the input is its 400."""
    for profile, status in (("trtllm", 404), ("vllm-mlx", 404)):
        server = MockServer(scenario=TURNS, profile=profile)
        assert _post(server, profile, input="hi", previous_response_id="resp_nope", stream=stream)[0] == status
        code, first = _post(server, profile, input="weather?")
        assert code == 200
        code, second = _post(server, profile, input=[OUTPUT], previous_response_id=first["id"])
        assert code == 200 and second["output"][-1]["content"][0]["text"] == "turn 2", second
    server = MockServer(scenario=TURNS, profile="trtllm")
    code, body = _post(server, "trtllm", input=[USER, OUTPUT], stream=stream)
    assert (code, body["message"], body["type"]) == (400, "No call message found for call_1", "BadRequestError")
    assert _post(server, "trtllm", input=[USER, {**CALL, "status": None}, OUTPUT], stream=stream)[0] == 200


def test_a_request_answered_from_an_upstream_step_never_reads_an_earlier_requests_store_answer() -> None:
    """Issue 9, the breaker's finding 5: the "was this id stored" flag is a context variable the
    player sets; a request answered from an upstream's step (``respond(..., step=...)``, the raw
    upstream mode) is not played, and read the value an earlier request of the same thread left:
    200 after a stored id was continued, 400 on a fresh thread. Now the upstream's answer stands
    (the upstream holds the store) on every thread, and a played request after it is judged alone."""
    import threading

    from mockoss._steps_script import compile_script

    step = compile_script([final("from upstream")]).steps[0]  # a compiled step, as an upstream's
    statuses: list[int] = []

    server = MockServer(scenario=TURNS, profile="openai")
    first = _post(server, "openai", input="weather?")[1]
    assert _post(server, "openai", input=[OUTPUT], previous_response_id=first["id"])[0] == 200
    server.reset()  # the id is forgotten by the player; the context variable still held it
    body = {"model": MODELS["openai"], "input": "3", "previous_response_id": first["id"]}
    statuses.append(server.respond("responses", json.dumps(body).encode(), {}, step=step)[0].status)
    thread = threading.Thread(target=lambda: statuses.append(MockServer(scenario=TURNS, profile="openai").respond("responses", json.dumps(body).encode(), {}, step=step)[0].status))
    thread.start()
    thread.join()
    assert statuses == [200, 200]
    # A played request after it: its own id is judged (never stored here): the API's 400.
    assert _post(server, "openai", input="again", previous_response_id=body["previous_response_id"])[0] == 400


def test_trtllm_without_its_store_does_not_look_at_the_id() -> None:
    """``TRTLLM_RESPONSES_API_DISABLE_STORE`` (switch ``responses_store`` off): the id is not
    looked at; an output without its call is still its 400 (the reviewer's finding 7: the module
    took the store as an argument no profile passed)."""
    server = MockServer(scenario=TURNS, profile="trtllm", switches={"responses_store": False})
    assert _post(server, "trtllm", input="hi", previous_response_id="resp_nope")[0] == 200
    assert _post(server, "trtllm", input=[USER, OUTPUT])[0] == 400
