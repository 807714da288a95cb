"""Caches keyed by request data are bounded in bytes and emptied by reset; the
``X-Mockoss-Transport`` header is bounded (issue 9 review, the breaker's findings 3, 4 and 9).

* Finding 3: ``tool_decl`` (chat) and ``_tool_decl`` (Responses) were ``lru_cache(4096)``s keyed
  by the declared names: 500 requests each declaring one unique 1 MB name grew a vLLM server from
  99 to 693 MB, and reset freed none of it.
* Finding 4: ``X-Mockoss-Transport`` had no length limit and its parsed values were kept by an
  ``lru_cache(256)``: 300 values of 1 MB grew a server by 500 MB, still there after reset.
* Finding 9: llama.cpp's ``build_grammar`` was an ``lru_cache(256)`` keyed by the whole tool-name
  tuple: 40 requests with 2,000 tools of 2 KB names each kept ~8 MB a request (grammar and names).
"""

from __future__ import annotations

import gc
import json
import sys
import tracemalloc

import pytest
from starlette.testclient import TestClient

from mockoss.scenario.loader import scenario_from_data
from mockoss.server.core import MockServer

VLLM = "openai/gpt-oss-20b"
LLAMACPP = "ggml-org/gpt-oss-20b-GGUF"


def _chat_with_tools(model: str, names: list[str], **extra) -> bytes:
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}} for name in names]
    return json.dumps(
        {"model": model, "messages": [{"role": "user", "content": "hi"}], "tools": tools, **extra}
    ).encode()


def _responses_with_tools(names: list[str]) -> bytes:
    tools = [{"type": "function", "name": name, "parameters": {"type": "object"}} for name in names]
    return json.dumps({"model": VLLM, "input": "hi", "tools": tools}).encode()


def _fresh_server(profile: str, name: str) -> MockServer:
    """A server whose scenario answers with a completion of its own, so that the completion's memo
    (shared by every server answering an equal completion) holds nothing of other tests."""
    scenario = scenario_from_data(
        {
            "when_exhausted": "repeat_last",
            "steps": [{"completion": {"messages": [{"channel": "final", "content": f"Only {name}."}]}}],
        },
        name=name,
        default_version=True,
    )
    return MockServer(scenario=scenario, profile=profile)


def _retained_after_reset(server: MockServer, send) -> int:
    """Bytes still allocated (tracemalloc) after ``send()`` and ``server.reset()``, measured from
    before ``send()``, less what the scripted completion's memos grew by (their keys may hold a
    request's tool names: bounded in bytes on their own, :data:`mockoss.harmony.completion.MEMO_BYTES`,
    and not emptied by reset); the server has answered one request of each kind before."""
    from mockoss.harmony.completion import memo_bytes

    gc.collect()
    tracemalloc.start()
    try:
        before, memos = tracemalloc.get_traced_memory()[0], memo_bytes()
        send()
        server.reset()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before - (memo_bytes() - memos)
    finally:
        tracemalloc.stop()


# -- finding 3: declared tools -------------------------------------------------------------------


def test_unique_long_tool_names_are_not_kept_after_reset():
    # 10 chat and 10 Responses requests each declaring one unique 100 KB name (words of 20
    # letters, as the breaker's script: one unbroken word is slow to count): the old caches kept
    # every name (3.2 MB here) whatever reset did.
    server = _fresh_server("vllm", "long-names")
    model = server.served_model_names[0]
    endpoints = ["chat", "responses"]
    warm = {"chat": _chat_with_tools(model, ["warm"]), "responses": _responses_with_tools(["warm"])}
    for endpoint in endpoints:
        assert server.handle(endpoint, warm[endpoint], {}).status == 200

    def send():
        for i in range(10):
            name = f"t{i} " + ("x" * 20 + " ") * 5000
            assert server.handle("chat", _chat_with_tools(model, [name]), {}).status == 200
            if "responses" in endpoints:
                assert server.handle("responses", _responses_with_tools([name + "r"]), {}).status == 200

    assert _retained_after_reset(server, send) < 300_000


def test_declared_tool_caches_hold_at_most_their_byte_budget():
    from mockoss.schemas import chat, responses

    chat._DECLS.clear()
    responses._DECLS.clear()
    limit = chat.TOOL_DECL_CACHE_BYTES
    short = chat.TOOL_DECL_CACHE_CHARS
    for i in range(20_000):  # ~5 MB of names of the longest kept length, 5x the budget
        name = f"{i:08d}" + "n" * (short - 8)
        assert chat.tool_decl(name).name == name
        kept = name[len("function") :]  # the Responses key is type and name: the same length
        assert responses._tool_decl("function", kept).name == kept
    for cache in (chat._DECLS, responses._DECLS):
        assert 0 < cache.size <= limit
        # The estimate is not below what the entries hold: their keys, instances and the table.
        held = sys.getsizeof(cache) + sum(
            sys.getsizeof(key) + sum(map(sys.getsizeof, key if isinstance(key, tuple) else ())) + sys.getsizeof(value)
            for key, value in cache.items()
        )
        assert held <= cache.size + sys.getsizeof(cache)
    long_name = "y" * (short + 1)
    first = chat.tool_decl(long_name)
    assert first.name == long_name and first.type == "function"
    assert long_name not in chat._DECLS
    assert ("function", long_name) not in responses._DECLS
    responses._tool_decl("function", long_name)
    assert ("function", long_name) not in responses._DECLS


