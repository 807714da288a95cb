"""The ``mlx-lm`` profile's rules, each as mlx-lm 0.32.2's server code gives it
(``ml-explore/mlx-lm@v0.32.2:mlx_lm/tokenizer_utils.py`` ``BPEStreamingDetokenizer``,
``mlx_lm/server.py`` ``handle_completion``); the whole surface is checked byte for byte against
the real ``APIHandler`` by ``tools/mlxlm_diff.py``."""

from __future__ import annotations

import json

import pytest

from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.base import ChatRequestView, IdSource, RequestContext, ServerInfo
from mockoss.profiles.mlxlm import MlxLmProfile
from mockoss.profiles.mlxlm.detokenizer import StreamingDetokenizer, step_texts
from mockoss.profiles.mlxlm.wire import EOS
from mockoss.profiles.registry import get_profile

RETURN, ENDOFTEXT, SPACE = 200002, 199999, 220


def _Script(tokens):  # a script of tokens: the engine stops at its first <|return|> or <|call|>
    from mockoss.harmony import Completion

    return Completion(text="", tokens=tuple(tokens))


def chat(tokens, **body):
    body = {"model": "m", "messages": [], **body}
    ctx = RequestContext(ids=IdSource(0, 0), created=1, prompt_tokens=10)
    reply = MlxLmProfile().surface("chat", _Script(tokens), ChatRequestView(model="m", stream=bool(body.get("stream")), body=body), ctx)
    return reply


def enc(text):
    return load_encoding().encode(text, allowed_special="all")


def test_special_tokens_are_text_and_the_first_leading_space_is_trimmed():
    detok = StreamingDetokenizer()
    for t in enc(" Hi<|channel|>final"):
        detok.add_token(t)
    detok.finalize()
    assert detok.text == "Hi<|channel|>final"


def test_a_trailing_lone_space_is_held_and_lost_on_stop_but_kept_on_length():
    tokens = [*enc("Hi"), SPACE]
    assert "".join(step_texts([*tokens, RETURN], "stop", EOS)) == "Hi"
    assert "".join(step_texts(tokens, "length", EOS)) == "Hi "


def test_byte_zero_comes_out_as_its_map_character():
    zero = enc("\x00")
    detok = StreamingDetokenizer()
    for t in enc("a") + zero:
        detok.add_token(t)
    assert detok.text == "a\u0100"


def test_endoftext_ends_generation_and_is_counted():
    reply = json.loads(chat([*enc("ok"), ENDOFTEXT, *enc("more")]).body)
    assert (reply["choices"][0]["message"]["content"], reply["choices"][0]["finish_reason"]) == ("ok", "stop")
    assert reply["usage"]["completion_tokens"] == len(enc("ok")) + 1


def test_limit_reached_with_the_script_is_length_and_no_limit_is_512():
    tokens = enc("one two three")
    assert json.loads(chat(tokens, max_tokens=len(tokens)).body)["choices"][0]["finish_reason"] == "length"
    assert json.loads(chat(tokens * 200).body)["usage"]["completion_tokens"] == 512
    assert json.loads(chat(tokens * 200, max_completion_tokens=3, max_tokens=9).body)["usage"]["completion_tokens"] == 3


def test_empty_content_is_null_when_not_streamed():
    assert json.loads(chat([RETURN]).body)["choices"][0]["message"] == {"role": "assistant", "content": None}


def test_probes_routes_and_errors():
    profile = MlxLmProfile(healthy=False)
    info = ServerInfo(served_model_names=("a/b",), created=5)
    health = profile.probe("GET", "/health", info)
    assert (health.status, json.loads(health.body)) == (503, {"status": "unavailable"})
    assert json.loads(profile.probe("GET", "/v1/models/x/y", info).body) == {"object": "list", "data": []}
    assert profile.route_error(405, "GET", "/v1/chat/completions").body == b"Not Found"
    put = profile.route_error(405, "PUT", "/v1/chat/completions")
    assert put.status == 501 and b"<p>Message: Unsupported method ('PUT').</p>" in put.body
    assert json.loads(profile.error(400, "bad").body) == {"error": "bad"}


def test_registered_with_a_timeline_and_switches_checked():
    assert isinstance(get_profile("mlx-lm"), MlxLmProfile)
    assert get_profile("mlx-lm@0.32.2").name == "mlx-lm@0.32.2"
    with pytest.raises(ValueError, match="starts at 0.32.0"):  # older wires differ and are not emulated
        get_profile("mlx-lm@0.31.3")
    assert get_profile("mlx-lm", {"max_tokens": 64}).max_tokens == 64
    with pytest.raises(ValueError, match="max_tokens"):
        MlxLmProfile(max_tokens=0)
