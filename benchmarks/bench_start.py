#!/usr/bin/env python3
"""Cold start and idle memory of ``mockoss serve`` against a bare Starlette app (issue 9 targets:
start to the first 200 <= 2.5x the bare app's, idle RSS <= 100 MB), and against the library floor:
the same bare app that first loads openai-harmony's o200k_harmony encoding, which mockoss needs to
count and parse tokens (the floor is what the genuine library alone costs any server).

Each run spawns the server (``python -P -m mockoss serve --scenario clean-answer``, and the bare
Starlette app of ``bench_http.py`` on the captured reply), then sends a small chat request in a
loop until the first 200: the time from spawn to that answer is the cold start. The server then
answers ``--requests`` more (chat and Responses, streamed and not; the bare apps answer a streamed
request with a stream of two chunks, so that they too load what Starlette loads for its first
streamed reply), idles ``--idle`` seconds, and its resident memory is read. The server's CPU time at the first 200 is printed beside the wall
time (on a busy machine the wall time measures the neighbours too). Median of ``--repeat`` runs, after one untimed run of each.

Every server runs from byte-compiled modules, as an installed mockoss does: pip byte-compiles a
package when it installs it, and Python writes the ``.pyc`` files of an editable checkout on its
first import. A Python told to write none (``PYTHONDONTWRITEBYTECODE``, set on the machines these
figures come from) compiles mockoss's ~100 modules from source at every start instead, about
0.25 s more here: the servers are started without it, so that the untimed run writes the files,
and the report says whether mockoss's were there.

A server that exits before its first 200, or gives none within ``--start-timeout`` seconds of its
spawn, stops the benchmark with the last lines of its output (exit status 1); a Python without the
``fast`` extra (uvloop + httptools, which the bare baseline runs on) stops it at once with
``bench_http.py``'s hint (exit status 2).

    python benchmarks/bench_start.py [--repeat 5] [--start-timeout 60] [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import CHAT, RESPONSES, request_body
from benchfail import missing_fast
from benchlib import CASE_HEADER, LOAD_HARMONY, Server, mockoss_argv

COLD_TARGET, RSS_TARGET_MB = 2.5, 100.0


def _post(port: int, path: str, body: bytes, case: str = "probe", timeout: float = 30.0) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body, {"Content-Type": "application/json", CASE_HEADER: case})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


#: The servers' environment: this one, except that Python may write byte-compiled files (module docstring).
SERVER_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def byte_compiled() -> bool:
    """Whether the mockoss package imported here has the byte-compiled file of each of its modules
    that ``mockoss serve`` loads first (its server core and the CLI)."""
    import importlib.util

    names = ("mockoss.cli", "mockoss.server.core", "mockoss.scenario.schema", "mockoss.profiles.vllm.chat")
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None or not Path(importlib.util.cache_from_source(spec.origin)).exists():
            return False
    return True


#: Seconds from spawn to the first 200 after which a server counts as failed to start (``--start-timeout``).
START_TIMEOUT_S = 60.0


def one_run(
    argv: list[str], cwd: Path, requests: int, idle: float, *, name: str = "server", timeout: float = START_TIMEOUT_S
) -> dict[str, float]:
    """Spawn, wait for the first 200, serve ``requests``, idle, read RSS (MiB), stop; times in s.

    Raises:
        RuntimeError: the server exited before its first 200, or gave none within ``timeout``
            seconds of its spawn (the message has the last lines of its output and, for a missing
            ``fast`` extra, the install hint: :func:`benchfail.failure_report`). The bare baseline
            prints its base URL before uvicorn imports uvloop, so a Python without the extra used
            to retry the first request here forever (session 15's newcomer, finding 1).
    """
    server = Server(name, argv, cwd=cwd, timeout=timeout, env=SERVER_ENV)
    try:
        deadline = server.started + timeout
        while True:
            try:
                if (
                    _post(
                        server.port,
                        CHAT,
                        request_body("chat"),
                        timeout=max(0.1, min(30.0, deadline - time.perf_counter())),
                    )
                    == 200
                ):
                    break
            except OSError:
                pass
            if server.proc.poll() is not None:
                server.fail("exited before its first 200")
            if time.perf_counter() > deadline:
                server.fail(f"answered no 200 within {timeout:g} s of its spawn")
            time.sleep(0.002)
        cold = time.perf_counter() - server.started
        cold_cpu = server.cpu_seconds()
        for i in range(requests):
            path, endpoint = (CHAT, "chat") if i % 2 == 0 else (RESPONSES, "responses")
            stream = i % 4 >= 2
            _post(server.port, path, request_body(endpoint, stream=stream), "stream" if stream else "probe")
        time.sleep(idle)
        return {"cold_s": cold, "cold_cpu_s": cold_cpu, "rss_mb": server.rss_mb()}
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per server, median kept (default 5)")
    parser.add_argument("--requests", type=int, default=40, help="requests answered before idling (default 40)")
    parser.add_argument("--idle", type=float, default=2.0, help="idle seconds before reading RSS (default 2)")
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=START_TIMEOUT_S,
        help=f"seconds from spawn to a server's first 200 before it counts as failed (default {START_TIMEOUT_S:g})",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if message := missing_fast("bench_start"):  # the bare baseline runs on uvloop + httptools
        print(message, file=sys.stderr)
        return 2
    try:
        runs = _measure(args)
    except RuntimeError as exc:  # a server that did not start: its output's tail, and a hint
        print(f"bench_start: {exc}", file=sys.stderr)
        return 1
    return _report(args, runs)


def _measure(args: argparse.Namespace) -> dict[str, list[dict[str, float]]]:
    """Each server's runs: one untimed, then ``--repeat`` timed ones, interleaved."""
    with tempfile.TemporaryDirectory(prefix="mockoss-bench-start-") as tmpdir:
        tmp = Path(tmpdir)
        mock = mockoss_argv("serve", "--scenario", "clean-answer", "--port", "0", "--log-level", "warning")
        # The baseline answers every request with a small JSON body (the cold start is what counts),
        # and a streamed request with a short stream of several chunks: Starlette loads anyio's
        # stream machinery (~1.2 MB) on its first streamed reply, which mockoss pays too.
        spec = {
            "probe": ("application/json", [b'{"object":"chat.completion"}']),
            "stream": ("text/event-stream", [b'data: {"object":"chat.completion.chunk"}\n\n', b"data: [DONE]\n\n"]),
            "": ("application/json", [b"{}"]),
        }
        (tmp / "baseline.pickle").write_bytes(pickle.dumps(spec))
        (tmp / "floor.pickle").write_bytes(pickle.dumps({**spec, LOAD_HARMONY: True}))
        bench_http = str(Path(__file__).with_name("bench_http.py"))
        base = [sys.executable, "-P", bench_http, "--serve-baseline", str(tmp / "baseline.pickle")]
        floor = [sys.executable, "-P", bench_http, "--serve-baseline", str(tmp / "floor.pickle")]
        servers = {"mockoss": mock, "baseline": base, "floor": floor}
        runs: dict[str, list[dict[str, float]]] = {label: [] for label in servers}
        timeout = args.start_timeout
        for label, command in servers.items():  # untimed: byte-compiled files and the page cache warm for all
            one_run(command, tmp, 0, 0, name=label, timeout=timeout)
        for _ in range(args.repeat):  # interleaved, so that all see the same machine
            for label, command in servers.items():
                runs[label].append(one_run(command, tmp, args.requests, args.idle, name=label, timeout=timeout))
    return runs


def _report(args: argparse.Namespace, runs: dict[str, list[dict[str, float]]]) -> int:
    results: dict[str, Any] = {
        label: {key: statistics.median(r[key] for r in rows) for key in ("cold_s", "cold_cpu_s", "rss_mb")}
        for label, rows in runs.items()
    }
    ratio = results["mockoss"]["cold_s"] / results["baseline"]["cold_s"]
    cpu_ratio = results["mockoss"]["cold_cpu_s"] / results["baseline"]["cold_cpu_s"]
    rss = results["mockoss"]["rss_mb"]
    floor = results["floor"]
    report = {
        "results": results,
        "cold_ratio": ratio,
        "cold_cpu_ratio": cpu_ratio,
        "cold_met": ratio <= COLD_TARGET,
        "rss_met": rss <= RSS_TARGET_MB,
        # What openai-harmony alone costs a server (the bare app plus the library's loaded
        # encoding), and mockoss against that floor.
        "floor_cold_ratio": floor["cold_s"] / results["baseline"]["cold_s"],
        "floor_cold_cpu_ratio": floor["cold_cpu_s"] / results["baseline"]["cold_cpu_s"],
        "cold_over_floor": results["mockoss"]["cold_s"] / floor["cold_s"],
        "rss_over_floor_mb": rss - floor["rss_mb"],
        "byte_compiled": byte_compiled(),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for label, r in results.items():
        print(
            f"{label:<9} spawn to first 200: {r['cold_s'] * 1e3:7.0f} ms ({r['cold_cpu_s'] * 1e3:5.0f} ms CPU)   RSS after {args.requests} requests and {args.idle:g} s idle: {r['rss_mb']:6.1f} MB"
        )
    print(
        f"cold start {ratio:.2f}x bare Starlette, {cpu_ratio:.2f}x in CPU time (target <= {COLD_TARGET:g}x: {'met' if report['cold_met'] else 'NOT met'})"
    )
    print(
        f"mockoss ran from byte-compiled modules: {'yes' if report['byte_compiled'] else 'NO (its start includes compiling them)'}"
    )
    print(f"idle RSS {rss:.1f} MB (target <= {RSS_TARGET_MB:g} MB: {'met' if report['rss_met'] else 'NOT met'})")
    print(
        f"library floor (bare Starlette + openai-harmony's loaded o200k_harmony encoding): cold start "
        f"{report['floor_cold_ratio']:.2f}x bare ({report['floor_cold_cpu_ratio']:.2f}x CPU), {floor['rss_mb']:.1f} MB; "
        f"mockoss {report['cold_over_floor']:.2f}x the floor's cold start, {report['rss_over_floor_mb']:+.1f} MB over its RSS"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
