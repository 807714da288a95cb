"""``mockoss explain``: what each emulated server would return for a scenario's completions.

This module is the command: the scenario's answers, the flags, the choice and order of profiles,
the output. The rows (:class:`~mockoss.explain_rows.Outcome`, one per step, profile, endpoint and
tools variant, each the profile's own ``surface`` of a non-streamed request) are built by
:func:`~mockoss.explain_rows.explain` and printed by :func:`~mockoss.explain_rows.render_table`;
:mod:`mockoss.explain_rows` says how.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from itertools import pairwise
from typing import Any

import yaml

from mockoss.cli_switch import Switches, switch_pairs
from mockoss.explain_rows import EXPLAINED_ENDPOINTS, Outcome, explain, render_table
from mockoss.harmony import Completion
from mockoss.profiles.base import Profile
from mockoss.profiles.registry import PROFILES, ProfileError, get_profile, switch_names

__all__ = ["HELP", "Outcome", "add_arguments", "explain", "render_table", "run_command"]

HELP = "show where the emulated servers disagree about a scenario's completions (--full: every row)"


def _answers(step: Any) -> list[tuple[Completion | None, tuple[int, str] | None, str | None]]:
    """(completion, scripted error, answer label) for each answer a step can give: one for a plain
    step, one per option of a ``pick`` step; a templated completion is rendered for an empty
    request, or reported as needing one."""
    from mockoss.scenario.template import RenderContext, TemplateRenderError

    if step.options:
        total = len(step.options)
        labelled = [
            (option, f"pick {i + 1}/{total}, weight {weight}") for i, (weight, option) in enumerate(step.options)
        ]
    else:
        labelled = [(step, None)]
    out: list[tuple[Completion | None, tuple[int, str] | None, str | None]] = []
    for answer, label in labelled:
        if answer.error is not None:
            out.append((None, (answer.error.status, answer.error.message), label))
        elif answer.completion is not None:
            out.append((answer.completion, None, label))
        elif answer.template is not None:
            try:
                rendered = answer.template.render(RenderContext({}, "openai/gpt-oss-20b", "explain"))
            except TemplateRenderError as exc:
                out.append((None, None, f"template needs a request: {exc}"))
                continue
            out.append(
                (rendered, None, "template, rendered for an empty request" if label is None else f"{label}, template")
            )
    return out


def _matches(source: str, count: int) -> list[Any]:
    """Each rule's ``match`` block as a :class:`~mockoss.scenario.match_spec.MatchSpec` (``None``:
    no block), in rule order: the compiled rules keep only the matcher, and explain builds its
    requests from the fields (:mod:`mockoss.explain_request`). Read again from the file the
    scenario loaded from (already checked by the loader)."""
    from mockoss.scenario.loader import scenario_source
    from mockoss.scenario.match_spec import MatchSpec

    data = yaml.safe_load(scenario_source(source)[0].decode("utf-8"))
    rules = data.get("rules") if isinstance(data, dict) else None
    if not isinstance(rules, list):
        return [None] * count
    specs = [MatchSpec.model_validate(r["match"]) if isinstance(r, dict) and r.get("match") else None for r in rules]
    return (specs + [None] * count)[:count]


def _steps(source: str, step: int | None) -> list[tuple[Any, ...]]:
    """``(index, completion, scripted error, answer label, rule label, match)`` per answer; the
    rule label is ``None`` for a ``steps:`` file (one unnamed rule) and for a completion on stdin;
    ``match`` the rule's :class:`~mockoss.scenario.match_spec.MatchSpec`, else ``None``."""
    if source == "-":
        return [(0, Completion.from_text(sys.stdin.read()), None, None, None, None)]
    from mockoss.scenario.loader import load_scenario

    scenario = load_scenario(source)
    plain = len(scenario.rules) == 1 and scenario.rules[0].name is None
    specs = _matches(source, len(scenario.rules)) if not plain else [None]
    out = []
    for rule, spec in zip(scenario.rules, specs, strict=True):
        for s in rule.steps:
            if (step is not None and s.index != step) or getattr(s, "replay", None) is not None:
                continue  # a replay step returns recorded bytes: nothing for a profile to surface
            where = None if plain else rule.label
            out.extend(
                (s.index, completion, scripted, label, where, spec) for completion, scripted, label in _answers(s)
            )
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``explain``'s arguments to its sub-parser."""
    parser.add_argument("scenario", help="a shipped scenario name, a YAML file, or - for a raw completion on stdin")
    parser.add_argument("--step", type=int, help="only this step (default: all)")
    parser.add_argument("--endpoint", choices=EXPLAINED_ENDPOINTS, help="only this endpoint (default: both)")
    parser.add_argument("--tools", help="comma-separated function tools to declare (default: inferred)")
    # serve's --switch (mockoss.cli_switch, from cli_parser's 2ef5e12): NAME=VALUE[,NAME=VALUE…], each switch once
    # (a repeat is a usage error with X-Mockoss-Switch's words; explain kept the last value).
    parser.add_argument(
        "--switch",
        type=switch_pairs,
        action=Switches,
        default=[],
        metavar="NAME=VALUE",
        help="profile switches, applied to every profile that has them (repeatable; a comma list; each switch once)",
    )
    parser.add_argument(
        "--profile",
        help="comma-separated profiles or releases to compare, e.g. vllm@0.10.1,vllm@0.26.0,vllm "
        "(default: every registered profile); rows are grouped so releases sit side by side",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="print every row as a wide table (default: only where profiles disagree, in 100 columns)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table (every row)")


