"""One schema check's state: its CPU budget clock, its "not checked" notes, its compiled patterns.

Split from :mod:`mockoss.scenario.schema_check` (whose docstring says why a check is bounded and
what is not checked). The keyword functions (:mod:`mockoss.scenario.schema_keywords`) reach the
running check through :data:`CURRENT_CHECK`; :func:`~mockoss.scenario.schema_check.check_schema` sets it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from mockoss.scenario.schema_re2 import compile_pattern  # ECMA-262 escapes, RE2, a bounded cache

__all__ = ["CURRENT_CHECK", "MAX_NOTES", "CheckState", "OverBudget", "short"]

#: At most this many "not checked" warnings per schema (unresolvable refs, patterns RE2 refuses).
MAX_NOTES = 5


class OverBudget(Exception):
    """Raised by :meth:`CheckState.tick` when the check has used its CPU budget."""


class CheckState:
    """State of one schema check, reached by the keyword functions through :data:`CURRENT_CHECK`."""

    __slots__ = ("_has_pattern_properties", "deadline", "next_clock", "notes", "patterns", "root", "steps")

    def __init__(self, root: Any, budget_s: float) -> None:
        self.deadline = time.thread_time() + budget_s
        self.steps = 0
        self.next_clock = 64
        self.notes: list[str] = []
        self.patterns: dict[str, Callable[[str], bool] | None] = {}
        self.root = root
        self._has_pattern_properties: bool | None = None

    def tick(self, weight: int = 1) -> None:
        """Count ``weight`` steps of work and read the clock once 64 have passed since the last
        reading. A step is a keyword evaluation, a descent into a subschema, an error yielded, an
        ``enum`` member compared; work in proportion to the schema's size weighs by its size (an
        error by its message's length, a pattern compiled by its length), so that no 64 steps hide
        seconds (an ``anyOf`` of 64 refs to a ``required`` of 3,000 names: 0.85 s on a 29 KB body)."""
        self.steps += weight
        if self.steps >= self.next_clock:
            self.next_clock = self.steps + 64
            if time.thread_time() > self.deadline:
                raise OverBudget

    def note(self, text: str) -> None:
        if text not in self.notes and len(self.notes) < MAX_NOTES:
            self.notes.append(text)

    def search(self, pattern: Any) -> Callable[[str], bool] | None:
        """RE2 search function of ``pattern``, or ``None`` (noted) when RE2 cannot run it."""
        if not isinstance(pattern, str):
            return None
        if pattern not in self.patterns:
            self.tick(1 + len(pattern) // 64)
            try:
                self.patterns[pattern] = compile_pattern(pattern)
            except ValueError as exc:
                self.patterns[pattern] = None
                self.note(f"pattern {short(pattern, 60)!r} is not checked: RE2 cannot run it ({exc})")
        return self.patterns[pattern]

    def has_pattern_properties(self) -> bool:
        if self._has_pattern_properties is None:
            found, stack = False, [self.root]
            while stack and not found:
                self.tick()  # every value, annotations too (a default of 1,000,000 lists: 0.49 s)
                node = stack.pop()
                if isinstance(node, dict):
                    found = isinstance(node.get("patternProperties"), dict) and bool(node["patternProperties"])
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
            self._has_pattern_properties = found
        return self._has_pattern_properties


#: The check running in this context (set by :func:`~mockoss.scenario.schema_check.check_schema`).
CURRENT_CHECK: ContextVar[CheckState] = ContextVar("mockoss_schema_check")


def short(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (for warning lines)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
