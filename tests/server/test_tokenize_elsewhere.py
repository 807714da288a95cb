"""Side routes that tokenize a big body or one long word do it in the worker process.

openai-harmony's BPE is quadratic in the length of a word and holds the GIL for the whole call:
vLLM's ``/tokenize`` of one 50,000-character word took ~0.8 s in process, on a worker thread too,
and every other client waited (``benchmarks/bench_isolation.py`` case ``tokenize``: 725-818 ms).
A word of 1,000,000 characters makes the tokenizer panic; that is a 400, not a bare 500.
"""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from mockoss.harmony import encoding
from mockoss.harmony.encoding import encode_text, load_encoding
from mockoss.server import offload
from mockoss.server.core import MockServer
from mockoss.server.prompt_worker import PanicException
from mockoss.server.run import ThreadedServer

MODEL = "openai/gpt-oss-20b"


@pytest.fixture(autouse=True)
def _stop_worker():
    yield
    offload.shutdown()


@pytest.mark.parametrize("special", [True, False])
@pytest.mark.parametrize("text", ["hello world <|start|>assistant", "é😀 中文 \ud800 x", "a" * 5_000, ""])
def test_the_worker_encodes_as_the_library_does(text, special):
    library = load_encoding()
    want = list(library.encode(text, allowed_special="all") if special else library.encode(text, disallowed_special=()))
    assert offload.encode_in_worker(text, special) == want
    assert encode_text(text, special=special) == want


def test_a_text_the_tokenizer_cannot_encode_raises_the_workers_panic_here():
    """Not encoded again in process (issue 9, review: ~90 ms holding the GIL each time)."""
    with pytest.raises(PanicException, match="StackOverflow"):  # it panicked there: raised here with its text
        offload.encode_in_worker("a" * 1_000_000, True)
    assert offload.encode_in_worker("hi", True) == list(load_encoding().encode("hi", allowed_special="all"))  # still serving


@pytest.mark.parametrize(
    ("profile", "body", "field"),
    [("vllm", {"model": MODEL, "prompt": "a" * 20_000}, "tokens"), ("llamacpp", {"content": "b" * 20_000}, "tokens")],
)
def test_a_long_word_is_tokenized_in_the_worker_process_with_the_same_ids(profile, body, field, monkeypatch):
    used: list[str] = []
    real = offload.encode_in_worker

    def spy(text, special):
        used.append(threading.current_thread().name)
        return real(text, special)

    monkeypatch.setattr(offload, "encode_in_worker", spy)
    server = MockServer("clean-answer", profile=profile)
    direct = server.probe("POST", "/tokenize", json.dumps(body).encode())
    assert used == []  # in process: no worker
    threaded = ThreadedServer(server).start()
    try:
        got = httpx.post(threaded.url + "/tokenize", json=body, timeout=60)
    finally:
        threaded.stop()
    assert got.status_code == 200 and got.content == direct.body
    assert used == ["mockoss-offload"]  # off the event loop (the gate's daemon threads), tokenized in the worker process
    assert encoding.ENCODE_ELSEWHERE.get() is None


@pytest.mark.parametrize(("profile", "body"), [("vllm", {"model": MODEL, "prompt": "a" * 1_000_000}), ("llamacpp", {"content": "a" * 1_000_000})])
def test_a_tokenizer_panic_in_a_side_route_is_a_400_in_the_profile_shape(profile, body):
    server = MockServer("clean-answer", profile=profile)
    reply = server.probe("POST", "/tokenize", json.dumps(body).encode())
    assert reply.status == 400
    assert "openai-harmony cannot tokenize this request" in json.loads(reply.body)["error"]["message"]
