"""Two runs of one suite against one shared ``mockoss serve`` keep apart (sixteenth-session breaker,
finding 1: the ``mockoss_remote`` test id was ``<worker>-<sha256(nodeid)[:16]>``, the same in both
runs, so two CI jobs took each other's steps and ``close()`` deleted the other's session; repro
/tmp/brk16/ut4/test_fleet.py). The id now holds a per-process nonce; replies stay byte-identical."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from mockoss.pytest_plugin._remote import RemoteSession
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer
from mockoss.steps import final

NODE = "tests/test_fleet.py::test_three_steps"
CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}
SHOW_ID = (
    "from mockoss.pytest_plugin._remote import remote_session; "
    f"print(remote_session('http://127.0.0.1:9', {NODE!r}).test_id)"
)


@pytest.fixture(scope="module")
def shared():
    server = ThreadedServer(MockServer()).start()
    yield server
    server.stop()


def _ids_of_two_processes() -> list[str]:
    env = {"PYTEST_XDIST_WORKER": "gw0"}
    return [
        subprocess.run(
            [sys.executable, "-c", SHOW_ID], capture_output=True, text=True, check=True, env=env
        ).stdout.strip()
        for _ in range(2)
    ]


def test_two_runs_of_one_test_get_two_ids():
    first, second = _ids_of_two_processes()
    assert first != second
    assert first.startswith("gw0-") and second.startswith("gw0-")
    assert first.rsplit("-", 1)[1] == second.rsplit("-", 1)[1]  # the node id's hash part is the same


def _post(session: RemoteSession) -> httpx.Response:
    return httpx.post(session.base_url + "/chat/completions", json=CHAT, timeout=30)


def test_two_runs_interleaved_keep_their_own_steps_and_sessions(shared):
    job1 = RemoteSession(shared.url, NODE, "gw0", run="aaaaaaaa")
    job2 = RemoteSession(shared.url, NODE, "gw0", run="bbbbbbbb")
    try:
        job1.use(final("step-1"), final("step-2"), final("step-3"))
        job2.use(final("step-1"), final("step-2"), final("step-3"))
        got1, got2 = [], []
        for _ in range(3):
            got1.append(_post(job1).json()["choices"][0]["message"]["content"])
            got2.append(_post(job2).json()["choices"][0]["message"]["content"])
        assert got1 == got2 == ["step-1", "step-2", "step-3"]
    finally:
        job1.close()  # job 1 finishes first: job 2's session, log and scenario stay
    try:
        assert len(job2.requests) == 3
        assert _post(job2).status_code == 200  # still its scenario (a dropped session has none: 400)
    finally:
        job2.close()


def test_the_nonce_does_not_change_reply_bytes(shared):
    bodies = []
    for run in ("11111111", "22222222"):
        session = RemoteSession(shared.url, NODE, "main", run=run)
        try:
            session.use("clean-answer")
            bodies.append([_post(session).content for _ in range(2)])
        finally:
            session.close()
    assert bodies[0] == bodies[1]


def test_a_shared_server_that_does_not_answer_is_named_with_how_to_start_one():
    """A newcomer's dead ``--mockoss-url`` got a bare ``httpx2.ConnectError`` naming neither the URL
    nor ``mockoss serve``."""
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    session = RemoteSession(f"http://127.0.0.1:{port}", "tests/test_x.py::test_y")
    with pytest.raises(AssertionError, match=rf"shared server at http://127.0.0.1:{port} \(--mockoss-url\) did not answer POST /mockoss/reset.*mockoss serve"):
        session.reset()
    session.close()
