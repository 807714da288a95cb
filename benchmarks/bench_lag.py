#!/usr/bin/env python3
"""Event-loop lag under mixed load: how late a small request is answered while the server is busy.

Starts ``mockoss serve`` on one scenario whose rules answer a request asking for a long answer
with 10,000 tokens and any other with a short answer, and the bare Starlette baseline (same reply
bytes). For each
server, a probe sends one small chat request every ``--interval`` ms on its own connection,
first alone, then while ``--connections`` connections load the server with a mix: new short
conversations, agent turns of 50 messages and 20 tools (48 seen before), 10 KB new user messages
and 10,000-token streams. Printed per server: the probe's p50/p99/max latency alone and under
load, and the lag (under load minus alone). The baseline shows what the HTTP stack alone costs
under the same load; the difference is mockoss's own delay.

    python benchmarks/bench_lag.py [--seconds 5] [--connections 8] [--interval 20] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import CHAT, MODEL, capture, long_scenario, request_body
from bench_prompt import TOOLS, agent, short, user
from benchlib import CASE_HEADER, Server, _Connection, build_request, mockoss_argv, percentile

LONG_ASK = "Write a long answer."


def mixed_scenario(tokens: int) -> str:
    """One scenario for the whole mix: a ``tokens``-token answer when the last user message asks
    for a long answer, else the short canonical answer."""
    long_steps = json.loads(long_scenario(tokens))["steps"]
    short_answer = [{"channel": "analysis", "content": "User asks: simple."}, {"channel": "final", "content": "2 + 2 = 4."}]
    rules = [
        {"name": "long", "match": {"last_user": "^Write a long"}, "steps": long_steps},
        {"name": "short", "steps": [{"completion": {"messages": short_answer}}]},
    ]
    return json.dumps({"version": 1, "description": "benchmark: mixed load", "rules": rules})


def long_stream_body() -> bytes:
    body = {"model": MODEL, "messages": [{"role": "user", "content": LONG_ASK}], "stream": True}
    return json.dumps(body, separators=(",", ":")).encode()


def mix() -> list[tuple[Any, ...]]:
    """The background cases: (name, path, body function, headers, stream)."""
    return [
        ("short", "clean", CHAT, short, short(0), {}, False),
        ("agent", "clean", CHAT, agent(48, TOOLS), agent(48, TOOLS)(0), {}, False),
        ("user 10k", "clean", CHAT, user(10_000), user(10_000)(0), {}, False),
        ("stream 10k", "clean", CHAT, None, long_stream_body(), {}, True),
    ]


async def _probe(server: Server, seconds: float, interval: float) -> list[float]:
    reader, writer = await asyncio.open_connection(server.host, server.port)
    request = build_request(CHAT, f"{server.host}:{server.port}", request_body("chat"), {CASE_HEADER: "probe"})
    from benchlib import ResponseParser

    parser, latencies = ResponseParser(), []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        writer.write(request)
        done: list[Any] = []
        while not done:
            done = parser.feed(await reader.read(65536))
        latencies.append((time.perf_counter() - started) * 1e3)
        await asyncio.sleep(max(0.0, interval / 1e3 - (time.perf_counter() - started)))
    writer.close()
    return sorted(latencies)


async def _run(server: Server, seconds: float, interval: float, connections: int, loaded: bool) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    stats: dict[str, Any] = {"requests": 0, "frames": 0, "errors": 0, "latencies": [], "stopped": False, "sent": 0}
    transports = []
    if loaded:
        host = f"{server.host}:{server.port}"
        cases = mix()
        for i in range(connections):
            name, _, path, make, body, headers, _ = cases[i % len(cases)]
            headers = {**headers, CASE_HEADER: name}
            if make is None:
                requests: Any = build_request(path, host, body, headers)
            else:
                requests = lambda n, make=make, path=path, headers=headers, i=i: build_request(path, host, make(i * 10_000_000 + n), headers)
            transport, conn = await loop.create_connection(lambda r=requests: _Connection(r, stats), server.host, server.port)
            transports.append(transport)
            conn.send()
        await asyncio.sleep(0.5)
    latencies = await _probe(server, seconds, interval)
    stats["stopped"] = True
    for transport in transports:
        transport.close()
    return {
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
        "max_ms": latencies[-1] if latencies else float("nan"),
        "probes": len(latencies),
        "background_requests": stats["requests"],
        "background_errors": stats["errors"],
    }


def run(server: Server, args: argparse.Namespace, loaded: bool) -> dict[str, float]:
    try:
        from uvloop import new_event_loop as factory
    except ImportError:
        factory = None
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(_run(server, args.seconds, args.interval, args.connections, loaded))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="probe time per run (default 5)")
    parser.add_argument("--connections", type=int, default=8, help="background connections (default 8)")
    parser.add_argument("--interval", type=float, default=20.0, help="ms between probes (default 20)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mockoss-bench-lag-") as tmpdir:
        tmp = Path(tmpdir)
        (tmp / "mixed.yaml").write_text(mixed_scenario(10_000))
        servers: list[Server] = []
        try:
            argv_ = mockoss_argv("serve", "--scenario", str(tmp / "mixed.yaml"), "--port", "0", "--log-level", "warning")
            mock = Server("mockoss", argv_, cwd=tmp)
            servers.append(mock)
            cases = [*mix(), ("probe", "clean", CHAT, None, request_body("chat"), {}, False)]
            spec, served, notes = capture({"clean": mock}, cases, 64)
            if len(served) != len(cases):
                print("\n".join(notes), file=sys.stderr)
                return 1
            (tmp / "baseline.pickle").write_bytes(pickle.dumps(spec))
            bench_http = str(Path(__file__).with_name("bench_http.py"))
            baseline = Server("baseline", [sys.executable, "-P", bench_http, "--serve-baseline", str(tmp / "baseline.pickle")], cwd=tmp)
            servers.append(baseline)
            for label, server in (("mockoss", mock), ("baseline", baseline)):
                alone, loaded = run(server, args, False), run(server, args, True)
                results[label] = {"alone": alone, "loaded": loaded, "lag_p50_ms": loaded["p50_ms"] - alone["p50_ms"], "lag_p99_ms": loaded["p99_ms"] - alone["p99_ms"]}
        finally:
            for server in servers:
                server.stop()
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"probe: one small chat request every {args.interval:g} ms; load: {args.connections} connections of short, agent, 10 KB and 10k-token stream requests")
    print(f"{'server':<10}{'alone p50/p99/max ms':>24}{'loaded p50/p99/max ms':>26}{'lag p50/p99 ms':>18}{'load req/s':>12}")
    for label, r in results.items():
        a, lo = r["alone"], r["loaded"]
        print(
            f"{label:<10}{a['p50_ms']:>8.2f}{a['p99_ms']:>8.2f}{a['max_ms']:>8.1f}{lo['p50_ms']:>9.2f}{lo['p99_ms']:>9.2f}{lo['max_ms']:>8.1f}"
            f"{r['lag_p50_ms']:>9.2f}{r['lag_p99_ms']:>9.2f}{lo['background_requests'] / args.seconds:>12.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
