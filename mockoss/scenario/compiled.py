"""Compiled scenarios: what :mod:`mockoss.scenario.loader` builds and the server plays.

Plain frozen dataclasses with no behaviour, in a module of their own so that the modules around
the loader (its cache, the player, the matchers) can name these types without importing the
loader back. :mod:`mockoss.scenario.loader` re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.base import Reply
    from mockoss.scenario.matching import Matcher
    from mockoss.scenario.render import CompletionTemplate
    from mockoss.scenario.schema import ScriptedError
    from mockoss.scenario.transport import TransportSpec

__all__ = ["Rule", "Scenario", "ScenarioError", "Step"]


class ScenarioError(ValueError):
    """A scenario file cannot be read or does not follow the format.

    ``str()`` names the file, the line and the field, e.g.
    ``scenarios/x.yaml:7: steps[0].completion.messages[0].chanel: unknown field``.
    """


@dataclass(frozen=True, slots=True)
class Step:
    """A compiled step: exactly one of ``completion``, ``template``, ``error``, ``options`` or ``replay`` is set.

    ``index`` is the step's position in its rule; ``template`` is set instead of ``completion``
    when the completion's text holds templates (render it per request).
    """

    index: int
    completion: Completion | None
    error: ScriptedError | None
    note: str | None = None
    #: Timing and transport faults for this step's reply (``transport:``), else ``None``.
    transport: TransportSpec | None = None
    #: Consecutive requests this step answers.
    times: int = 1
    template: CompletionTemplate | None = None
    #: ``pick`` steps: ``(weight, answer)`` pairs, one chosen per request (:mod:`mockoss.scenario.pick`).
    options: tuple[tuple[int, Step], ...] = ()
    pick_mode: str = "deck"
    #: ``pick`` steps: the options' running weight totals (``bounds[-1]``: the sum), set with
    #: ``options`` when the scenario is compiled, read by every use (:func:`mockoss.scenario.pick.choose`).
    bounds: tuple[int, ...] = ()
    #: ``replay`` steps: the recorded reply, returned as is (:mod:`mockoss.scenario.replay`).
    replay: Reply | None = None
    #: The step may go unused without failing ``assert_all_steps_used`` (``optional: true``).
    optional: bool = False
    #: The tool calls its completion makes, ``(name, arguments JSON text or None when templated)``,
    #: checked against the request's tools (:mod:`mockoss.scenario.tool_check`); empty for steps
    #: with a ``fault``, ``raw`` text or ``tool_mismatch_intended: true``.
    tool_calls: tuple[tuple[str, str | None], ...] = ()
    #: ``endpoint:``: the only endpoint this step answers (a recording's step), else ``None``
    #: (:meth:`mockoss.scenario.player.Player.play` refuses a request to another one).
    endpoint: str | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """A compiled rule.

    Attributes:
        index: position in the scenario (0-based).
        name: the rule's ``name``, else ``None``.
        label: ``rule 'leak'``, or ``rule #2`` (1-based) when unnamed.
        where: ``scenario FILE:LINE`` (``scenario NAME`` for inline scenarios).
        match: the compiled ``match`` block (no checks: every request).
        steps: the rule's steps.
        ends: running totals of the steps' ``times`` (step ``i`` answers positions up to ``ends[i] - 1``).
        when_exhausted: ``repeat_last``, ``error`` or ``next_rule``.
        exhausted_error: what ``error`` answers.
    """

    index: int
    name: str | None
    label: str
    where: str
    match: Matcher
    steps: tuple[Step, ...]
    ends: tuple[int, ...]
    when_exhausted: str
    exhausted_error: ScriptedError


@dataclass(frozen=True, slots=True)
class Scenario:
    """A compiled scenario: rules ready to serve, plus the file's settings.

    ``steps`` holds every rule's steps in file order (for a ``steps:`` file, its steps);
    ``when_exhausted`` and ``exhausted_error`` are the scenario-wide defaults; ``seed`` seeds
    templates (``None``: the server's seed).
    """

    name: str
    description: str
    steps: tuple[Step, ...]
    when_exhausted: str
    exhausted_error: ScriptedError
    switches: Mapping[str, Any]
    origin: str
    rules: tuple[Rule, ...] = ()
    seed: int | str | None = None
    source: tuple[str, ...] = ()
