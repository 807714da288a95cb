"""The reasoning efforts Ollama's OpenAI layer takes, refuses and maps (``profiles/ollama/effort.py``).

``ollama/ollama@fb3076099``: ``openai/openai.go:523-547`` (``thinkFromReasoningEffort``: none,
minimal, low, medium, high, max, xhigh, ultra and empty accepted, any other string a 400
``invalid reasoning value``), :699-708 (chat reads ``reasoning.effort`` when ``reasoning`` is an
object, else ``reasoning_effort``), ``openai/responses.go:575``, ``middleware/openai.go:462-466``
(the 400). mockoss answered ``none``/``xhigh``/``max``/``ultra``/``""`` on ``/v1/chat/completions``
with the shared (vLLM) schema's 400, took any string on ``/v1/responses``, and a list or object
effort was an unscripted 500 (``unhashable type``). Other profiles keep the shared schema's answer.
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.ollama import prompt
from mockoss.profiles.ollama.effort import THINK, go_quote, think_of
from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"
USER = [{"role": "user", "content": "Weather?"}]
MUST = '(must be "minimal", "low", "medium", "high", "xhigh", "ultra", "max", or "none")'


def _chat(**fields):
    return {"model": MODEL, "messages": USER, "stream": False, **fields}


def _responses(**fields):
    return {"model": MODEL, "input": "Weather?", "stream": False, **fields}


def _send(endpoint, body, profile="ollama"):
    server = MockServer("clean-answer", profile=profile, served_model_names=[MODEL])
    return server.respond(endpoint, json.dumps(body).encode(), {})[0]


def _usage(reply):
    usage = json.loads(reply.body)["usage"]
    return usage.get("prompt_tokens", usage.get("input_tokens"))


@pytest.mark.parametrize("effort", sorted(THINK))
@pytest.mark.parametrize(
    ("endpoint", "make"),
    [
        ("chat", lambda e: _chat(reasoning_effort=e)),
        ("chat", lambda e: _chat(reasoning={"effort": e})),
        ("responses", lambda e: _responses(reasoning={"effort": e})),
    ],
    ids=["chat-reasoning_effort", "chat-reasoning.effort", "responses"],
)
def test_every_effort_ollama_takes_is_answered_and_counted_as_it_maps_it(endpoint, make, effort):
    body = make(effort)
    reply = _send(endpoint, body)
    assert reply.status == 200, reply.body
    text = (prompt.openai_chat_prompt_text if endpoint == "chat" else prompt.responses_prompt_text)(body)
    assert _usage(reply) == len(load_encoding().encode(text, allowed_special="all"))


def test_the_mapping_is_ollama_s():
    """minimal → low; xhigh, ultra → max, which harmony's template writes as high; none → no
    thinking; empty → the model's default (thinking on)."""
    assert [think_of(e) for e in ("none", "minimal", "low", "medium", "high", "max", "xhigh", "ultra", "")] == [
        False, "low", "low", "medium", "high", "high", "high", "high", True,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        ("chat", _chat(reasoning_effort="bogus")),
        ("chat", _chat(reasoning={"effort": "bogus"}, reasoning_effort="low")),
        ("responses", _responses(reasoning={"effort": "bogus"})),
    ],
    ids=["chat", "chat-reasoning-first", "responses"],
)
def test_an_unknown_effort_gets_ollama_s_400(endpoint, body):
    reply = _send(endpoint, body)
    assert reply.status == 400
    error = json.loads(reply.body)["error"]
    assert error == {
        "message": f'invalid reasoning value: "bogus" {MUST}',
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


def test_reasoning_effort_is_ignored_beside_a_reasoning_object():
    """``FromChatRequest`` reads ``reasoning.effort`` when ``reasoning`` is set; the
    ``reasoning_effort`` string beside it is decoded and not looked at."""
    reply = _send("chat", _chat(reasoning={"effort": "high"}, reasoning_effort="bogus"))
    assert reply.status == 200, reply.body


@pytest.mark.parametrize(
    ("endpoint", "body", "message"),
    [
        ("chat", _chat(reasoning_effort=5), "number into Go struct field ChatCompletionRequest.reasoning_effort"),
        ("chat", _chat(reasoning={"effort": [1]}), "array into Go struct field Reasoning.reasoning.effort"),
        (
            "responses",
            _responses(reasoning={"effort": {"a": 1}}),
            "object into Go struct field ResponsesReasoning.reasoning.effort",
        ),
        (
            "responses",
            _responses(reasoning={"effort": True}),
            "bool into Go struct field ResponsesReasoning.reasoning.effort",
        ),
    ],
    ids=["chat-number", "chat-array", "responses-object", "responses-bool"],
)
def test_an_effort_that_is_not_a_string_is_go_s_decoding_400_not_a_500(endpoint, body, message):
    reply = _send(endpoint, body)
    assert reply.status == 400, reply.body
    assert json.loads(reply.body)["error"]["message"] == f"json: cannot unmarshal {message} of type string"


@pytest.mark.parametrize("effort", ["none", "xhigh", ""])
def test_other_profiles_keep_the_shared_schema_s_answer(effort):
    reply = _send("chat", _chat(reasoning_effort=effort), profile="vllm")
    assert reply.status == 400
    assert "reasoning_effort: Input should be 'minimal', 'low', 'medium' or 'high'" in reply.body.decode()


def test_a_refused_effort_plays_no_step():
    server = MockServer("clean-answer", profile="ollama", served_model_names=[MODEL])
    assert server.respond("chat", json.dumps(_chat(reasoning_effort="bogus")).encode(), {})[0].status == 400
    assert server.respond("chat", json.dumps(_chat()).encode(), {})[0].status == 200
    assert [entry.step for entry in server.requests] == [None, 0]


def test_go_quote_is_strconv_quote():
    assert go_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert go_quote("é\n\t\x00\x7f") == '"é\\n\\t\\x00\\x7f"'
    assert go_quote("\u2028\u00a0\U000e0001") == '"\\u2028\\u00a0\\U000e0001"'
    assert go_quote("\ud800") == '"\ufffd"'
