"""The scenario commands of the ``mockoss`` CLI: ``scenarios``, ``validate``, ``schema``, ``show``
and ``faults``.

``mockoss show NAME`` prints a shipped scenario (or a file) as written, ``--python`` as
:mod:`mockoss.steps` builder code that evaluates to the same data. ``mockoss faults`` lists the
Harmony fault kinds (:data:`mockoss.harmony.faults.FAULTS`) with their parameters, defaults,
allowed values and sources.

``mockoss validate PATH…`` checks scenario files (a directory means every ``*.yaml``/``*.yml`` in
it, recursively; ``-`` standard input) without serving them; it prints every problem as ``FILE:LINE: FIELD: problem``
and exits 1, or prints ``ok: N scenarios, M rules, K steps`` (``1 scenario``: a count of one is
singular) and exits 0.

The loader is imported by the commands that run, not here: ``mockoss`` builds its parser with
:func:`add_arguments` for every command (:func:`mockoss.cli_parser.build_parser`), and the loader
brings pydantic and the scenario models (~0.1 s of ``mockoss --version``, session 18).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockoss.scenario.loader import Scenario

__all__ = ["COMMANDS", "add_arguments", "run"]

#: The commands this module adds and runs.
COMMANDS = ("scenarios", "validate", "schema", "show", "faults")


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
    validate.add_argument(
        "paths", nargs="+", metavar="PATH", help="a scenario file, a directory of them, or - for standard input"
    )
    validate.add_argument(
        "--profile",
        metavar="NAME",
        help="also check each file's switches: against this profile (or release), as `mockoss serve --profile "
        "NAME` does when it selects the file; without it, a switch value no profile takes is still refused",
    )
    commands.add_parser(
        "schema", help="print the JSON Schema of scenario files", description="Print the JSON Schema of scenario files."
    )
    show = commands.add_parser(
        "show",
        help="print a shipped scenario (or a scenario file)",
        description="Print a shipped scenario as written, or as mockoss.steps builder code (--python).",
    )
    show.add_argument("name", metavar="NAME", help="a shipped scenario name (mockoss scenarios) or a YAML file path")
    show.add_argument("--python", action="store_true", help="print mockoss.steps builder code instead of YAML")
    faults = commands.add_parser(
        "faults",
        help="list the Harmony fault kinds and their parameters",
        description="List the Harmony fault kinds a completion's `fault:` (or mockoss.steps fault()) takes.",
    )
    faults.add_argument("kind", nargs="?", help="print one kind's full documentation")
    faults.add_argument("--json", action="store_true", help="print JSON")
    faults.add_argument(
        "--transport", action="store_true", help="list the transport fields (timing, disconnects) instead"
    )


def run(args: argparse.Namespace) -> int:
    """Run one of :data:`COMMANDS`; returns the exit code."""
    if args.command == "validate":
        return _validate(args.paths, getattr(args, "profile", None))
    if args.command == "show":
        return _show(args.name, python=args.python)
    if args.command == "faults":
        if args.transport:
            return _transport_fields(as_json=args.json)
        return _faults(args.kind, as_json=args.json)
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
    from mockoss.scenario.loader import builtin_names, load_scenario

    names = builtin_names()
    if as_json:
        print(json.dumps([_summary(name, load_scenario(name)) for name in names], indent=2, ensure_ascii=False))
        return 0
    width = max(map(len, names), default=0)
    for name in names:
        print(f"{name:<{width}}  {load_scenario(name).description}")
    return 0


def _files(path: str) -> list[Path | None] | str:
    """The scenario files ``path`` names (``None``: standard input, for ``-``), or why none."""
    if path == "-":
        return [None]
    candidate = Path(path)
    if candidate.is_dir():
        found = sorted(p for p in candidate.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        return found or f"{path}: no scenario files (*.yaml, *.yml) in this directory"
    if not candidate.exists():
        return f"{path}: no such file or directory"
    return [candidate]


def _stdin_scenario() -> Scenario:
    """The scenario on standard input (``mockoss validate -``; its errors name ``<stdin>``), read
    up to the loader's size limit. Before session 16 ``-`` was taken for a file name: "-: no such
    file or directory" (the sixteenth session's breaker, item 12).

    Raises:
        ScenarioError: larger than :data:`~mockoss.scenario.loader.MAX_SCENARIO_BYTES`, or the
            scenario's own problems.
    """
    from mockoss.scenario.loader import MAX_SCENARIO_BYTES, ScenarioError, scenario_from_bytes

    raw = sys.stdin.buffer.read(MAX_SCENARIO_BYTES + 1)
    if len(raw) > MAX_SCENARIO_BYTES:
        raise ScenarioError(f"<stdin>: more than the {MAX_SCENARIO_BYTES:,}-byte limit for a scenario file")
    return scenario_from_bytes(raw, name="stdin", origin="<stdin>")


def _validate(paths: list[str], profile: str | None = None) -> int:
    """Load each file as ``serve`` would; with ``profile``, check its ``switches:`` against that
    profile too, as ``serve --profile`` does when it selects the file (eleventh-session breaker,
    finding 6: validate said ok to a file serve refused)."""
    from mockoss.scenario.loader import ScenarioError, load_scenario, switch_problem

    problems: list[str] = []
    if profile is not None:
        from mockoss.profiles.registry import ProfileError, get_profile

        try:
            get_profile(profile)
        except ProfileError as exc:
            print(f"mockoss validate: --profile: {exc}", file=sys.stderr)
            return 2
    scenarios = rules = steps = 0
    for path in paths:
        files = _files(path)
        if isinstance(files, str):
            problems.append(files)
            continue
        for file in files:
            try:
                scenario = _stdin_scenario() if file is None else load_scenario(file)
            except ScenarioError as exc:
                problems.extend(str(exc).splitlines())
                continue
            if profile is not None and (problem := switch_problem(scenario, profile, {})):
                problems.append(problem)
                continue
            scenarios += 1
            rules += len(scenario.rules)
            steps += len(scenario.steps)
    if problems:
        print("\n".join(problems))
        print(_count(len(problems), "problem"), file=sys.stderr)
        return 1
    print(f"ok: {_count(scenarios, 'scenario')}, {_count(rules, 'rule')}, {_count(steps, 'step')}")
    return 0


def _count(n: int, noun: str) -> str:
    """``1 step``, ``0 steps``, ``2 steps``: ``validate`` said ``1 scenarios, 1 rules, 1 steps``
    (the eighteenth session's newcomer, item 8)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _show(name: str, *, python: bool) -> int:
    import importlib.resources

    import yaml

    from mockoss.scenario.loader import ScenarioError, load_scenario

    path = Path(name)
    try:
        if path.suffix in (".yaml", ".yml") or path.exists():
            load_scenario(path)  # the file's own problems, with line and field
            text = path.read_text(encoding="utf-8")
        else:
            load_scenario(name)  # unknown names: did-you-mean
            text = (importlib.resources.files("mockoss.scenarios") / f"{name}.yaml").read_text(encoding="utf-8")
    except ScenarioError as exc:
        print(f"mockoss: error: {exc}", file=sys.stderr)
        return 2
    if not python:
        sys.stdout.write(text)
        return 0
    from mockoss.steps import Script

    print("from mockoss.steps import *  # noqa: F403\n")
    print(f"scenario = {Script.from_dict(yaml.safe_load(text)).to_python()}")
    return 0


def _faults(kind: str | None, *, as_json: bool) -> int:
    import difflib

    from mockoss.harmony.faults import FAULTS

    if kind is not None and kind not in FAULTS:
        close = difflib.get_close_matches(kind, list(FAULTS), 3)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else f"; kinds: {', '.join(FAULTS)}"
        print(f"mockoss: error: unknown fault kind {kind!r}{hint}", file=sys.stderr)
        return 2
    kinds = [FAULTS[kind]] if kind else list(FAULTS.values())
    described = [
        {
            "kind": k.name,
            "summary": k.summary,
            "sources": list(k.sources),
            "params": [
                {"name": p.name, "default": p.default, "expects": p.expects(), "description": p.description}
                for p in k.all_params
            ],
        }
        for k in kinds
    ]
    if as_json:
        print(json.dumps(described, indent=2, ensure_ascii=False))
        return 0
    if kind is not None:
        print(FAULTS[kind].doc.strip())
        print()
    for entry in described:
        print(f"{entry['kind']}: {entry['summary']}")
        for param in entry["params"]:
            print(f"    {param['name']} = {param['default']!r}  ({param['expects']}): {param['description']}")
        print(f"    sources: {', '.join(entry['sources'])}")
    if kind is None:
        print("\nUse in a scenario: completion: {messages: [...], fault: {kind: KIND, PARAM: VALUE}};")
        print("in Python: mockoss.steps.fault(KIND, *messages, PARAM=VALUE). `mockoss faults KIND` for details.")
    return 0


def _transport_fields(*, as_json: bool) -> int:
    """``mockoss faults --transport``: the fields a step's ``transport:`` (and ``X-Mockoss-Transport``) take."""
    from mockoss.scenario.transport import TransportSpec

    fields = [
        {"name": name, "default": field.default, "description": " ".join((field.description or "").split())}
        for name, field in TransportSpec.model_fields.items()
    ]
    if as_json:
        print(json.dumps(fields, indent=2, ensure_ascii=False))
        return 0
    for entry in fields:
        print(f"{entry['name']} = {entry['default']!r}: {entry['description']}")
    print(
        "\nUse in a scenario step: transport: {FIELD: VALUE, ...}; per request: X-Mockoss-Transport: FIELD=VALUE,...;"
    )
    print("in Python: step.with_transport(FIELD=VALUE).")
    return 0
