#!/usr/bin/env python3
"""HTTP cost of ``mockoss serve`` against a bare Starlette app serving the same bytes, on real traffic.

Starts, on free 127.0.0.1 ports, ``mockoss serve`` on ``clean-answer`` and on generated scenarios
whose final answer is 2,000 and 10,000 tokens long, and a baseline: a Starlette app on uvicorn
(uvloop + httptools) answering every case with the bytes captured from mockoss at start, streams
written in the same groups of frames. Each server is a single-worker subprocess of the installed
package (``benchlib.mockoss_argv``). A closed loop of ``--connections`` keep-alive connections
loads each server for ``--seconds`` after ``--warmup``, in ``--rounds`` rounds that alternate
mockoss and the baseline (so a machine whose speed drifts during the run weighs on both alike);
the cases:

* ``chat unique`` / ``responses unique``: every request a new conversation turn (a body never sent
  before), as agents send: nothing can be served from a whole-body cache;
* ``chat repeated``: one body sent again and again;
* ``stream 2k`` / ``stream 10k``: streamed chat answers of 2,000 and 10,000 tokens;
* ``stream 1/send``: the 2,000-token stream written one SSE frame per send, the path paced
  streams take (``X-Mockoss-Transport: frames_per_write=1``); the baseline writes one frame per
  send too;
* with ``--profiles vllm,trtllm,…`` (``all``: every profile), per profile, the 10,000-token answer
  as a streamed chat (``P chat/s 10k``), and where the profile serves Responses, streamed and not
  (``P responses/s 10k``, ``P responses 10k``), every request the same: what a long answer costs
  each profile once its first request is past (served as ``openai/gpt-oss-20b``).

Per case it prints req/s (events/s for streams), p50/p99 latency, and the server's CPU time per
request (per event for streams), each with the ratio mockoss/baseline. The issue 9 targets are
checked on CPU per request, which is throughput per core and does not depend on what else runs
on the machine; the req/s ratio is printed beside it, and each target with the range of its
per-round ratios.

    python benchmarks/bench_http.py [--seconds 5] [--rounds 5] [--connections 32] [--quick] [--json]
        [--profiles P1,P2|all] [--only-profiles] [--profile-connections 2]
"""

from __future__ import annotations

