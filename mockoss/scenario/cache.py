"""Compiled scenarios kept by content, so that loading an unchanged file again costs a lookup.

The pytest fixture loads its scenario for every test; parsing the YAML and compiling it (and, on
the first request, tracing and planning each completion) would otherwise be paid every time, in
proportion to the completions' length. :func:`mockoss.scenario.loader.load_scenario` looks here
first, keyed by the file's origin, name and exact bytes: an edited file is a new key. A compiled
:class:`~mockoss.scenario.loader.Scenario` is immutable (rule cursors and sessions live in the
server's player), so sharing one between loads and servers is safe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockoss.harmony.completion import BYTES_PER_TOKEN
from mockoss.harmony.lru import BytesLRU

if TYPE_CHECKING:
    from mockoss.scenario.compiled import Scenario

__all__ = ["SCENARIO_CACHE_BYTES", "clear_scenario_cache", "failed_scenarios", "loaded_scenarios", "scenario_cost"]

#: Byte budget of the compiled-scenario cache.
SCENARIO_CACHE_BYTES = 64 * 1024 * 1024

#: ``(origin, name, file bytes)`` → the compiled scenario.
loaded_scenarios: BytesLRU[Scenario] = BytesLRU(SCENARIO_CACHE_BYTES)
#: ``(origin, name, file bytes)`` → the error message of a file that does not load (bounded too).
failed_scenarios: BytesLRU[str] = BytesLRU(SCENARIO_CACHE_BYTES // 4)


def scenario_cost(scenario: Scenario, raw: bytes) -> int:
    """Bytes a cached scenario is counted for: its file (about 8x once parsed and compiled) and
    its completions with what requests memoise on them (``BYTES_PER_TOKEN`` per token)."""
    tokens = 0
    pending = [step for rule in scenario.rules for step in rule.steps] or list(scenario.steps)
    while pending:
        step = pending.pop()
        if step.completion is not None:
            tokens += len(step.completion.tokens)
        pending += [option for _, option in step.options]
    return 8 * len(raw) + BYTES_PER_TOKEN * tokens


def clear_scenario_cache() -> None:
    """Forget every cached scenario (and every cached failure)."""
    loaded_scenarios.clear()
    failed_scenarios.clear()
