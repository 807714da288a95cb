"""Bad input never gets an unscripted 500 (breaker report D4, D5, D6, D13, D14, D15).

Each test here failed before its fix; the sources of the expected answers are cited at each test.
"""

from __future__ import annotations

import json

import pytest

from mockoss.server.core import MockServer

INTERNAL = b"mockoss internal error"

RESPONSES_PROFILES = ["vllm", "vllm-2025", "ollama", "llamacpp", "lmstudio", "openai", "sglang", "trtllm", "vllm-mlx"]


def _server(profile: str, **kw) -> MockServer:
    return MockServer(scenario="clean-answer", profile=profile, **kw)


def _model(server: MockServer) -> str:
    return server.served_model_names[0]


# D4: a Responses input item whose `type` is a list or an object was an unhashable key for
# `kind in MODEL_ITEMS` (mockoss/scenario/conversation.py) -> TypeError 500. None of these profiles
# validates an input item's type (a string such as "bogus" is answered 200), so an unhashable one
# is answered like it: the item is simply not a model item.
@pytest.mark.parametrize("profile", RESPONSES_PROFILES)
@pytest.mark.parametrize("kind", [[1], {"a": 1}])
def test_responses_item_with_unhashable_type_is_not_a_500(profile, kind):
    server = _server(profile)
    body = json.dumps({"model": _model(server), "input": [{"type": kind}]}).encode()
    reply = server.handle("responses", body, {})
    assert reply.status < 500, reply.body[:300]
    assert INTERNAL not in reply.body
    if profile == "ollama":  # Go decodes the item's type into a string first: its 400 (cc42d07, go_decode)
        assert reply.status == 400 and b"json: cannot unmarshal" in reply.body, reply.body[:300]
        return
    bogus = server.handle("responses", json.dumps({"model": _model(server), "input": [{"type": "bogus"}]}).encode(), {})
    assert reply.status == bogus.status


@pytest.mark.parametrize("call_id", [[1], {"a": 1}])
def test_sglang_unhashable_call_id_is_not_a_500(call_id):
    # The same pattern in sglang/responses_checks.py (`call_id in calls`, a set), found by a type-swap
    # sweep of every profile and endpoint (13,632 requests) after the D4 fix.
    server = _server("sglang")
    for item in (
        {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call_id, "output": "o"},
    ):
        reply = server.handle("responses", json.dumps({"model": _model(server), "input": [item]}).encode(), {})
        assert reply.status < 500 and INTERNAL not in reply.body, reply.body[:300]


def test_conversation_skips_unhashable_item_type():
    from mockoss.scenario.conversation import _responses

    conversation, turns = _responses([{"type": [1]}, {"type": {"a": 1}}, {"role": "user", "content": "hi"}])
    assert conversation == [("user", "hi")]
    assert turns == 1


# D14: a scenario name over the file system's 255-byte limit made `Path.is_file` raise
# ENAMETOOLONG (mockoss/scenario/loader.py load_named) -> 500 quoting the install path.
@pytest.mark.parametrize("profile", ["vllm", "ollama", "llamacpp"])
@pytest.mark.parametrize("length", [250, 251, 4000])
def test_overlong_scenario_name_is_the_unknown_name_400(profile, length, tmp_path):
    server = _server(profile, scenario_dirs=[tmp_path])
    body = json.dumps({"model": _model(server), "messages": [{"role": "user", "content": "hi"}]}).encode()
    reply = server.handle("chat", body, {"x-mockoss-scenario": "a" * length})
    assert reply.status == 400, reply.body[:300]
    assert b"unknown scenario" in reply.body
    assert INTERNAL not in reply.body
    assert b"site-packages" not in reply.body and b"mockoss/scenarios" not in reply.body


def test_overlong_scenario_name_with_scenario_dirs(tmp_path):
    from mockoss.scenario.loader import ScenarioError, load_named

    with pytest.raises(ScenarioError, match="unknown scenario"):
        load_named("b" * 300, [tmp_path])


