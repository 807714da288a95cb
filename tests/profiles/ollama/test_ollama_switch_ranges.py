"""Ollama's clock switches take only values whose replies can be written (t18 breaker #4).

``load_duration_ms`` beyond a date Python can hold gave every request an unscripted 500
(``ValueError: year 10056 is out of range`` from ``profiles/ollama/timeline.py``'s ``rfc3339``,
``OSError`` for 21 digits). Ollama's durations are Go ``time.Duration`` values (int64 ns,
``ollama/ollama@fb3076099:api/types.go`` ``Metrics``) and its ``created_at`` a ``time.Time``, whose
``MarshalJSON`` writes years 0-9999 only: the switch now stops at ``MAX_LOAD_DURATION_MS`` (2**62
ns), refused as any bad switch value is (400 for ``X-Mockoss-Switch``, a usage error for
``mockoss serve --switch``). The llama.cpp profile's rates are refused when not finite (a NaN
rate wrote ``null`` timings).
"""

from __future__ import annotations

import json

import pytest

from mockoss.cli import main
from mockoss.profiles.ollama import MAX_LOAD_DURATION_MS, OllamaProfile
from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "stream": False}
INT64 = 2**63 - 1


def _ask(server: MockServer, endpoint: str, switch: str):
    return server.respond(endpoint, json.dumps(CHAT).encode(), {"x-mockoss-switch": switch})[0]


@pytest.mark.parametrize("value", ["253402300800000", "999999999999999999999", str(MAX_LOAD_DURATION_MS + 1), "-1"])
@pytest.mark.parametrize("endpoint", ["ollama.chat", "chat"])
def test_a_load_duration_past_the_range_is_a_400_naming_it(value, endpoint):
    reply = _ask(MockServer("clean-answer", profile="ollama"), endpoint, f"load_duration_ms={value}")
    assert reply.status == 400, reply.body
    assert f"load_duration_ms must be an integer from 0 to {MAX_LOAD_DURATION_MS}" in reply.body.decode()


def test_the_largest_load_duration_gives_a_reply_go_can_read():
    reply = _ask(
        MockServer("clean-answer", profile="ollama"), "ollama.chat", f"load_duration_ms={MAX_LOAD_DURATION_MS}"
    )
    assert reply.status == 200, reply.body
    final = json.loads(reply.body)
    assert final["load_duration"] == MAX_LOAD_DURATION_MS * 1_000_000 <= final["total_duration"] <= INT64
    stamp = final["created_at"]
    assert stamp.endswith("Z") and 2026 < int(stamp[:4]) < 9999


def test_serve_refuses_the_switch_with_a_usage_error(capsys, monkeypatch):
    def served(*args, **kwargs):
        raise AssertionError("mockoss serve started with the switch")

    monkeypatch.setattr("mockoss.server.run.bind", served)
    args = ["serve", "--profile", "ollama", "--scenario", "clean-answer", "--port", "0"]
    assert main([*args, "--switch", "load_duration_ms=253402300800000"]) == 2
    err = capsys.readouterr().err
    assert "load_duration_ms must be an integer from 0 to" in err and "Traceback" not in err


def test_the_profile_refuses_it_when_built():
    with pytest.raises(ValueError, match="load_duration_ms must be an integer from 0 to"):
        OllamaProfile(load_duration_ms=MAX_LOAD_DURATION_MS + 1)
    assert OllamaProfile(load_duration_ms=0).load_duration_ms == 0


@pytest.mark.parametrize("value", [".nan", ".inf"])
@pytest.mark.parametrize("switch", ["prompt_tokens_per_second", "predicted_tokens_per_second"])
def test_llamacpp_rates_must_be_finite(switch, value):
    """``.nan`` (YAML's NaN) passed ``value <= 0`` and wrote ``"prompt_ms":null`` timings; ``.inf``
    wrote ``"prompt_per_second":null``: llama-server's ``result_timings`` are finite doubles."""
    reply = _ask(MockServer("clean-answer", profile="llamacpp"), "chat", f"{switch}={value}")
    assert reply.status == 400, reply.body
    assert f"{switch} must be a positive finite number" in reply.body.decode()
