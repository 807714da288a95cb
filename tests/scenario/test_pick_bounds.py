"""``pick`` weights are bounded so that no valid scenario stalls the server, and the deals of
scenarios within the bounds are those of earlier mockoss (the sixteenth session's breaker, item 7:
a weight of 20,000,000 took 14.7 s under the server's lock, for every client)."""

from __future__ import annotations

import time

import pytest

from mockoss.scenario.loader import ScenarioError, load_scenario, scenario_from_data
from mockoss.scenario.pick import choose

MAX_DECK_CARDS = 10_000  # mockoss.scenario.pick.MAX_DECK_CARDS


def _pick(weights: list[int], mode: str = "deck") -> dict:
    options = [
        {"weight": w, "completion": {"raw": f"<|channel|>final<|message|>{i}<|return|>"}} for i, w in enumerate(weights)
    ]
    return {"steps": [{"pick_mode": mode, "pick": options}]}


def _deal(weights: list[int], uses: range, seed: int | str, mode: str = "deck") -> str:
    """The option index each use gets, as one string of digits."""
    scenario = scenario_from_data(_pick(weights, mode), name="p", default_version=True)
    rule = scenario.rules[0]
    step = rule.steps[0]
    texts = [option.completion for _, option in step.options]
    return "".join(str(texts.index(choose(rule, step, use, seed).completion)) for use in uses)


@pytest.mark.parametrize(
    ("weights", "uses", "seed", "mode", "expected"),
    [
        # Computed with mockoss at ab4691b (before the bound): the same scenario and seed deal the same.
        ([3, 1], range(24), 0, "deck", "001000011000000100010001"),
        ([31, 4, 1, 4], range(60), 7, "deck", "020030013000003000000000030100000011000000030000300000000000"),
        ([9999, 1], range(2654, 2657), "s", "deck", "010"),  # the one card 1 of cycle 0 is at 2,655
        ([9999, 1], range(10000 + 9450, 10000 + 9453), "s", "deck", "010"),  # of cycle 1 at 9,451
        ([9, 1], range(30), 3, "draw", "000101000100010000000000010000"),
    ],
)
def test_deals_are_those_of_earlier_versions(weights, uses, seed, mode, expected):
    assert _deal(weights, uses, seed, mode) == expected


def test_a_deck_larger_than_the_bound_is_refused_with_file_line_field_and_bound(tmp_path):
    path = tmp_path / "bigpick.yaml"
    path.write_text(
        "version: 1\n"
        "steps:\n"
        "  - pick:\n"
        "      - {weight: 20000000, completion: {raw: '<|channel|>final<|message|>a<|return|>'}}\n"
        "      - {weight: 1, completion: {raw: '<|channel|>final<|message|>b<|return|>'}}\n"
    )
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:3: steps[0]: ")
    assert "the weights add up to 20,000,001, above the 10,000 a deck" in message
    assert "Weights are ratios" in message and "pick_mode: draw" in message


def test_a_deck_at_the_bound_loads_and_deals_quickly():
    """The largest deck allowed is built and shuffled in a few ms (measured ~6 ms on a shared
    2-CPU machine); the assertion leaves room for a loaded one."""
    weights = [MAX_DECK_CARDS - 1, 1]
    started = time.perf_counter()
    dealt = _deal(weights, range(MAX_DECK_CARDS * 7, MAX_DECK_CARDS * 7 + 1), "fresh-seed")
    assert time.perf_counter() - started < 0.5
    assert dealt in ("0", "1")
    with pytest.raises(ScenarioError, match=r"add up to 10,001, above the 10,000"):
        scenario_from_data(_pick([MAX_DECK_CARDS, 1]), name="p", default_version=True)


def test_draw_takes_large_weights_but_not_past_float_range():
    """``pick_mode: draw`` is O(options) per use: 10**12 is fine. A sum past ~1.8e308 was a 500
    (``random.choices``: ``OverflowError: int too large to convert to float``); now it is refused."""
    assert _deal([10**12, 1], range(5), 0, "draw") == "00000"
    with pytest.raises(
        ScenarioError,
        match=r"steps\[0\]: .*add up to a 401-digit number, above the 1,000,000,000,000,000 pick_mode: draw",
    ):
        scenario_from_data(_pick([10**400, 1], "draw"), name="p", default_version=True)