def test_a_short_tool_name_shares_one_instance():
    # What the cache is for (an agent declares the same tools every turn).
    from mockoss.schemas import chat, responses

    assert chat.tool_decl("get_weather") is chat.tool_decl("get_weather")
    assert responses._tool_decl("mcp", "label") is responses._tool_decl("mcp", "label")
    assert responses._tool_decl("web_search_preview", None).name is None


# -- finding 9: llama.cpp's grammars ----------------------------------------------------------


def test_llamacpp_requests_with_many_long_tool_names_are_not_kept_after_reset():
    # Finding 9, smaller: 3 requests with 1,000 tools of 2 KB names each (2 MB bodies; the
    # breaker sent 40 of 2,000 tools). Reset empties the grammar cache.
    server = _fresh_server("llamacpp", "many-long-names")
    assert server.handle("chat", _chat_with_tools(LLAMACPP, ["warm"]), {}).status == 200

    def send():
        for i in range(3):
            names = [f"r{i}t{j} " + ("y" * 20 + " ") * 100 for j in range(1000)]
            assert server.handle("chat", _chat_with_tools(LLAMACPP, names), {}).status == 200

    # The old grammar cache kept ~4.3 MB a request (names and grammar).
    assert _retained_after_reset(server, send) < 1_000_000


def test_the_grammar_cache_holds_at_most_its_byte_budget_and_its_estimate_is_not_low():
    from mockoss.profiles.llamacpp import gptoss

    gptoss.clear_grammar_cache()
    # Grammars of 100 tools of 100-character names: the estimate covers what they hold.
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(3):
            gptoss.build_grammar(tuple(f"g{i}_{j}_" + "z" * 100 for j in range(100)), "auto", True)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert 0 < grown <= gptoss._grammars.size
    # Many shapes: never more than the budget.
    for i in range(60):
        gptoss.build_grammar(tuple(f"h{i}_{j}_" + "z" * 1000 for j in range(100)), "auto", True)
    assert 0 < gptoss._grammars.size <= gptoss.GRAMMAR_CACHE_BYTES
    # One bigger than the whole budget is built, answered and not kept.
    gptoss.clear_grammar_cache()
    huge = tuple(f"big{j}_" + "z" * 4000 for j in range(2000))
    grammar = gptoss.build_grammar(huge, "auto", True)
    assert grammar.parse("<|channel|>final<|message|>hi", partial=False).content == "hi"
    assert gptoss._grammars.size == 0


def test_an_unknown_tool_choice_shares_autos_grammar():
    # llama-server treats any tool_choice other than none/required as auto (the grammar reads
    # only those two), so a long unknown value is not a key of its own.
    from mockoss.profiles.llamacpp import gptoss

    tools = ("get_weather",)
    assert gptoss.build_grammar(tools, "q" * 100_000, True) is gptoss.build_grammar(tools, "auto", True)
    assert gptoss.build_grammar(tools, "none", True) is not gptoss.build_grammar(tools, "auto", True)


# -- reset ------------------------------------------------------------------------------------


def test_reset_empties_the_request_data_caches():
    from mockoss.profiles.llamacpp import gptoss
    from mockoss.scenario import transport
    from mockoss.schemas import chat, responses

    vllm = MockServer(scenario="clean-answer", profile="vllm")
    llamacpp = MockServer(scenario="clean-answer", profile="llamacpp")
    header = {"x-mockoss-transport": "ttft_ms=0"}
    assert vllm.handle("chat", _chat_with_tools(VLLM, ["a", "b"]), header).status == 200
    assert vllm.handle("responses", _responses_with_tools(["c"]), {}).status == 200
    assert llamacpp.handle("chat", _chat_with_tools(LLAMACPP, ["d"]), {}).status == 200
    assert len(chat._DECLS) and len(responses._DECLS) and len(gptoss._grammars)
    assert transport._from_short_header.cache_info().currsize
    vllm.reset()
    assert len(chat._DECLS) == len(responses._DECLS) == len(gptoss._grammars) == 0
    assert chat._DECLS.size == responses._DECLS.size == gptoss._grammars.size == 0
    assert transport._from_short_header.cache_info().currsize == 0


