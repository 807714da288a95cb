"""MockServer without HTTP: the request log, ids and seeds."""

import json

from mockoss.profiles.base import IdSource
from mockoss.server.core import MockServer

CHAT = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}).encode()


def test_request_log_limit_keeps_the_newest_and_indexes_keep_counting():
    server = MockServer(scenario="clean-answer", request_log_limit=3)
    for _ in range(5):
        assert server.handle("chat", CHAT, {}).status == 200
    assert [r.index for r in server.requests] == [2, 3, 4]
    assert server.requests[-1].body["messages"][0]["content"] == "hi"
    server.reset()
    server.handle("chat", CHAT, [("x-test", "1")])
    assert [r.index for r in server.requests] == [0]
    assert server.requests[0].headers == {"x-test": "1"}


def test_recorded_request_keeps_non_json_bodies():
    server = MockServer(scenario="clean-answer")
    reply = server.handle("chat", b"\xff not json", {})
    assert reply.status == 400
    assert server.requests[0].body is None and server.requests[0].raw == b"\xff not json"


def test_ids_depend_on_seed_and_index_only():
    assert IdSource(0, 1).next("x-") == IdSource(0, 1).next("x-")
    assert IdSource(0, 1).next() != IdSource(0, 2).next()
    assert IdSource("ci", 1).next() == IdSource("ci", 1).next()
    assert IdSource("ci", 1).next() != IdSource("cd", 1).next()
    assert IdSource(5, 0).next() != IdSource(0, 5).next()
    source = IdSource(0, 0)
    first, second = source.next("chatcmpl-"), source.next("chatcmpl-")
    assert first != second and len(first) == len("chatcmpl-") + 32


def test_string_seed_gives_byte_identical_replies():
    one = MockServer(scenario="clean-tool-call", seed="nightly")
    two = MockServer(scenario="clean-tool-call", seed="nightly")
    assert one.handle("chat", CHAT, {}).body == two.handle("chat", CHAT, {}).body


def test_scenario_header_naming_an_unloaded_scenario_answers_without_deadlock():
    # Regression: loading a scenario named by X-Mockoss-Scenario re-entered the server lock.
    server = MockServer(scenario="clean-tool-call")
    reply = server.handle("chat", CHAT, {"x-mockoss-scenario": "clean-answer"})
    assert reply.status == 200
    assert json.loads(reply.body)["choices"][0]["message"]["content"] == "2 + 2 = 4."
    assert [(r.scenario, r.step) for r in server.requests] == [("clean-answer", 0)]


def test_each_profile_answers_to_its_usual_model_name_by_default():
    assert MockServer(profile="vllm").served_model_names == ("openai/gpt-oss-20b",)
    assert MockServer(profile="ollama").served_model_names == ("gpt-oss:20b",)
    assert MockServer(profile="ollama", served_model_names=["mine"]).served_model_names == ("mine",)
    server = MockServer(profile="vllm")
    server.set_profile("ollama")
    assert server.served_model_names == ("gpt-oss:20b",)


def test_llama_server_ignores_the_requested_model_name():
    server = MockServer(scenario="clean-answer", profile="llamacpp")
    body = json.dumps({"model": "anything-at-all", "messages": [{"role": "user", "content": "hi"}]}).encode()
    assert server.handle("chat", body, {}).status == 200
    vllm = MockServer(scenario="clean-answer")
    assert vllm.handle("chat", body, {}).status == 404