# D15: `tokens_per_s` had only `gt=0`, so X-Mockoss-Transport: tokens_per_s=1e-300 scheduled a
# reply ~1e300 s away, though every other delay is capped at MAX_DELAY_MS (ttft_ms=1e9 is a 400).
@pytest.mark.parametrize("rate", ["1e-300", "0.001"])
def test_tokens_per_s_below_one_token_per_max_delay_is_a_400(rate):
    server = _server("vllm")
    body = json.dumps({"model": _model(server), "messages": [{"role": "user", "content": "hi"}]}).encode()
    reply = server.handle("chat", body, {"x-mockoss-transport": f"tokens_per_s={rate}"})
    assert reply.status == 400, reply.body[:300]
    assert b"tokens_per_s" in reply.body and b"600000 ms" in reply.body


def test_tokens_per_s_floor_is_one_token_per_max_delay():
    from mockoss.scenario.transport import MAX_DELAY_MS, TransportError, TransportSpec

    assert TransportSpec.from_data({"tokens_per_s": 1000.0 / MAX_DELAY_MS}).tokens_per_s == 1000.0 / MAX_DELAY_MS
    with pytest.raises(TransportError, match="tokens_per_s"):
        TransportSpec.from_data({"tokens_per_s": 1000.0 / MAX_DELAY_MS / 2})


# D13: a MOCKOSS_CACHE_DIR that cannot be created raised a raw OSError from the vocabulary unpack:
# `mockoss serve` died with a traceback (exit 1), and in process the loader reported it as an
# error of the shipped clean-answer.yaml. It is a vocabulary/cache fault (issue 9, item 5).
def _uncreatable(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    return blocker / "cache"  # a directory under a regular file: mkdir fails on any user, root too


def test_an_uncreatable_cache_dir_is_a_vocabulary_error(tmp_path, monkeypatch):
    from mockoss.harmony.encoding import VocabularyError, vocabulary_dir

    monkeypatch.delenv("TIKTOKEN_ENCODINGS_BASE", raising=False)
    cache = _uncreatable(tmp_path)
    monkeypatch.setenv("MOCKOSS_CACHE_DIR", str(cache))
    with pytest.raises(VocabularyError, match="MOCKOSS_CACHE_DIR") as info:
        vocabulary_dir()
    assert str(cache) in str(info.value)


def _run(args, cache):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_ENCODINGS_BASE"}
    env["MOCKOSS_CACHE_DIR"] = str(cache)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120, check=False)


