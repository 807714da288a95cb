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

__all__ = ["NoRuleMatched", "explain", "first_answer", "pick"]


class NoRuleMatched(LookupError):
    """No rule of a scenario answers a request; ``str()`` lists, one line per rule, why not.

    Raised by :func:`pick`; the server answers it with a 400 in the profile's error shape.
    Rules whose ``match`` failed come first, then rules that matched but have used every step.
    """


def first_answer(
    scenario: Scenario, facts: RequestFacts | None, positions: list[int]
) -> tuple[Rule, Step | None] | None:
    """The first rule that matches and is not used up, and its step for this request; ``None``
    when no rule answers (:func:`explain` says why).

    Advances that rule's position. The step is ``None`` when the rule is used up and its
    ``when_exhausted`` is ``error`` (answer its ``exhausted_error``); ``repeat_last`` gives the
    last step again; ``next_rule`` moves on to the next rule. ``facts`` is read only by ``match``
    checks: ``None`` will do for a scenario without any (the player then skips building them).
    """
    for rule in scenario.rules:
        if rule.match.checks and not rule.match(facts):  # type: ignore[arg-type]
            continue
        position = positions[rule.index]
        ends = rule.ends
        if position < ends[-1]:  # the step for this position; past the last one, the rule is used up
            step: Step | None = rule.steps[bisect_right(ends, position)]
        elif rule.when_exhausted == "next_rule":
            continue
        else:
            step = rule.steps[-1] if rule.when_exhausted == "repeat_last" else None
        positions[rule.index] = position + 1
        return rule, step
    return None


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
