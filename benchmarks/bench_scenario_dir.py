#!/usr/bin/env python3
"""Isolation for a ``--scenario-dir`` file a request names: how much longer another client's small
request waits while the file is compiled, on its first request and after an edit.

The fifteenth session's breaker (F4, in issue 9's note of that session): a 359 KB file of 5,001 rules in
``DIR/big.yaml``, ``mockoss serve --scenario-dir DIR``; the first request with
``X-Mockoss-Scenario: big`` took 2.47 s and another client waited 2.44 s; after a comment line was
appended to the file, 2.99 s and 2.99 s. The file was compiled under the server lock
(``mockoss/server/selection.py`` ``_scenario_for``); it is now compiled on a worker thread, outside
the lock (:mod:`mockoss.server.scenario_compile`).

The breaker's method (``lag.py``): another client sends a small chat request every 5 ms, alone
for a second, then while the heavy request runs; printed per case: the heavy request's time and
status, the probe's median alone and its worst wait during (and that minus the median alone: the
issue 9 target is at most 50 ms). Cases, ``--repeat`` times each: ``first`` (a new file name: not
loaded yet), ``edited`` (the same file with a comment line appended), ``loaded`` (the same again:
no compile; what a request on a 5,001-rule scenario costs under the lock by itself). A separate
bench from ``bench_isolation.py``, whose cases share one ``--scenario`` server and send no headers.

    python benchmarks/bench_scenario_dir.py [--rules 5000] [--repeat 2] [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_isolation import MODEL, _serving

SMALL = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}).encode()


def dir_scenario(rules: int) -> str:
    """A scenario file of ``rules`` rules matching ``^qN$`` and a last one answering anything
    (``rules=5000``: the breaker's 5,001 rules, ~550 KB)."""
    lines = ["version: 1", "rules:"]
    for i in range(rules):
        lines += [
            f'  - match: {{last_user: "^q{i}$"}}',
            f'    steps: [{{completion: {{messages: [{{channel: final, content: "a{i}"}}]}}}}]',
        ]
    return "\n".join(
        [
            *lines,
            "  - steps: [{completion: {messages: [{channel: final, content: Hi!}]}}]",
            "    when_exhausted: repeat_last",
            "",
        ]
    )


def post(port: int, headers: dict[str, str] | None = None) -> tuple[int, float]:
    """POST the small chat request (with ``headers``): ``(status, seconds)``."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request(
            "POST", "/v1/chat/completions", body=SMALL, headers={"Content-Type": "application/json", **(headers or {})}
        )
        response = conn.getresponse()
        response.read()
        return response.status, time.perf_counter() - start
    finally:
        conn.close()


def _pings(port: int, seconds: float | None, stop: threading.Event, waits: list[float]) -> None:
    """Small requests every 5 ms (the breaker's probe) for ``seconds``, or until ``stop`` is set."""
    end = None if seconds is None else time.monotonic() + seconds
    while not stop.is_set() and (end is None or time.monotonic() < end):
        waits.append(post(port)[1])
        time.sleep(0.005)


def case(port: int, name: str) -> dict[str, Any]:
    """The probe alone for a second, then during the request naming scenario ``name``."""
    alone: list[float] = []
    _pings(port, 1.0, threading.Event(), alone)
    during: list[float] = []
    stop = threading.Event()
    thread = threading.Thread(target=_pings, args=(port, None, stop, during))
    thread.start()
    time.sleep(0.2)
    status, took = post(port, {"X-Mockoss-Scenario": name})
    time.sleep(0.1)
    stop.set()
    thread.join()
    median = statistics.median(alone)
    return {
        "status": status, "heavy_s": took, "alone_p50_ms": median * 1000, "alone_max_ms": max(alone) * 1000,
        "during_max_ms": max(during) * 1000, "extra_max_ms": (max(during) - median) * 1000, "probes": len(during),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", type=int, default=5000, help="rules in the file besides the last (default 5000)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each case (default 2)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows: list[tuple[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp, "dir")
        directory.mkdir()
        text = dir_scenario(args.rules)
        command = [
            sys.executable,
            "-m",
            "mockoss",
            "serve",
            "--scenario",
            "clean-answer",
            "--scenario-dir",
            str(directory),
        ]
        with _serving(command, tmp, "--port") as (port, _pid):
            post(port)
            for run in range(args.repeat):
                path = directory / f"big{run}.yaml"
                path.write_text(text)
                rows.append(("first", case(port, path.stem)))
                with open(path, "a") as handle:
                    handle.write("# edited\n")
                rows.append(("edited", case(port, path.stem)))
                rows.append(("loaded", case(port, path.stem)))
    if args.json:
        print(json.dumps([{"case": name, **row} for name, row in rows], indent=2))
        return 0
    print(
        f"a --scenario-dir file of {args.rules + 1:,} rules ({len(text.encode()):,} bytes); another client pings every 5 ms"
    )
    print(
        f"{'case':<8} {'status':>6} {'heavy s':>8} {'alone p50':>9} {'alone max':>9} {'max':>7} {'extra':>7} {'probes':>6}"
    )
    for name, row in rows:
        print(
            f"{name:<8} {row['status']:>6} {row['heavy_s']:>8.3f} {row['alone_p50_ms']:>9.1f} {row['alone_max_ms']:>9.1f} "
            f"{row['during_max_ms']:>7.1f} {row['extra_max_ms']:>7.1f} {row['probes']:>6}"
        )
    worst, at = max((row["extra_max_ms"], name) for name, row in rows if name != "loaded")
    print(f"worst extra wait while a file compiles: {worst:.1f} ms ({at}; issue 9 target <= 50 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
