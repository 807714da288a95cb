"""The pytest fixtures' server (:class:`mockoss.server.run.ThreadedServer`) stops promptly with a
stream left open, as ``mockoss serve`` does (t18 breaker report, finding 1).

A test that reads one chunk of a stalled stream and keeps the response cost 10 s at the fixture
server's teardown: uvicorn waited for the stream without limit (``timeout_graceful_shutdown=None``,
Kludex/uvicorn 0.55.0 ``uvicorn/server.py`` ``Server.shutdown``) and ``stop()`` gave up at
``join(timeout=10)``, leaving the server's thread running.
"""

from __future__ import annotations

import time

import httpx

from mockoss.server.core import MockServer
from mockoss.server.run import SHUTDOWN_GRACE_S, ThreadedServer
from mockoss.steps import final

_SCENARIO = {"version": 1, "steps": [final("word " * 50).with_transport(stall_after_frames=2).to_dict()]}


def test_stop_with_a_stalled_stream_left_open_is_prompt_and_ends_the_thread() -> None:
    running = ThreadedServer(MockServer(scenario=_SCENARIO)).start()
    client = httpx.Client(timeout=None)
    body = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    try:
        response = client.send(
            client.build_request("POST", f"{running.url}/v1/chat/completions", json=body), stream=True
        )
        assert response.status_code == 200
        chunks = response.iter_raw()  # kept: closing the iterator would close the connection
        next(chunks)  # one chunk read; the stream then stalls and stays open
        started = time.monotonic()
        running.stop()
        took = time.monotonic() - started
        assert took < 2.0, f"stop() took {took:.1f} s with a stream open (grace {SHUTDOWN_GRACE_S} s)"
        assert not running._thread.is_alive()
    finally:
        client.close()


def test_stop_when_idle_is_quick() -> None:
    running = ThreadedServer(MockServer()).start()
    started = time.monotonic()
    running.stop()
    assert time.monotonic() - started < 1.0
    assert not running._thread.is_alive()
