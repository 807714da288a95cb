"""`--upstream-mode raw` with a heavy body: prepared and answered off the event loop, replies unchanged.

Issue 9 review, eighth session, finding 2: raw mode did its prompt work on the event loop (the
check, the parse, the Harmony render of a 50,000-character word or 10 MB of text, the reply),
bypassing the offloading scripted replies get (mockoss/server/offload.py): another client's
``GET /health`` waited 2-3 s. Not timed: these tests assert where the work ran (a running event
loop or not, the worker process's render) and that the bytes are those of the in-process path.
"""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from upstream_helpers import CHAT, MODEL, RAW, completion_step, scenario

import mockoss.profiles.ollama.prompt as ollama_prompt
import mockoss.upstream.proxy as proxy_module
import mockoss.upstream.raw as raw_module
from mockoss.harmony import load_encoding
from mockoss.harmony.encoding import id_slices
from mockoss.harmony.prompt import render_chat_prompt
from mockoss.server.core import MockServer
from mockoss.server.offload import is_heavy
from mockoss.upstream import Upstream
from mockoss.upstream.raw import completion_content, completion_request

#: One unbroken word: a long pre-tokenizer piece (quadratic BPE), so offload.is_heavy() though 20 KB.
WORD = "a" * 20_000


def _on_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.fixture
def where(monkeypatch):
    """Records, per call, whether precheck/respond ran on the event loop (``(server, on_loop)``),
    and the worker renders asked for; :func:`_of` picks one server's."""
    seen: dict[str, list] = {"precheck": [], "respond": [], "render": []}
    precheck, respond, render = MockServer.precheck, MockServer.respond, getattr(proxy_module, "render_in_worker", None)

    def spy_precheck(self, endpoint, raw):
        seen["precheck"].append((self, _on_loop()))
        return precheck(self, endpoint, raw)

    def spy_respond(self, endpoint, raw, headers, step=None):
        seen["respond"].append((self, _on_loop()))
        return respond(self, endpoint, raw, headers, step=step)

    def spy_render(endpoint, raw):
        seen["render"].append((endpoint, raw, _on_loop()))
        return render(endpoint, raw)

    monkeypatch.setattr(MockServer, "precheck", spy_precheck)
    monkeypatch.setattr(MockServer, "respond", spy_respond)
    monkeypatch.setattr(proxy_module, "render_in_worker", spy_render, raising=False)
    return seen


def _of(calls: list, running) -> list[bool]:
    return [on_loop for server, on_loop in calls if server is running.server]


@pytest.fixture
def upstream(serve):
    return serve(MockServer(scenario=scenario(completion_step(), completion_step())))


