#!/usr/bin/env python3
"""HTTP cost of ``mockoss serve`` against a bare Starlette app serving the same bytes, on real traffic.

Starts, on free 127.0.0.1 ports, ``mockoss serve`` on ``clean-answer`` and on generated scenarios
whose final answer is 2,000 and 10,000 tokens long, and a baseline: a Starlette app on uvicorn
(uvloop + httptools) answering every case with the bytes captured from mockoss at start, streams
written in the same groups of frames. Each server is a single-worker subprocess of the installed
package (``benchlib.mockoss_argv``). A closed loop of ``--connections`` keep-alive connections
loads each server for ``--seconds`` after ``--warmup``; the cases:

* ``chat unique`` / ``responses unique``: every request a new conversation turn (a body never sent
  before), as agents send: nothing can be served from a whole-body cache;
* ``chat repeated``: one body sent again and again;
* ``stream 2k`` / ``stream 10k``: streamed chat answers of 2,000 and 10,000 tokens;
* ``stream 1/send``: the 2,000-token stream written one SSE frame per send, the path paced
  streams take (``X-Mockoss-Transport: frames_per_write=1``); the baseline writes one frame per
  send too.

Per case it prints req/s (events/s for streams), p50/p99 latency, and the server's CPU time per
request (per event for streams), each with the ratio mockoss/baseline. The issue 9 targets are
checked on CPU per request, which is throughput per core and does not depend on what else runs
on the machine; the req/s ratio is printed beside it.

    python benchmarks/bench_http.py [--seconds 5] [--connections 32] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pickle
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import (  # noqa: E402
    CASE_HEADER,
    ResponseParser,
    Server,
    build_request,
    mockoss_argv,
    python_load,
    serve_baseline,
    split_sse,
    wrk_load,
)

__all__ = ["STREAM_MARK", "ResponseParser", "build_request", "long_scenario", "request_body", "split_sse", "unique_body"]

MODEL = "openai/gpt-oss-20b"
PROMPT = "What is 2 + 2?"
STREAM_MARK = b'"stream":true'  # compact JSON of a stream request
ONE_FRAME_PER_SEND = {"X-Mockoss-Transport": "frames_per_write=1"}
#: Issue 9 targets, as (case, kind, bound): CPU-per-request efficiency baseline/mockoss >= bound,
#: or CPU per event mockoss/baseline <= bound.
TARGETS = (
    ("chat unique", "efficiency", 0.45),
    ("chat repeated", "efficiency", 0.55),
    ("stream 1/send", "cpu_per_event", 1.10),
)
REFERENCE = (
    "issue 9 figures before this work (context, measured then): chat unique 0.13x and repeated 0.44x bare "
    "Starlette; the best peer mock (Node) 0.53x and 0.49x; one-frame-per-send streams 1.33x bare CPU per event"
)


# -- request bodies (tests/test_benchmark_script.py) --------------------------------------------


def request_body(endpoint: str, stream: bool = False) -> bytes:
    """Compact JSON body of a ``chat`` or ``responses`` request."""
    body: dict[str, Any] = {"model": MODEL}
    if endpoint == "chat":
        body["messages"] = [{"role": "user", "content": PROMPT}]
    else:
        body["input"] = PROMPT
    if stream:
        body["stream"] = True
    return json.dumps(body, separators=(",", ":")).encode()


def unique_body(endpoint: str, n: int) -> bytes:
    """Request ``n`` of a stream of distinct short conversations: an earlier exchange, then a new
    user turn (different text for every ``n``)."""
    turns = [
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": "2 + 2 = 4."},
        {"role": "user", "content": f"And what is {n} + {n % 97}? Show the steps, request {n}."},
    ]
    if endpoint == "chat":
        body: dict[str, Any] = {"model": MODEL, "messages": turns}
    else:
        body = {"model": MODEL, "input": [{"type": "message", **t} for t in turns]}
    return json.dumps(body, separators=(",", ":")).encode()


def long_scenario(tokens: int) -> str:
    """A scenario (JSON, hence YAML) whose final answer is about ``tokens`` tokens."""
    words = "the quick brown fox jumps over a lazy dog while seven wise owls watch quietly".split()
    text = " ".join(words[i % len(words)] for i in range(tokens))
    messages = [{"channel": "analysis", "content": "Write a long answer."}, {"channel": "final", "content": text}]
    return json.dumps({"version": 1, "description": "benchmark: long answer", "steps": [{"completion": {"messages": messages}}]})


# -- the run -----------------------------------------------------------------------------------

CHAT, RESPONSES = "/v1/chat/completions", "/v1/responses"
#: name, mockoss server, path, endpoint whose unique bodies are sent (None: the fixed body), fixed body, headers, stream
CASES: tuple[tuple[str, str, str, Any, bytes, dict[str, str], bool], ...] = (
    ("chat unique", "clean", CHAT, "chat", unique_body("chat", 0), {}, False),
    ("chat repeated", "clean", CHAT, None, request_body("chat"), {}, False),
    ("responses unique", "clean", RESPONSES, "responses", unique_body("responses", 0), {}, False),
    ("stream 2k", "long2000", CHAT, None, request_body("chat", stream=True), {}, True),
    ("stream 10k", "long10000", CHAT, None, request_body("chat", stream=True), {}, True),
    ("stream 1/send", "long2000", CHAT, None, request_body("chat", stream=True), ONE_FRAME_PER_SEND, True),
)
QUICK = ("chat unique", "chat repeated", "stream 1/send")


def capture(mock: dict[str, Server], cases: list[tuple[Any, ...]], per_write: int) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[str]]:
    """Ask mockoss once per case: the baseline's spec, the cases mockoss can serve, skip notes."""
    spec: dict[str, tuple[str, list[bytes]]] = {}
    served, notes = [], []
    for case in cases:
        name, key, path, _, body, headers, stream = case
        status, media, payload = mock[key].post(path, body, headers)
        if status != 200:
            notes.append(f"{name}: skipped, mockoss answered {status}: {payload[:160]!r}")
            continue
        if stream:
            frames = split_sse(payload)
            group = 1 if headers is ONE_FRAME_PER_SEND else per_write
            spec[name] = (media, [b"".join(frames[i : i + group]) for i in range(0, len(frames), group)])
        else:
            spec[name] = (media, [payload])
        served.append(case)
    return spec, served, notes


