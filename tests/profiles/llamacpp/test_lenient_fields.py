"""llama-server reads request fields leniently; the ``llamacpp`` profile now does too.

llama-server reads each field with ``json_value(body, key, default)``
(Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-common.h, build b9553), which gives
the default when the JSON value does not convert to the C++ type of the default; the fields are
read in ``oaicompat_chat_params_parse`` (``server-common.cpp``), ``params_from_json_cmpl``
(``server-task.cpp``) and, for ``/v1/responses``, ``server_chat_convert_responses_to_chatcmpl``
(``server-chat.cpp``). The profile used to validate bodies with the shared (vLLM) schema, so that
``temperature: "hot"`` was a 400 where llama-server answers 200, and ``max_tokens: "5"`` cut the
answer at 5 tokens where llama-server ignores it. Each test below failed on the old code
(mockoss/profiles/llamacpp/lenient.py is the new reading).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from mockoss import steps
from mockoss.server.app import create_app
from mockoss.server.core import MockServer

ANSWER = "one two three four five six seven eight nine ten eleven twelve"
MODEL = "ggml-org/gpt-oss-20b-GGUF"
USER = [{"role": "user", "content": "count"}]
CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"


def post(path: str, body: dict[str, Any], profile: str = "llamacpp") -> tuple[int, Any]:
    """One request to a fresh server scripted with :data:`ANSWER`: status and parsed reply
    (``"stream"`` for an event stream)."""
    server = MockServer(scenario=steps.script(steps.final(ANSWER)), profile=profile)
    http = TestClient(create_app(server), base_url="http://127.0.0.1:8080")
    reply = http.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        return reply.status_code, reply.text
    return reply.status_code, reply.json()


def answer(path: str, body: dict[str, Any]) -> tuple[str, str | None, int]:
    """The answer's text, finish reason (chat) and generated token count; asserts a 200."""
    status, reply = post(path, body)
    assert status == 200, reply
    if path == CHAT:
        choice = reply["choices"][0]
        return choice["message"]["content"], choice["finish_reason"], reply["usage"]["completion_tokens"]
    message = next(item for item in reply["output"] if item["type"] == "message")
    return message["content"][0]["text"], None, reply["usage"]["output_tokens"]


def chat(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": USER, **fields}


def responses(**fields: Any) -> dict[str, Any]:
    return {"model": MODEL, "input": "count", **fields}


WHOLE = answer(CHAT, chat())
CUT5 = answer(CHAT, chat(max_tokens=5))


# ------------------------------------------------------------------ read as absent: 200 with the default


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (CHAT, chat(temperature="hot")),  # float: a string is the default temperature
        (RESPONSES, responses(temperature="hot")),
        (CHAT, chat(top_p=[0.9])),
        (CHAT, chat(model=5)),  # read nowhere by a single-model server
        (CHAT, chat(include_reasoning=None)),  # a vLLM field llama-server never reads
        (CHAT, chat(reasoning_effort="xhigh")),  # read nowhere at b9553 (tools/server, common)
        (CHAT, chat(n="3")),  # int: a string is the default, 1
        (CHAT, chat(n=0.5)),
        (CHAT, chat(n=0)),
        (CHAT, chat(tool_choice="auto")),  # no tools: vLLM's check_tool_usage, not llama-server's
        (CHAT, chat(tool_choice="required")),
        (
            CHAT,
            chat(
                tools=[{"type": "function", "function": {"name": "f"}}],
                tool_choice={"type": "function", "function": {"name": "g"}},
            ),
        ),  # string: an object is "auto"
        (RESPONSES, responses(instructions=5)),  # json_value<string>: an empty system message
        (RESPONSES, responses(previous_response_id=5)),  # json_value<string>: "", not refused
        (RESPONSES, responses(reasoning="high")),  # kept by the converter, read by nothing
        (RESPONSES, responses(metadata=[1], include="x", store="maybe")),
        (RESPONSES, responses(tool_choice=None)),  # null: the default "auto"
        (RESPONSES, responses(tools=[5, {"type": 7}])),  # not function tools: the converter skips them
    ],
)
def test_a_field_of_the_wrong_type_is_read_as_absent(path: str, body: dict[str, Any]) -> None:
    """Old: a 400 naming the field (the vLLM schema). New: the whole answer, as llama-server
    gives it with the field's default."""
    assert answer(path, body)[0] == ANSWER


