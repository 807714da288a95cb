"""TensorRT-LLM's own ``/v1/completions`` tests, converted: ``tests/unittest/llmapi/apps/_test_openai_completions.py``
(NVIDIA/TensorRT-LLM@019a200a4d3f0a0ded79b653e71c63211a646d2b), named ``test`` or ``test[param]``.

Upstream runs them with the openai SDK against ``trtllm-serve`` serving TinyLlama on a GPU; the
route's code (``openai_completion`` and the completion post-processors) is the same for gpt-oss,
so here the same calls go to the ``trtllm`` profile serving a scripted gpt-oss completion, and
the upstream assertions are kept (token counts become the scripted completion's). Not converted:
``test_batch_completions_beam_search`` (``n`` = 2 with beam search: mockoss answers one choice
per prompt; upstream skips it on the PyTorch backend), ``test_completion_with_logit_bias_effect``
and ``test_completion_with_invalid_logit_bias`` (sampling, not emulated). The first
``test_completion_streaming`` (echo) is shadowed upstream by the second function of that name
and never runs there; its echo rule is pinned in ``tests/e2e/test_trtllm_openai.py``.
"""

from __future__ import annotations

import openai
import pytest
from upstream_support import case

from mockoss.harmony import Completion
from mockoss.schemas.completions import prompt_token_ids

SOURCE = "NVIDIA/TensorRT-LLM@019a200a4d3f0a0ded79b653e71c63211a646d2b:tests/unittest/llmapi/apps/_test_openai_completions.py"
MODEL = "openai/gpt-oss-20b"
PROMPT = "Hello, my name is"
RAW = "<|channel|>analysis<|message|>Greet back.<|end|><|start|>assistant<|channel|>final<|message|>Hello there, my friend!<|return|>"

pytestmark = pytest.mark.mockoss(profile="trtllm")


def _one(test: str) -> pytest.MarkDecorator:
    return pytest.mark.upstream("trtllm", f"{SOURCE}::{test}")


@pytest.fixture
def client(mockoss):
    mockoss.use({"when_exhausted": "repeat_last", "steps": [{"completion": {"raw": RAW}}]})
    with openai.OpenAI(base_url=f"{mockoss.url}/v1", api_key="unused", max_retries=0) as client:
        yield client


@_one("test_single_completion")
@pytest.mark.mockoss(switches={"completion_cached_tokens": False})
def test_single_completion(client):
    # Upstream compares the whole usage with CompletionUsage(...) and no prompt_tokens_details: at
    # that commit the completion usage carried none (a {"cached_tokens": 0} would not compare
    # equal), which is the profile's completion_cached_tokens=False.
    completion = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=5, temperature=0.0)
    choice = completion.choices[0]
    assert len(choice.text) >= 5
    assert choice.finish_reason == "length"
    assert completion.id is not None and len(completion.choices) == 1
    prompt_tokens = len(prompt_token_ids(PROMPT))
    assert completion.usage == openai.types.CompletionUsage(completion_tokens=5, prompt_tokens=prompt_tokens, total_tokens=prompt_tokens + 5)
    completion = client.completions.create(model=MODEL, prompt=[0, 0, 0, 0, 0], max_tokens=5, temperature=0.0)
    assert len(completion.choices[0].text) >= 1


@pytest.mark.parametrize("prompts", [case("trtllm", SOURCE, "test_batch_completions[text]", [PROMPT] * 2),
                                     case("trtllm", SOURCE, "test_batch_completions[token ids]", [[0, 0, 0, 0, 0]] * 2)])
def test_batch_completions(client, prompts):
    batch = client.completions.create(model=MODEL, prompt=prompts, max_tokens=5, temperature=0.0)
    assert len(batch.choices) == 2
    assert batch.choices[0].text == batch.choices[1].text
    assert [c.index for c in batch.choices] == [0, 1]  # prompt_idx * num_choices + output.index


@pytest.mark.parametrize("prompts", [case("trtllm", SOURCE, "test_batch_completions_streaming[text]", [PROMPT] * 2),
                                     case("trtllm", SOURCE, "test_batch_completions_streaming[token ids]", [[0, 0, 0, 0, 0]] * 2)])
def test_batch_completions_streaming(client, prompts):
    texts = ["", ""]
    for chunk in client.completions.create(model=MODEL, prompt=prompts, max_tokens=5, temperature=0.0, stream=True):
        assert len(chunk.choices) == 1
        texts[chunk.choices[0].index] += chunk.choices[0].text
    assert texts[0] == texts[1] != ""


def _stream(client, **options):
    return list(client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=5, temperature=0.0, stream=True, stream_options=options))


@_one("test_completion_stream_options")
def test_completion_stream_options(client):
    assert all(c.usage is None for c in _stream(client, include_usage=False, continuous_usage_stats=False))
    assert all(c.usage is None for c in _stream(client, include_usage=False, continuous_usage_stats=True))
    chunks = _stream(client, include_usage=True, continuous_usage_stats=False)
    finished = next(i for i, c in enumerate(chunks) if c.choices and c.choices[0].finish_reason is not None)
    assert all(c.usage is None for c in chunks[: finished + 1])
    final = chunks[finished + 1]
    assert final.usage.prompt_tokens > 0 and final.usage.completion_tokens > 0
    assert final.usage.total_tokens == final.usage.prompt_tokens + final.usage.completion_tokens and final.choices == []
    chunks = _stream(client, include_usage=True, continuous_usage_stats=True)
    for chunk in chunks:
        assert chunk.usage is not None and chunk.usage.prompt_tokens > 0 and chunk.usage.completion_tokens > 0
        assert chunk.usage.total_tokens == chunk.usage.prompt_tokens + chunk.usage.completion_tokens
    assert chunks[-2].choices[0].finish_reason is not None and chunks[-1].choices == []
    for options in ({"include_usage": None}, {"include_usage": True}, {"continuous_usage_stats": None}, {"continuous_usage_stats": True}):
        with pytest.raises(openai.BadRequestError):
            client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=5, temperature=0.0, stream=False, stream_options=options)


@_one("test_detokenize_single")
def test_detokenize_single(client):
    choice = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=5, temperature=0.0, extra_body={"detokenize": False}).choices[0]
    assert choice.text == ""
    assert isinstance(choice.token_ids, list) and len(choice.token_ids) > 0
    assert choice.token_ids == list(Completion.from_text(RAW).tokens[:5])
    completion = client.completions.create(model=MODEL, prompt=[0, 0, 0, 0, 0], max_tokens=5, temperature=0.0, extra_body={"detokenize": True})
    assert completion.choices[0].token_ids is None


@_one("test_completion_streaming")
def test_completion_streaming(client):
    single = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=5, temperature=0.0, extra_body={"detokenize": False})
    tokens: list[int] = []
    for chunk in client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=5, temperature=0.0, stream=True, extra_body={"detokenize": False}):
        assert chunk.choices[0].text == ""
        assert isinstance(chunk.choices[0].token_ids, list)
        tokens.extend(chunk.choices[0].token_ids)
    assert tokens == single.choices[0].token_ids
