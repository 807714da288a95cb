"""The ``gptoss-reference`` profile's response store against the real server's answers.

``tests/golden/chains-gptoss-reference/<chain>.json`` holds what openai/gpt-oss@7b58334's own
``gpt_oss.responses_api`` server answered to chains of requests joined by
``previous_response_id`` (``tools/goldens/gptoss_reference_store.py``: uvicorn, a scripted
backend). Each chain is played here on one ``MockServer`` (a scenario of the chain's completions
in order, answered through the scenario player as any client's request), the placeholders filled
from mockoss's own answers, and compared after the golden normalisation (one ``Normaliser`` per
chain, so a returning id must be the same id): status, body or every SSE frame, and whether the
stream was cut. The continuations carry ``metadata.__debug``, so the compared body holds the
prompt the server rendered from the merged input, byte for byte.

Before the store (mockoss at 925a315) the profile kept nothing: ``agent-loop``'s second step, a
``function_call_output`` whose call is only in the stored response, was a 500 (``Function call …
not found``; the reference: 200), and every continuation's ``usage.input_tokens`` and prompt
lacked the earlier turns.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from mockoss.golden.cases import all_cases
from mockoss.harmony import Completion
from mockoss.profiles.response_store import ENTRY_OVERHEAD, KeptResponses
from mockoss.scenario.loader import scenario_from_data
from mockoss.server.core import MockServer

ROOT = Path(__file__).resolve().parents[1] / "golden" / "chains-gptoss-reference"
GENERATOR = Path(__file__).resolve().parents[2] / "tools" / "goldens" / "gptoss_reference_store.py"
ANSWER = "scenario-clean-answer-0"


@cache
def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("gptoss_reference_store_generator", GENERATOR)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@cache
def _texts() -> dict[str, Completion]:
    return {c.id: c.completion for c in all_cases()}


def _goldens() -> list[Path]:
    return sorted(ROOT.glob("*.json"))


def _server(steps: list[dict[str, Any]], switches: dict[str, Any], seed: int = 0) -> MockServer:
    completions = []
    for step in steps:
        completion = _texts()[step["completion"]]
        assert Completion.from_text(completion.text).tokens == completion.tokens  # the raw text is the golden's tokens
        completions.append({"completion": {"raw": completion.text}})
    scenario = scenario_from_data({"steps": completions}, name="store-chain", default_version=True)
    return MockServer(scenario=scenario, profile="gptoss-reference", switches=switches, seed=seed)


def _play(server: MockServer, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """mockoss's raw answers to a chain's steps, as the generator keeps the real server's."""
    fill, response_of = _generator().fill, _generator()._response_of
    raw: list[dict[str, Any]] = []
    for step in steps:
        body = fill(step["request"], [response_of(r) for r in raw])
        reply = server.handle("responses", json.dumps(body).encode(), {"content-type": "application/json"})
        if reply.frames:
            raw.append({"status": reply.status, "frames": [f.decode() for f in reply.frames], "note": reply.abort})
        else:
            try:
                raw.append({"status": reply.status, "body": json.loads(reply.body)})
            except ValueError:
                raw.append({"status": reply.status, "body": reply.body.decode()})
    return raw


@pytest.mark.parametrize("path", _goldens(), ids=lambda p: p.stem)
def test_chain_matches_the_reference_server(path: Path) -> None:
    golden = json.loads(path.read_text(encoding="utf-8"))
    steps = golden["steps"]
    got = _generator().normalised(_play(_server(steps, golden["header"]["switches"]), steps))
    for number, (want, have) in enumerate(zip(steps, got, strict=True)):
        assert have["status"] == want["status"], f"step {number}"
        if "frames" in want:
            assert have.get("frames") == want["frames"], f"step {number}"
        else:
            assert have.get("body") == want["body"], f"step {number}"
        assert ("connection dropped" in (want.get("note") or "")) == bool(have.get("note")), f"step {number}"


def test_goldens_cover_every_chain_as_the_generator_asks_it() -> None:
    """An edited chain makes this fail until tools/goldens/gptoss_reference_store.py is run again."""
    chains = _generator().CHAINS
    recorded = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in _goldens()}
    assert sorted(recorded) == sorted(chains)
    for name, chain in chains.items():
        asked = [{"completion": s["completion"], "request": s["request"]} for s in chain["steps"]]
        assert [{"completion": s["completion"], "request": s["request"]} for s in recorded[name]["steps"]] == asked, (
            name
        )