def test_a_vllm_profile_still_refuses_them() -> None:
    """The reading is the llamacpp profile's own: vLLM's schema is unchanged for vllm."""
    status, reply = post(CHAT, chat(temperature="hot"), profile="vllm")
    assert status == 400
    assert "temperature" in json.dumps(reply)


# ------------------------------------------------------------------ the limit, as n_predict


@pytest.mark.parametrize("path", [CHAT, RESPONSES])
def test_a_string_limit_is_no_limit(path: str) -> None:
    """Old: pydantic's lax int read ``"5"`` as 5 and cut the answer. New: ``json_value<int>``
    gives the default ``n_predict`` (-1): the whole answer."""
    field = "max_tokens" if path == CHAT else "max_output_tokens"
    body = chat(**{field: "5"}) if path == CHAT else responses(**{field: "5"})
    assert answer(path, body)[0] == ANSWER
    assert answer(path, body)[2] == WHOLE[2]


@pytest.mark.parametrize("path", [CHAT, RESPONSES])
def test_a_float_limit_is_truncated(path: str) -> None:
    """Old: 400 ``got a number with a fractional part``. New: nlohmann converts 5.7 to 5."""
    field = "max_tokens" if path == CHAT else "max_output_tokens"
    body = chat(**{field: 5.7}) if path == CHAT else responses(**{field: 5.7})
    text, _, tokens = answer(path, body)
    assert (text, tokens) == (CUT5[0], 5)


def test_minus_one_is_no_limit_and_zero_is_one_token() -> None:
    """Old: 400 ``greater than or equal to 1`` for both. New: -1 is llama.cpp's "no limit"; any
    other value below 1 stops after the first token (``server_slot::has_budget`` is checked once a
    token is decoded, Telosnex/fllama@1d28604d:src/llama.cpp/tools/server/server-context.cpp)."""
    assert answer(CHAT, chat(max_tokens=-1)) == WHOLE
    assert answer(CHAT, chat(max_tokens=0))[1:] == ("length", 1)
    assert answer(CHAT, chat(max_tokens=-7))[1:] == ("length", 1)


def test_a_limit_out_of_int32_is_no_limit() -> None:
    """1e10 or 2**31 read as ``-2**31``; ``has_budget``'s ``n_predict - n_decoded`` then wraps
    (signed overflow) to a large budget: the whole answer, not one token (a review's finding)."""
    assert answer(CHAT, chat(max_tokens=1e10)) == WHOLE
    assert answer(CHAT, chat(max_tokens=2**31)) == WHOLE
    assert answer(CHAT, chat(max_tokens=-(2**31) + 1))[1:] == ("length", 1)


@pytest.mark.parametrize("field", ["max_tokens", "n", "n_predict"])
def test_an_integer_past_a_double_is_read_as_nlohmann_reads_it(field: str) -> None:
    """A 400-digit integer literal: nlohmann parses it with strtod (inf), ``get<int>()`` gives
    ``-2**31``: no limit (``n``: one choice), not an unscripted 500 (Python's ``float()`` of it
    raises OverflowError; found by a fuzzer, session 18)."""
    assert answer(CHAT, chat(**{field: 10**400})) == WHOLE


def test_n_predict_wins_and_a_bad_max_completion_tokens_falls_back() -> None:
    """``n_predict`` is read first, then ``max_completion_tokens``, then ``max_tokens``
    (``params_from_json_cmpl``). Old: ``n_predict`` ignored (cut at 8), and a string
    ``max_completion_tokens`` a 400. New: cut at 3, and at ``max_tokens``' 5."""
    assert answer(CHAT, chat(n_predict=3, max_tokens=8))[1:] == ("length", 3)
    assert answer(CHAT, chat(max_completion_tokens="x", max_tokens=5)) == CUT5


