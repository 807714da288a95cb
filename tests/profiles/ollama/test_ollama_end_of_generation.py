"""Where llama-server stops generating for Ollama, and what ``eval_count`` then counts.

Ollama fb3076099 runs gpt-oss on llama-server (``llm/llama_server.go`` ``Completion``), which stops
at any end-of-generation token of the vocabulary, ``<|return|>``, ``<|call|>`` or ``<|endoftext|>``
(llama.cpp ``llama_vocab_is_eog``, ``src/llama-vocab.cpp``), or when ``n_predict`` tokens are
decoded (``stop_type: "limit"`` → ``done_reason: "length"``); ``eval_count`` is its ``predicted_n``,
every decoded token. A script with no end token is followed by the ``<|endoftext|>`` the scripted
engine emits when it runs out (as for vLLM, ``mockoss.profiles.vllm.chat_plan.with_end_of_script``).
Measured: ``tests/golden/ollama-0.33.0-rc2`` (Ollama's own Go code, ``tools/goldens/ollama_harness.go``)
gives ``eval_count`` 26 for ``scenario-special-tokens-stripped-from-output-0``'s 25 tokens.
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.base import IdSource, RequestContext
from mockoss.profiles.ollama import OllamaProfile
from mockoss.scenario.loader import Step
from mockoss.schemas.ollama import OllamaChatRequestView, OllamaGenerateRequestView
from mockoss.server.core import MockServer

NO_END = Completion.from_text(
    "<|channel|>analysis<|message|>Hi.<|end|><|start|>assistant<|channel|>final<|message|>Yes."
)
EOT_INSIDE = Completion.from_text(
    "<|channel|>final<|message|>Yes.<|endoftext|><|start|>assistant<|channel|>final<|message|>No.<|return|>"
)


def _ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=1_750_000_000, prompt_tokens=100)


def chat(completion: Completion, **view: object) -> dict:
    request = OllamaChatRequestView(model="gpt-oss:20b", stream=False, **view)  # type: ignore[arg-type]
    return json.loads(OllamaProfile().surface("ollama.chat", completion, request, _ctx()).body)


def test_a_script_without_an_end_token_counts_the_end_of_text_the_engine_adds():
    final = chat(NO_END)
    assert (final["done_reason"], final["eval_count"]) == ("stop", len(NO_END.tokens) + 1)
    assert (final["message"]["thinking"], final["message"]["content"]) == ("Hi.", "Yes.")


def test_num_predict_equal_to_such_a_script_cuts_it_before_the_end_token():
    final = chat(NO_END, max_tokens=len(NO_END.tokens))
    assert (final["done_reason"], final["eval_count"], final["message"]["content"]) == (
        "length",
        len(NO_END.tokens),
        "Yes.",
    )


def test_generation_stops_at_end_of_text_inside_the_script():
    final = chat(EOT_INSIDE)
    stop = EOT_INSIDE.tokens.index(199999)
    assert (final["done_reason"], final["eval_count"], final["message"]["content"]) == ("stop", stop + 1, "Yes.")


@pytest.mark.parametrize("raw", [False, True])
def test_generate_counts_the_same_tokens(raw):
    request = OllamaGenerateRequestView(model="gpt-oss:20b", stream=False, raw=raw, body={"prompt": "Hi", "raw": raw})
    body = json.loads(OllamaProfile().surface("ollama.generate", NO_END, request, _ctx()).body)
    assert (body["done_reason"], body["eval_count"]) == ("stop", len(NO_END.tokens) + 1)
    assert body["response"] == ("analysisHi.assistantfinalYes." if raw else "Yes.")


def test_generate_num_predict_equal_to_the_script_cuts_it():
    request = OllamaGenerateRequestView(
        model="gpt-oss:20b", stream=False, max_tokens=len(NO_END.tokens), body={"prompt": "Hi"}
    )
    body = json.loads(OllamaProfile().surface("ollama.generate", NO_END, request, _ctx()).body)
    assert (body["done_reason"], body["eval_count"]) == ("length", len(NO_END.tokens))


def test_openai_layer_reports_the_same_completion_tokens():
    server = MockServer(profile="ollama", served_model_names=["gpt-oss:20b"], request_log_limit=1)
    body = {"model": "gpt-oss:20b", "messages": [{"role": "user", "content": "Hi"}]}
    step = Step(index=0, completion=NO_END, error=None)
    reply, _ = server.respond("chat", json.dumps(body).encode(), {}, step=step)
    answer = json.loads(reply.body)
    assert (answer["choices"][0]["finish_reason"], answer["usage"]["completion_tokens"]) == (
        "stop",
        len(NO_END.tokens) + 1,
    )
