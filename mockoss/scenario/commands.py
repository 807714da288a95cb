"""The scenario commands of the ``mockoss`` CLI: ``scenarios``, ``validate`` and ``schema``.

``mockoss validate PATH…`` checks scenario files (a directory means every ``*.yaml``/``*.yml`` in
it, recursively) without serving them; it prints every problem as ``FILE:LINE: FIELD: problem``
and exits 1, or prints ``ok: N scenarios, M rules, K steps`` and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mockoss.scenario.loader import (
    Scenario,
    ScenarioError,
    builtin_names,
    load_scenario,
)

__all__ = ["COMMANDS", "add_arguments", "run"]

#: The commands this module adds and runs.
COMMANDS = ("scenarios", "validate", "schema")


def add_arguments(commands: Any) -> None:
    """Add the ``scenarios``, ``validate`` and ``schema`` sub-commands to an argparse sub-parsers object."""
    listing = commands.add_parser("scenarios", help="list the shipped scenarios")
    listing.add_argument(
        "--json", action="store_true", help="print a JSON array (name, description, source, rules, steps)"
    )
    validate = commands.add_parser(
        "validate",
        help="check scenario files",
        description="Check scenario files; print every problem with file, line and field.",
    )
    validate.add_argument("paths", nargs="+", metavar="PATH", help="a scenario file, or a directory of them")
    commands.add_parser(
        "schema", help="print the JSON Schema of scenario files", description="Print the JSON Schema of scenario files."
    )


def run(args: argparse.Namespace) -> int:
    """Run one of :data:`COMMANDS`; returns the exit code."""
    if args.command == "validate":
        return _validate(args.paths)
    if args.command == "schema":
        from mockoss.scenario.json_schema import scenario_json_schema_text

        sys.stdout.write(scenario_json_schema_text())
        return 0
    return _scenarios(as_json=args.json)


def _summary(name: str, scenario: Scenario) -> dict[str, Any]:
    return {
        "name": name,
        "description": scenario.description,
        "source": list(scenario.source),
        "rules": len(scenario.rules),
        "steps": len(scenario.steps),
    }


def _scenarios(*, as_json: bool) -> int:
    names = builtin_names()
    if as_json:
        print(json.dumps([_summary(name, load_scenario(name)) for name in names], indent=2, ensure_ascii=False))
        return 0
    width = max(map(len, names), default=0)
    for name in names:
        print(f"{name:<{width}}  {load_scenario(name).description}")
    return 0


def _files(path: str) -> list[Path] | str:
    candidate = Path(path)
    if candidate.is_dir():
        found = sorted(p for p in candidate.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        return found or f"{path}: no scenario files (*.yaml, *.yml) in this directory"
    if not candidate.exists():
        return f"{path}: no such file or directory"
    return [candidate]


def _validate(paths: list[str]) -> int:
    problems: list[str] = []
    scenarios = rules = steps = 0
    for path in paths:
        files = _files(path)
        if isinstance(files, str):
            problems.append(files)
            continue
        for file in files:
            try:
                scenario = load_scenario(file)
            except ScenarioError as exc:
                problems.extend(str(exc).splitlines())
                continue
            scenarios += 1
            rules += len(scenario.rules)
            steps += len(scenario.steps)
    if problems:
        print("\n".join(problems))
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"ok: {scenarios} scenarios, {rules} rules, {steps} steps")
    return 0
