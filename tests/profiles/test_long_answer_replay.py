"""A repeated request on a long answer is answered from its memo, ids filled per request (issue 9).

For the profiles gptoss-reference, llama.cpp, LM Studio, mlx-lm, Ollama and vllm-mlx, everything a
reply holds that depends only on (completion, request shape, effective token limit) is built once
and memoised on ``completion._memo``; a request fills in its ids (:mod:`mockoss.profiles.replay`).
Before, a 10,000-token answer was parsed and serialised again on every request, on the event loop
(gptoss-reference Responses ~80 ms, streamed ~110 ms, every time).

Each case asserts structurally that the second identical request builds nothing again (the
builder a spy counts is not called, the Harmony parser is not constructed), and that every reply
is byte for byte the one a server whose memos serve nothing gives for the same request sequence
(so the per-request ids differ between the two requests and are the ones drawn afresh).
"""

from __future__ import annotations

import json

import pytest

from mockoss.harmony import trace as trace_module
from mockoss.harmony.completion import Memo, clear_completion_cache
from mockoss.server.core import MockServer

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "wise", "owls", "watch", "quietly"]
TEXT = " ".join(WORDS[i % len(WORDS)] for i in range(400))
TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {"content": {"type": "string"}}}}}]


def _scenario(tmp_path, call: bool = False) -> str:
    if call:
        messages = [
            {"channel": "analysis", "content": "I will write it. " + TEXT[:200]},
            {"channel": "commentary", "recipient": "functions.write_file", "content_type": "<|constrain|>json",
             "content": json.dumps({"content": TEXT})},
        ]
    else:
        messages = [{"channel": "analysis", "content": "Think " + TEXT[:600]}, {"channel": "final", "content": TEXT}]
    path = tmp_path / ("call.json" if call else "long.json")
    path.write_text(json.dumps({"version": 1, "steps": [{"completion": {"messages": messages}}]}))
    return str(path)


def _body(endpoint: str, model: str, stream: bool, call: bool, **extra) -> bytes:
    kind = endpoint.split(".")[-1]
    if kind == "chat":
        body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": stream}
        if call:
            body["tools"] = TOOLS
    elif kind == "responses":
        body = {"model": model, "input": "hi", "stream": stream}
        if call:
            body["tools"] = [{"type": "function", "name": "write_file", "parameters": TOOLS[0]["function"]["parameters"]}]
    else:
        body = {"model": model, "prompt": "hi", "stream": stream}
    return json.dumps({**body, **extra}).encode()


class _CountingParser:
    """Stands in for ``openai_harmony.StreamableParser`` in :mod:`mockoss.harmony.trace`: counts
    how many parsers were made (every parser trace makes one)."""

    made = 0

    def __new__(cls, *args, **kwargs):
        _CountingParser.made += 1
        return _REAL_PARSER(*args, **kwargs)


_REAL_PARSER = trace_module.StreamableParser


def _replies(server: MockServer, endpoint: str, requests: list[bytes]) -> list[tuple]:
    out = []
    for raw in requests:
        reply, _ = server.respond(endpoint, raw, {})
        out.append((reply.status, reply.media_type, reply.body, tuple(reply.frames), reply.abort, reply.log))
    return out


def _check(tmp_path, monkeypatch, profile: str, endpoint: str, stream: bool, call: bool, spies: list[tuple[object, str]], **extra):
    """Two identical requests, then one with another uncut limit: the spied builders and the parser
    run for the first only, and the replies equal those built with no memo served."""
    calls = []
    for owner, name in spies:
        real = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    monkeypatch.setattr(trace_module, "StreamableParser", _CountingParser)
    clear_completion_cache()
    server = MockServer(_scenario(tmp_path, call), profile=profile)
    model = server.info.served_model_names[0]
    requests = [_body(endpoint, model, stream, call, **extra)] * 2
    first = _replies(server, endpoint, requests[:1])
    assert first[0][0] == 200, first
    built, parsers = len(calls), _CountingParser.made
    assert built > 0, "the spied builder is not on this path"
    second = _replies(server, endpoint, requests[1:])
    assert (len(calls), _CountingParser.made) == (built, parsers), f"the repeated request built again: {calls[built:]}"
    assert second[0] != first[0], "the second request has ids of its own"

    monkeypatch.setattr(Memo, "get", lambda self, key, default=None: default)  # every reply computed afresh
    clear_completion_cache()
    fresh = _replies(MockServer(_scenario(tmp_path, call), profile=profile), endpoint, requests)
    assert first + second == fresh


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("call", [False, True], ids=["answer", "call"])
def test_gptoss_reference(tmp_path, monkeypatch, stream, call):
    from mockoss.profiles.gptoss_ref import plan

    _check(tmp_path, monkeypatch, "gptoss-reference", "responses", stream, call, [(plan, "_run")])


