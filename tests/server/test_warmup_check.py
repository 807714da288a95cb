"""The warm-up decision is taken once per request, through MockServer's public ``warm_target``.

A first request of a shape on a long scripted answer over HTTP passes the short path
(:mod:`mockoss.server.fastpath`), falls back to the gate (:class:`mockoss.server.offload.Gate`),
then runs on a worker thread (:func:`mockoss.server.warmup.warmed`); each asked which long
completions to warm (the body's shape, the step the shared cursors will play), three times per
request, and read the server's private state to do so (player cursors, per-header profiles, the
lock, loaded scenarios). Now the first answer is handed on (a context variable of the request's
task, which the worker thread runs a copy of), and the server offers what warm-up reads.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from starlette.testclient import TestClient
from warmup_support import watch_warm_ups  # tests/server is on sys.path

from mockoss.scenario.loader import scenario_from_data
from mockoss.server import warm_record, warmup
from mockoss.server.app import create_app
from mockoss.server.core import MockServer

WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog")


def _long_scenario(tag: str, tokens: int = 1500):
    text = " ".join(WORDS[i % len(WORDS)] for i in range(tokens))
    step = {"completion": {"messages": [{"channel": "analysis", "content": tag}, {"channel": "final", "content": text}]}}
    return scenario_from_data({"steps": [step]}, name=f"long-{tag}", default_version=True)


def _count(monkeypatch, name: str, module=warmup) -> list[int]:
    calls = [0]
    real = getattr(module, name)

    def counting(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def test_the_first_request_over_http_decides_its_warm_up_once(monkeypatch):
    server = MockServer(scenario=_long_scenario("decided-once"))
    predicted = _count(monkeypatch, "_predicted", warm_record)
    parsed = _count(monkeypatch, "parse_json_and_hand_on")
    warm_ups = watch_warm_ups(monkeypatch, server)
    model = server.info.served_model_names[0]
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()
    with TestClient(create_app(server), base_url="http://127.0.0.1:8000") as client:
        response = client.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200
    assert len(warm_ups) == 1  # warmed, before the lock
    assert predicted[0] == 1, f"the step to warm was predicted {predicted[0]} times"
    assert parsed[0] <= 1, f"the body was parsed {parsed[0]} times to decide"


def test_a_request_of_another_shape_in_the_same_task_is_decided_afresh(monkeypatch):
    """The handed-on decision is the request's own: another body (another shape) asks again."""
    server = MockServer(scenario=_long_scenario("afresh"))
    model = server.info.served_model_names[0]
    first = json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()
    second = json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 50}).encode()
    assert warmup.wanted(server, "chat", first, {})
    predicted = _count(monkeypatch, "_predicted", warm_record)
    assert warmup.wanted(server, "chat", first, {})  # handed on
    assert predicted[0] == 0
    assert warmup.wanted(server, "chat", second, {})
    assert predicted[0] == 1


def test_warm_up_reads_no_private_attribute_of_the_server_but_its_own_record():
    trees = [ast.parse(Path(module.__file__).read_text()) for module in (warmup, warm_record)]
    private = {
        node.attr
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "server" and node.attr.startswith("_")
    }
    assert private == {"_warmup"}, private