def test_a_continuation_of_a_stored_call_is_answered_with_the_earlier_turns() -> None:
    """The agent loop of the brief: the tool's output sent with ``previous_response_id`` alone."""
    steps = _generator().CHAINS["agent-loop"]["steps"]
    first, second = _play(_server(steps, {}), steps)[:2]
    assert second["status"] == 200  # was Starlette's 500 (Function call … not found)
    assert second["body"]["usage"]["input_tokens"] > first["body"]["usage"]["input_tokens"]
    assert '"location":"San Francisco"}<|call|>' in second["body"]["metadata"]["__debug_input"]


def _debug_input(answer: dict[str, Any]) -> str:
    return answer["body"]["metadata"]["__debug_input"]


def test_same_chain_same_bytes_and_reset_forgets() -> None:
    steps = _generator().CHAINS["agent-loop-stream"]["steps"]
    server = _server(steps, {})
    once = _play(server, steps)
    assert _play(_server(steps, {}), steps) == once  # same scenario and seed: the same bytes
    first_id = _generator()._response_of(once[0])["id"]
    server.reset()  # ids restart: the first answer after the reset is first_id again
    request = {**steps[2]["request"], "stream": False, "previous_response_id": first_id}
    lone = _play(server, [{"completion": ANSWER, "request": request}])[0]
    alone = _play(
        _server([{"completion": ANSWER}], {}),
        [{"completion": ANSWER, "request": {**request, "previous_response_id": None}}],
    )[0]
    assert _debug_input(lone) == _debug_input(alone) and "get_weather" not in _debug_input(lone)


def test_servers_with_the_same_seed_keep_their_own_responses() -> None:
    """Two servers give the same ids (same seed, same request index): a continuation is answered
    from the answering server's own store, as two real servers' are."""
    steps = _generator().CHAINS["agent-loop"]["steps"]
    _play(_server(steps, {}), steps[:1])  # stores its tool call under the seed's first id
    other = _server(steps, {})
    unstored = {**steps[0], "request": {k: v for k, v in steps[0]["request"].items() if k != "store"}}
    answers = _play(other, [unstored, steps[1]])  # the same first id, not stored here
    assert answers[1]["status"] == 500  # the output's call is not found: this server kept nothing


def test_kept_responses_are_bounded_in_bytes_oldest_first() -> None:
    kept = KeptResponses(budget=3 * (ENTRY_OVERHEAD + 100))
    for number in range(5):
        kept.put(f"resp_{number}", b"x" * 100)
    assert kept.usage() == (3, 3 * (ENTRY_OVERHEAD + 100))
    assert kept.get("resp_0") is None and kept.get("resp_1") is None and kept.get("resp_4") == b"x" * 100
    kept.put("resp_big", b"x" * kept.budget)  # above the whole budget: not kept
    assert kept.get("resp_big") is None and kept.usage()[0] == 3
    kept.put("resp_4", b"y")  # replaced: counted once
    assert kept.usage() == (3, 2 * (ENTRY_OVERHEAD + 100) + ENTRY_OVERHEAD + 1)
    kept.clear()
    assert kept.usage() == (0, 0)


def test_the_forgotten_id_line_names_the_bound_that_forgot_it() -> None:
    """A test-id session's store holds 1 MiB, not the server's 16 MiB: the log line said "16 MiB per
    server" for both (this session's reviewer)."""
    from mockoss.profiles.gptoss_ref.store import forgotten_note
    from mockoss.profiles.response_store import KEPT_BYTES, KeptReader

    session = KeptResponses(budget=1024 * 1024)
    session.put("resp_a", b"x" * 100)
    session.put("resp_b", b"x" * session.budget)  # above the budget: forgotten at once
    (line,) = forgotten_note(KeptReader(session), "resp_b")
    assert "(1 MiB for this store, oldest first)" in line and "'resp_b'" in line
    server = KeptResponses()
    server.put("resp_c", b"x" * (KEPT_BYTES + 1))
    assert "(16 MiB per server, oldest first)" in forgotten_note(server, "resp_c")[0]
    assert forgotten_note(session, "resp_a") == ()  # kept: no line
