"""Reply digests: one sha256 per scripted reply, to check that a change leaves mockoss's bytes alone.

mockoss promises byte-identical replies, ids included, for the same scenario and seed
(``MockServer.seed``: "same scenario + seed => byte-identical output"). This tool sends a fixed
grid of requests to the app in process (the ASGI app of :func:`mockoss.server.app.create_app`
over a fresh :class:`~mockoss.server.core.MockServer` per scenario and profile, driven with
plain ASGI ``receive``/``send`` callables: no socket, no thread) and records, per request, the
sha256 of its status, its headers (sorted) and its body bytes (a stream's frames joined as sent;
a stream the emulated server drops adds what was raised, ``StreamAborted: ...``).

The grid: every shipped scenario (:func:`mockoss.scenario.loader.builtin_names`) x every profile
(:data:`mockoss.profiles.registry.PROFILES`) x every generation endpoint that profile serves
(``Profile.endpoints``; :data:`mockoss.endpoints.ENDPOINTS` has the paths) x with and without
two declared function tools (where the endpoint takes them: ``TOOL_ENDPOINTS`` of
``tools/reply_digest_cases.py``, which builds the grid) x stream false/true x ``max_tokens``
none, 1, 7, 64 (``max_output_tokens`` on Responses, ``options.num_predict`` on Ollama's native
API) x each body sent twice (the second send hits the server's caches of validated bodies and
prompt counts). Each case (all but the send) has its
own ``X-Mockoss-Session``, so it starts at its scenario's first step and its second send plays
the next step, whatever ran before it. A scenario whose rule answers only requests matching
scalar fields (``match: {tool_choice: none}``) gets them in those endpoints' bodies. A scenario
the profile refuses (switches it lacks) gives one ``scenario|profile|refused`` digest of the
error's type (not its message, which lists the profile's switches). Plus long answers: a generated scenario whose final answer is 1,999 tokens, on every
profile's ``chat`` (``responses`` for gptoss-reference), streamed and not, with ``max_tokens``
none and 1,500. Full grid: ~35,000 replies, about a minute of one core.

Nothing in a reply depends on the wall clock: objects carry the server's ``created`` (fixed here
to :data:`mockoss.server.core.DEFAULT_CREATED`), ids come from the seed and the request's index,
and the app sends no ``date`` or ``server`` header (uvicorn adds those on a real socket, outside
what this tool sees). No header or field is excluded.

Usage (from the repository root)::

    .venv/bin/python tools/reply_digests.py -o /tmp/after.json       # the full grid, on the working tree
    .venv/bin/python tools/reply_digests.py --at HEAD -o /tmp/after.json  # on a commit, without uncommitted edits
    .venv/bin/python tools/reply_digests.py --compare /tmp/before.json /tmp/after.json
    .venv/bin/python tools/reply_digests.py --quick --profiles vllm,ollama -o /tmp/q.json
    .venv/bin/python tools/reply_digests.py --layered -o /tmp/layered.json  # the layered path (fastpath.py's fallback)

``--compare`` prints ``N replies compared, K differ`` (a key present in one file only differs;
``--common`` compares only the keys both have, for a ``--quick`` or ``--profiles`` run against
a full one), then the first differing keys, and exits 1 when K > 0. ``--quick``: five scenarios,
``max_tokens`` none and 7. ``--seed``: the server seed (default :data:`SEED`).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# tools/ is not a package: the sibling module is found next to this file, run as a script or loaded by path.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from reply_digest_cases import (
    LONG_MAX_TOKENS,
    MAX_TOKENS,
    QUICK_MAX_TOKENS,
    QUICK_SCENARIOS,
    SEED,
    Case,
    grid_cases,
    long_scenario,
    match_fields,
)


async def _exchange(app: Any, case: Case) -> bytes:
    """Send ``case`` to ``app`` over ASGI; the bytes digested: status, sorted headers, body."""
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(case.body)).encode()),
        (b"x-mockoss-session", case.session.encode()),
    ]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": case.path, "raw_path": case.path.encode(), "query_string": b"", "root_path": "", "headers": headers,
        "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 8000),
    }  # fmt: skip
    sent = [False]
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if not sent[0]:
            sent[0] = True
            return {"type": "http.request", "body": case.body, "more_body": False}
        await never.wait()  # the client stays: a stream's disconnect watcher waits here until cancelled
        return {"type": "http.disconnect"}

    status, head, body = 0, [], []

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, head
        if message["type"] == "http.response.start":
            status, head = message["status"], list(message.get("headers", ()))
        elif message["type"] == "http.response.body":
            body.append(bytes(message.get("body", b"")))

    ending = b""
    try:
        await app(scope, receive, send)
    # The emulated server drops a stream mid-way (StreamAborted), or a bug escapes the app: the
    # bytes sent, then what was raised, so that a run goes on and the change shows as a digest.
    except Exception as exc:  # noqa: BLE001
        ending = f"\n[aborted: {type(exc).__name__}: {exc}]".encode()
    lines = [str(status).encode()] + [name.lower() + b": " + value for name, value in sorted(head)]
    return b"\n".join(lines) + b"\n\n" + b"".join(body) + ending


async def _run_group(
    scenario: Any,
    profile_name: str,
    cases: Sequence[Case],
    seed: int,
    prefix: str,
    out: dict[str, str],
    statuses: dict[str, int],
    layered: bool,
) -> None:
    from mockoss.profiles.registry import ProfileError
    from mockoss.scenario.loader import ScenarioError
    from mockoss.server.app import create_app
    from mockoss.server.core import DEFAULT_CREATED, MockServer

    try:
        server = MockServer(scenario=scenario, profile=profile_name, seed=seed, created=DEFAULT_CREATED)
    # A scenario setting switches this profile lacks: the refusal's type only, for its message lists
    # the profile's switches and changes with every switch added (not a reply's bytes).
    except (ScenarioError, ProfileError) as exc:
        out[f"{prefix}|refused"] = hashlib.sha256(f"refused: {type(exc).__name__}".encode()).hexdigest()
        statuses["refused"] = statuses.get("refused", 0) + 1
        return
    app = create_app(server)
    if layered:
        app.mockoss_generation = app.mockoss_generation.fallback  # type: ignore[attr-defined]
    for case in cases:
        sent = await _exchange(app, case)
        out[f"{prefix}|{case.key}"] = hashlib.sha256(sent).hexdigest()
        status = sent[: sent.index(b"\n")].decode()
        statuses[status] = statuses.get(status, 0) + 1


def digests(
    profiles: Sequence[str] | None = None,
    *,
    quick: bool = False,
    seed: int = SEED,
    layered: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Run the grid; return ``{"replies": {key: sha256 hex}, "counts": {replies, scenarios, profiles, statuses}, "seed": seed, "quick": quick}``.

    ``profiles``: names of :data:`~mockoss.profiles.registry.PROFILES` (default: all).
    ``layered``: answer on the app's layered path, not the short one (``GenerationPath.fallback``,
    :mod:`mockoss.server.fastpath`), whose bytes must be the same. Raises ``KeyError`` for an
    unknown profile name.
    """
    from mockoss.profiles.registry import PROFILES
    from mockoss.scenario.loader import builtin_names

    names = list(profiles) if profiles else list(PROFILES)
    scenarios = [s for s in builtin_names() if not quick or s in QUICK_SCENARIOS]
    limits = QUICK_MAX_TOKENS if quick else MAX_TOKENS
    out: dict[str, str] = {}
    statuses: dict[str, int] = {}
    started = time.perf_counter()

    async def main() -> None:
        for scenario in scenarios:
            extra = match_fields(scenario)
            for name in names:
                profile = PROFILES[name]
                cases = list(grid_cases(scenario, profile, limits, extra, sorted(profile.endpoints)))
                await _run_group(scenario, name, cases, seed, f"{scenario}|{name}", out, statuses, layered)
            if progress:
                print(f"{scenario}: {len(out)} replies, {time.perf_counter() - started:.1f} s", file=sys.stderr)
        long = long_scenario()
        for name in names:
            profile = PROFILES[name]
            endpoint = "chat" if "chat" in profile.endpoints else min(profile.endpoints)
            cases = list(grid_cases("long-answer", profile, LONG_MAX_TOKENS, {}, [endpoint]))
            await _run_group(long, name, cases, seed, f"long-answer|{name}", out, statuses, layered)

    asyncio.run(main())
    return {
        "seed": seed,
        "quick": quick,
        "layered": layered,
        "mockoss": str(Path(importlib.import_module("mockoss").__file__ or "").parent),
        "profiles": names,
        "counts": {
            "replies": len(out),
            "scenarios": len(scenarios),
            "profiles": len(names),
            "statuses": dict(sorted(statuses.items())),
        },
        "replies": dict(sorted(out.items())),
    }


