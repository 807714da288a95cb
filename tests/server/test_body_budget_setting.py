"""The budget of bytes that request bodies still arriving share (mockoss.server.limits, issue 9,
eleventh-session breaker, finding 9) is a setting, not only the module constant
``BODY_BUDGET_FACTOR`` x ``max_body_bytes``: ``MockServer(body_budget_bytes=N)`` and
``mockoss serve --body-budget-bytes N`` (the fixture's option: tests/test_plugin_body_limit.py).
Twelfth session, task T. A small budget makes a second concurrent upload that stalls part-way get
the 503 the budget answers, where the default budget let it wait for the rest of its body.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from typing import Any

import pytest
from starlette.requests import ClientDisconnect
from stop_support import line, serving  # tests/server is on sys.path
from test_body_budget import LIMIT, PART, _Request, _settle

from mockoss.cli_parser import build_parser
from mockoss.server.app import create_app
from mockoss.server.core import MockServer
from mockoss.server.limits import BODY_BUDGET_FACTOR, body_budget


async def _second_of_two(server: MockServer) -> tuple[int | None, list[dict[str, Any]]]:
    """Two bodies of ``server``'s app sent in part (900 of their bytes each), the second once the
    first is held: the second's status (``None``: no answer, waiting for the rest of its body)
    and what it was sent, before both clients leave."""
    app = create_app(server, request_timeout_s=None)
    whole = len(PART) + 100
    first = _Request(app, whole)
    first.parts.put_nowait({"type": "http.request", "body": PART, "more_body": True})
    await _settle()
    second = _Request(app, whole)
    second.parts.put_nowait({"type": "http.request", "body": PART, "more_body": True})
    await asyncio.wait([second.task], timeout=2)
    status, sent = second.status(), list(second.sent)
    for request in (first, second):  # the clients leave: nothing is held afterwards
        if not request.task.done():
            request.parts.put_nowait({"type": "http.disconnect"})
            with contextlib.suppress(ClientDisconnect):
                await asyncio.wait_for(request.task, 5)
    assert app.state.mockoss_body_budget.held == 0
    return status, sent


def test_a_small_budget_refuses_the_second_body_in_process() -> None:
    async def run() -> None:
        # The default budget (4 x 1,000) holds both bodies.
        status, _ = await _second_of_two(MockServer(scenario="clean-answer", max_body_bytes=LIMIT))
        assert status is None
        # 1,500 bytes: the second body's first 900 would pass it.
        server = MockServer(scenario="clean-answer", max_body_bytes=LIMIT, body_budget_bytes=1500)
        status, sent = await _second_of_two(server)
        assert status == 503
        start = next(m for m in sent if m["type"] == "http.response.start")
        assert (b"connection", b"close") in start["headers"]
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        error = json.loads(body)["error"]  # the vLLM profile's error shape
        assert error["code"] == 503 and "1,500 bytes" in error["message"] and "--body-budget-bytes" in error["message"]
        # Read when a body starts, as max_body_bytes is: changed on a running server, it applies.
        server.body_budget_bytes = None
        assert (await _second_of_two(server))[0] is None
        # Without a per-body limit, a budget set alone still bounds the bodies.
        alone = MockServer(scenario="clean-answer", max_body_bytes=None, body_budget_bytes=1500)
        assert (await _second_of_two(alone))[0] == 503

    asyncio.run(run())


def test_the_default_budget_is_unchanged_and_a_bad_one_is_refused() -> None:
    assert body_budget(MockServer(None)) == BODY_BUDGET_FACTOR * 32 * 1024 * 1024 == 128 * 1024 * 1024
    assert body_budget(MockServer(None, max_body_bytes=1000)) == 4000
    assert body_budget(MockServer(None, max_body_bytes=None)) is None
    assert body_budget(MockServer(None, max_body_bytes=1000, body_budget_bytes=10)) == 10
    with pytest.raises(ValueError, match="body_budget_bytes must be at least 1"):
        MockServer(None, body_budget_bytes=0)
    assert build_parser().parse_args(["serve"]).body_budget_bytes is None
    assert build_parser().parse_args(["serve", "--body-budget-bytes", "5000"]).body_budget_bytes == 5000
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--body-budget-bytes", "0"])


_SERVE = r"""
import sys
from mockoss.cli import main
sys.exit(main(["serve", "--port", "0", "--scenario", "clean-answer", *sys.argv[1:]]))
"""

DECLARED, SENT = 99_000, 90_000  # each upload stops 9,000 bytes short of its Content-Length


def _stalled_upload(port: int) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {DECLARED}\r\n\r\n".encode()
        + b" " * SENT
    )
    return client


def _answer(client: socket.socket, wait_s: float) -> bytes:
    """What the server sent within ``wait_s`` seconds (b"": nothing yet)."""
    client.settimeout(wait_s)
    try:
        return client.recv(1 << 16)
    except TimeoutError:
        return b""


@pytest.mark.parametrize("budget", [None, 150_000])
def test_serve_body_budget_bytes_refuses_a_second_stalled_upload(budget: int | None) -> None:
    flags = ["--max-body-bytes", "100000"] + ([] if budget is None else ["--body-budget-bytes", str(budget)])
    with serving(_SERVE, *flags) as served:
        port = int(line(served.process, r"base URL: http://127\.0\.0\.1:(\d+)").group(1))
        first = _stalled_upload(port)
        try:
            time.sleep(0.5)  # the server holds the first body's 90,000 bytes
            second = _stalled_upload(port)
            try:
                got = _answer(second, 5 if budget is not None else 1)
                if budget is None:  # 4 x 100,000: both bodies are held, waiting for their rest
                    assert got == b""
                else:
                    assert got.startswith(b"HTTP/1.1 503 "), got
                    assert b"150,000 bytes" in got and b"--body-budget-bytes" in got
                assert _answer(first, 0.2) == b""  # the first upload is still waited for
            finally:
                second.close()
        finally:
            first.close()