def test_gptoss_reference_uncut_limits_share_the_run(tmp_path, monkeypatch):
    """``max_output_tokens`` beyond the answer's length gives the same run (one build); the echoed
    value is the request's."""
    from mockoss.profiles.gptoss_ref import plan

    built = []
    real = plan._run
    monkeypatch.setattr(plan, "_run", lambda *a: built.append(a[2]) or real(*a))
    clear_completion_cache()
    server = MockServer(_scenario(tmp_path), profile="gptoss-reference")
    for limit in (100000, 99999, 5000):
        reply, _ = server.respond("responses", _body("responses", "m", False, False, max_output_tokens=limit), {})
        assert json.loads(reply.body)["max_output_tokens"] == limit
    assert built == [100000]


@pytest.mark.parametrize("call", [False, True], ids=["answer", "call"])
@pytest.mark.parametrize("endpoint", ["chat", "responses"])
def test_llamacpp_stream(tmp_path, monkeypatch, endpoint, call):
    from mockoss.profiles.llamacpp import chat, plan, responses

    spies = [(chat, "_chunk_frames") if endpoint == "chat" else (responses, "_events"), (plan, "_replay")]
    _check(tmp_path, monkeypatch, "llamacpp", endpoint, True, call, spies)


def test_llamacpp_chat_stream_usage_and_timings_per_token(tmp_path, monkeypatch):
    """``include_usage`` (the usage chunk is the request's) shares the chunks;
    ``timings_per_token`` (a timings object on every token's chunk) builds its own, as before."""
    from mockoss.profiles.llamacpp import chat

    _check(tmp_path, monkeypatch, "llamacpp", "chat", True, False, [(chat, "_chunk_frames")], stream_options={"include_usage": True})
    monkeypatch.undo()
    clear_completion_cache()
    server = MockServer(_scenario(tmp_path), profile="llamacpp")
    raw = _body("chat", server.info.served_model_names[0], True, False, timings_per_token=True)
    first, second = (server.respond("chat", raw, {})[0].frames for _ in range(2))
    assert b'"timings"' in first[2] and len(first) == len(second)


@pytest.mark.parametrize("call", [False, True], ids=["answer", "call"])
@pytest.mark.parametrize("endpoint", ["chat", "lmstudio.chat", "responses"])
def test_lmstudio_stream(tmp_path, monkeypatch, endpoint, call):
    from mockoss.profiles.lmstudio import chat, responses

    spy = (responses, "_item_events") if endpoint == "responses" else (chat, "_delta_frames")
    _check(tmp_path, monkeypatch, "lmstudio", endpoint, True, call, [spy], stream_options={"include_usage": True})


def test_lmstudio_dropped_call_log_and_v0_text_decoded_once(tmp_path, monkeypatch):
    """The server-log lines of a request with tools, and /api/v0/completions' text, come from the
    memo on a repeated request (the emission is not decoded again)."""
    from mockoss.profiles.lmstudio import server_log

    _check(tmp_path, monkeypatch, "lmstudio", "chat", False, True, [(server_log, "dropped_call_log")])
    monkeypatch.undo()
    _check(tmp_path, monkeypatch, "lmstudio", "lmstudio.completions", False, False, [(_encoding(), "decode")])


def _encoding():
    from mockoss.harmony import load_encoding

    return load_encoding()


