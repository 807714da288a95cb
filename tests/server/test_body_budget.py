"""The bytes held by request bodies still arriving are bounded for the whole server, not only per
body (issue 9, eleventh-session breaker, finding 9: 8 clients each withholding the last byte of a
30 MB body added 240 MB of RSS until their 408).

In process, through the whole ASGI app: bodies that stop part-way hold their bytes; once those
would pass ``BODY_BUDGET_FACTOR x max_body_bytes``, the body whose next part would pass it gets
503 in the profile's error shape and lets its bytes go; a body that completes, or a request that
ends, gives its bytes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from starlette.requests import ClientDisconnect

from mockoss.server.app import create_app
from mockoss.server.core import MockServer

LIMIT = 1_000
PART = b" " * 900  # JSON whitespace: the bodies below stay valid


class _Request:
    """One request driven by hand: its body parts are put in ``parts``; what the app sends is kept."""

    def __init__(self, app: Any, length: int) -> None:
        self.parts: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"", "root_path": "",
            "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), (b"content-length", str(length).encode())],
            "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2), "state": {},
        }
        self.task = asyncio.create_task(app(scope, self.parts.get, self._send))

    async def _send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def status(self) -> int | None:
        return next((m["status"] for m in self.sent if m["type"] == "http.response.start"), None)

    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def _scenario() -> None:
    server = MockServer(scenario="clean-answer", max_body_bytes=LIMIT)
    app = create_app(server, request_timeout_s=None)
    prefix = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}).encode()
    whole = prefix + PART
    stalled = [_Request(app, len(whole)) for _ in range(4)]
    for request in stalled:
        request.parts.put_nowait({"type": "http.request", "body": PART, "more_body": True})
    await _settle()
    assert all(request.status() is None for request in stalled)  # 4 x 900 bytes held: within 4 x 1,000

    # A fifth body's first part would pass the budget: 503 in the vLLM profile's shape, at once.
    fifth = _Request(app, len(whole))
    fifth.parts.put_nowait({"type": "http.request", "body": PART, "more_body": True})
    await asyncio.wait([fifth.task], timeout=5)
    assert fifth.task.done(), "a fifth stalled body was let in: nothing bounds the bytes of bodies still arriving"
    assert fifth.status() == 503
    budget = app.state.mockoss_body_budget
    assert (b"connection", b"close") in next(m for m in fifth.sent if m["type"] == "http.response.start")["headers"]
    error = json.loads(fifth.body())["error"]
    assert "bodies still arriving" in error["message"] and error["code"] == 503
    assert budget.held == 4 * len(PART)

    # A stalled body that completes gives its bytes back (and is answered); then a new one fits.
    done = stalled.pop()
    done.parts.put_nowait({"type": "http.request", "body": prefix, "more_body": False})
    await asyncio.wait_for(done.task, 5)
    assert done.status() == 200
    assert budget.held == 3 * len(PART)
    sixth = _Request(app, len(whole))
    sixth.parts.put_nowait({"type": "http.request", "body": PART, "more_body": True})
    await _settle()
    assert sixth.status() is None and budget.held == 4 * len(PART)

    # Requests that end with their bodies incomplete (the client left) give theirs back too.
    for request in [*stalled, sixth]:
        request.parts.put_nowait({"type": "http.disconnect"})
        with contextlib.suppress(ClientDisconnect):  # raised to the server, which drops the connection
            await asyncio.wait_for(request.task, 5)
    assert budget.held == 0


def test_bodies_still_arriving_share_one_budget() -> None:
    asyncio.run(_scenario())
