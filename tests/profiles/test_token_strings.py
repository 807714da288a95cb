"""vLLM's ``/tokenize`` ``token_strs`` (``return_token_strs``) and llama-server's ``with_pieces``
are computed from one decode of all the tokens, cut at each token's length, byte for byte as one
token at a time.

Issue 9, review (the breaker's finding 8, measured): both decoded one token at a time through
openai-harmony (~5 us a token) on the event loop: 36,000 words (240 KB) held it 208 ms (vLLM) and
266 ms (llama-server). What a token's string is: vLLM's ``convert_ids_to_tokens`` (the byte-level
BPE alphabet, GPT-2's ``bytes_to_unicode``; a special token's text), llama-server's
``tokenize_mixed`` with ``with_pieces`` (the piece as text, or as its bytes when not valid UTF-8:
``ggml-org/llama.cpp@00dd0816:tools/server/server.cpp``), as :mod:`mockoss.profiles.vllm.identity`
and :mod:`mockoss.profiles.llamacpp.side_routes` cite them. The references below are the
token-at-a-time definitions mockoss used before.
"""

from __future__ import annotations

import json

import pytest
from openai_harmony import HarmonyEncoding

from mockoss.harmony.encoding import VOCABULARY_SIZE, encode_text, load_encoding
from mockoss.profiles.llamacpp import side_routes
from mockoss.profiles.vllm import identity
from mockoss.server.core import MockServer


def _raw(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _token_str_one_at_a_time(token: int) -> str:
    """vLLM's ``convert_ids_to_tokens`` as mockoss wrote it before, one openai-harmony call a token."""
    library = load_encoding()
    if library.is_special_token(token):
        return library.decode_utf8([token])
    raw = library.decode([token], errors="surrogateescape").encode("utf-8", "surrogateescape")
    return "".join(identity._byte_chars()[b] for b in raw)


def _piece_one_at_a_time(token: int) -> str | list[int]:
    """llama-server's ``/tokenize`` piece as mockoss wrote it before: text, or bytes if not UTF-8."""
    raw = load_encoding().decode([token], errors="surrogateescape").encode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return list(raw)


def test_every_token_of_the_vocabulary_has_the_same_string_and_piece_as_one_at_a_time():
    tokens = list(range(VOCABULARY_SIZE))  # specials, byte-fallback and multi-byte tokens all in one call
    strs = identity.token_strs(tokens)
    pieces = side_routes._pieces(tokens)
    assert strs == [_token_str_one_at_a_time(t) for t in tokens]
    assert pieces == [{"id": t, "piece": _piece_one_at_a_time(t)} for t in tokens]
    assert any(isinstance(p["piece"], list) for p in pieces)  # pieces that are not UTF-8 alone are there


TEXTS = ["Hello <|start|>world<|end|>", "é😀 中文 ßüñ 🤖👍🏽 \u0301x", "\u2028\x00\x7f" * 3, ""]


@pytest.mark.parametrize("text", TEXTS)
def test_token_strings_and_pieces_replies_are_as_one_at_a_time(text):
    tokens = encode_text(text)
    vllm = MockServer("clean-answer", profile="vllm").probe("POST", "/tokenize", _raw({"prompt": text, "return_token_strs": True}))
    want = {"count": len(tokens), "max_model_len": 131072, "tokens": tokens, "token_strs": [_token_str_one_at_a_time(t) for t in tokens]}
    assert vllm.body == json.dumps(want, separators=(",", ":"), ensure_ascii=False).encode()
    llama = MockServer("clean-answer", profile="llamacpp").probe("POST", "/tokenize", _raw({"content": text, "with_pieces": True}))
    pieces = [{"id": t, "piece": _piece_one_at_a_time(t)} for t in tokens]
    assert llama.body == json.dumps({"tokens": pieces}, separators=(",", ":"), ensure_ascii=False).encode()


def test_a_long_pieces_reply_written_in_slices_is_the_same_json():
    text = " ".join(f"w{i} é😀" for i in range(3000))
    tokens = encode_text(text)
    assert len(tokens) > 2 * side_routes._SLICE
    reply = MockServer("clean-answer", profile="llamacpp").probe("POST", "/tokenize", _raw({"content": text, "with_pieces": True}))
    pieces = [{"id": t, "piece": _piece_one_at_a_time(t)} for t in tokens]
    assert reply.body == json.dumps({"tokens": pieces}, separators=(",", ":"), ensure_ascii=False).encode()


@pytest.mark.parametrize(("profile", "field", "flag"), [("vllm", "prompt", "return_token_strs"), ("llamacpp", "content", "with_pieces")])
def test_strings_per_token_decode_the_tokens_in_one_call(profile, field, flag, monkeypatch):
    """One openai-harmony decode for the whole text once each token's length is known (a call per
    token before: ~5 us each, 36,000 words held the loop 208-266 ms)."""
    text = " ".join(f"w{i}" for i in range(2000))
    server = MockServer("clean-answer", profile=profile)
    raw = _raw({field: text, flag: True})
    first = server.probe("POST", "/tokenize", raw)  # learns the lengths of tokens not seen before
    calls: list[int] = []
    real = HarmonyEncoding.decode

    def counted(self, tokens, errors="replace"):
        calls.append(len(tokens))
        return real(self, tokens, errors=errors)

    monkeypatch.setattr(HarmonyEncoding, "decode", counted)
    again = server.probe("POST", "/tokenize", raw)
    assert again.body == first.body
    assert calls == [len(encode_text(text))]
