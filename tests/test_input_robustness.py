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
    bogus = server.handle("responses", json.dumps({"model": _model(server), "input": [{"type": "bogus"}]}).encode(), {})
    assert reply.status == bogus.status


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


def _run(args, cache, **kw):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_ENCODINGS_BASE"}
    env["MOCKOSS_CACHE_DIR"] = str(cache)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120, **kw)


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
