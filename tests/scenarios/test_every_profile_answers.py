"""Every shipped scenario's every step, on every profile and endpoint, streamed and not, with and
without declared tools, gets the profile's own answer, never mockoss's unscripted 500 ("mockoss
internal error (a bug, please report it)").

Reproducer (issue 9, eighth session): the LM Studio profile streamed a tool call that its
classification had left out (a call under a doubled role header), indexed past the classified
calls and answered ``doubled-channel-tool-call-vanishes`` with an ``IndexError`` 500 on every
streamed chat request; no test sent that scenario to that profile streamed.
"""

from __future__ import annotations

import json

import pytest

from mockoss.profiles.registry import PROFILES
from mockoss.scenario.loader import ScenarioError, builtin_names, load_scenario
from mockoss.server.core import MockServer

NAMES = ("get_weather", "read_file", "write_file", "bash", "search", "lookup")
CHAT_TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in NAMES]
RESPONSES_TOOLS = [{"type": "function", "name": n, "parameters": {"type": "object"}} for n in NAMES]


def _bodies(endpoint: str, model: str):
    kind = endpoint.split(".")[-1]
    for stream in (False, True):
        for tools in (False, True):
            if kind == "chat":
                body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
                if tools:
                    body["tools"] = CHAT_TOOLS
            elif kind == "responses":
                body = {"model": model, "input": "hi"}
                if tools:
                    body["tools"] = RESPONSES_TOOLS
            elif tools:
                continue
            else:
                body = {"model": model, "prompt": "hi"}
            yield {**body, "stream": stream}


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_no_shipped_scenario_gets_an_unscripted_500(profile):
    failures = []
    for name in builtin_names():
        steps = sum(len(rule.steps) for rule in load_scenario(name).rules)  # at most 4 today
        try:
            server = MockServer(scenario=name, profile=profile)
        except ScenarioError:
            continue  # a scenario written for another profile (it says so when loaded)
        model = server.info.served_model_names[0]
        for endpoint in sorted(PROFILES[profile].endpoints):
            for body in _bodies(endpoint, model):
                for _ in range(max(1, steps)):  # each step of the scenario
                    reply = server.respond(endpoint, json.dumps(body).encode(), {})[0]
                    text = reply.body + b"".join(reply.frames)
                    if b"mockoss internal error" in text or reply.abort and "mockoss" in reply.abort:
                        failures.append(
                            f"{name} {endpoint} stream={body['stream']} tools={'tools' in body}: {text[:160]!r}"
                        )
                server.reset()  # the scenario from its first step again
    assert not failures, "\n".join(failures[:20])
