"""Rules and whole scenarios built from :mod:`mockoss._steps_core` steps (see :mod:`mockoss.steps`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from mockoss._steps_core import FORMAT_VERSION, Message, Step, step_of

__all__ = ["Rule", "Script", "as_scenario_data", "compile_script", "is_builder", "rule", "script"]


# --------------------------------------------------------------------------- rules and scripts


@dataclass(frozen=True, slots=True)
class Rule:
    """Steps answering the requests that meet ``match`` (a YAML ``rules`` item); see :func:`rule`."""

    steps: tuple[Step, ...]
    name: str | None = None
    match: Mapping[str, Any] | None = None
    when_exhausted: str | None = None
    exhausted_error: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The YAML ``rules`` item."""
        data: dict[str, Any] = {}
        if self.name is not None:
            data["name"] = self.name
        if self.match is not None:
            data["match"] = dict(self.match)
        data["steps"] = [s.to_dict() for s in self.steps]
        if self.when_exhausted is not None:
            data["when_exhausted"] = self.when_exhausted
        if self.exhausted_error is not None:
            data["exhausted_error"] = dict(self.exhausted_error)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rule:
        """Read a YAML ``rules`` item."""
        return cls(
            steps=tuple(Step.from_dict(s) for s in data.get("steps") or ()),
            name=data.get("name"),
            match=data.get("match"),
            when_exhausted=data.get("when_exhausted"),
            exhausted_error=data.get("exhausted_error"),
        )

    def _python(self, indent: str) -> str:
        parts = [f"{indent}    {s._python()}," for s in self.steps]
        for key, value in (("name", self.name), ("when_exhausted", self.when_exhausted),
                           ("exhausted_error", self.exhausted_error)):
            if value is not None:
                parts.append(f"{indent}    {key}={value!r},")
        if self.match is not None:
            if all(k.isidentifier() and k not in ("name", "when_exhausted", "exhausted_error") for k in self.match):
                parts.extend(f"{indent}    {k}={v!r}," for k, v in self.match.items())
            else:
                parts.append(f"{indent}    match={dict(self.match)!r},")
        return f"{indent}rule(\n" + "\n".join(parts) + f"\n{indent})"


def rule(
    *steps: Message | Step,
    name: str | None = None,
    when_exhausted: str | None = None,
    exhausted_error: Mapping[str, Any] | None = None,
    match: Mapping[str, Any] | None = None,
    **conditions: Any,
) -> Rule:
    """A rule: ``steps`` answer the requests meeting every condition, e.g.
    ``rule(final("The tool failed."), name="tool-error", last_tool="(?i)error")``.

    Conditions are the YAML ``match`` fields (``turn``, ``role``, ``tools``, ``tool_names``,
    ``tool_choice``, ``endpoint``, ``model``, ``last_user``, ``last_tool``, ``last_message``,
    ``headers``), as keywords or as ``match={…}``; none means every request. They are checked
    when the scenario loads (``ScenarioError`` names the field).
    """
    if not steps:
        raise TypeError("rule() takes at least one step")
    merged = {**(match or {}), **conditions}
    return Rule(tuple(step_of(s) for s in steps), name, merged or None, when_exhausted, exhausted_error)