def test_the_recorders_secret_scans_are_bounded_in_bytes_and_emptied_by_reset(monkeypatch):
    # Not a breaker finding, the same problem: find_secrets kept the scans of 4,096 texts (whole
    # request and reply texts of a recording) in an lru_cache, whatever their size.
    from mockoss.upstream import scrub

    scrub._scans.clear()
    monkeypatch.setattr(scrub._scans, "limit", 1_000_000)  # the budget scaled down, to scan less
    key = "sk-proj-" + "A1b2C3d4" * 6
    for i in range(12):  # 12 unique texts of 200 KB: over twice the budget
        text = f"{i} {key} " + "lorem ipsum " * 17_000
        assert scrub.find_secrets(text, entropy=False)
    assert scrub._scans.get((text, False)) is not None  # the last one is kept
    assert 0 < scrub._scans.size <= 1_000_000
    assert len(scrub._scans) <= 5
    MockServer(scenario="clean-answer").reset()
    assert len(scrub._scans) == 0


# -- finding 4: X-Mockoss-Transport ------------------------------------------------------------


def _stream_body(model: str) -> bytes:
    return json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()


@pytest.mark.parametrize(
    ("profile", "endpoint", "model"), [("vllm", "chat", VLLM), ("ollama", "ollama.chat", "gpt-oss:20b")]
)
def test_an_over_long_transport_header_is_a_400_in_the_profiles_shape(profile, endpoint, model):
    from mockoss.scenario.transport import MAX_TRANSPORT_HEADER_CHARS

    server = MockServer(scenario="clean-answer", profile=profile)
    value = "malformed_at_frame=2,malformed_text=" + "z" * 1_000_000
    reply, delivery = server.respond(endpoint, _stream_body(model), {"x-mockoss-transport": value})
    assert reply.status == 400 and delivery is None
    expected = (
        f"mockoss: X-Mockoss-Transport: {len(value)} characters, over mockoss's limit of {MAX_TRANSPORT_HEADER_CHARS} "
        "(mockoss.scenario.transport.MAX_TRANSPORT_HEADER_CHARS; every field with a malformed_text of a few KiB fits in it)"
    )
    assert reply.body == server._base_profile.error(400, expected).body
    assert server.requests[-1].status == 400
    # The scenario's step was not used: the next request gets it.
    assert server.handle(endpoint, _stream_body(model), {}).status == 200


def test_a_transport_header_within_the_limit_still_applies():
    from mockoss.scenario.transport import MAX_TRANSPORT_HEADER_CHARS

    server = MockServer(scenario="clean-answer", profile="vllm")
    text = "v" * (MAX_TRANSPORT_HEADER_CHARS - 40)
    value = f"malformed_at_frame=0,malformed_text={text}"
    assert len(value) <= MAX_TRANSPORT_HEADER_CHARS
    reply, delivery = server.respond("chat", _stream_body(VLLM), {"x-mockoss-transport": value})
    assert reply.status == 200
    assert delivery is not None and delivery.spec.malformed_text == text


def test_only_short_transport_header_values_are_cached():
    from mockoss.scenario import transport
    from mockoss.scenario.transport import TRANSPORT_CACHE_CHARS, TransportSpec

    transport.clear_header_cache()
    short = "ttft_ms=300,tokens_per_s=50"
    assert TransportSpec.from_header(short) is TransportSpec.from_header(short)
    for k in range(300):  # values between the cached length and the limit: parsed, not kept
        spec = TransportSpec.from_header(f"malformed_text=v{k}" + "w" * TRANSPORT_CACHE_CHARS)
        assert spec.malformed_text.startswith(f"v{k}w")
    assert transport._from_short_header.cache_info().currsize == 1


@pytest.mark.parametrize(
    ("profile", "path", "model"), [("vllm", "/v1/chat/completions", VLLM), ("ollama", "/api/chat", "gpt-oss:20b")]
)
def test_an_over_long_transport_header_over_http_on_both_paths(profile, path, model):
    # The short path (mockoss.server.fastpath) and the layered one answer the same 400.
    from mockoss.server.app import create_app

    value = "ttft_ms=1,malformed_text=" + "z" * 20_000
    answers = []
    for layered in (False, True):
        app = create_app(MockServer(scenario="clean-answer", profile=profile))
        if layered:
            app.mockoss_generation = app.mockoss_generation.fallback
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            response = client.post(path, content=_stream_body(model), headers={"X-Mockoss-Transport": value})
        answers.append((response.status_code, response.content))
    assert answers[0] == answers[1]
    status, body = answers[0]
    assert status == 400
    error = json.loads(body)["error"]
    message = error if profile == "ollama" else error["message"]
    assert "over mockoss's limit of 8192" in message