@pytest.mark.parametrize(
    ("profile", "endpoint"), [("gptoss-reference", "responses"), ("llamacpp", "chat"), ("llamacpp", "responses"), ("lmstudio", "chat"), ("lmstudio", "responses")]
)
def test_a_text_holding_a_marker_is_answered_directly(tmp_path, profile, endpoint):
    """A scripted text holding what a template marker looks like (raw, JSON-escaped, or its
    letters after a backslash) is never a template: its replies are built directly, the text
    kept as it is and the ids the request's."""
    texts = ["a \x00mockoss-id:0\x00 b", "c \\u0000mockoss-id:1\\u0000 d", "e \x00mockoss-val:0\x00 f"]
    messages = [{"channel": "final", "content": " ".join(texts)}]
    path = tmp_path / "marker.json"
    path.write_text(json.dumps({"version": 1, "steps": [{"completion": {"messages": messages}}]}))
    clear_completion_cache()
    server = MockServer(str(path), profile=profile)
    raw = _body(endpoint, server.info.served_model_names[0], True, False)
    replies = [server.respond(endpoint, raw, {})[0] for _ in range(2)]
    for reply in replies:
        assert reply.status == 200
        deltas, whole = _streamed_text(reply.frames)
        assert "".join(deltas) == " ".join(texts)
        assert set(whole) <= {" ".join(texts), ""}  # the done events' and final items' text
    assert replies[0].frames != replies[1].frames


def _streamed_text(frames) -> tuple[list[str], list[str]]:
    """The text deltas of a stream, in order (every string under a ``delta`` key, or under
    ``content`` inside a chat chunk's ``delta`` object), and every string under a ``text`` key."""
    out: list[str] = []
    whole: list[str] = []

    def walk(value, inside_delta=False):
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str) and (key == "delta" or (inside_delta and key == "content")):
                    out.append(item)
                elif isinstance(item, str) and key == "text":
                    whole.append(item)
                else:
                    walk(item, inside_delta or key == "delta")
        elif isinstance(value, list):
            for item in value:
                walk(item, inside_delta)

    for frame in frames:
        for line in frame.decode().splitlines():
            if line.startswith("data: {"):
                walk(json.loads(line[6:]))
    return out, whole


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_mlxlm(tmp_path, monkeypatch, endpoint, stream):
    from mockoss.profiles.mlxlm import wire

    spies = [(wire, "step_texts")] + ([(wire, "_frames")] if stream else [])
    extra = {"stream_options": {"include_usage": True}} if stream else {}
    _check(tmp_path, monkeypatch, "mlx-lm", endpoint, stream, False, spies, max_tokens=5000, **extra)


def test_mlxlm_limits_at_and_beyond_the_answer(tmp_path, monkeypatch):
    """A limit equal to the emission's length is its own entry (an answer without a stop token
    then finishes ``length``); every limit beyond it shares one."""
    from mockoss.profiles.mlxlm import wire

    built = []
    real = wire.step_texts
    monkeypatch.setattr(wire, "step_texts", lambda tokens, finish, eos: built.append(finish) or real(tokens, finish, eos))
    clear_completion_cache()
    path = tmp_path / "nostop.json"
    path.write_text(json.dumps({"version": 1, "steps": [{"completion": {"raw": "<|channel|>final<|message|>" + TEXT[:200]}}]}))
    server = MockServer(str(path), profile="mlx-lm")
    from mockoss.harmony import Completion

    length = len(Completion.from_text("<|channel|>final<|message|>" + TEXT[:200]).emit(None).tokens)
    finishes = []
    for limit in (length, length + 1, length + 2, 10**6, length):
        reply, _ = server.respond("completions", json.dumps({"model": server.info.served_model_names[0], "prompt": "hi", "max_tokens": limit}).encode(), {})
        finishes.append(json.loads(reply.body)["choices"][0]["finish_reason"])
    assert finishes == ["length", "stop", "stop", "stop", "length"]
    assert built == ["length", "stop"]


