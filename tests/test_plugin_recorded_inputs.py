"""What a test hands the fake and reads back from it (issue 9, eleventh-session breaker, finding 9):

* ``MockServer(scenario=…)`` takes a scenario mapping, a parsed scenario file as ``mockoss.use``
  takes it (it raised ``TypeError: expected a Message or a Step, got dict``), and a path object;
* a recorded request's headers find a name in any case (``.get("X-Custom")`` gave ``None``: the
  names are kept lower-cased), while iterating, comparing and serialising them is as before;
* a switch given twice in ``X-Mockoss-Switch`` (``a=true,a=false``) is a 400 naming it (the last
  value won, silently)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

MODEL = "openai/gpt-oss-20b"
SCENARIO = {"steps": [{"completion": {"messages": [{"channel": "final", "content": "from a dict"}]}}]}


def _chat(server: MockServer, headers: dict[str, str] | None = None) -> httpx.Response:
    running = ThreadedServer(server).start()
    try:
        body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
        return httpx.post(running.url + "/v1/chat/completions", json=body, headers=headers, timeout=30)
    finally:
        running.stop()


def test_mockserver_takes_a_scenario_mapping_and_a_path():
    server = MockServer(scenario=SCENARIO)
    assert _chat(server).json()["choices"][0]["message"]["content"] == "from a dict"
    assert MockServer(scenario={"version": 1, **SCENARIO}).scenario.rules == server.scenario.rules
    shipped = Path(__file__).resolve().parents[1] / "scenarios" / "clean-answer.yaml"
    assert MockServer(scenario=shipped).scenario.name == "clean-answer"


def test_recorded_headers_are_found_in_any_case():
    server = MockServer(scenario=SCENARIO)
    assert _chat(server, {"X-Custom": "yes", "X-Trace-Id": "abc"}).status_code == 200
    headers = server.requests[0].headers
    assert headers.get("X-Custom") == "yes" and headers["X-Trace-Id"] == "abc" and "X-CUSTOM" in headers
    assert headers.get("x-custom") == "yes" and headers.get("X-Absent") is None and "X-Absent" not in headers
    assert headers == dict(server.requests[0].header_items)  # names lower-cased, as before
    assert "x-custom" in list(headers) and "X-Custom" not in list(headers)
    assert json.loads(json.dumps(headers))["x-custom"] == "yes"


def test_a_switch_given_twice_is_a_400_naming_it():
    server = MockServer(scenario=SCENARIO)
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}).encode()
    reply = server.handle("chat", body, {"x-mockoss-switch": "strict=true, strict=false"})
    assert reply.status == 400
    assert "x-mockoss-switch: switch 'strict' is given more than once" in json.loads(reply.body)["error"]["message"]
    assert server.handle("chat", body, {"x-mockoss-switch": "strict=false"}).status == 200
