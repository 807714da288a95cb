"""SGLang's own tests of its gpt-oss Responses path, converted (a second module beside
``test_sglang_upstream.py``, which holds the string parser's and detectors' cases).

SGLang's unit tests drive ``HarmonyContext``/``StreamingHarmonyContext`` and
``OpenAIServingResponses`` with a mocked engine; here the same model output goes through the
``sglang`` profile (a ``MockServer`` answering ``POST /v1/responses`` with the scripted tokens) and
the upstream assertions are kept on the reply. The profile reproduces SGLang 0.5.23; a case written
for a later change is a strict ``xfail`` saying what 0.5.23's own code gives instead, checked by
running it (``tools/sglang_serving_diff.py``, whose SGLang half ran these exact token sequences).

Not converted: sgl-project/sglang@03e17013f60a87146c216a5cc64173620ddfb6fc:test/registered/unit/entrypoints/openai/test_serving_completions.py.
Its cases check the sampling parameters handed to the engine (``response_format``, logprobs), the
echo of several prompts (mockoss answers one prompt), an engine abort and the engine's cache
details; the single-prompt echo and token prompts it also covers are compared with SGLang's own
code by ``tools/sglang_serving_diff.py`` instead. The non-harmony Responses tests (a chat template
and a ``FunctionCallParser``) do not concern gpt-oss.
"""

from __future__ import annotations

import json

import pytest
from upstream_support import case

from mockoss.harmony import Completion
from mockoss.harmony.encoding import load_encoding
from mockoss.scenario.compiled import Step
from mockoss.server.core import MockServer

CONTEXT_SRC = "sgl-project/sglang@2573fb3e511f151e63ef4502dbcbb1a8f2ef3bff:test/registered/unit/entrypoints/test_harmony_context.py"
EXA_SRC = "sgl-project/sglang@32fc1be4ea1c0cbb226c5cd0274bd8276e268902:test/registered/unit/entrypoints/openai/test_exa_search.py"
SERVING_SRC = "sgl-project/sglang@004c82e07d876f6e4a0ad6e15325706b0f478f1a:test/registered/unit/entrypoints/openai/test_serving_responses.py"
#: Found in the code index (a 26,918-character version of the file; its commit could not be
#: resolved with the search tools), so the path is the one its helpers and neighbours point at.
STREAM_SRC = "sgl-project/sglang@unresolved:test/registered/unit/entrypoints/openai/test_serving_responses_stream.py"

#: Upstream's malformed call ends with <|call|>; a generation stops there (a stop token), so here
#: it ends with <|end|> for the final message to follow in the same generation.
MALFORMED_TOOL_CALL = '<|channel|>commentary to=functions.get_weather to=functions.get_weather<|message|>{"location": "SF"}<|end|>'
NEXT_FINAL = "<|start|>assistant<|channel|>final<|message|>All done.<|end|>"
FIRST_FINAL = "<|channel|>final<|message|>All done.<|end|>"
MODEL = "openai/gpt-oss-20b"


def respond(text: str, switches: dict | None = None, **body) -> tuple[int, object, str | None]:
    """``(status, JSON body or list of stream payloads, abort)`` of the profile for ``text``.

    The step's completion is exactly ``text``'s tokens: the engine stops at a stop token, so
    ``<|call|>``/``<|return|>`` end it, ``<|end|>`` does not."""
    tokens = load_encoding().encode(text, allowed_special="all")
    completion = Completion(text=text, tokens=tuple(tokens))
    server = MockServer(profile="sglang", switches=switches or {})
    raw = json.dumps({"model": MODEL, "input": "hi", **body}).encode()
    reply, _ = server.respond("responses", raw, {}, step=Step(index=0, completion=completion, error=None))
    if not reply.streamed:
        return reply.status, json.loads(reply.body), reply.abort
    payloads = [json.loads(frame.decode().split("\ndata: ", 1)[1]) for frame in reply.frames]
    return reply.status, payloads, reply.abort


# -- HarmonyParserErrorRecoveryTestCase (test_harmony_context.py) ------------------------------

@pytest.mark.parametrize(
    "stream",
    [
        case("sglang", CONTEXT_SRC, "HarmonyParserErrorRecoveryTestCase::test_non_streaming_append_output_recovers", False),
        case("sglang", CONTEXT_SRC, "HarmonyParserErrorRecoveryTestCase::test_streaming_append_output_recovers", True),
    ],
)
def test_malformed_tool_call_header_recovers(stream):
    # Upstream: the malformed message is dropped (and logged once) and the parser re-synchronises,
    # so the following final message survives as the only message. That guard (sgl-project/sglang#35299) came after 0.5.23:
    # it is the switch harmony_errors="skip"; 0.5.23 itself (the default) answers 400 or drops the
    # stream, which SGLang 0.5.23's own code does for these tokens (tools/sglang_serving_diff.py).
    status, body, abort = respond(MALFORMED_TOOL_CALL + NEXT_FINAL, {"harmony_errors": "skip"}, stream=stream)
    assert (status, abort) == (200, None)
    output = body[-1]["response"]["output"] if stream else body["output"]
    assert [(item["type"], item["content"][0]["text"]) for item in output] == [("message", "All done.")]
    raised = respond(MALFORMED_TOOL_CALL + NEXT_FINAL, stream=stream)
    assert (raised[0], raised[2] is not None) == ((200, True) if stream else (400, False))


@pytest.mark.parametrize("stream", [case("sglang", CONTEXT_SRC, "HarmonyParserErrorRecoveryTestCase::test_well_formed_output_is_unaffected", False)])
def test_well_formed_output_is_unaffected(stream):
    status, body, abort = respond(FIRST_FINAL, stream=stream)
    assert (status, abort) == (200, None)
    [message] = body["output"]
    assert (message["type"], message["phase"], message["content"][0]["text"]) == ("message", "final_answer", "All done.")


