"""Crashes found by ``benchmarks/bench_fuzz.py`` (issue 9: "unchanged: 0 crashes under the fuzz
and soak"), each as its minimal reproducer. Each test failed before its fix.
"""

from __future__ import annotations

import json

import httpx
import pytest

from mockoss.scenario.loader import ScenarioError, load_scenario
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

# bench_fuzz.py --parts http --profiles vllm-mlx --seed 1 (its control-route cases): a scenario
# uploaded to POST /mockoss/scenario nested 5,000 levels deep. PyYAML's composer recurses once per
# level and raised RecursionError out of the loader, which only turns yaml.YAMLError into a
# ScenarioError: Starlette's plain 500 "Internal Server Error" and a traceback in the server log.
# The same file given to `mockoss serve --scenario` or `mockoss validate` died with the traceback.
# Every other YAML problem of a scenario is a ScenarioError (README "Scenario files": "an invalid
# file is rejected with its file, line and field"); the switch header already answers this
# nesting with a 400 (mockoss.server.replies._parse_switches, "value nested too deep").
DEEP = "version: 1\nsteps: [{completion: {raw: " + "[" * 5000 + "x" + "]" * 5000 + "}}]\n"
DEEP_JSON = '{"version": 1, "rules": true, "extra": ' + "[" * 5000 + "]" * 5000 + "}"


@pytest.mark.parametrize("text", [DEEP, DEEP_JSON], ids=["yaml", "json"])
def test_a_scenario_nested_past_the_yaml_parser_is_a_scenario_error(tmp_path, text):
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=r"deep\.yaml.*nested too deep"):
        load_scenario(str(path))


def test_uploading_a_scenario_nested_past_the_yaml_parser_is_a_400():
    server = ThreadedServer(MockServer(scenario="clean-answer")).start()
    try:
        with httpx.Client(timeout=60) as client:
            answer = client.post(
                server.url + "/mockoss/scenario?name=fz&test_id=t1", content=DEEP, headers={"content-type": "application/yaml"}
            )
            assert answer.status_code == 400, answer.text[:300]
            assert "upload:fz.yaml" in answer.text and "nested too deep" in answer.text
            # The server still answers, and the session kept its scenario.
            chat = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}
            assert client.post(server.url + "/v1/chat/completions", json=chat, headers={"x-mockoss-test-id": "t1"}).status_code == 200
    finally:
        server.stop()


# Not a crash, found while sizing bench_fuzz.py's HTTP cases: over HTTP a body of 256 KiB or more (or
# with a long unbroken run of text) had its prompt counted in the worker process before the request
# was validated (mockoss.server.offload.Gate.respond: count_prompt_tokens, then MockServer.respond).
# A request refused anyway paid the whole count first: 2,000 messages of one 10,000-character word
# (20 MB) naming an unknown model took 57.7 s to get Ollama's 404 over HTTP, 0.06 s in process.
# vLLM checks the model before it renders the prompt (vllm-project/vllm serving_chat.py
# create_chat_completion: _check_model first). MockServer.respond now calls the worker's count
# (prelock.PROMPT_COUNTER) once the request passed validation, before its lock.
def test_a_big_request_refused_by_validation_is_not_counted_first(monkeypatch):
    from mockoss.server import offload

    counted = []
    real = offload.count_in_worker

    def spy(endpoint, raw):
        counted.append(endpoint)
        return real(endpoint, raw)

    monkeypatch.setattr(offload, "count_in_worker", spy)
    server = ThreadedServer(MockServer(scenario="clean-answer")).start()
    try:
        body = {"model": "no-such-model", "messages": [{"role": "user", "content": "word " * 60_000}]}
        with httpx.Client(timeout=60) as client:
            answer = client.post(server.url + "/v1/chat/completions", json=body)
            assert answer.status_code == 404, answer.text[:300]
            assert counted == []
            body["model"] = "openai/gpt-oss-20b"  # the same body, valid: counted in the worker process
            answer = client.post(server.url + "/v1/chat/completions", json=body)
        assert answer.status_code == 200, answer.text[:300]
        assert counted == ["chat"]
        direct = MockServer(scenario="clean-answer").handle("chat", json.dumps(body).encode(), {})
        assert answer.json()["usage"]["prompt_tokens"] == json.loads(direct.body)["usage"]["prompt_tokens"]
    finally:
        server.stop()
        offload.shutdown()
