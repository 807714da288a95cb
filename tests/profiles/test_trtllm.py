"""The ``trtllm`` profile's rules that ``tools/trtllm_adapter_diff.py`` and
``tools/trtllm_responses_diff.py`` found by running TensorRT-LLM's own ``harmony_adapter.py`` and
``responses_utils.py`` (those tools need a scratch venv and the modules, so CI pins what they
measured here), and the switches' validation."""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import Completion
from mockoss.profiles.base import ChatRequestView, IdSource, RequestContext, ResponsesRequestView
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.profiles.trtllm import TrtllmProfile
from mockoss.profiles.trtllm.responses import _wording

STRAY = "<|channel|>analysis<|message|>Think.<|end|> Okay.<|start|>assistant<|channel|>final<|message|>Hello there<|return|>"


def _ctx() -> RequestContext:
    return RequestContext(ids=IdSource(0, 0), created=7, prompt_tokens=10)


def _chunks(raw: str, **switches) -> list[dict]:
    reply = TrtllmProfile(**switches).chat(Completion.from_text(raw), ChatRequestView(model="m", stream=True), _ctx())
    return [json.loads(f[6:]) for f in reply.frames if f != b"data: [DONE]\n\n"]


def _content(chunks: list[dict]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


def test_a_stray_token_loses_only_its_own_batch():
    # one token per batch: only the stray tokens' (empty) batches are lost
    assert _content(_chunks(STRAY)) == "Hello there"
    # three per batch: the batch that raised drops its other tokens, unparsed (here "<|start|>"),
    # so the answer's header is never read and the answer is lost
    assert _content(_chunks(STRAY, stream_interval=3)) == ""


def test_streamed_usage_leaves_out_a_null_prompt_tokens_details():
    usage = _chunks("<|channel|>final<|message|>Hi<|return|>", cached_tokens_in_usage=False)[-1]["usage"]
    assert usage == {"prompt_tokens": 10, "total_tokens": 14, "completion_tokens": 4}  # <|return|> not counted


def test_nothing_left_after_stripping_is_the_raw_text():
    # a completion that is only an unfinished header: process_eos raises, the raw text is content
    reply = TrtllmProfile().chat(Completion.from_text("<|start|>assistant"), ChatRequestView(model="m"), _ctx())
    assert json.loads(reply.body)["choices"][0]["message"]["content"] == "<|start|>assistant"


def test_responses_stream_repeats_the_last_delta_and_floats_created_at():
    completion = Completion.from_text("<|channel|>final<|message|>Hi there<|return|>")
    reply = TrtllmProfile().surface("responses", completion, ResponsesRequestView(model="m", stream=True, body={"input": "x"}), _ctx())
    events = [json.loads(f.split(b"data: ", 1)[1]) for f in reply.frames]
    assert [e["delta"] for e in events if e["type"] == "response.output_text.delta"] == ["Hi", " there", " there"]
    assert events[0]["response"]["created_at"] == 7.0 and isinstance(events[0]["response"]["created_at"], float)


def test_leftover_header_words_are_listed_as_openai_harmony_0_0_4_does():
    error = 'unexpected tokens remaining in message header: Some("to=functions.x code")'
    assert _wording(error, "openai-harmony-0.0.8") == 'unexpected tokens remaining in message header: ["to=functions.x", "code"]'
    assert _wording(error, "oss-harmony") == error


@pytest.mark.parametrize("switches", [{"stream_interval": 0}, {"role_chunk": "twice"}, {"merge_deltas": "yes"}, {"harmony_library": "x"}])
def test_bad_switch_values_are_refused(switches):
    with pytest.raises(ProfileError):
        get_profile("trtllm", switches)


def test_releases_resolve_on_the_timeline():
    assert get_profile("trtllm@2025.09.19").role_chunk == "every_batch"  # type: ignore[attr-defined]
    assert get_profile("trtllm@2026.03.10").tool_calls_on_analysis is True  # type: ignore[attr-defined]
    with pytest.raises(ProfileError):
        get_profile("trtllm@2025.01.01")


# ------------------------------------------------------------------ /v1/completions (read, not run: see the module)

def _completions(raw: str, body: dict, **switches):
    from mockoss.endpoints import ENDPOINTS

    body = {"prompt": "x", **body}
    view = ENDPOINTS["completions"].schema.model_validate(body).view("m", body)  # the server's own request path
    return TrtllmProfile(**switches).surface("completions", Completion.from_text(raw), view, _ctx())


def _frames(reply) -> list[dict]:
    return [json.loads(f[6:]) for f in reply.frames if f != b"data: [DONE]\n\n"]


def test_a_character_cut_across_tokens_waits_for_its_last_token():
    # HF DecodeStream: text ending in U+FFFD is held back; the chunks still go out, with text ""
    chunks = _frames(_completions("<|channel|>final<|message|>a🦜b<|return|>", {"stream": True}))
    texts = [c["choices"][0]["text"] for c in chunks]
    assert texts == ["", "final", "", "a", "", "", "🦜", "b", ""]
    assert json.loads(_completions("<|channel|>final<|message|>a🦜b<|return|>", {}).body)["choices"][0]["text"] == "finala🦜b"


def test_stream_interval_puts_each_engine_response_in_one_chunk():
    chunks = _frames(_completions("<|channel|>final<|message|>Hello there friend<|return|>", {"stream": True}, stream_interval=2))
    # 6 output tokens in responses of 2, then the end id's own iteration: an empty finish chunk
    assert [c["choices"][0]["text"] for c in chunks] == ["final", "Hello", " there friend", ""]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, None, None, "stop"]