# -- create_responses' checks (test_exa_search.py, test_serving_responses.py) ------------------

@pytest.mark.parametrize(
    ("body", "needles"),
    [
        case("sglang", EXA_SRC, "ResponsesNativeWebSearchTestCase::test_harmony_web_search_requires_configured_backend",
             {"input": "search the web", "tools": [{"type": "web_search"}], "store": False}, ("EXA_API_KEY", "https://dashboard.exa.ai/api-keys")),
        case("sglang", SERVING_SRC, "ChatToolForwardingTestCase::test_required_tool_choice_without_function_tool_returns_400",
             {"tool_choice": "required", "tools": [{"type": "web_search"}, {"type": "mcp", "server_label": "x"}], "store": False}, ('tool_choice="required"',)),
    ],
)
def test_rejected_before_generating(body, needles):
    status, reply, _ = respond(FIRST_FINAL, **body)
    assert status == 400
    assert all(needle in reply["error"]["message"] for needle in needles)


# -- HarmonyStreamLifecycleTestCase (test_serving_responses_stream.py) --------------------------

@pytest.mark.parametrize(
    "limit",
    [case("sglang", STREAM_SRC, "HarmonyStreamLifecycleTestCase::test_truncated_harmony_arguments_close_the_emitted_item", 14)],
)
def test_truncated_arguments_close_the_emitted_item(limit):
    # Upstream mocks the parser state (commentary to functions.lookup, content '{"city":', finish
    # length); here the engine is cut by max_output_tokens right after those 14 tokens.
    text = '<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{"city": "Beijing"}<|call|>'
    status, payloads, abort = respond(text, stream=True, max_output_tokens=limit)
    assert (status, abort) == (200, None)
    assert payloads[-1]["type"] == "response.incomplete"
    assert payloads[-1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    output = payloads[-1]["response"]["output"]
    assert (output[0]["arguments"], output[0]["status"]) == ('{"city":', "incomplete")
    added = next(p["item"] for p in payloads if p["type"] == "response.output_item.added")
    done = next(p["item"] for p in payloads if p["type"] == "response.output_item.done")
    assert added["id"] == done["id"] and done == output[0] and added["call_id"] == done["call_id"]


@pytest.mark.parametrize(
    "ends",
    [case("sglang", STREAM_SRC, "HarmonyStreamLifecycleTestCase::test_split_and_coalesced_messages_preserve_stream_items", "<|end|>")],
)
def test_split_and_coalesced_messages_preserve_stream_items(ends):
    # Upstream feeds six parser snapshots (reasoning, commentary text, a function call, python,
    # browser.search, final). A real generation stops at <|call|>, so the calls here end with
    # <|end|> and every message arrives token by token; the upstream assertions are kept, except
    # the response store (off by default in 0.5.23, --enable-response-store).
    text = (
        "<|channel|>analysis<|message|>plan<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>checking<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{"city":"Beijing"}' + ends
        + "<|start|>assistant<|channel|>commentary to=python<|message|>print(42)" + ends
        + '<|start|>assistant<|channel|>commentary to=browser.search<|message|>{"query":"weather"}' + ends
        + "<|start|>assistant<|channel|>final<|message|>answer<|return|>"
    )
    status, payloads, abort = respond(text, stream=True, include=["reasoning.encrypted_content"], reasoning={"summary": "auto"})
    assert (status, abort) == (200, None)
    output = next(p for p in payloads if p["type"] == "response.completed")["response"]["output"]
    assert [item["type"] for item in output] == ["reasoning", "message", "function_call", "code_interpreter_call", "web_search_call", "message"]
    added = [p for p in payloads if p["type"] == "response.output_item.added"]
    done = [p for p in payloads if p["type"] == "response.output_item.done"]
    assert [p["output_index"] for p in added] == list(range(6)) == [p["output_index"] for p in done]
    assert [p["item"]["id"] for p in added] == [item["id"] for item in output] and len({item["id"] for item in output}) == 6
    assert [p["item"] for p in done] == output
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    for index, field, kind in ((0, "content", "response.reasoning_text.delta"), (1, "content", "response.output_text.delta"),
                               (2, "arguments", "response.function_call_arguments.delta"), (5, "content", "response.output_text.delta")):
        text = "".join(p["delta"] for p in payloads if p["type"] == kind and p["output_index"] == index)
        assert text == (output[index][field][0]["text"] if field == "content" else output[index][field])
    assert (output[1]["phase"], output[5]["phase"], output[3]["code"]) == ("commentary", "final_answer", "print(42)")
    assert output[0]["encrypted_content"]
    kinds = {p["type"] for p in payloads}
    assert {"response.code_interpreter_call_code.done", "response.code_interpreter_call.completed", "response.web_search_call.completed"} <= kinds


# -- StatusFromFinishReasonTestCase (test_serving_responses.py) ---------------------------------

@pytest.mark.parametrize(
    ("limit", "status"),
    [case("sglang", SERVING_SRC, "StatusFromFinishReasonTestCase::test_only_length_maps_to_incomplete", 3, "incomplete")],
)
def test_only_length_maps_to_incomplete(limit, status):
    # Upstream calls _status_from_finish_reason on finish reasons; here the engine's own: a
    # max_output_tokens cut ("length") against a stop token ("stop"), streamed and not.
    for stream in (False, True):
        _, cut, _ = respond(FIRST_FINAL, stream=stream, max_output_tokens=limit)
        _, whole, _ = respond(FIRST_FINAL, stream=stream)
        got = [cut[-1]["response"]["status"], whole[-1]["response"]["status"]] if stream else [cut["status"], whole["status"]]
        assert got == [status, "completed"]
