"""Pick the rule and step that answer a request, and explain a miss.

The caller (:class:`~mockoss.server.core.MockServer`) owns the cursors: one list of positions per
scenario and session, one position per rule, counting the requests that rule has answered.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from mockoss.scenario.conversation import RequestFacts

if TYPE_CHECKING:
    from mockoss.scenario.loader import Rule, Scenario, Step

__all__ = ["NoRuleMatched", "answer", "explain", "first_answer", "pick"]


class NoRuleMatched(LookupError):
    """No rule of a scenario answers a request; ``str()`` lists, one line per rule, why not.

    Raised by :func:`pick`; the server answers it with a 400 in the profile's error shape.
    Rules whose ``match`` failed come first, then rules that matched but have used every step.
    """


def _found(scenario: Scenario, facts: RequestFacts | None, positions: list[int]) -> tuple[Rule, Step | None] | None:
    """The first rule that matches and is not used up, and its step at the rule's position (no
    position moved); ``None`` when no rule answers. See :func:`first_answer`."""
    for rule in scenario.rules:
        if rule.match.checks and not rule.match(facts):  # type: ignore[arg-type]
            continue
        position = positions[rule.index]
        ends = rule.ends
        if position < ends[-1]:  # the step for this position; past the last one, the rule is used up
            return rule, rule.steps[bisect_right(ends, position)]
        if rule.when_exhausted == "next_rule":
            continue
        return rule, rule.steps[-1] if rule.when_exhausted == "repeat_last" else None
    return None


def first_answer(
    scenario: Scenario, facts: RequestFacts | None, positions: list[int]
) -> tuple[Rule, Step | None] | None:
    """The first rule that matches and is not used up, and its step for this request; ``None``
    when no rule answers (:func:`explain` says why).

    Advances that rule's position. The step is ``None`` when the rule is used up and its
    ``when_exhausted`` is ``error`` (answer its ``exhausted_error``); ``repeat_last`` gives the
    last step again; ``next_rule`` moves on to the next rule. ``facts`` is read only by ``match``
    checks: ``None`` will do for a scenario without any (the player then skips building them).
    The step's ``endpoint:`` is not read: :func:`answer` reads it.
    """
    found = _found(scenario, facts, positions)
    if found is not None:
        positions[found[0].index] += 1
    return found


def answer(
    scenario: Scenario, facts: RequestFacts | None, positions: list[int], endpoint: str
) -> tuple[Rule, Step | None, bool] | None:
    """The rule and step a request to ``endpoint`` gets, the step's ``endpoint:`` included: the
    one place that decides it, for :meth:`mockoss.scenario.player.Player.play` (under the lock)
    and the warm-up's prediction (:mod:`mockoss.server.warm_record`, on a copy of the cursors).

    ``(rule, step, True)``: the request takes the step (:func:`first_answer`'s, the rule's
    position advanced). ``(rule, step, False)``: the step was recorded for another endpoint
    (``Step.endpoint``, written by ``mockoss serve --record``): the request takes no step and no
    position moves (the player answers it with a 400: ``player.wrong_endpoint``; the request the
    step was recorded for may follow). ``None``: no rule answers.
    """
    found = _found(scenario, facts, positions)
    if found is None:
        return None
    rule, step = found
    if step is not None and step.endpoint is not None and step.endpoint != endpoint:
        return rule, step, False
    positions[rule.index] += 1
    return rule, step, True


def pick(scenario: Scenario, facts: RequestFacts, positions: list[int]) -> tuple[Rule, Step | None]:
    """:func:`first_answer`, raising when no rule answers.

    Raises:
        NoRuleMatched: no rule answers; the message explains each rule.
    """
    found = first_answer(scenario, facts, positions)
    if found is None:
        raise NoRuleMatched(explain(scenario, facts, positions))
    return found


def explain(scenario: Scenario, facts: RequestFacts, positions: list[int]) -> str:
    """The no-match message: a summary line, then one line per rule (unmatched rules first)."""
    unmatched, used_up = [], []
    for rule in scenario.rules:
        failures = rule.match.failures(facts)
        if failures:
            unmatched.append(f"{rule.label} ({rule.where}): " + "; ".join(failures))
        else:
            used_up.append(
                f"{rule.label} ({rule.where}): matches, but all {rule.ends[-1]} of its answers are used "
                "and when_exhausted is next_rule"
            )
    head = (
        f"mockoss: no rule of scenario {scenario.name!r} answers this {facts.endpoint} request "
        f"(model {facts.model!r}, turn {facts.turn}):"
    )
    return "\n".join([head, *unmatched, *used_up])