def test_endoftext_stops_the_engine_only_with_generation_config_stops():
    raw = "<|channel|>final<|message|>Hi<|endoftext|>more text<|return|>"
    choice = json.loads(_completions(raw, {}).body)["choices"][0]
    assert (choice["text"], choice["stop_reason"]) == ("finalHi", 199999)
    choice = json.loads(_completions(raw, {"include_stop_str_in_output": True, "skip_special_tokens": False}).body)["choices"][0]
    assert choice["text"].endswith("Hi<|endoftext|>")
    choice = json.loads(_completions(raw, {}, generation_config_stops=False).body)["choices"][0]
    assert (choice["text"], choice["stop_reason"]) == ("finalHimore text", None)


def test_several_prompts_sum_usage_and_list_no_prompt_token_ids():
    body = json.loads(_completions("<|channel|>final<|message|>Hi<|return|>", {"prompt": ["a", "b c"]}).body)
    assert [c["index"] for c in body["choices"]] == [0, 1] and body["prompt_token_ids"] == []
    assert body["usage"]["completion_tokens"] == 8 and body["usage"]["prompt_tokens"] == 1 + 2
    streamed = _frames(_completions("<|channel|>final<|message|>Hi<|return|>", {"prompt": ["a", "b"], "stream": True, "stream_options": {"continuous_usage_stats": False}}))
    assert [c["choices"][0]["index"] if c["choices"] else "usage" for c in streamed] == [0, 0, 0, 0, 0, "usage", 1, 1, 1, 1, 1, "usage"]


def test_stream_chunks_dump_every_field_and_detokenize_false_sends_ids():
    chunks = _frames(_completions("<|channel|>final<|message|>Hi<|return|>", {"stream": True, "detokenize": False}))
    assert list(chunks[0]) == ["id", "object", "created", "model", "choices", "usage"] and chunks[0]["usage"] is None
    assert list(chunks[0]["choices"][0]) == ["index", "text", "token_ids", "logprobs", "finish_reason", "stop_reason", "avg_decoded_tokens_per_iter"]
    assert [c["choices"][0]["token_ids"] for c in chunks] == [[200005], [17196], [200008], [12194], []]
    assert {c["choices"][0]["text"] for c in chunks} == {""}


@pytest.mark.parametrize("body", [{"logprobs": 2}, {"suffix": "x"}, {"prompt": [1, 2], "echo": True}])
def test_refused_completion_requests_are_400s(body):
    reply = _completions("<|channel|>final<|message|>Hi<|return|>", body)
    assert reply.status == 400 and json.loads(reply.body)["type"] == "BadRequestError"


@pytest.mark.parametrize("switches", [{"generation_config_stops": 1}, {"completion_usage_chunk": "chat"}, {"completion_cached_tokens": "no"}])
def test_bad_completion_switch_values_are_refused(switches):
    with pytest.raises(ProfileError):
        get_profile("trtllm", switches)
