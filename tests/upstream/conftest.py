"""Fixtures of the upstream tests."""

from __future__ import annotations

import httpx
import pytest

from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer


@pytest.fixture
def serve():
    """``serve(MockServer(...))`` → a started ThreadedServer, stopped (and its recorder closed) at teardown."""
    started: list[ThreadedServer] = []

    def start(server: MockServer) -> ThreadedServer:
        running = ThreadedServer(server).start()
        started.append(running)
        return running

    yield start
    for running in reversed(started):
        running.stop()
        if running.server.recorder is not None:
            running.server.recorder.close()


@pytest.fixture
def http():
    with httpx.Client(timeout=30) as client:
        yield client
