"""`pick` steps: a seeded, reproducible choice among weighted answers."""

import collections
import json
import textwrap

import pytest

from mockoss.cli import main
from mockoss.scenario.loader import ScenarioError, load_scenario, scenario_from_data
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

MCP = {"messages": [{"channel": "analysis", "content": "Call it."}, {"channel": "commentary", "recipient": "tool.mcp", "content": "{}"}]}
FUNCTION = {"messages": [{"channel": "commentary", "recipient": "functions.mcp", "content": "{}"}]}
MESSAGE = {"messages": [{"channel": "final", "content": "It is noon."}]}
BAD_HEADER = {"raw": "<|channel|>commentary to=functions.x to=functions.x json<|message|>{}<|call|>"}

#: The seed pull request's "before" arm: 40 requests, 31 mcp_call, 4 function_call, 1 message, 4 × 500.
#: The seed's vLLM answered the bad header with 500 (switch harmony_errors=raise); vLLM 0.32/0.33
#: skip the erroring tokens and drop the message (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py).
SEED_ARM = {
    "switches": {"harmony_errors": "raise"},
    "steps": [
        {
            "pick": [
                {"weight": 31, "completion": MCP},
                {"weight": 4, "completion": FUNCTION},
                {"weight": 1, "completion": MESSAGE},
                {"weight": 4, "completion": BAD_HEADER},
            ]
        }
    ]
}
RESPONSES = json.dumps({"model": "openai/gpt-oss-20b", "input": "What time is it?"}).encode()


def _kinds(server, n):
    kinds = []
    for _ in range(n):
        reply = server.handle("responses", RESPONSES, {})
        kinds.append(reply.status if reply.status != 200 else ",".join(i["type"] for i in json.loads(reply.body)["output"]))
    return kinds


def test_deck_gives_exactly_the_weights_in_every_cycle():
    server = MockServer(scenario=scenario_from_data(SEED_ARM, name="arm", default_version=True))
    kinds = _kinds(server, 80)
    for cycle in (kinds[:40], kinds[40:]):
        assert collections.Counter(cycle) == {
            "reasoning,mcp_call": 31,
            "function_call": 4,
            "message": 1,
            500: 4,
        }
    assert kinds[:40] != kinds[40:]  # each cycle is reshuffled


def test_same_seed_same_sequence_other_seed_other_order():
    scenario = scenario_from_data(SEED_ARM, name="arm", default_version=True)
    first = _kinds(MockServer(scenario=scenario, seed=1), 40)
    assert _kinds(MockServer(scenario=scenario, seed=1), 40) == first
    other = _kinds(MockServer(scenario=scenario, seed=2), 40)
    assert other != first and collections.Counter(other) == collections.Counter(first)


def test_scenario_seed_wins_over_the_server_seed():
    scenario = scenario_from_data({**SEED_ARM, "seed": "fixed"}, name="arm", default_version=True)
    assert _kinds(MockServer(scenario=scenario, seed=1), 40) == _kinds(MockServer(scenario=scenario, seed=2), 40)


def test_draw_mode_is_seeded_and_roughly_weighted():
    data = {"steps": [{"pick_mode": "draw", "pick": [{"weight": 9, "completion": MESSAGE}, {"weight": 1, "completion": MCP}]}]}
    scenario = scenario_from_data(data, name="draw", default_version=True)
    kinds = _kinds(MockServer(scenario=scenario), 400)
    assert kinds == _kinds(MockServer(scenario=scenario), 400)
    share = kinds.count("message") / len(kinds)
    assert 0.8 < share < 0.97


def test_pick_inside_times_and_after_other_steps_counts_its_own_uses():
    data = {
        "steps": [
            {"completion": MESSAGE},
            {"times": 4, "pick": [{"weight": 1, "completion": MCP}, {"weight": 1, "completion": FUNCTION}]},
            {"error": {"status": 503}},
        ],
        "when_exhausted": "error",
    }
    kinds = _kinds(MockServer(scenario=scenario_from_data(data, name="t", default_version=True)), 7)
    assert kinds[0] == "message"
    assert collections.Counter(kinds[1:3]) == {"reasoning,mcp_call": 1, "function_call": 1}
    assert collections.Counter(kinds[3:5]) == {"reasoning,mcp_call": 1, "function_call": 1}
    assert kinds[5:] == [503, 500]


def test_a_bad_option_is_reported_with_its_line(tmp_path):
    path = tmp_path / "pick.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            version: 1
            steps:
              - pick:
                  - completion: {raw: "<|channel|>final<|message|>a<|return|>"}
                  - weight: 0
                    error: {status: 500}
            """
        )
    )
    with pytest.raises(ScenarioError, match=rf"^{path}:5: steps\[0\]\.pick\[1\]\.weight: Input should be greater than or equal to 1"):
        load_scenario(path)
    path.write_text("version: 1\nsteps:\n  - pick: []\n")
    with pytest.raises(ScenarioError, match=r"steps\[0\]\.pick: List should have at least 1 item"):
        load_scenario(path)


def test_eval_prints_the_seeded_proportions(tmp_path, capsys):
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"endpoint": "responses", "body": {"model": "openai/gpt-oss-20b", "input": "time?"}}))
    running = ThreadedServer(MockServer(scenario=scenario_from_data(SEED_ARM, name="arm", default_version=True))).start()
    try:
        code = main(["eval", "--url", running.url + "/v1", "--request", str(request), "-n", "40", "--concurrency", "8", "--json"])
    finally:
        running.stop()
    assert code == 0
    outcomes = {o["outcome"]: o["count"] for o in json.loads(capsys.readouterr().out)["outcomes"]}
    assert outcomes == {
        "200 — reasoning, mcp_call(tool/mcp)": 31,
        "200 — function_call(mcp)": 4,
        "200 — message": 1,
        '500 — InternalServerError: unexpected tokens remaining in message header: Some("to=functions.x")': 4,
    }


def test_the_readme_pick_example_deals_exactly_its_weights():
    import re
    from pathlib import Path

    import yaml

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL) if "pick:" in b)
    scenario = scenario_from_data(yaml.safe_load(block), name="readme-pick")
    assert collections.Counter(_kinds(MockServer(scenario=scenario), 40)) == {
        "mcp_call": 31,
        "function_call": 4,
        "message": 1,
        500: 4,
    }
