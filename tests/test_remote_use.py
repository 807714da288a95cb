"""``mockoss_remote.use`` takes what ``mockoss.use`` takes (newcomer report: builders gave a
``TypeError``, a list of steps a ``FileNotFoundError`` naming ``[{...}].yaml``, and a misspelt
shipped name a bare ``FileNotFoundError``)."""

from __future__ import annotations

import httpx
import pytest

from mockoss.pytest_plugin._remote import RemoteSession
from mockoss.scenario.loader import ScenarioError
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer
from mockoss.steps import final, tool_call

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}], "tools": TOOLS}


@pytest.fixture(scope="module")
def shared():
    server = ThreadedServer(MockServer(scenario="clean-answer")).start()
    yield server
    server.stop()


@pytest.fixture
def remote(shared, request):
    session = RemoteSession(shared.url, request.node.nodeid)
    yield session
    session.close()


def _contents(remote: RemoteSession, count: int) -> list[dict]:
    return [httpx.post(remote.base_url + "/chat/completions", json=CHAT, timeout=30).json()["choices"][0]["message"] for _ in range(count)]


def test_builder_items(remote):
    remote.use(tool_call("get_weather", {"city": "Paris"}), final("Sunny."))
    first, second = _contents(remote, 2)
    assert first["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert second["content"] == "Sunny."


def test_a_bare_list_of_steps(remote):
    remote.use([{"completion": {"messages": [{"channel": "final", "content": "From a list"}]}}])
    assert _contents(remote, 1)[0]["content"] == "From a list"


def test_a_mapping_without_version(remote):
    remote.use({"steps": [{"completion": {"raw": "<|channel|>final<|message|>Mapped<|return|>"}}]})
    assert _contents(remote, 1)[0]["content"] == "Mapped"


def test_a_misspelt_shipped_name_says_which_it_meant(remote):
    with pytest.raises(ScenarioError, match="clean-answer"):
        remote.use("clean-answr")
