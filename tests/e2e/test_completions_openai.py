"""The official openai SDK against `mockoss` (profile vllm): /v1/completions, raw text and token ids."""

import httpx
import openai
import pytest

from mockoss.harmony import load_encoding

MODEL = "openai/gpt-oss-20b"
PROMPT = "<|start|>user<|message|>What is 2 + 2?<|end|><|start|>assistant"
RAW = (
    "<|channel|>analysis<|message|>User asks: What is 2 + 2? Simple arithmetic. Provide answer.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
)
STRIPPED = "analysisUser asks: What is 2 + 2? Simple arithmetic. Provide answer.assistantfinal2 + 2 = 4."


@pytest.fixture
def client(mockoss):
    mockoss.use("clean-answer")
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


def _ids(text):
    return load_encoding().encode(text, allowed_special="all")


def test_special_tokens_kept_and_token_ids_returned(client):
    reply = client.completions.create(
        model=MODEL,
        prompt=PROMPT,
        max_tokens=200,
        extra_body={"skip_special_tokens": False, "return_token_ids": True},
    )
    choice = reply.choices[0]
    assert reply.object == "text_completion" and reply.id.startswith("cmpl-")
    # The stop token (<|return|>) is in token_ids but, as vLLM's detokenizer does, not in the text.
    assert choice.text == RAW.removesuffix("<|return|>")
    assert choice.token_ids == _ids(RAW)
    assert choice.prompt_token_ids == _ids(PROMPT)
    assert choice.finish_reason == "stop" and choice.stop_reason is None
    assert reply.usage.prompt_tokens == len(_ids(PROMPT))
    assert reply.usage.completion_tokens == len(_ids(RAW))


def test_special_tokens_stripped_by_default(client):
    reply = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=200)
    choice = reply.choices[0]
    assert choice.text == STRIPPED
    assert choice.model_extra.get("token_ids") is None and choice.model_extra.get("prompt_token_ids") is None


def test_default_max_tokens_is_16_and_finishes_with_length(client):
    reply = client.completions.create(model=MODEL, prompt=PROMPT, extra_body={"skip_special_tokens": False})
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage.completion_tokens == 16
    assert reply.choices[0].text == load_encoding().decode(_ids(RAW)[:16])


def test_tool_call_stops_on_call_with_stop_reason(mockoss, client):
    mockoss.use("clean-tool-call")
    reply = client.completions.create(
        model=MODEL, prompt=PROMPT, max_tokens=500, extra_body={"skip_special_tokens": False, "return_token_ids": True}
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "stop" and choice.stop_reason == 200012
    assert choice.token_ids[-1] == 200012 and not choice.text.endswith("<|call|>")
    assert "<|constrain|>json<|message|>" in choice.text


def test_stream_one_chunk_per_token(client):
    stream = client.completions.create(
        model=MODEL,
        prompt=PROMPT,
        max_tokens=200,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"skip_special_tokens": False, "return_token_ids": True},
    )
    chunks = list(stream)
    usage = chunks[-1]
    assert usage.choices == [] and usage.usage.completion_tokens == len(_ids(RAW))
    token_chunks = chunks[:-1]
    assert [c.choices[0].token_ids for c in token_chunks] == [[t] for t in _ids(RAW)]
    assert "".join(c.choices[0].text for c in token_chunks) == RAW.removesuffix("<|return|>")
    assert token_chunks[0].choices[0].prompt_token_ids == _ids(PROMPT)
    assert all(c.choices[0].model_extra["prompt_token_ids"] is None for c in token_chunks[1:])
    assert [c.choices[0].finish_reason for c in token_chunks].count("stop") == 1
    assert token_chunks[-1].choices[0].finish_reason == "stop"


def test_raw_sse_frames_are_exact(mockoss):
    mockoss.use("clean-answer")
    body = {"model": MODEL, "prompt": PROMPT, "max_tokens": 2, "stream": True, "skip_special_tokens": False}
    with httpx.Client() as http:
        response = http.post(mockoss.base_url + "/completions", json=body)
    frames = response.text.split("\n\n")
    assert response.status_code == 200 and frames[-2:] == ["data: [DONE]", ""]
    assert frames[1].endswith(
        '"choices":[{"index":0,"text":"analysis","logprobs":null,"finish_reason":"length","stop_reason":null,'
        '"prompt_token_ids":null,"token_ids":null}]}'
    )


def test_bad_request_is_a_vllm_400(client):
    with pytest.raises(openai.BadRequestError) as info:
        client.completions.create(model=MODEL, prompt="")
    assert info.value.status_code == 400
    assert "Either prompt or prompt_embeds must be provided and non-empty." in info.value.body["message"]


def test_completion_ids_have_vllm_0_32_shape(client):
    """``cmpl-`` + ``random_uuid()``: 16 hex digits in vLLM 0.32/0.33 (vllm-project/vllm@v0.33.0:vllm/utils/__init__.py)."""
    import re

    reply = client.completions.create(model="openai/gpt-oss-20b", prompt="hi")
    assert re.fullmatch(r"cmpl-[0-9a-f]{16}", reply.id)
