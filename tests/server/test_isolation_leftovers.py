"""Issue 9's isolation target, the breaker's three leftovers (no timing: where each piece of work
goes, that outputs stay byte for byte, that limits answer in the profile's error shape).

* D8: a ``/v1/completions`` batch (``"prompt": ["hi"] * 40000``, 240 KB, under the 256 KiB
  off-loop threshold) was answered on the event loop (~10 s) with a 162 MB stream.
* D10: a template echoing a 5 MB message was tokenized, parsed and surfaced per request under
  the server's lock (12-15 s for every other client).
* D16a: ``GET /mockoss/requests`` of a full log was read and written in one go on the loop.

Figures: ``benchmarks/bench_isolation.py`` (cases ``batch``, ``echo``, ``log``).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
from pathlib import Path

import httpx
import pytest
from starlette.responses import JSONResponse

from mockoss.profiles import reply_limit
from mockoss.scenario import template
from mockoss.schemas.completions import prompt_token_ids, render_completions_prompt
from mockoss.server import offload
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

#: vLLM and SGLang refuse a body not sent as application/json (mockoss.server.content_type).
JSON_TYPE = {"content-type": "application/json"}

MODEL = "openai/gpt-oss-20b"
GOLDEN = Path(__file__).with_name("completions_batch_sha256.json")


def _completions(prompt, **fields) -> bytes:
    return json.dumps({"model": MODEL, "prompt": prompt, **fields}).encode()


# -- D8: which bodies leave the loop ------------------------------------------------------------


def test_a_big_batch_under_the_byte_threshold_is_heavy_on_batch_endpoints_only():
    batch = _completions(["hi"] * 40_000, stream=True)
    assert len(batch) < offload.OFFLOAD_BYTES
    assert offload.is_heavy("completions", batch)
    assert offload.is_heavy("lmstudio.completions", batch)  # the same schema (LM Studio's REST v0)
    # The chat hot path never counts items: a chat body with as many commas stays on the loop.
    chat = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "a, " * 40_000}]}).encode()
    assert len(chat) < offload.OFFLOAD_BYTES and not offload.is_heavy("chat", chat)


def test_a_small_batch_stays_on_the_loop():
    assert offload.BATCH_ENDPOINTS >= {"completions", "lmstudio.completions"}
    assert "chat" not in offload.BATCH_ENDPOINTS and "responses" not in offload.BATCH_ENDPOINTS
    assert not offload.is_heavy("completions", _completions(["hi"] * (offload.BATCH_ITEMS // 2)))
    assert offload.is_heavy("completions", _completions(["hi"] * (offload.BATCH_ITEMS + 1)))


@pytest.fixture
def served(monkeypatch):
    """A served MockServer whose worker-process count calls are recorded (the off-loop path)."""
    counted: list[tuple[str, int]] = []
    real = offload.count_in_worker

    def recording(endpoint: str, raw: bytes):
        counted.append((endpoint, len(raw)))
        return real(endpoint, raw)

    monkeypatch.setattr(offload, "count_in_worker", recording)
    threaded = ThreadedServer(MockServer("clean-answer")).start()
    yield threaded.url, counted
    threaded.stop()
    offload.shutdown()


@pytest.mark.timeout(60)
def test_a_batch_goes_off_the_loop_and_is_answered_the_same(served):
    url, counted = served
    prompts = [f"prompt {i % 7}" for i in range(offload.BATCH_ITEMS + 10)]
    body = _completions(prompts, max_tokens=3)
    with httpx.Client(timeout=60) as client:
        small = client.post(url + "/v1/completions", headers=JSON_TYPE, content=_completions(prompts[:3], max_tokens=3))
        assert small.status_code == 200 and counted == []  # a short batch: on the loop
        reply = client.post(url + "/v1/completions", headers=JSON_TYPE, content=body)
    assert counted == [("completions", len(body))]  # counted in the worker process: off the loop
    assert reply.status_code == 200
    # The same answer as in process (ids aside: they come from the request's index).
    direct, _ = MockServer("clean-answer").respond("completions", body, {})
    got, want = reply.json(), json.loads(direct.body)
    assert [c["text"] for c in got["choices"]] == [c["text"] for c in want["choices"]]
    assert got["usage"] == want["usage"]
    assert got["usage"]["prompt_tokens"] == sum(len(prompt_token_ids(p)) for p in prompts)


# -- D8: the reply, byte for byte and bounded ---------------------------------------------------


def _golden_cases():
    """The request matrix the golden was recorded over (with the code before the change:
    ``_full``/``_stream`` building every choice and frame from scratch)."""
    prompts = {
        "one": "hi",
        "same3": ["hi", "hi", "hi"],
        "mixed": ["hi", "héllo <|start|>", "hi", "x" * 300],
        "ids": [[200006, 1428], [15, 16, 17], [200006, 1428]],
        "flat_ids": [200006, 1428, 15],
        "many12": [f"p{i % 4}" for i in range(12)],
    }
    for (pname, prompt), stream, echo, rti, usage, maxt in itertools.product(
        prompts.items(), (False, True), (False, True), (False, True), (None, "inc", "cont"), (16, 3, 0)
    ):
        if maxt == 0 and not echo:
            continue
        body = {"model": MODEL, "prompt": prompt, "stream": stream, "max_tokens": maxt}
        if echo:
            body["echo"] = True
        if rti:
            body["return_token_ids"] = True
        if usage and stream:
            body["stream_options"] = {"include_usage": True, "continuous_usage_stats": usage == "cont"}
        yield f"{pname}-s{int(stream)}-e{int(echo)}-r{int(rti)}-{usage}-m{maxt}", body


def test_batched_replies_are_byte_identical_to_the_golden():
    """Each distinct prompt's choice or frames are now written once and joined to each index;
    the bytes of 360 request shapes (echo, token ids, usage options, repeated and distinct
    prompts, token-id prompts) are those the previous code wrote."""
    golden = json.loads(GOLDEN.read_text())
    seen = 0
    for name, body in _golden_cases():
        server = MockServer("clean-answer")
        reply, _ = server.respond("completions", json.dumps(body).encode(), {})
        data = b"".join(reply.frames) if reply.frames else reply.body
        assert [reply.status, len(reply.frames), hashlib.sha256(data).hexdigest()] == golden[name], name
        seen += 1
    assert seen == len(golden) == 360


def test_a_reply_over_the_limit_is_a_400_in_vllms_shape(monkeypatch):
    monkeypatch.setattr(reply_limit, "MAX_REPLY_BYTES", 64 * 1024)
    server = MockServer("clean-answer")
    for stream in (True, False):
        fits, _ = server.respond("completions", _completions(["hi"] * 10, stream=stream), {})
        assert fits.status == 200
        over, _ = server.respond("completions", _completions(["hi"] * 2_000, stream=stream), {})
        assert over.status == 400, stream
        error = json.loads(over.body)["error"]
        assert error["type"] == "BadRequestError" and error["code"] == 400
        assert "2000 prompts" in error["message"] and "MAX_REPLY_BYTES" in error["message"]


@pytest.mark.parametrize("stream", [True, False])
def test_trtllm_batches_are_bounded_too(monkeypatch, stream):
    """TensorRT-LLM's stream has a frame per engine step per prompt with its own id and usage
    (~10 KB a prompt): 4,000 prompts built 40 MB."""
    monkeypatch.setattr(reply_limit, "MAX_REPLY_BYTES", 32 * 1024)
    server = MockServer("clean-answer", profile="trtllm")
    extra = {"stream": True, "stream_options": {}} if stream else {}
    fits, _ = server.respond("completions", _completions(["hi"] * 2, **extra), {})
    assert fits.status == 200
    over, _ = server.respond("completions", _completions(["hi"] * 400, **extra), {})
    assert over.status == 400 and over.frames == ()
    error = json.loads(over.body)
    assert error["object"] == "error" and "400 prompts" in error["message"]  # trtllm-serve's ErrorResponse


def test_the_reply_limit_stops_the_breakers_batch():
    reply, _ = MockServer("clean-answer").respond("completions", _completions(["hi"] * 40_000, stream=True), {})
    assert reply.status == 400 and reply.frames == ()
    assert str(reply_limit.MAX_REPLY_BYTES) in json.loads(reply.body)["error"]["message"]


def test_the_batch_prompt_count_is_the_sum_of_each_prompts_tokens():
    """Each distinct prompt is tokenized once per request; the count stays exact."""
    prompts = ["hi", "héllo <|start|>user", "hi", [200006, 15], "hi", [200006, 15]]
    assert render_completions_prompt({"prompt": prompts}) == [t for p in prompts for t in prompt_token_ids(p if isinstance(p, str) else tuple(p))]


# -- D10: templated completions are bounded -----------------------------------------------------

ECHO = 'version: 1\nsteps:\n  - completion: {messages: [{channel: final, content: "You said: {{ request.messages[-1].content }}"}]}\n'


def _chat(content: str) -> bytes:
    return json.dumps({"model": MODEL, "messages": [{"role": "user", "content": content}]}).encode()


def test_an_echo_over_the_limit_is_a_400_naming_the_template(tmp_path):
    path = tmp_path / "echo.yaml"
    path.write_text(ECHO)
    server = MockServer(str(path))
    limit = template.MAX_RENDERED_CHARS
    fits, _ = server.respond("chat", _chat("x" * (limit - len("You said: "))), {})
    assert fits.status == 200
    over, _ = server.respond("chat", _chat("x" * (5 * 1024 * 1024)), {})
    assert over.status == 400
    error = json.loads(over.body)["error"]
    assert error["type"] == "BadRequestError"
    assert "request.messages[-1].content" in error["message"] and str(limit) in error["message"]
    assert server.requests[-1].status == 400 and server.requests[-1].completion is None  # nothing was tokenized


def test_a_template_whose_literal_text_is_over_the_limit_fails_at_load():
    text = "y" * (template.MAX_RENDERED_CHARS + 1) + "{{ request.model }}"
    with pytest.raises(template.TemplateError, match="literal text"):
        template.parse_template(text)
    assert template.parse_template("y" * 100 + "{{ request.model }}") is not None


def test_the_limit_is_read_per_render(monkeypatch):
    parsed = template.parse_template("{{ request.model }}")
    ctx = template.RenderContext({}, "m" * 50, "0//0")
    assert parsed.render(ctx) == "m" * 50
    monkeypatch.setattr(template, "MAX_RENDERED_CHARS", 10)
    with pytest.raises(template.TemplateRenderError, match="rendered 50 characters"):
        parsed.render(ctx)


# -- D16a: the request log is written a slice at a time ----------------------------------------


def _log_server(bodies: list[bytes]) -> tuple[ThreadedServer, str]:
    threaded = ThreadedServer(MockServer("clean-answer")).start()
    with httpx.Client(timeout=30) as client:
        for body in bodies:
            client.post(threaded.url + "/v1/chat/completions", headers=JSON_TYPE, content=body)
    return threaded, threaded.url


@pytest.mark.parametrize("odd", [None, "nan", "surrogate"])
def test_the_request_log_is_the_bytes_jsonresponse_wrote(odd, monkeypatch):
    """The log's JSON is built an entry at a time on a worker thread (not the event loop) and is
    byte for byte what ``JSONResponse`` of the whole list wrote, also when one body forces the
    ASCII fallback."""
    from mockoss.server import control_log

    monkeypatch.setattr(control_log, "LOG_SLICE_BYTES", 200)  # many slices
    threads: list[str] = []
    real_entry = control_log._entry_json

    def watched(entry, records):
        threads.append(threading.current_thread().name)
        return real_entry(entry, records)

    monkeypatch.setattr(control_log, "_entry_json", watched)
    bodies = [_chat(f"héllo {i} " * 20) for i in range(12)]
    if odd == "nan":
        bodies.insert(5, b'{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"x"}],"temperature":NaN}')
    elif odd == "surrogate":
        bodies.insert(5, b'{"model":"openai/gpt-oss-20b","messages":[{"role":"user","content":"\\ud800"}]}')
    threaded, url = _log_server(bodies)
    try:
        with httpx.Client(timeout=30) as client:
            got = client.get(url + "/mockoss/requests")
    finally:
        threaded.stop()
    # On the control app's daemon pool (mockoss.server.control_routes).
    assert got.status_code == 200 and threads and all(name == "mockoss-log" for name in threads), threads
    assert got.headers["content-length"] == str(len(got.content)) and got.headers["content-type"] == "application/json"
    entries = got.json()
    assert len(entries) == len(bodies)
    # What the route wrote before: JSONResponse of the whole list, else the ASCII fallback.
    if odd is None:
        assert got.content == JSONResponse(entries).body
    else:
        assert got.content.isascii()
        assert got.content == json.dumps(entries, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()
        if odd == "nan":
            assert entries[5]["body"]["temperature"] == "NaN"
        else:
            assert entries[5]["body"]["messages"][0]["content"] == "\ud800"


def test_a_big_body_in_the_log_is_written_off_the_loop_and_sent_in_slices(monkeypatch):
    """The log's JSON is built on a worker thread, where the event loop takes the interpreter back
    between any two steps (on the loop, a log holding a 10 MB body held it 113 ms in one go; with
    yields between the body's steps 75-81 ms; now 25-38 ms: bench_isolation.py, cases 10MB,log),
    and a part over LOG_SLICE_BYTES bytes is sent in slices of that size. The bytes are unchanged."""
    from mockoss.server import control_log
    from mockoss.server.control_log import _LOG_FIELDS

    monkeypatch.setattr(control_log, "LOG_SLICE_BYTES", 1000)
    server = MockServer("clean-answer")
    server.respond("chat", _chat("small"), {})
    server.respond("chat", _chat("big " * 2000), {})  # ~8,000 characters, one entry
    records = {r.index: r for r in server.requests}
    entries = [tuple(r.index if name == "index" else 0.0 if name == "ms" else None for name in _LOG_FIELDS) for r in server.requests]
    built_on: list[int] = []
    real = control_log.log_parts

    def watched(*args):
        built_on.append(threading.get_ident())
        return real(*args)

    monkeypatch.setattr(control_log, "log_parts", watched)

    async def run() -> tuple[list[bytes], list[bytes], int]:
        parts = await control_log._log_json(entries, records)
        return parts, [chunk async for chunk in control_log.joined(parts)], threading.get_ident()

    parts, chunks, loop_thread = asyncio.run(run())
    assert built_on and built_on != [loop_thread]  # not on the event loop's thread
    assert max(map(len, chunks)) <= 1000 and len(chunks) > len(parts) + 1
    assert b"".join(chunks) == b"[" + b",".join(parts) + b"]"
    assert json.loads(b"".join(chunks))[1]["body"]["messages"][0]["content"] == "big " * 2000


def test_an_empty_log_and_a_filtered_one_are_still_json_lists():
    threaded, url = _log_server([_chat("one")])
    try:
        with httpx.Client(timeout=30) as client:
            none = client.get(url + "/mockoss/requests", params={"session": "nobody"})
            one = client.get(url + "/mockoss/requests")
    finally:
        threaded.stop()
    assert none.content == b"[]" and none.headers["content-length"] == "2"
    assert len(one.json()) == 1 and one.content == JSONResponse(one.json()).body


def test_the_log_filter_finds_a_long_session_key_as_it_was_sent():
    """The log keeps a session key over ``MAX_SESSION_KEY_CHARS`` by its digest; ``?session=``
    with the key as the client sent it still finds that session's requests, and only those."""
    from mockoss.scenario.player import MAX_SESSION_KEY_CHARS

    long_key = "k" * (MAX_SESSION_KEY_CHARS + 50)
    threaded = ThreadedServer(MockServer("clean-answer")).start()
    try:
        with httpx.Client(timeout=30) as client:
            client.post(threaded.url + "/v1/chat/completions", content=_chat("mine"), headers={"X-Mockoss-Session": long_key})
            client.post(threaded.url + "/v1/chat/completions", content=_chat("other"), headers={"X-Mockoss-Session": "short"})
            mine = client.get(threaded.url + "/mockoss/requests", params={"session": long_key}).json()
            other = client.get(threaded.url + "/mockoss/requests", params={"session": "short"}).json()
    finally:
        threaded.stop()
    assert [e["body"]["messages"][0]["content"] for e in mine] == ["mine"]
    assert [e["body"]["messages"][0]["content"] for e in other] == ["other"]