def test_a_heavy_raw_request_is_prepared_and_answered_off_the_event_loop(serve, upstream, http, where):
    """Issue 9 review, eighth session, finding 2: the long word's request is checked, its prompt
    rendered (in the worker process) and its reply made on worker threads; the upstream gets the
    prompt the in-process render gives, and the client the reply a scripted server gives."""
    proxy = serve(MockServer(upstream=Upstream(upstream.url, mode="raw")))
    reference = serve(MockServer(scenario=scenario(completion_step())))
    body = {**CHAT, "messages": [{"role": "user", "content": WORD}]}
    raw = json.dumps(body).encode()
    assert is_heavy("chat", raw)
    reply = http.post(proxy.url + "/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
    assert reply.status_code == 200
    assert reply.content == http.post(reference.url + "/v1/chat/completions", content=raw, headers={"content-type": "application/json"}).content
    assert where["render"] == [("chat", raw, False)]
    assert (_of(where["precheck"], proxy), _of(where["respond"], proxy)) == ([False], [False])
    assert upstream.server.requests[0].body["prompt"] == render_chat_prompt(body)
    assert proxy.server.requests[0].completion == RAW


def test_a_small_raw_request_keeps_its_path_on_the_event_loop(serve, upstream, http, where):
    """Ordinary bodies are answered on the loop as before (no thread hop, no worker process)."""
    proxy = serve(MockServer(upstream=Upstream(upstream.url, mode="raw")))
    assert http.post(proxy.url + "/v1/chat/completions", json=CHAT).status_code == 200
    assert (_of(where["precheck"], proxy), _of(where["respond"], proxy), where["render"]) == ([True], [True], [])


def test_a_heavy_request_mockoss_refuses_is_checked_off_the_loop(serve, upstream, http, where):
    """An unknown model with a long word: the check runs on a worker thread, the upstream is not asked."""
    proxy = serve(MockServer(upstream=Upstream(upstream.url, mode="raw")))
    reply = http.post(proxy.url + "/v1/chat/completions", json={"model": "nope", "messages": [{"role": "user", "content": WORD}]})
    assert reply.status_code == 404
    assert (_of(where["precheck"], proxy), _of(where["respond"], proxy), where["render"]) == ([False], [False], [])
    assert len(upstream.server.requests) == 0


def test_ollama_generate_context_uses_the_worker_render_once(serve, http, where, monkeypatch):
    """/api/generate's ``context`` (the prompt's ids, then the answer's) comes from the one render
    the worker process made for the upstream's prompt, not a second one; the bytes equal a scripted
    server's. ollama/ollama@fb307609:server/routes.go GenerateHandler sets ``context``."""
    upstream = serve(MockServer(scenario=scenario(completion_step())))
    proxy = serve(MockServer(profile="ollama", upstream=Upstream(upstream.url, mode="raw", model=MODEL)))
    reference = serve(MockServer(profile="ollama", scenario=scenario(completion_step())))
    body = {"model": "gpt-oss:20b", "prompt": WORD, "stream": False}
    in_process = []
    render = ollama_prompt.render_native_generate_prompt
    monkeypatch.setattr(ollama_prompt, "render_native_generate_prompt", lambda request: in_process.append(1) or render(request))
    reply = http.post(proxy.url + "/api/generate", json=body)
    assert in_process == []  # neither the upstream's prompt nor the count nor the context rendered here
    expected = http.post(reference.url + "/api/generate", json=body)
    assert reply.status_code == 200 and len(reply.json()["context"]) > 10
    assert {k: v for k, v in reply.json().items() if not k.endswith("duration")} == {k: v for k, v in expected.json().items() if not k.endswith("duration")}
    assert [(endpoint, on_loop) for endpoint, _, on_loop in where["render"]] == [("ollama.generate", False)]
    assert (_of(where["precheck"], proxy), _of(where["respond"], proxy)) == ([False], [False])


@pytest.mark.parametrize("form", ["tokens", "text"])
@pytest.mark.parametrize("model", [None, 'odd "prompt": [] model'])
def test_the_completions_body_is_the_same_from_worker_ids(monkeypatch, form, model):
    """completion_content with the worker's ``"id,id,…"`` writes the bytes of the in-process path;
    in text form the ids are decoded a slice at a time, and a character whose bytes span several
    tokens (🦜 is 3, 𓀀 is 4 in o200k_harmony) is cut between slices (a slice of ~7 characters of
    ids is one or two ids), yet decoded whole."""
    monkeypatch.setattr(raw_module, "_IDS_SLICE", 7)
    upstream = Upstream("http://127.0.0.1:9", mode="raw", prompt=form, model=model)
    body = {**CHAT, "messages": [{"role": "user", "content": "Hello, plain words here ✓ 🦜𓀀 ok"}], "temperature": 0.5}
    ids = render_chat_prompt(body)
    expected = json.dumps(completion_request(upstream, "chat", body, MODEL)).encode()
    assert completion_content(upstream, "chat", body, MODEL, ",".join(map(str, ids))) == expected
    assert completion_content(upstream, "chat", body, MODEL) == expected
    sent = json.loads(expected)["prompt"]
    assert sent == (ids if form == "tokens" else load_encoding().decode(ids))
    assert list(id_slices("", 7)) == [] and [t for part in id_slices(",".join(map(str, ids)), 7) for t in part] == ids
    assert "🦜𓀀" in load_encoding().decode(ids) and len(list(id_slices(",".join(map(str, ids)), 7))) > 10


def test_a_heavy_scripted_mode_request_is_played_off_the_event_loop(serve, http, monkeypatch):
    """``--upstream-mode scripted``: the scenario's step for a heavy body is played (parse,
    validation, the server lock) and the upstream's body written on a worker thread; a small body
    is played on the loop as before. Found with the issue 9 review, eighth session, finding 2
    (40,000 short messages held another client 110-150 ms)."""
    seen = []
    play = MockServer.play

    def spy_play(self, endpoint, raw, headers):
        seen.append((len(raw), _on_loop()))
        return play(self, endpoint, raw, headers)

    monkeypatch.setattr(MockServer, "play", spy_play)
    engine = serve(MockServer(scenario=scenario(completion_step(), completion_step())))
    front = serve(MockServer(scenario=scenario(completion_step(), completion_step()), upstream=Upstream(engine.url, mode="scripted")))
    heavy = {**CHAT, "messages": [{"role": "user", "content": WORD}]}
    assert http.post(front.url + "/v1/chat/completions", json=CHAT).status_code == 200
    assert http.post(front.url + "/v1/chat/completions", json=heavy).status_code == 200
    assert [on_loop for _, on_loop in seen] == [True, False]
    assert [r.status for r in front.server.requests] == [200, 200]
    assert json.loads(engine.server.requests[1].raw)["messages"] == heavy["messages"]


def test_a_heavy_upstream_answer_is_tokenized_in_the_worker_process(serve, http, monkeypatch):
    """An upstream answer holding a long word (o200k's BPE is quadratic in a word's length: 50,000
    characters held the event loop ~0.9 s in ``Completion.from_text``) is read on a worker thread
    and tokenized in the worker process; the client gets what a scripted server with that
    completion gives. Found with the issue 9 review, eighth session, finding 2."""
    import mockoss.server.offload as offload

    long_answer = f"<|channel|>final<|message|>{WORD}<|return|>"
    asked = []
    encode = offload.encode_in_worker

    def spy_encode(text, special):
        asked.append((text == long_answer, special, _on_loop(), threading.current_thread().name))
        return encode(text, special)

    monkeypatch.setattr(offload, "encode_in_worker", spy_encode)
    upstream = serve(MockServer(scenario=scenario(completion_step(long_answer))))
    proxy = serve(MockServer(upstream=Upstream(upstream.url, mode="raw")))
    reference = serve(MockServer(scenario=scenario(completion_step(long_answer))))
    reply = http.post(proxy.url + "/v1/chat/completions", json=CHAT)
    # On the app's daemon threads, which a stopping server does not wait for (anyio's it did:
    # issue 9, the eleventh session's review, finding 3).
    assert asked == [(True, True, False, "mockoss-offload")]
    assert reply.status_code == 200 and WORD in reply.json()["choices"][0]["message"]["content"]
    assert reply.content == http.post(reference.url + "/v1/chat/completions", json=CHAT).content
    assert proxy.server.requests[0].completion == long_answer


def test_a_heavy_raw_request_is_recorded_before_its_reply(serve, upstream, http, tmp_path):
    """The recording of a request answered on a worker thread is on disk when its reply arrives
    (the ticket taken before ``respond`` reaches the thread's copy of the context), and replays to
    the same bytes. Issue 9 review, eighth session, finding 2."""
    from upstream_helpers import stopped

    from mockoss.upstream import Recorder

    heavy = {**CHAT, "messages": [{"role": "user", "content": WORD}]}
    recorder = Recorder(tmp_path, "raw")
    with stopped(serve(MockServer(upstream=Upstream(upstream.url, mode="raw"), recorder=recorder))) as proxy:
        first = [http.post(proxy.url + "/v1/chat/completions", json=body).content for body in (heavy, CHAT)]
        assert (tmp_path / "raw.yaml").read_text().count("completion:") == 2  # both on disk already
    replay = serve(MockServer(scenario=str(tmp_path / "raw.yaml")))
    assert [http.post(replay.url + "/v1/chat/completions", json=body).content for body in (heavy, CHAT)] == first
