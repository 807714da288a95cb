"""``control_log._log_json`` without a pool shares one process-wide pool
(``control_log.DEFAULT_LOG_POOL``) instead of building a pool, and so a thread idling 10 s, per
call (review 12, finding 4)."""

from __future__ import annotations

import asyncio
import json
import threading

from mockoss.server import control_log
from mockoss.server.control_log import _LOG_FIELDS
from mockoss.server.core import MockServer


def test_calls_without_a_pool_share_one_thread():
    server = MockServer("clean-answer")
    server.respond("chat", json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode(), {})
    records = {r.index: r for r in server.requests}
    entries = [
        tuple(r.index if name == "index" else 0.0 if name == "ms" else None for name in _LOG_FIELDS)
        for r in server.requests
    ]

    async def run() -> list[list[bytes]]:
        return [await control_log._log_json(entries, records) for _ in range(4)]

    before = {t.ident for t in threading.enumerate() if t.name == "mockoss-log"}
    results = asyncio.run(run())
    assert all(parts == results[0] and len(parts) == 1 for parts in results)
    started = {t.ident for t in threading.enumerate() if t.name == "mockoss-log"} - before
    assert len(started) <= control_log.LOG_WRITES == 1  # before: 4, one per call
    assert control_log.DEFAULT_LOG_POOL.threads <= control_log.LOG_WRITES
