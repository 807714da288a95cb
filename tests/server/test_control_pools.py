"""The control routes' off-loop jobs run on bounded pools of daemon threads, as many at once as the
anyio limiters they replace allowed (mockoss.server.control_routes; twelfth session, task T): at
most ``UPLOAD_COMPILES`` upload compiles at a time (each peaks at ~30x its source), the others
waiting their turn, and every job on a daemon thread, which a stopping server does not wait for
(tests/server/test_stop_control_routes.py)."""

from __future__ import annotations

import threading

import httpx
from test_scenario_upload_limits import YAML, _scenario  # tests/server is on sys.path

from mockoss.server import control_routes
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer


def test_uploads_compile_at_most_upload_compiles_at_once_on_daemon_threads(monkeypatch):
    release = threading.Event()
    lock = threading.Lock()
    inside, most, threads = [0], [0], []
    original = control_routes._load_text

    def held(raw, name):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            threads.append(threading.current_thread())
        try:
            release.wait(20)
            return original(raw, name)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(control_routes, "_load_text", held)
    server = ThreadedServer(MockServer(scenario="clean-answer")).start()
    uploads = 2 * control_routes.UPLOAD_COMPILES + 1
    statuses: list[int] = []

    def upload(i: int) -> None:
        with httpx.Client(timeout=60) as client:
            got = client.post(
                f"{server.url}/mockoss/scenario?name=u{i}&test_id=t{i}", content=_scenario(f"u{i}"), headers=YAML
            )
            statuses.append(got.status_code)

    senders = [threading.Thread(target=upload, args=(i,)) for i in range(uploads)]
    try:
        for sender in senders:
            sender.start()
        for _ in range(200):  # until the pool is full (the others queue behind it)
            with lock:
                if inside[0] >= control_routes.UPLOAD_COMPILES:
                    break
            release.wait(0.05)
        release.wait(0.5)  # time for a compile beyond the bound to start, if one could
        with lock:
            assert inside[0] == control_routes.UPLOAD_COMPILES == 2
        release.set()
        for sender in senders:
            sender.join(60)
    finally:
        release.set()
        server.stop()
    assert statuses == [200] * uploads
    assert most[0] == control_routes.UPLOAD_COMPILES
    assert all(thread.daemon and thread.name == "mockoss-upload" for thread in threads)
    assert len({thread.ident for thread in threads}) <= control_routes.UPLOAD_COMPILES
