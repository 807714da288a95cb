"""What ``mockoss.use(...)`` takes: one reading of its arguments for the ``mockoss`` fixtures
(:meth:`mockoss.pytest_plugin._fixture.MockossFixture.use`) and ``mockoss_remote``
(:meth:`mockoss.pytest_plugin._remote.RemoteSession.use`), so both accept and refuse the same things.

Before (t18 breaker, finding 8) the two read them apart and odd arguments got misleading errors:
``use("")`` said "'.': a directory", ``use("x" * 5000)`` a bare ``OSError`` (file name too long),
``use(b"steps")`` was read as a list of five steps (five errors, one per byte), ``use(None)`` said
"(top level): Input should be a valid dictionary", and YAML text worked with the remote fixture
but was an "unknown scenario" locally. Now:

- builder items (:mod:`mockoss.steps`), or a list/tuple holding one, or several positional items:
  the scenario data they make (:func:`mockoss.steps.as_scenario_data`);
- a mapping: scenario data (``{"steps": [...]}`` or ``{"rules": [...]}``, ``version`` optional);
- a list or tuple: its items are the steps;
- a ``str`` holding a line break: YAML text (what a scenario file holds), in both fixtures;
- another ``str`` or a :class:`pathlib.Path`: a shipped scenario's name or a file's path
  (:func:`mockoss.scenario.loader.scenario_source`: an empty or over-long one is a ScenarioError);
- anything else (``bytes``, ``None``, numbers, sets, generators, a builder function not called):
  ``TypeError`` naming what ``use()`` takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

__all__ = ["ACCEPTS", "read_use_args"]

#: What ``mockoss.use()`` takes, as its TypeError says it.
ACCEPTS = (
    "a shipped scenario's name or a .yaml file's path (str or pathlib.Path), YAML text (a str of several lines), "
    "a scenario mapping ({'steps': [...]} or {'rules': [...]}), a list or tuple of steps, "
    "or mockoss.steps builders (final(...), tool_call(...), ...)"
)


def read_use_args(scenario: Any, more: tuple[Any, ...]) -> tuple[Literal["data", "text", "source"], Any]:
    """Which kind of scenario ``use(scenario, *more)`` was given (module docstring).

    Returns:
        ``("data", dict)``: scenario data (``version`` may be missing); ``("text", str)``: YAML
        text; ``("source", str | Path)``: a shipped name or a file path, as given.

    Raises:
        TypeError: not one of :data:`ACCEPTS` (the message names the type and what is taken), or
            builders mixed with other items (:func:`mockoss.steps.as_scenario_data`).
    """
    from mockoss.steps import as_scenario_data, is_builder

    if more or is_builder(scenario) or (isinstance(scenario, (list, tuple)) and any(map(is_builder, scenario))):
        return "data", as_scenario_data(scenario, *more)
    if isinstance(scenario, Mapping):
        return "data", dict(scenario)
    if isinstance(scenario, (list, tuple)):
        return "data", {"steps": list(scenario)}
    if isinstance(scenario, str):
        return ("text", scenario) if "\n" in scenario else ("source", scenario)
    if isinstance(scenario, Path):
        return "source", scenario
    raise TypeError(f"mockoss.use() takes {ACCEPTS}; got {_described(scenario)}")


def _described(value: Any) -> str:
    """``value``'s type for the TypeError, with the fix for the likely mistakes."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"{type(value).__name__} (for a scenario file's bytes, give the text: data.decode())"
    if callable(value) and getattr(value, "__module__", "").startswith("mockoss."):
        name = getattr(value, "__name__", "it")
        return f"the function {name} itself (call it: {name}(...))"
    return type(value).__name__