import argparse
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
from benchfail import missing_fast
from benchlib import (
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


def profile_cases(names: str) -> list[tuple[str, str, str, Any, bytes, dict[str, str], bool]]:
    """``--profiles``: per profile (a comma list, or ``all``), its 10,000-token answer as a
    streamed chat, and as Responses streamed and not where the profile serves Responses; the
    mockoss server of each is keyed ``long10000@PROFILE``.

    Raises:
        SystemExit: an unknown profile name.
    """
    from mockoss.profiles.registry import PROFILES

    wanted = sorted(PROFILES) if names == "all" else [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in PROFILES]
    if unknown:
        raise SystemExit(f"bench_http: unknown profile(s) {', '.join(unknown)}; known: {', '.join(sorted(PROFILES))}")
    cases: list[tuple[str, str, str, Any, bytes, dict[str, str], bool]] = []
    for name in wanted:
        key = f"long10000@{name}"
        if "chat" in PROFILES[name].endpoints:
            cases.append((f"{name} chat/s 10k", key, CHAT, None, request_body("chat", stream=True), {}, True))
        if "responses" in PROFILES[name].endpoints:
            cases.append((f"{name} responses/s 10k", key, RESPONSES, None, request_body("responses", stream=True), {}, True))
            cases.append((f"{name} responses 10k", key, RESPONSES, None, request_body("responses"), {}, False))
    return cases


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


class _Load:
    """One server loaded with one case: checks its answer at once, then runs rounds on demand."""

    def __init__(self, args: argparse.Namespace, server: Server, case: tuple[Any, ...], tmp: Path) -> None:
        name, self.key, path, unique, body, headers, stream = case  # unique: an endpoint name or a function n -> body
        self.args, self.server, self.tmp, self.path, self.unique, self.body = args, server, tmp, path, unique, body
        self.headers = {**headers, CASE_HEADER: name}
        status, _, sample = server.post(path, body, self.headers)
        if status != 200:
            raise RuntimeError(f"{server.name} answered {name} with {status}: {sample[:200]!r}")
        self.sample, self.stream = sample, stream
        self.per_response = sample.count(b"\n\n") if stream else 0
        self.offset = 0

    def run(self, seconds: float) -> dict[str, Any]:
        args, host = self.args, f"{self.server.host}:{self.server.port}"
        # A profile's long answer (--profiles) runs on few connections: at 32, a profile taking
        # 0.1-1 s per answer finishes none in a short round, and CPU per request means nothing.
        connections = min(args.connections, args.profile_connections) if "@" in self.key else args.connections
        if args.generator == "wrk" and self.unique is None:
            return wrk_load(f"http://{host}{self.path}", self.body, self.headers, self.per_response, seconds, connections, args.threads, self.tmp)
        if self.unique is None:
            requests: Any = build_request(self.path, host, self.body, self.headers)
        else:  # a new conversation for every request, never one sent before (warm-up included)
            unique, offset, path, headers = self.unique, self.offset, self.path, self.headers
            make = unique if callable(unique) else lambda n: unique_body(unique, n)
            requests = lambda n: build_request(path, host, make(offset + n), headers)
        result = python_load(self.server.host, self.server.port, requests, seconds, connections)
        self.offset += 10_000_000
        return result

    def measured(self, seconds: float) -> dict[str, Any]:
        """One measured round: the load's result plus the server's and this process's CPU seconds."""
        client_cpu = lambda: sum(os.times()[:4])  # this process + waited-for children (wrk)
        cpu0, client0, wall0 = self.server.cpu_seconds(), client_cpu(), time.perf_counter()
        result = self.run(seconds)
        return result | {"cpu": self.server.cpu_seconds() - cpu0, "client_cpu": client_cpu() - client0, "wall": time.perf_counter() - wall0}


def measure_interleaved(args: argparse.Namespace, runs: list[tuple[str, Server, tuple[Any, ...]]], tmp: Path) -> dict[str, dict[str, Any]]:
    """Load each ``(label, server, case)`` of ``runs`` for ``--seconds`` in all, in ``--rounds``
    rounds that take the runs in turn (forwards, then backwards, and so on), after one
    ``--warmup`` each; so a machine that speeds up or slows down during the measurement weighs
    on every run alike, and the ratios compare like with like. Per label: the totals over the
    rounds (CPU per request from summed CPU and requests), the median of the rounds' p50 and
    p99 latencies, and ``rounds_cpu_us``: each round's CPU per request (per event for streams),
    for the spread of the ratios."""
    loads = [(label, _Load(args, server, case, tmp)) for label, server, case in runs]
    if args.warmup > 0:
        for _, load in loads:
            load.run(args.warmup)
    rounds = max(1, args.rounds)
    per_round = args.seconds / rounds
    done: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in loads}
    for r in range(rounds):
        for label, load in loads if r % 2 == 0 else loads[::-1]:
            done[label].append(load.measured(per_round))
    results = {}
    for label, load in loads:
        parts = done[label]
        total = {key: sum(p[key] for p in parts) for key in ("requests", "frames", "errors", "seconds", "cpu", "client_cpu", "wall")}
        per = "frames" if load.stream else "requests"
        results[label] = {
            "requests": total["requests"],
            "frames": total["frames"],
            "errors": total["errors"],
            "seconds": total["seconds"],
            "p50_ms": _median([p["p50_ms"] for p in parts]),
            "p99_ms": _median([p["p99_ms"] for p in parts]),
            "response_bytes": len(load.sample),
            "events_per_response": load.per_response,
            "rps": total["requests"] / total["seconds"],
            "events_per_s": total["frames"] / total["seconds"],
            "cpu_us_per_request": 1e6 * total["cpu"] / max(1, total["requests"]),
            "cpu_us_per_event": 1e6 * total["cpu"] / max(1, total["frames"]) if load.stream else float("nan"),
            "server_cpu_pct": 100 * total["cpu"] / total["wall"],
            "client_cpu_pct": 100 * total["client_cpu"] / total["wall"],
            "rounds_cpu_us": [1e6 * p["cpu"] / max(1, p[per]) for p in parts],
        }
    return results


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue 9 targets with the values measured in this run."""
    rows = []
    for name, kind, bound in TARGETS:
        if name not in results:
            continue
        m, b = results[name]["mockoss"], results[name]["baseline"]
        pairs = list(zip(m.get("rounds_cpu_us", []), b.get("rounds_cpu_us", [])))
        if kind == "efficiency":
            value = b["cpu_us_per_request"] / m["cpu_us_per_request"]
            spread = [bb / mm for mm, bb in pairs if mm]
            row = {"case": name, "what": "x bare Starlette (CPU per request)", "value": value, "bound": f">= {bound}", "met": value >= bound}
        else:
            value = m["cpu_us_per_event"] / b["cpu_us_per_event"]
            spread = [mm / bb for mm, bb in pairs if bb]
            row = {"case": name, "what": "x bare CPU per event", "value": value, "bound": f"<= {bound}", "met": value <= bound}
        rows.append(row | {"rounds": spread})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time per run (default 5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured warm-up per run (default 1)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds the measured time is split into, mockoss and baseline in turn (default 5)")
    parser.add_argument("--connections", type=int, default=32, help="keep-alive connections (default 32)")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1: 2 cores, 1 for the server)")
    parser.add_argument("--generator", choices=("auto", "wrk", "python"), default="auto", help="auto: wrk if on PATH (fixed bodies only)")
    parser.add_argument("--quick", action="store_true", help=f"1 s runs, cases {', '.join(QUICK)}")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--profiles", metavar="P1,P2", default="", help="also each profile's 10,000-token answer: chat stream, Responses stream and not ('all': every profile)")
    parser.add_argument("--only-profiles", action="store_true", help="with --profiles: only those cases")
    parser.add_argument("--profile-connections", type=int, default=2, help="connections for the --profiles cases (default 2)")
    parser.add_argument("--serve-baseline", metavar="SPEC", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_baseline:
        serve_baseline(args.serve_baseline)
        return 0
    if (missing := missing_fast("bench_http")) is not None:
        print(missing, file=sys.stderr)
        return 2
    if args.quick:
        args.seconds, args.warmup, args.rounds = min(args.seconds, 1.0), min(args.warmup, 0.3), min(args.rounds, 2)
    if args.generator == "auto":
        args.generator = "wrk" if shutil.which("wrk") else "python"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the finally below runs
    try:
        from mockoss.server.transport import FRAMES_PER_WRITE as per_write  # how mockoss groups frames per send
    except ImportError:
        per_write = 64
    wanted = [c for c in CASES if (not args.quick or c[0] in QUICK) and not args.only_profiles]
    if args.profiles:
        wanted += profile_cases(args.profiles)

    servers: list[Server] = []
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="mockoss-bench-") as tmpdir:
        tmp = Path(tmpdir)
        try:
            mock = {}
            for key in sorted({c[1] for c in wanted}):
                scenario, profile = "clean-answer", []
                length, _, name = key.partition("@")
                if name:  # --profiles: the profile's server, answering to the requests' model name
                    profile = ["--profile", name, "--served-model-name", MODEL]
                if length.startswith("long"):
                    (tmp / f"{length}.yaml").write_text(long_scenario(int(length.removeprefix("long"))))
                    scenario = str(tmp / f"{length}.yaml")
                argv_ = mockoss_argv("serve", "--scenario", scenario, *profile, "--port", "0", "--log-level", "warning")
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
                results[case[0]] = measure_interleaved(args, [("mockoss", mock[case[1]], case), ("baseline", baseline, case)], tmp)
        finally:
            for server in servers:
                server.stop()

    generator = f"wrk -t{args.threads} (fixed bodies)" if args.generator == "wrk" else "python asyncio raw-socket client"
    report = {"generator": generator, "seconds": args.seconds, "rounds": args.rounds, "connections": args.connections}
    report |= {"results": results, "targets": targets(results), "notes": notes, "reference": REFERENCE}
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


def table(report: dict[str, Any]) -> str:
    """metric / mockoss / baseline / ratio, then sizes, CPU shares, errors, the targets."""
    out = [
        (
            f"load generator: {report['generator']}, {report['connections']} connections, {report['seconds']:g} s per server "
            f"and case in {report['rounds']} rounds (mockoss and baseline in turn)"
        )
    ]
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
        spread = f"; rounds {min(row['rounds']):.2f}-{max(row['rounds']):.2f}" if len(row["rounds"]) > 1 else ""
        out.append(f"target {row['case']}: {row['value']:.2f}{row['what']} (target {row['bound']}: {verdict}{spread})")
    out += [f"note: {note}" for note in report["notes"]] + [report["reference"]]
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
