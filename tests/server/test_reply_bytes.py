"""``reply_limit.MAX_REPLY_BYTES`` counts the bytes a ``/v1/completions`` reply is sent as (issue 9:
memory bounded in bytes), for the vLLM and TensorRT-LLM profiles, streamed and not.

Both profiles write JSON with UTF-8 kept (``ensure_ascii=False``, :func:`mockoss.profiles.wire.dumps`):
a CJK character is 3 bytes on the wire, an emoji 4, a control character ``\\u0001`` 6. A bound
counted in characters let such a reply be several times over it. Each case below is sized so that
its character count is under the bound and its byte count over it.
"""

from __future__ import annotations

import json
import re

import pytest

from mockoss.profiles import reply_limit
from mockoss.server.core import MockServer

MODEL = "openai/gpt-oss-20b"
WIDE = "日本語😀"  # 4 characters, 13 bytes in UTF-8


def _body(prompt, *, stream: bool, profile: str, **fields) -> bytes:
    body = {"model": MODEL, "prompt": prompt, "stream": stream, **fields}
    if stream and profile == "trtllm":
        body["stream_options"] = {}  # usage on every chunk: TensorRT-LLM's defaults once sent
    return json.dumps(body).encode()


def _sent(reply) -> bytes:
    return b"".join(reply.frames) if reply.frames else reply.body


def _scenario(tmp_path, content: str) -> str:
    path = tmp_path / "wide.yaml"
    path.write_text(f'version: 1\nsteps:\n  - completion: {{messages: [{{channel: final, content: "{content}"}}]}}\n')
    return str(path)


def _characters(sent: bytes) -> int:
    """The reply's length with its text counted in characters: a JSON escape of a control
    character (``\\u0001``) as the one character it stands for."""
    return len(re.sub(r"\\u00[01][0-9a-f]", "c", sent.decode()))


def _chars_under_bytes_over(server: MockServer, raw: bytes, monkeypatch) -> None:
    """The reply fits at the default bound; lowered between its characters and its bytes, it is
    the 400 naming the bound."""
    fits, _ = server.respond("completions", raw, {})
    assert fits.status == 200
    sent = _sent(fits)
    chars = _characters(sent)
    assert len(sent) - chars > 4000  # wide text: the bytes are well over the characters
    bound = (len(sent) + chars) // 2
    monkeypatch.setattr(reply_limit, "MAX_REPLY_BYTES", bound)
    over, _ = server.respond("completions", raw, {})
    assert over.status == 400, f"{len(sent)} bytes, {chars} characters, bound {bound}"
    assert over.frames == ()
    assert str(bound) in over.body.decode() and "MAX_REPLY_BYTES" in over.body.decode()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("profile", ["vllm", "trtllm"])
def test_a_wide_completion_under_the_bound_in_characters_and_over_it_in_bytes_is_a_400(tmp_path, monkeypatch, profile, stream):
    server = MockServer(_scenario(tmp_path, WIDE * 300), profile=profile)
    raw = _body(["hi"] * 3, stream=stream, profile=profile, max_tokens=4000)
    _chars_under_bytes_over(server, raw, monkeypatch)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("profile", ["vllm", "trtllm"])
def test_an_echo_of_a_wide_prompt_is_counted_in_bytes(monkeypatch, profile, stream):
    server = MockServer("clean-answer", profile=profile)
    raw = _body([WIDE * 1500, WIDE * 1500 + "!"], stream=stream, profile=profile, echo=True, max_tokens=1)
    _chars_under_bytes_over(server, raw, monkeypatch)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("profile", ["vllm", "trtllm"])
def test_an_echo_of_control_characters_is_counted_as_their_escapes(monkeypatch, profile, stream):
    """``\\x01`` is one character and six bytes on the wire (``\\u0001``)."""
    server = MockServer("clean-answer", profile=profile)
    raw = _body(["\x01" * 4000, "\x02" * 4000], stream=stream, profile=profile, echo=True, max_tokens=1)
    _chars_under_bytes_over(server, raw, monkeypatch)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("profile", ["vllm", "trtllm"])
def test_an_ascii_reply_exactly_at_the_bound_still_passes(monkeypatch, profile, stream):
    server = MockServer("clean-answer", profile=profile)
    for raw in (
        _body(["hi"] * 20, stream=stream, profile=profile),
        _body(["word " * 400, "hi"], stream=stream, profile=profile, echo=True),
    ):
        fits, _ = server.respond("completions", raw, {})
        assert fits.status == 200
        sent = _sent(fits)
        assert sent.isascii()
        monkeypatch.setattr(reply_limit, "MAX_REPLY_BYTES", len(sent))
        again, _ = server.respond("completions", raw, {})
        assert again.status == 200
        assert len(_sent(again)) == len(sent)
        monkeypatch.undo()


@pytest.mark.parametrize("profile", ["vllm", "trtllm"])
def test_the_bound_counts_most_of_a_batchs_reply(monkeypatch, profile):
    """The check's count is a lower bound of the bytes sent, and a tight one: a batch whose reply
    is 10% over the bound is refused (the choices or frames are nearly all of it)."""
    server = MockServer("clean-answer", profile=profile)
    for stream in (False, True):
        raw = _body([f"{WIDE} {n}" for n in range(40)], stream=stream, profile=profile, echo=True)
        fits, _ = server.respond("completions", raw, {})
        assert fits.status == 200
        monkeypatch.setattr(reply_limit, "MAX_REPLY_BYTES", len(_sent(fits)) * 10 // 11)
        over, _ = server.respond("completions", raw, {})
        assert over.status == 400, stream
        monkeypatch.undo()


#: TensorRT-LLM's ``CompletionResponseChoice`` fields, in the model's order
#: (tensorrt_llm/serve/openai_protocol.py; the profile's module docstring cites it).
CHOICE_FIELDS = [
    "index", "text", "token_ids", "logprobs", "context_logits", "finish_reason", "stop_reason",
    "disaggregated_params", "avg_decoded_tokens_per_iter",
]


def test_trtllms_json_reply_is_compact_json_in_field_order():
    """TensorRT-LLM's non-streamed reply is written choice by choice (so each choice's bytes are
    counted as written): the same text ``json.dumps`` of the whole reply writes."""
    server = MockServer("clean-answer", profile="trtllm")
    for fields in ({"prompt": "hi"}, {"prompt": ["hi", WIDE, "x\"\\\x01"], "echo": True}, {"prompt": ["a", "b"], "detokenize": False}):
        reply, _ = server.respond("completions", json.dumps({"model": MODEL, **fields}).encode(), {})
        assert reply.status == 200
        assert reply.body == json.dumps(json.loads(reply.body), separators=(",", ":"), ensure_ascii=False).encode()
        sent = json.loads(reply.body)
        assert list(sent) == ["id", "object", "created", "model", "choices", "usage", "prompt_token_ids"]
        prompts = fields["prompt"] if isinstance(fields["prompt"], list) else [fields["prompt"]]
        for index, (prompt, choice) in enumerate(zip(prompts, sent["choices"], strict=True)):
            assert list(choice) == CHOICE_FIELDS
            # each choice of a batch is the one a request of its prompt alone gets, at its index
            alone, _ = server.respond("completions", json.dumps({"model": MODEL, **fields, "prompt": prompt}).encode(), {})
            assert choice == {**json.loads(alone.body)["choices"][0], "index": index}