def test_mlxlm_first_request_does_not_build_the_vocabulary_table(tmp_path, monkeypatch):
    """The detokenizer reads each token's string as it meets it (``token_string``), not from the
    whole 201,088-entry table (~0.25 s on a process's first request, issue 9)."""
    from mockoss.profiles.mlxlm import detokenizer

    detokenizer.token_strings.cache_clear()
    monkeypatch.setattr(detokenizer, "token_strings", lambda: pytest.fail("the whole table was built"))
    clear_completion_cache()
    server = MockServer(_scenario(tmp_path), profile="mlx-lm")
    raw = _body("chat", server.info.served_model_names[0], True, False)
    assert server.respond("chat", raw, {})[0].status == 200


def test_mlxlm_token_strings_one_at_a_time_equal_the_table():
    """``token_string`` gives the table's entry (a sample of the vocabulary: every 61st id, the
    byte tokens, every special token, an id past the end)."""
    from mockoss.profiles.mlxlm.detokenizer import FIRST_SPECIAL, VOCAB_SIZE, token_string, token_strings

    table = token_strings()
    for token in [*range(0, FIRST_SPECIAL, 61), *range(256), *range(FIRST_SPECIAL, VOCAB_SIZE)]:
        assert token_string(token) == table[token], token
    assert token_string(VOCAB_SIZE) == "!"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("call", [False, True], ids=["answer", "call"])
@pytest.mark.parametrize("endpoint", ["chat", "completions", "responses"])
def test_vllm_mlx(tmp_path, monkeypatch, endpoint, stream, call):
    from mockoss.profiles.vllm_mlx import cached, completions, responses_stream
    from mockoss.profiles.vllm_mlx import stream as chat_stream

    if call and endpoint == "completions":
        pytest.skip("completions declare no tools")
    spies = [(cached, "engine_outputs")]
    if stream:
        spies.append({"chat": (chat_stream, "chunk_frames"),
                      "completions": (completions, "_frames"), "responses": (responses_stream, "_events")}[endpoint])
    extra = {"stream_options": {"include_usage": True}} if stream and endpoint != "responses" else {}
    _check(tmp_path, monkeypatch, "vllm-mlx", endpoint, stream, call, spies, **extra)


def test_vllm_mlx_responses_stream_echo_holding_the_placeholder(tmp_path):
    """A request whose echoed fields hold the text the template puts where ``output`` goes is
    answered by the direct build (same events as a server with no memo)."""
    from mockoss.profiles.vllm_mlx import responses_stream

    clear_completion_cache()
    server = MockServer(_scenario(tmp_path), profile="vllm-mlx")
    raw = _body("responses", server.info.served_model_names[0], True, False, instructions=responses_stream._OUTPUT)
    first = server.respond("responses", raw, {})[0]
    assert first.status == 200 and json.loads(first.frames[-1].split(b"data: ", 1)[1])["response"]["instructions"] == responses_stream._OUTPUT
    assert json.loads(first.frames[-1].split(b"data: ", 1)[1])["response"]["output"][-1]["type"] == "message"


@pytest.mark.parametrize("call", [False, True], ids=["answer", "call"])
@pytest.mark.parametrize("endpoint", ["ollama.chat", "ollama.generate"])
def test_ollama_native_stream_stamps_once(tmp_path, monkeypatch, endpoint, call):
    """A repeated streamed /api/chat or /api/generate request does not write its chunks'
    timestamps again (one RFC 3339 text per token: ~10-25 ms for 10,000 tokens); only the final
    object's is written. The replies equal those with no memo served."""
    from mockoss.profiles.ollama import native, timeline

    if call and endpoint == "ollama.generate":
        pytest.skip("generate declares no tools")
    stamped = []
    real = timeline.rfc3339
    monkeypatch.setattr(timeline, "rfc3339", lambda ns: stamped.append(ns) or real(ns))
    monkeypatch.setattr(native, "rfc3339", lambda ns: stamped.append(ns) or real(ns))
    clear_completion_cache()
    server = MockServer(_scenario(tmp_path, call), profile="ollama")
    raw = _body(endpoint, server.info.served_model_names[0], True, call)
    first = _replies(server, endpoint, [raw])
    assert first[0][0] == 200 and len(stamped) > 10
    del stamped[:]
    second = _replies(server, endpoint, [raw])
    assert len(stamped) <= 2  # the final object's
    monkeypatch.setattr(Memo, "get", lambda self, key, default=None: default)
    clear_completion_cache()
    assert _replies(MockServer(_scenario(tmp_path, call), profile="ollama"), endpoint, [raw, raw]) == first + second