def test_serve_with_an_uncreatable_cache_dir_says_so_in_one_line(tmp_path):
    done = _run(["-m", "mockoss", "serve", "--scenario", "clean-answer", "--port", "0"], _uncreatable(tmp_path))
    assert done.returncode == 2, done.stderr[-500:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mockoss: error: the o200k_base vocabulary cannot be loaded: ")
    assert "cache directory" in lines[0] and "Traceback" not in done.stderr


def test_in_process_an_uncreatable_cache_dir_is_not_blamed_on_a_scenario_file(tmp_path):
    code = "from mockoss.server.core import MockServer; MockServer(scenario='clean-answer')"
    done = _run(["-c", code], _uncreatable(tmp_path))
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("mockoss.harmony.encoding.VocabularyError: cannot unpack"), last
    assert "clean-answer.yaml" not in done.stderr


# D5: Ollama decodes bodies with Go's encoding/json (gin ShouldBindJSON; ollama/ollama@fb307609
# server/routes.go GenerateHandler, middleware/openai.go ResponsesMiddleware): NaN/Infinity are
# scanner errors, a number beyond a double is an UnmarshalTypeError for a float64/any field; both
# a 400 {"error": err.Error()} (the OpenAI-compatible routes: openai.NewError's shape). mockoss gave
# an unscripted 500 (int(inf) in num_predict; "json: unsupported value: inf" writing the echo).
@pytest.mark.parametrize(
    ("endpoint", "raw", "message"),
    [
        (
            "ollama.generate",
            b'{"model":"gpt-oss:20b","prompt":"hi","options":{"num_predict":1e400}}',
            "json: cannot unmarshal number 1e400 into Go struct field GenerateRequest.options of type float64",
        ),
        (
            "ollama.chat",
            b'{"model":"gpt-oss:20b","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":-1e400}}',
            "json: cannot unmarshal number -1e400 into Go struct field ChatRequest.options of type float64",
        ),
        (
            "ollama.generate",
            b'{"model":"gpt-oss:20b","prompt":"hi","options":{"num_predict":NaN}}',
            "invalid character 'N' looking for beginning of value",
        ),
        (
            "ollama.chat",
            b'{"model":"gpt-oss:20b","messages":[{"role":"user","content":"hi"}],"options":{"x":-Infinity}}',
            "invalid character 'I' in numeric literal",
        ),
        (
            "ollama.generate",
            b'{"model":"gpt-oss:20b","prompt":"hi","keep_alive":1e400}',
            "json: cannot unmarshal number 1e400 into Go struct field GenerateRequest.keep_alive of type float64",
        ),
        (
            "responses",
            b'{"model":"gpt-oss:20b","input":"hi","temperature":1e400}',
            "json: cannot unmarshal number 1e400 into Go struct field ResponsesRequest.temperature of type float64",
        ),
        (
            "responses",
            b'{"model":"gpt-oss:20b","input":"hi","top_p":1e999}',
            "json: cannot unmarshal number 1e999 into Go struct field ResponsesRequest.top_p of type float64",
        ),
        (
            "responses",
            (
                b'{"model":"gpt-oss:20b","input":"hi","tools":[{"type":"function","name":"f",'
                b'"parameters":{"type":"object","properties":{"x":{"type":"number","maximum":1e400}}}}]}'
            ),
            "json: cannot unmarshal number 1e400 into Go struct field ResponsesTool.tools.parameters of type float64",
        ),
    ],
)
def test_ollama_answers_nonfinite_numbers_as_gos_decoder(endpoint, raw, message):
    reply = _server("ollama").handle(endpoint, raw, {})
    assert reply.status == 400, reply.body[:300]
    error = json.loads(reply.body)["error"]
    assert (error if isinstance(error, str) else error["message"]) == message


def test_ollama_skips_a_huge_number_in_a_field_it_does_not_declare():
    # Go's decoder skips an unknown field's value without converting it; so does mockoss (no 400,
    # no 500), and a body merely mentioning NaN in a string is untouched.
    server = _server("ollama")
    for raw in (
        b'{"model":"gpt-oss:20b","prompt":"hi","stream":false,"not_a_field":1e400}',
        b'{"model":"gpt-oss:20b","prompt":"say NaN, Infinity and 1e400","stream":false}',
    ):
        reply = server.handle("ollama.generate", raw, {})
        assert reply.status == 200, reply.body[:300]
        json.loads(reply.body)


def test_ollama_still_refuses_a_declared_field_after_an_unknown_one_it_skipped():
    # A review's reproducer: the first out-of-range number was in an unknown field, so the check
    # stopped there and answered 200, while Go skips that field and fails on `options`.
    raw = b'{"model":"gpt-oss:20b","prompt":"hi","stream":false,"not_a_field":1e400,"options":{"temperature":1e400}}'
    reply = _server("ollama").handle("ollama.generate", raw, {})
    assert reply.status == 400
    assert json.loads(reply.body)["error"] == (
        "json: cannot unmarshal number 1e400 into Go struct field GenerateRequest.options of type float64"
    )


def _strict(text):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _all_json(reply):
    """Every body/frame of ``reply`` parses as strict JSON (an SSE frame: each data line)."""
    for chunk in [reply.body, *(reply.frames or ())]:
        text = chunk.decode() if isinstance(chunk, bytes) else str(chunk)
        if not text.strip():
            continue
        if "data:" in text:
            for line in text.splitlines():
                if line.startswith("data:") and line[5:].strip() != "[DONE]":
                    _strict(line[5:])
        else:
            _strict(text)


# D6: json.loads reads 1e400 as inf and NaN as nan; echoed as is, the 200 reply held `Infinity`
# (not JSON). The Python servers' pydantic-core serializer writes them as null (ser_json_inf_nan
# default; vllm-project/vllm@f6e9325 responses/api_router.py streams model_dump_json).
ECHO_PROFILES = ["vllm", "vllm-2025", "vllm-0.10.1", "openai", "lmstudio", "sglang", "trtllm", "vllm-mlx", "llamacpp"]


@pytest.mark.parametrize("profile", ECHO_PROFILES)
@pytest.mark.parametrize("stream", [False, True])
def test_nonfinite_numbers_are_never_echoed_as_invalid_json(profile, stream):
    server = _server(profile)
    raw = (
        b'{"model":"%s","input":"hi","stream":%s,"temperature":1e400,"top_p":NaN,"metadata":{"a":"b"},'
        b'"tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object",'
        b'"properties":{"x":{"type":"number","maximum":-1e400}}}}]}'
    ) % (_model(server).encode(), b"true" if stream else b"false")
    reply = server.handle("responses", raw, {})
    assert reply.status < 500 and INTERNAL not in reply.body, reply.body[:300]
    _all_json(reply)


def test_finite_replaces_only_nonfinite_floats():
    from mockoss.profiles.wire import dumps, dumps_json, finite

    body = {"a": float("inf"), "b": [1, 2.5, float("nan"), {"c": -float("inf"), "d": "NaN"}], "e": True}
    assert finite(body) == {"a": None, "b": [1, 2.5, None, {"c": None, "d": "NaN"}], "e": True}
    plain = {"a": 1.5, "b": [1, "x"]}
    assert finite(plain) is plain
    assert dumps(body) == '{"a":null,"b":[1,2.5,null,{"c":null,"d":"NaN"}],"e":true}'
    assert json.loads(dumps_json(body, indent=2)) == finite(body)


def test_go_style_encoder_writes_nonfinite_as_null():
    from mockoss.profiles.ollama.gojson import dumps

    assert dumps({"a": [float("inf"), 1.5]}) == '{"a":[null,1.5]}'


def test_sglang_responses_tool_choice_whose_function_is_not_an_object_is_not_a_500():
    # Found by fuzzing the final main (seed 77): AttributeError in named_choice.
    raw = b'{"model":"openai/gpt-oss-20b","input":"hi","stream":false,"tool_choice":{"function":["high",57],"type":"function"}}'
    reply = _server("sglang").handle("responses", raw, {})
    assert reply.status != 500 and b"internal error" not in reply.body, reply.body[:300]


def test_ollama_a_body_that_only_says_nan_in_text_is_answered():
    # The words NaN / Infinity inside strings are text, not Go scanner errors.
    raw = b'{"model":"gpt-oss:20b","prompt":"NaN and Infinity are words","stream":false}'
    assert _server("ollama").handle("ollama.generate", raw, {}).status == 200


def test_ollama_an_integer_just_below_2_to_the_1024_is_out_of_range_too():
    # A review: 2**1024 - 1 overflows a double (float() raises) but has a bit length of 1024.
    for n in (2**1024 - 1, 2**1024 - 2**970):
        raw = b'{"model":"gpt-oss:20b","prompt":"hi","stream":false,"options":{"temperature":%d}}' % n
        reply = _server("ollama").handle("ollama.generate", raw, {})
        assert reply.status == 400 and b"cannot unmarshal number" in reply.body, reply.body[:200]
    raw = b'{"model":"gpt-oss:20b","prompt":"hi","stream":false,"options":{"num_ctx":%d}}' % (2**1024 - 2**970 - 1)
    assert _server("ollama").handle("ollama.generate", raw, {}).status != 500