def run_command(args: argparse.Namespace) -> int:
    """Run ``mockoss explain``; 2 on a bad scenario or switch, else 0."""
    from mockoss.scenario.loader import ScenarioError

    switches = dict(args.switch)
    known = {s for p in PROFILES.values() for s in switch_names(p)}
    unknown = sorted(set(switches) - known)
    if unknown:
        print(f"mockoss: error: no profile has switch {', '.join(unknown)}", file=sys.stderr)
        return 2
    try:
        chosen = selected_profiles(args.profile, switches) if getattr(args, "profile", None) else None
        steps = _steps(args.scenario, args.step)
        tools = [t.strip() for t in args.tools.split(",") if t.strip()] if args.tools else None
        endpoints = (args.endpoint,) if args.endpoint else EXPLAINED_ENDPOINTS
        if chosen is not None and not any(e in profile.endpoints for profile in chosen.values() for e in endpoints):
            names = ", ".join(chosen)
            print(
                f"mockoss: error: {names} {'has' if len(chosen) == 1 else 'have'} no {' or '.join(endpoints)} endpoint "
                f"(explain compares {' and '.join(EXPLAINED_ENDPOINTS)})",
                file=sys.stderr,
            )
            return 2
        rows = explain(steps, endpoints=endpoints, tools=tools, switches=switches, profiles=chosen)
        if chosen is not None:
            rows = side_by_side(rows, list(chosen))
    except (ScenarioError, ProfileError, ValueError) as exc:
        print(f"mockoss: error: {exc}", file=sys.stderr)
        return 2
    if not steps:
        what = (
            f"no step {args.step}" if args.step is not None else "no step a profile can surface (only recorded replays)"
        )
        print(f"mockoss: error: scenario has {what}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([asdict(r) for r in rows], ensure_ascii=False, indent=2))
    else:
        from mockoss.explain_diff import render_compact, wrap_notes

        full = getattr(args, "full", False)
        print(render_table(rows) if full else render_compact(rows))
        if chosen is not None:
            notes = release_changes(list(chosen))
            if notes:
                print("\n" + (notes if full else wrap_notes(notes)))
    return 0


def selected_profiles(spec: str, switches: Mapping[str, Any]) -> dict[str, Profile]:
    """``"vllm@0.10.1,vllm"`` → ``{name: profile}`` in the order given, each with the switches it has.

    Raises:
        ProfileError: an unknown profile, release or switch value.
    """
    from mockoss.profiles.releases import split_release

    out: dict[str, Profile] = {}
    for name in (n.strip() for n in spec.split(",")):
        if not name:
            continue
        base = PROFILES.get(split_release(name)[0])
        own = {k: v for k, v in switches.items() if base is not None and k in switch_names(base)}
        out[name] = get_profile(name, own)
    if not out:
        raise ProfileError("--profile: no profile given")
    return out


def side_by_side(rows: Sequence[Outcome], order: Sequence[str]) -> list[Outcome]:
    """Rows regrouped by step, endpoint and tools variant, the profiles in ``order`` within each
    group, so one completion's outcome across releases reads top to bottom."""
    rank = {name: i for i, name in enumerate(order)}
    positions = {id(r): i for i, r in enumerate(rows)}
    first: dict[tuple[str | None, int], int] = {}
    for i, r in enumerate(rows):
        first.setdefault((r.rule, r.step), i)
    return sorted(
        rows,
        key=lambda r: (
            first[(r.rule, r.step)],
            positions[id(r)] if r.profile == "-" else 0,
            r.endpoint,
            r.tools,
            rank.get(r.profile, len(rank)),
        ),
    )


def release_changes(names: Sequence[str]) -> str:
    """For consecutive releases of one server among ``names``: the timeline changes between them
    (``vllm@0.10.1 -> vllm@0.26.0: 7 changes`` then one line per switch)."""
    from mockoss.profiles.releases import TIMELINES, split_release

    lines: list[str] = []
    for older, newer in pairwise(names):
        (server, low), (other, high) = split_release(older), split_release(newer)
        timeline = TIMELINES.get(server)
        if server != other or timeline is None:
            continue
        changes = timeline.changes_between(low or timeline.newest, high or timeline.newest)
        lines.append(f"{older} -> {newer}: {len(changes)} timeline change{'s' if len(changes) != 1 else ''}")
        for change in changes:
            status = "" if change.verified else " (unverified)"
            lines.append(
                f"  {change.release} {change.switch}: {change.before!r} -> {change.after!r}: {change.summary}{status}"
            )
    return "\n".join(lines)
