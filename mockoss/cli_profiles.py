"""``mockoss profiles``: the profiles (:mod:`mockoss.profiles.catalog`), one profile in full, or a
server's timeline (:mod:`mockoss.profiles.timeline`).

``mockoss profiles`` prints each profile with its endpoints, model and switch names;
``mockoss profiles NAME`` (``vllm``, or a release, ``vllm@0.26.0``: that release's defaults)
its switches with their defaults, values and whole descriptions; ``--json`` the same as JSON
(without NAME: every profile, as before the eighteenth session); ``--timeline SERVER`` a server's
releases and dated changes. Split from :mod:`mockoss.cli` in the eighteenth session.
"""

from __future__ import annotations

import argparse
import json
import sys

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """Run ``mockoss profiles`` for parsed ``args`` (``name``, ``json``, ``timeline``); returns the
    exit code: 0, or 2 for an unknown profile, release or timeline and for NAME with
    ``--timeline`` (the message on stderr, ``mockoss: error: ...``)."""
    if args.timeline and args.name:
        print("mockoss: error: profiles takes a NAME or --timeline PROFILE, not both", file=sys.stderr)
        return 2
    if args.timeline:
        return _timeline(args)
    if args.name:
        return _one(args.name, as_json=args.json)
    from mockoss.profiles.catalog import describe_profiles, format_profiles

    described = describe_profiles()
    print(json.dumps(described, indent=2) if args.json else format_profiles(described))
    return 0


def _one(name: str, *, as_json: bool) -> int:
    """One profile, or a release of one (:func:`mockoss.profiles.registry.get_profile`: a release
    newer than the newest known one warns on stderr, as ``serve --profile`` does)."""
    from mockoss.profiles.catalog import describe_profile, format_profile
    from mockoss.profiles.registry import ProfileError, get_profile

    try:
        profile = get_profile(name)
    except ProfileError as exc:
        print(f"mockoss: error: {exc}", file=sys.stderr)
        return 2
    entry = describe_profile(name, profile)
    print(json.dumps(entry, indent=2) if as_json else format_profile(entry))
    return 0


def _timeline(args: argparse.Namespace) -> int:
    import dataclasses

    from mockoss.profiles.releases import TIMELINES
    from mockoss.profiles.timeline import format_timeline

    timeline = TIMELINES.get(args.timeline)
    if timeline is None:
        print(f"mockoss: error: no timeline for {args.timeline!r}; timelines: {', '.join(TIMELINES)}", file=sys.stderr)
        return 2
    if args.json:
        data = {
            "server": timeline.server,
            "releases": [dataclasses.asdict(r) for r in timeline.ordered_releases],
            "aliases": dict(timeline.aliases),
            "changes": [dataclasses.asdict(c) for c in timeline.ordered_changes()],
        }
        print(json.dumps(data, indent=2))
    else:
        print(format_timeline(timeline))
    return 0
