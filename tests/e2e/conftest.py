"""Fixtures of the per-profile end-to-end modules: the project's own ``mockoss`` fixture as
``server`` (one session server, reset per test; the module's ``pytestmark`` picks the profile), an
openai SDK client and an httpx client on it. A module that needs another client (LM Studio's API
key) defines its own ``client``; local fixtures win over these."""

from __future__ import annotations

import httpx
import openai
import pytest


@pytest.fixture
def server(mockoss):
    """The ``mockoss`` fixture: ``.url``, ``.server`` (the MockServer), reset for this test."""
    return mockoss


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0) as client:
        yield client


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client
