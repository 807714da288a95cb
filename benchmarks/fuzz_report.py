"""The text report of ``bench_fuzz.py`` (without ``--json``): one line per part, then each crash kind."""

from __future__ import annotations

import json
from typing import Any


def report(results: dict[str, Any]) -> None:
    """Print ``results`` (``bench_fuzz.main``'s, by part): a line a part, then each part's crash kinds
    and up to five samples, then the total."""
    if "completions" in results:
        r = results["completions"]
        print(
            f"completions (in process): {r['cases']} replies to {r['completions']} random completions "
            f"({r['scenarios_refused']} more refused at load, as documented), {r['4xx']} 4xx, "
            f"statuses {r['statuses']}, slowest {r.get('slowest_s', 0):.2f} s, crashes {r['crashes']}"
        )
    if "requests" in results:
        r = results["requests"]
        print(
            f"requests (the mutated requests, in process, every profile): {r['cases']} requests, {r['4xx']} 4xx, "
            f"statuses {r['statuses']}, slowest {r.get('slowest_s', 0):.2f} s, crashes {r['crashes']}"
        )
    if "http" in results:
        r = results["http"]
        print(
            f"http (mutated requests, {len(r['profiles'])} profiles): {r['cases']} requests, {r['4xx']} 4xx, "
            f"statuses {r['statuses']}, slowest {r.get('slowest_s', 0):.2f} s, crashes {r['crashes']}"
        )
    if "soak" in results:
        r = results["soak"]
        soak, streams = r["soak"], r["streams"]
        if soak:
            print(
                f"soak: {r['clients']} clients for {soak['seconds']:.1f} s: {soak['requests']} requests, "
                f"{soak['requests_per_s']:.0f} requests/s, {soak['errors']} errors "
                f"(server CPU {soak['server_cpu_s']:.1f} s)"
            )
        if streams:
            print(
                f"streams: {streams['streams']} at once ({streams['frames']} frames, {streams['seconds_together']:.1f} s): "
                f"{streams['bad']} incomplete or differing from the same request alone"
            )
        if r["server_tracebacks"]:
            print(f"soak server tracebacks: {len(r['server_tracebacks'])}")
    for part in ("completions", "requests", "http", "soak"):
        r = results.get(part)
        if not r or not r["crashes"]:
            continue
        print(f"\n{part}: crash kinds")
        for kind, n in (r.get("crash_kinds") or {}).items():
            print(f"  {n:6d}  {kind}")
        for sample in (r.get("samples") or r["soak"].get("samples", []) + r["streams"].get("samples", []))[:5]:
            print("  e.g.", json.dumps(sample, ensure_ascii=True)[:1200])
    print(f"\ncrashes: {results['total_crashes']} (seed {results['seed']}, {results['seconds']:.0f} s)")