def compare(a: dict[str, Any], b: dict[str, Any], *, common: bool = False) -> tuple[int, list[str]]:
    """``(compared, differing keys)`` of two outputs of :func:`digests`. A key in one output only
    differs, unless ``common``: then only the keys both have are compared (a ``--profiles`` or
    ``--quick`` run against a full one)."""
    ra, rb = a["replies"], b["replies"]
    keys = sorted(set(ra) & set(rb)) if common else sorted(set(ra) | set(rb))
    return len(keys), [k for k in keys if ra.get(k) != rb.get(k)]


def run_at(rev: str, argv: Sequence[str], output: str) -> int:
    """Run this tool (``argv``, without ``--at`` and ``-o``) on commit ``rev`` of the repository
    this file is in, untouched by uncommitted edits: ``git archive`` into a temporary directory,
    ``scenarios/`` linked in as ``mockoss/scenarios`` (as ``pyproject.toml``'s ``package-dir`` maps
    it), and that directory first on ``PYTHONPATH`` (the editable install's finder comes after
    it). Writes the output with ``"commit"`` (the full hash) and ``"mockoss"`` (where it was
    imported from) to ``output``. Raises ``subprocess.CalledProcessError`` if git or the run fails."""
    import os
    import subprocess
    import tempfile

    repo = Path(__file__).resolve().parents[1]
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="reply-digests-") as tree:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", commit, "mockoss", "scenarios"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        Path(tree, "mockoss", "scenarios").symlink_to(Path(tree, "scenarios"), target_is_directory=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")]))}
        out = Path(tree, "digests.json")
        subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), *argv, "-o", str(out)], check=True, env=env, cwd=tree
        )
        result = json.loads(out.read_text(encoding="utf-8"))
    if not result["mockoss"].startswith(tree):
        raise RuntimeError(f"mockoss was imported from {result['mockoss']}, not from the export of {commit}")
    result["mockoss"] = f"git archive {commit}"
    Path(output).write_text(json.dumps({"commit": commit, **result}, indent=1) + "\n", encoding="utf-8")
    print(f"commit {commit}: {result['counts']['replies']} replies -> {output}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (module docstring); returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", help="write the JSON here (default: stdout)")
    parser.add_argument("--profiles", help="comma-separated profile names (default: all)")
    parser.add_argument("--quick", action="store_true", help="a subset: 5 scenarios, max_tokens none and 7")
    parser.add_argument(
        "--layered", action="store_true", help="answer on the layered path, not the short one (fastpath.py)"
    )
    parser.add_argument("--seed", type=int, default=SEED, help=f"server seed (default {SEED})")
    parser.add_argument(
        "--compare", nargs=2, metavar=("A.json", "B.json"), help="compare two outputs; exit 1 if any differ"
    )
    parser.add_argument("--common", action="store_true", help="--compare only the keys both files have")
    parser.add_argument("--show", type=int, default=20, help="differing keys listed by --compare")
    parser.add_argument("--at", metavar="REV", help="run on this commit (git archive), not the working tree; needs -o")
    parser.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    args = parser.parse_args(argv)
    if args.compare:
        a, b = (json.loads(Path(path).read_text(encoding="utf-8")) for path in args.compare)
        compared, differ = compare(a, b, common=args.common)
        print(f"{compared} replies compared, {len(differ)} differ")
        only = [sum(k not in other["replies"] for k in one["replies"]) for one, other in ((a, b), (b, a))]
        if any(only):
            print(
                f"  ({only[0]} keys only in {args.compare[0]}, {only[1]} only in {args.compare[1]}{'; not compared' if args.common else ''})"
            )
        for key in differ[: args.show]:
            print(f"  {key}")
        return 1 if differ else 0
    if args.at:
        if not args.output:
            parser.error("--at needs -o FILE")
        rest = ["--seed", str(args.seed)] + ["--quick"] * args.quick + ["--layered"] * args.layered
        rest += ["--profiles", args.profiles] if args.profiles else []
        return run_at(args.at, rest, args.output)
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()] if args.profiles else None
    started = time.perf_counter()
    result = digests(profiles, quick=args.quick, seed=args.seed, layered=args.layered, progress=args.verbose)
    text = json.dumps(result, indent=1) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(
            f"{result['counts']['replies']} replies in {time.perf_counter() - started:.1f} s -> {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