@dataclass(frozen=True, slots=True)
class Script:
    """A whole scenario: ``steps`` (one rule answering every request) or ``rules``; see :func:`script`."""

    steps: tuple[Step, ...] = ()
    rules: tuple[Rule, ...] = ()
    description: str = ""
    source: str | Sequence[str] | None = None
    switches: Mapping[str, Any] = field(default_factory=dict)
    seed: int | str | None = None
    when_exhausted: str | None = None
    exhausted_error: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The scenario file's data, ``version: 1`` first."""
        data: dict[str, Any] = {"version": FORMAT_VERSION}
        if self.description:
            data["description"] = self.description
        if self.source is not None:
            data["source"] = self.source if isinstance(self.source, str) else list(self.source)
        if self.switches:
            data["switches"] = dict(self.switches)
        if self.seed is not None:
            data["seed"] = self.seed
        if self.when_exhausted is not None:
            data["when_exhausted"] = self.when_exhausted
        if self.exhausted_error is not None:
            data["exhausted_error"] = dict(self.exhausted_error)
        if self.rules:
            data["rules"] = [r.to_dict() for r in self.rules]
        else:
            data["steps"] = [s.to_dict() for s in self.steps]
        return data

    def to_yaml(self) -> str:
        """The scenario file's text (block style, keys in format order, Unicode kept)."""
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True, width=100)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Script:
        """Read scenario data (what :func:`yaml.safe_load` gives for a scenario file)."""
        return cls(
            steps=tuple(Step.from_dict(s) for s in data.get("steps") or ()),
            rules=tuple(Rule.from_dict(r) for r in data.get("rules") or ()),
            description=data.get("description", ""),
            source=data.get("source"),
            switches=data.get("switches") or {},
            seed=data.get("seed"),
            when_exhausted=data.get("when_exhausted"),
            exhausted_error=data.get("exhausted_error"),
        )

    @classmethod
    def from_yaml(cls, text: str) -> Script:
        """Read a scenario file's text (safe loader)."""
        return cls.from_dict(yaml.safe_load(text))

    def to_python(self) -> str:
        """Builder code that evaluates (with ``from mockoss.steps import *``) to an equal :class:`Script`."""
        items = [r._python("    ") for r in self.rules] or [f"    {s._python()}" for s in self.steps]
        lines = ["script("] + [f"{item}," for item in items]
        for key in ("description", "source", "switches", "seed", "when_exhausted", "exhausted_error"):
            value = getattr(self, key)
            if value not in (None, "", {}):
                lines.append(f"    {key}={value!r},")
        return "\n".join(lines) + "\n)"


def script(
    *items: Message | Step | Rule,
    description: str = "",
    source: str | Sequence[str] | None = None,
    switches: Mapping[str, Any] | None = None,
    seed: int | str | None = None,
    when_exhausted: str | None = None,
    exhausted_error: Mapping[str, Any] | None = None,
) -> Script:
    """A scenario from steps (each item one step) or from rules (all items :class:`Rule`).

    Raises:
        TypeError: steps and rules mixed, or an item of another type.
    """
    rules = [i for i in items if isinstance(i, Rule)]
    if rules and len(rules) != len(items):
        raise TypeError("script() takes steps or rules, not both; wrap the steps in rule(...)")
    steps = () if rules else tuple(step_of(i) for i in items)  # type: ignore[arg-type]
    return Script(steps, tuple(rules), description, source, dict(switches or {}), seed, when_exhausted, exhausted_error)


def is_builder(value: Any) -> bool:
    """Whether ``value`` is a builder item (:class:`Message`, :class:`Step`, :class:`Rule`, :class:`Script`)."""
    return isinstance(value, (Message, Step, Rule, Script))


def as_scenario_data(*items: Any) -> dict[str, Any]:
    """Scenario data from builder items: one :class:`Script`, or steps, or rules (see :func:`script`);
    a list or tuple of them counts as its items."""
    if len(items) == 1 and isinstance(items[0], (list, tuple)):
        items = tuple(items[0])
    if len(items) == 1 and isinstance(items[0], Script):
        return items[0].to_dict()
    return script(*items).to_dict()


def compile_script(items: Any, *, name: str = "script"):  # -> mockoss.scenario.loader.Scenario
    """Compile builder items (as :func:`as_scenario_data` takes them) into a ready-to-serve scenario.

    Raises:
        mockoss.scenario.loader.ScenarioError: the data does not follow the format (field named).
    """
    from mockoss.scenario.loader import scenario_from_data

    data = as_scenario_data(*items) if isinstance(items, (list, tuple)) else as_scenario_data(items)
    return scenario_from_data(data, name=name, origin="<inline>")
