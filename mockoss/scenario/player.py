"""Scenario state of one server: rule cursors and session turn counters.

:class:`~mockoss.server.core.MockServer` holds one :class:`Player` and calls :meth:`Player.play`
for every valid request, under its lock. Without a session, every request shares one set of rule
cursors and the turn is derived from the request body
(:mod:`mockoss.scenario.conversation`). With the header ``X-Mockoss-Session: KEY``, each key has
its own cursors (parallel conversations do not interfere) and its own turn counter.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mockoss.scenario.conversation import RequestFacts
from mockoss.scenario.loader import Rule, Scenario, Step
from mockoss.scenario.pick import choose
from mockoss.scenario.select import NoRuleMatched, pick
from mockoss.scenario.template import RenderContext, TemplateRenderError

__all__ = ["SESSION_HEADER", "Played", "Player"]

#: Request header naming a conversation: ``X-Mockoss-Session: KEY``.
SESSION_HEADER = "x-mockoss-session"


@dataclass(frozen=True, slots=True)
class Played:
    """What answers one request.

    Attributes:
        rule: the rule that answered, ``None`` when none did.
        step: the step, with ``completion`` rendered for this request when it is templated;
            ``None`` when the rule is used up and answers its ``exhausted_error``, or on a problem.
        turn: the request's turn number.
        session: the ``X-Mockoss-Session`` key, else ``""``.
        problem: why the request cannot be answered (no rule matches, a template cannot be
            rendered), for a 400 reply; else ``None``.
    """

    rule: Rule | None
    step: Step | None
    turn: int
    session: str
    problem: str | None = None

    @property
    def rule_id(self) -> str | None:
        """The rule's name, else ``#N`` (1-based position); ``None`` when no rule answered."""
        if self.rule is None:
            return None
        return self.rule.name or f"#{self.rule.index + 1}"


class Player:
    """Rule cursors per scenario and session, and request counts per session."""

    __slots__ = ("_cursors", "_sessions")

    def __init__(self) -> None:
        self._cursors: dict[str, dict[str, list[int]]] = {}
        self._sessions: dict[str, int] = {}

    def clear(self) -> None:
        """Rewind every scenario and forget every session."""
        self._cursors.clear()
        self._sessions.clear()

    def rewind(self, scenario_name: str) -> None:
        """Rewind one scenario, in every session."""
        self._cursors.pop(scenario_name, None)

    def play(
        self,
        scenario: Scenario,
        endpoint: str,
        body: Mapping[str, Any],
        headers: Mapping[str, str],
        model: str,
        index: int,
        seed: int | str,
    ) -> Played:
        """Pick and, if templated, render the step answering one request.

        Args:
            index: the request's index on the server (seeds templates outside sessions).
            seed: the server's seed (a scenario's ``seed:`` wins).

        Never raises for a request it cannot answer: :attr:`Played.problem` then says why
        (:class:`NoRuleMatched`'s explanation, or a :class:`TemplateRenderError`).
        """
        facts = RequestFacts(endpoint, body, headers, model)
        session = facts.header(SESSION_HEADER) or ""
        if session:
            count = self._sessions.get(session, 0)
            self._sessions[session] = count + 1
            facts = RequestFacts(endpoint, body, headers, model, session_turn=count + 1)
            index = count
        by_session = self._cursors.get(scenario.name)
        if by_session is None:
            by_session = self._cursors[scenario.name] = {}
        positions = by_session.get(session)
        if positions is None:
            positions = by_session[session] = [0] * len(scenario.rules)
        try:
            rule, step = pick(scenario, facts, positions)
        except NoRuleMatched as exc:
            return Played(None, None, facts.turn, session, str(exc))
        used = scenario.seed if scenario.seed is not None else seed
        if step is not None and step.options:
            start = rule.ends[step.index - 1] if step.index else 0
            step = choose(rule, step, positions[rule.index] - 1 - start, used)
        if step is not None and step.template is not None:
            ctx = RenderContext(body, model, f"{used}/{session}/{index}")
            try:
                step = dataclasses.replace(step, completion=step.template.render(ctx))
            except TemplateRenderError as exc:
                problem = f"mockoss: {rule.label} ({rule.where}), step {step.index}: {exc}"
                return Played(rule, None, facts.turn, session, problem)
        return Played(rule, step, facts.turn, session)