def test_a_responses_body_max_tokens_is_the_limit() -> None:
    """The converter keeps every field it does not rename, so a Responses body's own
    ``max_tokens`` (without ``max_output_tokens``) is the chat parse's limit. Old: ignored."""
    assert answer(RESPONSES, responses(max_tokens=5))[2] == 5
    assert answer(RESPONSES, responses(max_tokens=5, max_output_tokens=None))[2] == WHOLE[2]


# ------------------------------------------------------------------ booleans are only booleans


@pytest.mark.parametrize("value", ["true", 1])
def test_a_stream_that_is_not_a_boolean_is_not_a_stream(value: Any) -> None:
    """``json_value<bool>``: only a JSON boolean. Old: pydantic's lax bool streamed."""
    status, reply = post(CHAT, chat(stream=value))
    assert status == 200
    assert reply["choices"][0]["message"]["content"] == ANSWER


def test_include_usage_that_is_not_a_boolean_is_off() -> None:
    """Old: ``include_usage: 1`` added the usage chunk. New: no usage chunk."""
    on = post(CHAT, chat(stream=True, stream_options={"include_usage": True}))[1]
    off = post(CHAT, chat(stream=True, stream_options={"include_usage": 1}))[1]
    assert '"choices":[],' in on
    assert '"choices":[],' not in off


# ------------------------------------------------------------------ what stays refused


@pytest.mark.parametrize("body", [chat(n=2), chat(n=2.5), chat(n_cmpl=3)])
def test_more_than_one_choice_stays_mockoss_refusal(body: dict[str, Any]) -> None:
    """``n`` (or llama.cpp's ``n_cmpl``, read first) of 2 or more asks for several choices,
    which one scripted completion cannot give: mockoss's own 400, with the int llama-server reads
    (old: ``n_cmpl`` ignored, ``2.5`` pydantic's fractional-part 400)."""
    status, reply = post(CHAT, body)
    assert status == 400
    assert "is not emulated" in reply["error"]["message"]


# ------------------------------------------------------------------ the reading itself


def test_valid_bodies_are_passed_on_untouched() -> None:
    """A body the schema reads as llama-server does is the same object: no copy, the same
    request (the reply digests of valid bodies are unchanged)."""
    from mockoss.profiles.llamacpp.lenient import lenient_body

    bodies = [
        ("chat", chat()),
        ("chat", chat(stream=True, stream_options={"include_usage": True}, max_tokens=7, temperature=0.2, n=1)),
        ("chat", chat(max_completion_tokens=9, max_tokens=4, tool_choice="none", tools=[], reasoning_effort="low")),
        (
            "responses",
            responses(max_output_tokens=7, store=False, reasoning={"effort": "low"}, tools=[{"type": "web_search"}]),
        ),
        ("responses", responses(instructions="be brief", tool_choice={"type": "function", "name": "f"}, include=["x"])),
    ]
    for endpoint, body in bodies:
        assert lenient_body(endpoint, body) is body, body


@pytest.mark.parametrize(
    ("value", "read"),
    [(5, 5), (5.7, 5), (-0.5, 0), (True, 1), (False, 0), (2**32 + 5, 5), (2**31, -(2**31)), (1e10, -(2**31)), (2**64, -(2**31)), (10**400, -(2**31)), (-(10**400), -(2**31)),
     ("5", None), (None, None), ([5], None), ({"n": 5}, None)],
)  # fmt: skip
def test_cpp_int(value: Any, read: int | None) -> None:
    """nlohmann's ``get<int>()`` of each JSON value (``None``: a ``type_error``, the default)."""
    from mockoss.profiles.llamacpp.lenient import cpp_int

    assert cpp_int(value) == read