def test_ollama_native_generate_not_streamed_writes_no_chunk(tmp_path, monkeypatch):
    """A non-streamed /api/generate reply has no chunks: their timestamps are not written."""
    from mockoss.profiles.ollama import timeline

    stamped = []
    real = timeline.rfc3339
    monkeypatch.setattr(timeline, "rfc3339", lambda ns: stamped.append(ns) or real(ns))
    clear_completion_cache()
    server = MockServer(_scenario(tmp_path), profile="ollama")
    raw = _body("ollama.generate", server.info.served_model_names[0], False, False)
    assert server.respond("ollama.generate", raw, {})[0].status == 200
    assert stamped == []


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("call", [False, True], ids=["answer", "call"])
def test_ollama_responses_template_cut_once(tmp_path, monkeypatch, stream, call):
    from mockoss.profiles.ollama import responses

    _check(tmp_path, monkeypatch, "ollama", "responses", stream, call, [(responses, "_compiled")])


def test_ollama_responses_echo_holding_a_marker_is_filled_as_before(tmp_path):
    """Echoed request text holding a marker's letters keeps the template uncut (filled by
    replacement, as before)."""
    clear_completion_cache()
    server = MockServer(_scenario(tmp_path), profile="ollama")
    raw = _body("responses", server.info.served_model_names[0], True, False, instructions="a \x00mockoss-id:0\x00 b")
    reply = server.respond("responses", raw, {})[0]
    assert reply.status == 200
    assert any(b'"instructions":"a \\u0000mockoss-id:0\\u0000 b"' in frame for frame in reply.frames)


@pytest.mark.parametrize("call", [False, True], ids=["answer", "call"])
def test_ollama_openai_chat_stream_chunks_encoded_once(tmp_path, monkeypatch, call):
    """Ollama's streamed /v1/chat/completions joins its head to chunk bytes kept on the generation
    (not re-encoded per request); the replies equal those with no memo served."""
    from mockoss.profiles.ollama import openai_chat

    encoded = []
    real = openai_chat.encoded_chunks

    def spy(memo, key, chunks):
        encoded.append(key not in memo)
        return real(memo, key, chunks)

    monkeypatch.setattr(openai_chat, "encoded_chunks", spy)
    clear_completion_cache()
    server = MockServer(_scenario(tmp_path, call), profile="ollama")
    raw = _body("chat", server.info.served_model_names[0], True, call, stream_options={"include_usage": True})
    replies = _replies(server, "chat", [raw, raw])
    assert encoded == [True, False]
    monkeypatch.setattr(Memo, "get", lambda self, key, default=None: default)
    clear_completion_cache()
    assert _replies(MockServer(_scenario(tmp_path, call), profile="ollama"), "chat", [raw, raw]) == replies


@pytest.mark.parametrize("endpoint", ["chat", "responses"])
def test_lmstudio_shapes_of_one_completion_keep_their_own_frames(tmp_path, monkeypatch, endpoint):
    """Requests with and without tools on one completion (a bare tool call: its classifications
    differ, their token deltas may be the same empty tuple) each get their own stream, equal to
    the one built with no memo served."""
    path = tmp_path / "call.json"
    raw_call = '<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>{"content":"x"}<|call|>'
    path.write_text(json.dumps({"version": 1, "steps": [{"completion": {"raw": raw_call}}]}))

    def sequence():
        clear_completion_cache()
        server = MockServer(str(path), profile="lmstudio")
        name = server.info.served_model_names[0]
        return _replies(server, endpoint, [_body(endpoint, name, True, True), _body(endpoint, name, True, False)] * 2)

    replies = sequence()
    assert replies[0] != replies[1]
    monkeypatch.setattr(Memo, "get", lambda self, key, default=None: default)
    assert sequence() == replies
