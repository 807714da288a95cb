"""Request data nested nearly as deep as the body parser allows: a 400 in the profile's shape or
an answer, never an unscripted 500 ("mockoss internal error").

Each profile echoes or re-serialises parts of a Responses request (``metadata``, ``tools``,
``text``, ``reasoning``, ...). The body is parsed near the top of the stack; the echo ran
:mod:`json`'s recursive encoder further down, so a body the parser had just accepted raised
``RecursionError`` there (vLLM: ``responses_echo.echo_templates`` -> ``profiles/wire.dumps``).
vLLM itself refuses a ``metadata`` value that is not a string (``ResponsesRequest.metadata:
Metadata``, openai-python's ``Dict[str, str]``;
vllm-project/vllm@010a69cea9ac46d2953fa673c3b814f922d1b194:vllm/entrypoints/openai/responses/protocol.py),
SGLang does not (``metadata: Optional[Dict[str, Any]]``,
sgl-project/sglang@004c82e07d876f6e4a0ad6e15325706b0f478f1a:python/sglang/srt/entrypoints/openai/protocol.py).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from mockoss.jsonbody import parse_json
from mockoss.profiles.registry import PROFILES
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
INTERNAL = b"mockoss internal error"


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _deepest(make: Any) -> int:
    """The depth ``n`` of the deepest ``make(n)`` body this stack still parses (``json.loads``
    recurses once per level), less a margin for the few frames between here and the server's
    parse: a body the server reads, whose echo then nests about as deep."""
    low, high = 1, sys.getrecursionlimit()
    while low < high:
        mid = (low + high + 1) // 2
        try:
            parse_json(_raw(make(mid)))
        except RecursionError:
            high = mid - 1
        else:
            low = mid
    assert low > 100
    return low - 15


def _raw(body: dict[str, Any]) -> bytes:
    try:
        return json.dumps(body).encode()
    except RecursionError:  # json.dumps recurses as the parser does; build the text flat
        from mockoss.profiles.wire import dumps

        return dumps(body).encode()


def _body(field: str, depth: int) -> dict[str, Any]:
    deep = _nested(depth)
    base: dict[str, Any] = {"model": MODEL, "input": "hi"}
    fields: dict[str, dict[str, Any]] = {
        "metadata": {"metadata": {"k": deep}},
        "text.format.schema": {"text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object", "properties": {"p": deep}}}}},
        "tools.parameters": {"tools": [{"type": "function", "name": "f", "description": "d", "parameters": deep}]},
        "reasoning": {"reasoning": {"effort": deep}},
        "instructions": {"instructions": [deep]},
        "tool_choice": {"tool_choice": {"type": "function", "name": deep}},
        "user": {"user": deep},
        "input item": {"input": [{"type": "message", "role": "user", "content": "hi", "x": deep}]},
    }
    return {**base, **fields[field]}


FIELDS = ["metadata", "text.format.schema", "tools.parameters", "reasoning", "instructions", "tool_choice", "user", "input item"]


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_deep_echoed_fields_never_an_internal_error(profile: str, stream: bool) -> None:
    server = MockServer(scenario="clean-answer", profile=profile, served_model_names=[MODEL])
    if "responses" not in server._base_profile.endpoints:
        pytest.skip(f"{profile} serves no /v1/responses")
    for field in FIELDS:
        depth = _deepest(lambda n, field=field: {**_body(field, n), "stream": stream})
        raw = _raw({**_body(field, depth), "stream": stream})
        reply = server.handle("responses", raw, {})
        assert INTERNAL not in reply.body and all(INTERNAL not in f for f in reply.frames), (field, reply.status, reply.body[:300])
        assert b"nested deeper than the JSON parser" not in reply.body, (field, "the body must parse: the test would prove nothing")
        assert reply.status < 500 or profile == "gptoss-reference", (field, reply.status, reply.body[:300])


def test_vllm_refuses_deep_metadata_as_pydantic_does() -> None:
    """The reported case: a 990-deep ``metadata`` value was a 500; vLLM answers 400 (pydantic
    ``string_type`` at ``metadata.k``), in the error shape mockoss gives its other validation errors."""
    server = MockServer(scenario="clean-answer")
    depth = min(990, _deepest(lambda n: _body("metadata", n)))
    reply = server.handle("responses", _raw(_body("metadata", depth)), {})
    assert reply.status == 400
    assert json.loads(reply.body) == {
        "error": {"message": "Invalid request: metadata.k: Input should be a valid string", "type": "BadRequestError", "param": "metadata.k", "code": 400}
    }


@pytest.mark.parametrize(
    ("metadata", "message", "param"),
    [
        ({"k": 1}, "Invalid request: metadata.k: Input should be a valid string", "metadata.k"),
        ({"a": "ok", "b": [1], "c": None}, "Invalid request: metadata.b: Input should be a valid string; metadata.c: Input should be a valid string", "metadata.b"),
        (["x"], "Invalid request: metadata: Input should be a valid dictionary", "metadata"),  # the shared schema's check
    ],
)
def test_vllm_metadata_values_must_be_strings(metadata: Any, message: str, param: str) -> None:
    server = MockServer(scenario="clean-answer")
    reply = server.handle("responses", _raw({"model": MODEL, "input": "hi", "metadata": metadata}), {})
    assert reply.status == 400
    error = json.loads(reply.body)["error"]
    assert (error["message"], error["param"]) == (message, param)


def test_vllm_and_openai_echo_string_metadata() -> None:
    for profile in ("vllm", "openai"):
        server = MockServer(scenario="clean-answer", profile=profile)
        reply = server.handle("responses", _raw({"model": MODEL, "input": "hi", "metadata": {"k": "v", "é": ""}}), {})
        assert reply.status == 200 and json.loads(reply.body)["metadata"] == {"k": "v", "é": ""}


def test_openai_refuses_non_string_metadata_in_its_shape() -> None:
    server = MockServer(scenario="clean-answer", profile="openai")
    reply = server.handle("responses", _raw({"model": MODEL, "input": "hi", "stream": True, "metadata": {"k": {"a": 1}}}), {})
    assert reply.status == 400
    assert json.loads(reply.body)["error"] == {
        "message": "Invalid request: metadata.k: Input should be a valid string", "type": "invalid_request_error", "param": "metadata.k", "code": None
    }


def test_sglang_accepts_and_echoes_nested_metadata() -> None:
    """SGLang's ``metadata`` is ``Dict[str, Any]``: nested values are echoed, at any depth."""
    server = MockServer(scenario="clean-answer", profile="sglang")
    depth = _deepest(lambda n: _body("metadata", n))
    reply = server.handle("responses", _raw(_body("metadata", depth)), {})
    assert reply.status == 200
    echoed = reply.body.decode()
    assert echoed.count('{"a":') == depth and '"metadata":{"k":{"a":' in echoed


def test_a_body_too_deep_to_parse_is_said_so() -> None:
    """JSON nested deeper than the parser recurses is a 400 that says so, not "not a JSON object"."""
    raw = b'{"model":"m","input":"hi","metadata":' + b'{"a":' * 100_000 + b"1" + b"}" * 100_001
    for profile in ("vllm", "sglang", "openai"):
        reply = MockServer(scenario="clean-answer", profile=profile).handle("responses", raw, {})
        assert reply.status == 400
        assert b"the body is nested deeper than the JSON parser allows" in reply.body, reply.body
    reply = MockServer(scenario="clean-answer").handle("responses", b"{not json", {})
    assert reply.status == 400 and b"the body is not a JSON object" in reply.body
