"""A ``pick`` step's running weight totals are summed once, when the scenario is compiled
(``Step.bounds``), and :func:`mockoss.scenario.pick.choose` deals exactly what it dealt when every
use rebuilt the weights under the server's lock (the algorithm of mockoss at 271e577, copied
below as the reference: deck shuffled whole up to 10,000 cards, dealt by position past it,
``random.choices`` with the weights in draw mode)."""

from __future__ import annotations

import bisect
import itertools
import random

import pytest

from mockoss.scenario import pick
from mockoss.scenario.loader import scenario_from_data
from mockoss.scenario.pick import choose
from mockoss.scenario.pick_bounds import MAX_DECK_CARDS


def _old_choose(
    weights: tuple[int, ...], rule_index: int, step_index: int, use: int, seed: int | str, mode: str
) -> int:
    """The option index mockoss at 271e577 chose (mockoss/scenario/pick.py ``choose``)."""
    key = f"{seed}/{rule_index}/{step_index}"
    if mode == "deck":
        bounds = tuple(itertools.accumulate(weights))
        cycle, position = divmod(use, bounds[-1])
        if bounds[-1] <= MAX_DECK_CARDS:
            deck = [option for option, weight in enumerate(weights) for _ in range(weight)]
            random.Random(f"{key}/{cycle}").shuffle(deck)
            return deck[position]
        return bisect.bisect_right(bounds, pick._permuted(position, bounds[-1], f"{key}/{cycle}"))
    return random.Random(f"{key}/{use}").choices(range(len(weights)), weights)[0]


def _scenario(weights: list[int], mode: str) -> dict:
    options = [
        {"weight": w, "completion": {"raw": f"<|channel|>final<|message|>{i}<|return|>"}} for i, w in enumerate(weights)
    ]
    return {
        "steps": [
            {"completion": {"raw": "<|channel|>final<|message|>first<|return|>"}},
            {"pick_mode": mode, "pick": options},
        ]
    }


CASES = [
    ([3, 1], "deck"),
    ([31, 4, 1, 4], "deck"),
    ([1] * 300, "deck"),  # past 256 options: a deck of 4-byte cards
    ([9999, 1], "deck"),
    ([7, 20_000_000, 3], "deck"),  # dealt by position
    ([9, 1], "draw"),
    ([5, 0 + 1, 10**12], "draw"),
]


@pytest.mark.parametrize(("weights", "mode"), CASES)
@pytest.mark.parametrize("seed", [0, 7, "s"])
def test_choose_deals_as_before(weights: list[int], mode: str, seed: int | str) -> None:
    scenario = scenario_from_data(_scenario(weights, mode), name="p", default_version=True)
    rule = scenario.rules[0]
    step = rule.steps[1]
    assert step.bounds == tuple(itertools.accumulate(weights))
    answers = [option for _, option in step.options]
    total = sum(weights)
    uses = [*range(40), total - 1, total, total + 1, 3 * total + 5]
    for use in uses:
        chosen = choose(rule, step, use, seed)
        expected = _old_choose(tuple(weights), rule.index, step.index, use, seed, mode)
        assert chosen.completion is answers[expected].completion, (use, expected)
        assert chosen.index == step.index


class _Options(tuple):
    """A step's options that count the walks over them."""

    walks = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        type(self).walks += 1
        return super().__iter__()


@pytest.mark.parametrize("mode", ["deck", "draw"])
def test_a_use_does_not_walk_the_options(mode: str) -> None:
    """Each use read every option's weight (2,000 options: 2,000 reads a request, under the
    server's lock); it now reads the chosen option only."""
    scenario = scenario_from_data(_scenario([1] * 2000, mode), name="p", default_version=True)
    rule = scenario.rules[0]
    step = pick.replaced(rule.steps[1], options=_Options(rule.steps[1].options))
    _Options.walks = 0
    assert [choose(rule, step, use, 0).index for use in range(50)] == [1] * 50
    assert _Options.walks == 0
