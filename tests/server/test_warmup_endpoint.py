"""The warm-up predicts the step a request will play as the player picks it, the step's
``endpoint:`` included (:func:`mockoss.scenario.select.answer`, used by both). A recording's step
answers only the endpoint it was recorded for: the player refuses a request to another endpoint
(400, no step taken), and the warm-up, which read the step with ``first_answer`` alone before
session 18, built that step's plans for the refused request and recorded them as warmed."""

from __future__ import annotations

import json
import threading

import anyio
import pytest
from warmup_support import watch_warm_ups  # tests/server is on sys.path

from mockoss.scenario.loader import scenario_from_data
from mockoss.scenario.select import answer, first_answer
from mockoss.server.core import MockServer
from mockoss.server.offload import Gate

WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "wise", "owls")


def _long(tag: str) -> dict:
    text = " ".join(WORDS[i % len(WORDS)] for i in range(1500))
    return {
        "completion": {"messages": [{"channel": "analysis", "content": tag}, {"channel": "final", "content": text}]}
    }


def _scenario(tag: str):
    """Step 0 recorded for ``responses``, step 1 for any endpoint; both long (warmed)."""
    steps = [{**_long(f"{tag} responses"), "endpoint": "responses"}, _long(f"{tag} any")]
    return scenario_from_data({"steps": steps}, name=f"ep-{tag}", default_version=True)


def _chat(server: MockServer) -> bytes:
    model = server.info.served_model_names[0]
    return json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()


def _responses(server: MockServer) -> bytes:
    return json.dumps({"model": server.info.served_model_names[0], "input": "hi"}).encode()


async def _through_gate(gate: Gate, server: MockServer, endpoint: str, raw: bytes) -> tuple[int, int]:
    reply, _delivery = await gate.respond(server, endpoint, raw, {})
    return reply.status, threading.get_ident()


def test_a_step_recorded_for_another_endpoint_is_not_warmed(monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = _scenario("misplaced")
    server = MockServer(scenario=scenario)
    seen = watch_warm_ups(monkeypatch, server)
    gate = Gate()
    recorded, anywhere = (step.completion for step in scenario.steps)
    status, _thread = anyio.run(_through_gate, gate, server, "chat", _chat(server))
    assert status == 400  # the player refuses it: the step was recorded for responses
    assert seen == []  # and the warm-up built nothing for it
    state = server._warmup._state(scenario)
    assert not any(state.shapes.values())  # nor recorded anything as warmed
    status, _thread = anyio.run(_through_gate, gate, server, "responses", _responses(server))
    assert status == 200
    assert seen == [recorded]  # the request it was recorded for: warmed, then played
    status, _thread = anyio.run(_through_gate, gate, server, "chat", _chat(server))
    assert status == 200
    assert seen == [recorded, anywhere]


def test_the_prediction_is_the_player_s_on_the_same_cursors() -> None:
    """``answer`` moves no cursor for a misplaced step; ``first_answer`` (no endpoint read) does."""
    scenario = _scenario("cursors")
    positions = [0]
    rule, step, takes = answer(scenario, None, positions, "chat")  # type: ignore[misc]
    assert (step.index, takes, positions) == (0, False, [0])
    assert answer(scenario, None, positions, "responses")[1:] == (step, True)  # type: ignore[index]
    assert positions == [1]
    assert answer(scenario, None, positions, "chat")[2] is True  # type: ignore[index]
    assert first_answer(scenario, None, [0]) == (rule, step)
