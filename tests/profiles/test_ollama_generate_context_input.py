"""Ollama ``/api/generate`` reads a request's ``context`` (deprecated): its tokens come first.

``ollama/ollama@fb307609:server/routes.go`` (``GenerateHandler``): when ``req.Context`` is set, it
is detokenized and written in front of the rendered prompt, so ``prompt_eval_count`` and the
reply's ``context`` both start with it. mockoss ignored it: a second turn passing back the first
turn's ``context`` counted only its own prompt (found by the seventh session's final review).
"""

from __future__ import annotations

import json

from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"


def _generate(server: MockServer, **fields) -> dict:
    reply = server.respond("ollama.generate", json.dumps({"model": MODEL, "stream": False, **fields}).encode(), {})[0]
    assert reply.status == 200, reply.body
    return json.loads(reply.body)


def test_a_passed_back_context_comes_first_in_the_count_and_the_reply():
    server = MockServer("clean-answer", profile="ollama")
    first = _generate(server, prompt="What is 2+2?")
    alone = _generate(server, prompt="And 3+3?")
    second = _generate(server, prompt="And 3+3?", context=first["context"])
    assert second["prompt_eval_count"] == len(first["context"]) + alone["prompt_eval_count"]
    assert second["context"] == first["context"] + alone["context"]


def test_the_same_prompt_with_and_without_a_context_is_kept_apart():
    server = MockServer("clean-answer", profile="ollama")
    plain = _generate(server, prompt="Hi")
    with_context = _generate(server, prompt="Hi", context=[200006, 1428])
    again = _generate(server, prompt="Hi")  # the cached prompt ids must not be the context's
    assert with_context["context"][:2] == [200006, 1428]
    assert again["context"] == plain["context"]
    assert with_context["prompt_eval_count"] == plain["prompt_eval_count"] + 2


def test_a_context_with_an_id_outside_the_vocabulary_is_left_out():
    server = MockServer("clean-answer", profile="ollama")
    plain = _generate(server, prompt="Hi")
    odd = _generate(server, prompt="Hi", context=[10**8])
    assert odd["prompt_eval_count"] == plain["prompt_eval_count"]
    assert odd["context"] == plain["context"]