def measure(args: argparse.Namespace, server: Server, case: tuple[Any, ...], tmp: Path) -> dict[str, Any]:
    """Check one server on one case, warm it up, then load it for ``--seconds``."""
    name, _, path, unique, body, headers, stream = case  # unique: an endpoint name or a function n -> body
    headers = {**headers, CASE_HEADER: name}
    status, _, sample = server.post(path, body, headers)
    if status != 200:
        raise RuntimeError(f"{server.name} answered {name} with {status}: {sample[:200]!r}")
    per_response = sample.count(b"\n\n") if stream else 0
    host = f"{server.host}:{server.port}"
    offset = [0]

    def run(seconds: float) -> dict[str, Any]:
        if args.generator == "wrk" and unique is None:
            return wrk_load(f"http://{host}{path}", body, headers, per_response, seconds, args.connections, args.threads, tmp)
        if unique is None:
            requests: Any = build_request(path, host, body, headers)
        else:  # a new conversation for every request, never one sent before (warm-up included)
            make = unique if callable(unique) else lambda n: unique_body(unique, n)
            requests = lambda n: build_request(path, host, make(offset[0] + n), headers)  # noqa: E731
        result = python_load(server.host, server.port, requests, seconds, args.connections)
        offset[0] += 10_000_000
        return result

    if args.warmup > 0:
        run(args.warmup)
    client_cpu = lambda: sum(os.times()[:4])  # noqa: E731 - this process + waited-for children (wrk)
    cpu0, client0, wall0 = server.cpu_seconds(), client_cpu(), time.perf_counter()
    result = run(args.seconds)
    wall = time.perf_counter() - wall0
    cpu = server.cpu_seconds() - cpu0
    return result | {
        "response_bytes": len(sample),
        "events_per_response": per_response,
        "rps": result["requests"] / result["seconds"],
        "events_per_s": result["frames"] / result["seconds"],
        "cpu_us_per_request": 1e6 * cpu / max(1, result["requests"]),
        "cpu_us_per_event": 1e6 * cpu / max(1, result["frames"]) if stream else float("nan"),
        "server_cpu_pct": 100 * cpu / wall,
        "client_cpu_pct": 100 * (client_cpu() - client0) / wall,
    }


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue 9 targets with the values measured in this run."""
    rows = []
    for name, kind, bound in TARGETS:
        if name not in results:
            continue
        m, b = results[name]["mockoss"], results[name]["baseline"]
        if kind == "efficiency":
            value = b["cpu_us_per_request"] / m["cpu_us_per_request"]
            rows.append({"case": name, "what": "x bare Starlette (CPU per request)", "value": value, "bound": f">= {bound}", "met": value >= bound})
        else:
            value = m["cpu_us_per_event"] / b["cpu_us_per_event"]
            rows.append({"case": name, "what": "x bare CPU per event", "value": value, "bound": f"<= {bound}", "met": value <= bound})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time per run (default 5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured warm-up per run (default 1)")
    parser.add_argument("--connections", type=int, default=32, help="keep-alive connections (default 32)")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1: 2 cores, 1 for the server)")
    parser.add_argument("--generator", choices=("auto", "wrk", "python"), default="auto", help="auto: wrk if on PATH (fixed bodies only)")
    parser.add_argument("--quick", action="store_true", help=f"1 s runs, cases {', '.join(QUICK)}")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--serve-baseline", metavar="SPEC", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_baseline:
        serve_baseline(args.serve_baseline)
        return 0
    missing = [m for m in ("uvloop", "httptools") if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"bench_http: {', '.join(missing)} not installed; both servers must run on uvloop + httptools "
            "for a fair comparison: pip install 'mockoss[fast]'",
            file=sys.stderr,
        )
        return 2
    if args.quick:
        args.seconds, args.warmup = min(args.seconds, 1.0), min(args.warmup, 0.3)
    if args.generator == "auto":
        args.generator = "wrk" if shutil.which("wrk") else "python"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the finally below runs
    try:
        from mockoss.server.transport import FRAMES_PER_WRITE as per_write  # how mockoss groups frames per send
    except ImportError:
        per_write = 64
    wanted = [c for c in CASES if not args.quick or c[0] in QUICK]

    servers: list[Server] = []
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="mockoss-bench-") as tmpdir:
        tmp = Path(tmpdir)
        try:
            mock = {}
            for key in sorted({c[1] for c in wanted}):
                scenario = "clean-answer"
                if key.startswith("long"):
                    (tmp / f"{key}.yaml").write_text(long_scenario(int(key.removeprefix("long"))))
                    scenario = str(tmp / f"{key}.yaml")
                argv_ = mockoss_argv("serve", "--scenario", scenario, "--port", "0", "--log-level", "warning")
                mock[key] = Server(f"mockoss ({key})", argv_, cwd=tmp)
                servers.append(mock[key])
            spec, cases, notes = capture(mock, wanted, per_write)
            if not cases:
                print("\n".join(notes), file=sys.stderr)
                return 1
            (tmp / "baseline.pickle").write_bytes(pickle.dumps(spec))
            baseline = Server("baseline", [sys.executable, "-P", __file__, "--serve-baseline", str(tmp / "baseline.pickle")], cwd=tmp)
            servers.append(baseline)
            for case in cases:
                results[case[0]] = {label: measure(args, server, case, tmp) for label, server in (("mockoss", mock[case[1]]), ("baseline", baseline))}
        finally:
            for server in servers:
                server.stop()

    generator = f"wrk -t{args.threads} (fixed bodies)" if args.generator == "wrk" else "python asyncio raw-socket client"
    report = {"generator": generator, "seconds": args.seconds, "connections": args.connections}
    report |= {"results": results, "targets": targets(results), "notes": notes, "reference": REFERENCE}
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


def table(report: dict[str, Any]) -> str:
    """metric / mockoss / baseline / ratio, then sizes, CPU shares, errors, the targets."""
    out = [f"load generator: {report['generator']}, {report['connections']} connections, {report['seconds']:g} s per run"]
    out.append(f"{'metric':<34}{'mockoss':>12}{'baseline':>12}{'ratio':>9}")
    for name, result in report["results"].items():
        m, b = result["mockoss"], result["baseline"]
        rows = [("req/s", "rps", "%.0f"), ("p50 ms", "p50_ms", "%.2f"), ("p99 ms", "p99_ms", "%.2f"), ("CPU us/request", "cpu_us_per_request", "%.0f")]
        if m["events_per_response"]:
            rows[1:1] = [("events/s", "events_per_s", "%.0f")]
            rows.append(("CPU us/event", "cpu_us_per_event", "%.2f"))
        for label, key, fmt in rows:
            ratio = m[key] / b[key] if b[key] else float("nan")
            out.append(f"{name + ' ' + label:<34}{fmt % m[key]:>12}{fmt % b[key]:>12}{ratio:>9.3f}")
    for name, result in report["results"].items():
        m, b = result["mockoss"], result["baseline"]
        events = f", {m['events_per_response']}/{b['events_per_response']} events" if m["events_per_response"] else ""
        out.append(
            f"{name}: {m['response_bytes']}/{b['response_bytes']} B{events} per response (mockoss/baseline); "
            f"CPU % of a core, server+generator: mockoss {m['server_cpu_pct']:.0f}+{m['client_cpu_pct']:.0f}, "
            f"baseline {b['server_cpu_pct']:.0f}+{b['client_cpu_pct']:.0f}; errors {m['errors']}/{b['errors']}"
        )
    for row in report["targets"]:
        verdict = "met" if row["met"] else "NOT met"
        out.append(f"target {row['case']}: {row['value']:.2f}{row['what']} (target {row['bound']}: {verdict})")
    out += [f"note: {note}" for note in report["notes"]] + [report["reference"]]
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
