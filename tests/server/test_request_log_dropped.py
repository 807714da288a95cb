"""A test-id session's ``GET /mockoss/requests`` marks an entry whose body the session no longer
keeps: ``"body": null, "body_dropped": true`` (issue 9, eleventh-session breaker, finding 4: a
session keeps ``control.SESSION_LOG_BYTES`` (4 MiB) of bodies but 8 MiB of entries, and a 30-turn
conversation of ~250 KB turns lost its first 14 bodies as a bare ``null``, indistinguishable from
an entry that never had one). Entries whose body is kept, and entries without a generation record,
are unchanged (no ``body_dropped`` key)."""

from __future__ import annotations

import httpx

from mockoss.server import control
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

MODEL = "openai/gpt-oss-20b"


def test_a_session_marks_the_bodies_it_dropped(monkeypatch):
    monkeypatch.setattr(control, "SESSION_LOG_BYTES", 64 * 1024)  # bounds in bytes: ~30 KB bodies, 2 fit
    threaded = ThreadedServer(MockServer(scenario="clean-answer")).start()
    headers = {"X-Mockoss-Test-Id": "t1"}
    try:
        with httpx.Client(base_url=threaded.url, timeout=60) as client:
            for i in range(6):
                body = {"model": MODEL, "messages": [{"role": "user", "content": f"turn {i} " + "word " * 6000}]}
                assert client.post("/v1/chat/completions", headers=headers, json=body).status_code == 200
            assert client.post("/v1/chat/completions", headers=headers, content=b"{").status_code == 400
            entries = client.get("/mockoss/requests", params={"test_id": "t1"}).json()
    finally:
        threaded.stop()
    assert len(entries) == 7
    dropped = [e for e in entries if e.get("body_dropped")]
    kept = [e for e in entries[:6] if e["body"] is not None]
    assert dropped and kept, [(e["index"], e["body"] is None) for e in entries]
    assert entries[:6] == dropped + kept  # the oldest bodies go first
    for entry in dropped:
        assert entry["body"] is None and entry["completion"] is None and entry["body_dropped"] is True
        assert list(entry).index("body_dropped") == list(entry).index("body") + 1
    for entry in kept:
        assert "body_dropped" not in entry and entry["body"]["messages"][0]["content"].startswith("turn ")
    assert entries[5]["body"]["messages"][0]["content"].startswith("turn 5 ")
    assert "body_dropped" not in entries[6]  # the 400 has no generation record: nothing was dropped
