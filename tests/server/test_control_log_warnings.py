"""``GET /mockoss/requests`` shows each request's tool-check warnings, so that a ``mockoss serve``
user (any language, no pytest) can see them: ``--tool-check-budget-ms`` names a warning in its
help ("the rest are skipped with a warning") and the budget warning names that flag, and the
control API is the only view of the log a served fake has (README: Tool checks; the server log
lines, ``server_log``, were already shown the same way)."""

from __future__ import annotations

import httpx

from mockoss.scenario import tool_check
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer
from mockoss.steps import script, tool_call

MODEL = "openai/gpt-oss-20b"
WEATHER = {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}


def _chat(tools: list[dict]) -> dict:
    return {"model": MODEL, "messages": [{"role": "user", "content": "weather?"}], "tools": tools}


def test_the_control_log_shows_tool_check_warnings(monkeypatch):
    calls = script(tool_call("get_weather", {"location": 1}), tool_call("search", {"q": "x"}), tool_call("get_weather", {"location": "Paris"}))
    threaded = ThreadedServer(MockServer(scenario=calls)).start()
    function = {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}
    try:
        with httpx.Client(timeout=30) as client:
            assert client.post(threaded.url + "/v1/chat/completions", json=_chat([function])).status_code == 200
            assert client.post(threaded.url + "/v1/chat/completions", json=_chat([function])).status_code == 200
            monkeypatch.setattr(tool_check, "REQUEST_BUDGET_S", 1e-9)  # as serve --tool-check-budget-ms sets it
            assert client.post(threaded.url + "/v1/chat/completions", json=_chat([function])).status_code == 200
            entries = client.get(threaded.url + "/mockoss/requests").json()
    finally:
        threaded.stop()
    assert [len(entry["warnings"]) for entry in entries] == [1, 1, 1]
    assert entries[0]["warnings"] == list(threaded.server.requests[0].warnings)
    assert "arguments do not match the declared parameters at $.location" in entries[0]["warnings"][0]
    assert entries[1]["warnings"][0].startswith("tool call 'search': not declared by the request")
    assert "--tool-check-budget-ms" in entries[2]["warnings"][0] and "not fully checked" in entries[2]["warnings"][0]
