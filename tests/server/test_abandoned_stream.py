"""A paced stream whose client left stops at the first failed write (issue 9, twelfth-session
breaker, finding 6: 200 paced streams dropped after 2 chunks gave 636 ``socket.send() raised
exception.`` lines, asyncio's warning for writes to a lost transport, and each was written on).

A stream that fell behind its schedule (the loop was busy) sent its overdue writes in one go,
never giving the loop the turn in which asyncio reports the failed ``send`` to uvicorn
(``connection_lost`` comes from ``loop.call_soon``) and Starlette's listener cancels the stream;
now each late write gets that turn first (:func:`mockoss.server.transport._turn`). vLLM stops
the same way: Starlette's listener cancels its generator and ``AsyncLLM.generate`` aborts the
request (vllm-project/vllm@v0.33.0:vllm/v1/engine/async_llm.py). The request is logged as any
dropped stream: status 200 and the frames handed to ``send`` before the stream was stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
import struct
import threading
import time
from typing import Any

import httpx

from mockoss.profiles.base import SSE_MEDIA_TYPE, Reply
from mockoss.profiles.sse import SseEvents
from mockoss.scenario.transport import TransportSpec
from mockoss.server.core import MockServer
from mockoss.server.responses import to_scheduled_response
from mockoss.server.run import ThreadedServer
from mockoss.server.transport import Delivery

MODEL = "openai/gpt-oss-20b"
FRAMES = SseEvents(f'data: {{"n":{i}}}\n\n'.encode() for i in range(300))
#: asyncio's ``constants.LOG_THRESHOLD_FOR_CONNLOST_WRITES``: writes to a lost transport it lets pass silently.
SILENT_WRITES = 5


def test_a_late_stream_stops_at_the_first_failed_write():
    """ASGI as uvicorn 0.55 runs it over asyncio: the third write fails, asyncio calls
    ``connection_lost`` from the loop (``call_soon``), which marks the cycle disconnected (``send``
    then returns without writing) and answers ``receive()`` with ``http.disconnect``. The stream
    is 200 ms behind its 1,000 tokens/s schedule when it starts (before: the 201 writes due after
    the failed one went to the lost transport, asyncio warning from the fifth)."""

    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        lost = asyncio.Event()
        state = {"failed": False, "disconnected": False, "after_failure": 0, "written": 0}

        def connection_lost() -> None:
            state["disconnected"] = True
            lost.set()

        async def receive() -> dict[str, Any]:
            await lost.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if state["disconnected"] or message["type"] != "http.response.body":
                return
            if state["failed"]:
                state["after_failure"] += 1  # a write to the lost transport
            state["written"] += 1
            if state["written"] == 3:  # the client is gone: this send fails
                state["failed"] = True
                loop.call_soon(connection_lost)

        progress = [0]
        response = to_scheduled_response(
            Reply(200, SSE_MEDIA_TYPE, frames=FRAMES),
            Delivery(TransportSpec(tokens_per_s=1_000), 0, 0),
            progress=progress,
        )
        time.sleep(0.2)  # noqa: ASYNC251  (the loop is busy on purpose: ~200 writes fall due)
        await response({"type": "http", "asgi": {"spec_version": "2.3"}}, receive, send)
        return state["after_failure"], progress[0]

    after_failure, taken = asyncio.run(main())
    assert after_failure < SILENT_WRITES  # uvicorn drops the rest: nothing is logged
    assert taken <= 3 + SILENT_WRITES  # and the stream stopped: the frames counted in the request log


def _frames_sent(client: httpx.Client) -> float:
    text = client.get("/mockoss/metrics").text
    found = re.search(r'^mockoss_stream_frames_total\{endpoint="chat"\} (\S+)$', text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_a_served_paced_stream_whose_client_reset_stops_writing(tmp_path, caplog):
    """Over HTTP: a client takes the first events of a 1,000 tokens/s stream and resets the
    connection while the server's loop is held for 150 ms; the server then sends at most 3
    frames more than the client received (1-2 measured), not the ~150 due (before: 153), logs
    the request (200) and warns of no dead socket."""
    path = tmp_path / "long.yaml"
    words = " ".join(f"w{i}" for i in range(300))
    path.write_text(
        f'version: 1\nsteps:\n  - completion:\n      messages:\n        - {{channel: final, content: "{words}"}}\n'
    )
    server = MockServer(scenario=str(path), transport={"tokens_per_s": 1000})
    threaded = ThreadedServer(server).start()
    loop = threaded._uvicorn.servers[0].get_loop()  # the server's event loop, to hold it
    caplog.set_level(logging.WARNING, logger="asyncio")
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    try:
        with httpx.Client(base_url=threaded.url, timeout=30) as client:
            whole = client.post("/v1/chat/completions", json=body).text.count("\n\n")
            before = _frames_sent(client)
            assert before == whole > 250
            raw = json.dumps(body).encode()
            host, port = threaded.url.split("//")[1].split(":")
            sock = socket.create_connection((host, int(port)), timeout=10)
            head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
            sock.sendall(head % len(raw) + raw)
            got = b""
            while got.count(b"data:") < 2:
                got += sock.recv(65536)
            holding, release = threading.Event(), threading.Event()

            def hold() -> None:
                holding.set()
                release.wait(5)

            loop.call_soon_threadsafe(hold)
            assert holding.wait(5)
            sock.settimeout(0.05)  # the frames written before the hold, all in this socket's buffer
            with contextlib.suppress(TimeoutError):
                while chunk := sock.recv(65536):
                    got += chunk
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()  # a reset: the server's next send fails
            time.sleep(0.15)  # ~150 frames fall due while the loop is held
            release.set()
            time.sleep(0.5)  # the rest of the stream's schedule
            sent = _frames_sent(client) - before
            entries = client.get("/mockoss/requests").json()
    finally:
        threaded.stop()
    assert sent <= got.count(b"data:") + 3, (sent, got.count(b"data:"))
    assert [entry["status"] for entry in entries] == [200, 200]
    assert not [record for record in caplog.records if "socket.send" in record.getMessage()]
