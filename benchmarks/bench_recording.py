"""Recording durability and cost: `mockoss serve --record` under kill -9, SIGTERM and load.

Three measurements, each against `mockoss serve` subprocesses on free 127.0.0.1 ports:

1. ``kill -9``: ``--tries`` (20) runs; each sends ``--per-try`` (3) unique requests one after the
   other (streamed and not, alternately) and sends SIGKILL the moment the last response is read
   (0 ms). Lost = exchanges the client holds minus steps in the file; the file must load as a
   scenario.
2. SIGTERM: ``--streams`` (250) paced streams in flight (every one has its headers), then SIGTERM.
   Lost = complete streams the clients hold minus steps in the file; the process must exit.
3. Cost: a closed loop of ``--connections`` (1 and 8) clients, each sending unique non-streamed and
   streamed requests for ``--seconds``, against the same server without and with ``--record``;
   prints req/s and p50/p99 latency and the ratio recording/not recording (the baseline measured
   in the same run), plus the recorder's write latency from ``/mockoss/metrics`` when present.

Exit status 1 when any exchange is lost or a recording does not load. Run:
``python benchmarks/bench_recording.py`` (~60 s) or ``--quick``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

SCENARIO = {
    "version": 1,
    "description": "Recording benchmark: one long-ish answer, repeated.",
    "when_exhausted": "repeat_last",
    "steps": [
        {
            "completion": {
                "messages": [
                    {"channel": "analysis", "content": "The user asks something; answer at length."},
                    {"channel": "final", "content": " ".join(f"word{i}" for i in range(120))},
                ]
            }
        }
    ],
}


def start(tmp: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """``mockoss serve --port 0 ARGS`` → (process, base URL without ``/v1``)."""
    scenario = tmp / "bench-recording.yaml"
    if not scenario.exists():
        scenario.write_text(json.dumps(SCENARIO))
    command = [sys.executable, "-m", "mockoss.cli", "serve", "--port", "0", "--scenario", str(scenario), *args]
    errors = tmp / "serve-stderr.txt"
    with errors.open("w") as err:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("base URL: "):
            # Keep draining: a full pipe would block the server, a closed one would kill it.
            threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
            return proc, line.split("base URL: ", 1)[1].strip().removesuffix("/v1")
    proc.wait(5)
    proc.stdout.close()
    raise RuntimeError(f"mockoss serve did not start: {errors.read_text()}")


def _drain(stream: Any) -> None:
    for _ in stream:
        pass
    stream.close()


def body(n: int, stream: bool) -> dict[str, Any]:
    """A unique chat request (its prompt names ``n``)."""
    return {"model": "openai/gpt-oss-20b", "stream": stream, "messages": [{"role": "user", "content": f"Question number {n}: why?"}]}


def steps_in(path: Path) -> int:
    """Steps of a recording, loaded as a scenario (raises if it does not load)."""
    from mockoss.scenario.loader import load_scenario

    if not path.exists():
        return 0
    return sum(len(rule.steps) for rule in load_scenario(str(path)).rules)


def kill9(tmp: Path, tries: int, per_try: int) -> dict[str, Any]:
    """SIGKILL at 0 ms after the last response of each try; exchanges held vs recorded."""
    held = recorded = 0
    for attempt in range(tries):
        directory = tmp / f"kill9-{attempt}"
        proc, url = start(tmp, "--record", str(directory), "--record-name", "rec")
        try:
            with httpx.Client(timeout=30) as client:
                for n in range(per_try):
                    stream = (attempt + n) % 2 == 1
                    response = client.post(url + "/v1/chat/completions", json=body(attempt * 100 + n, stream))
                    response.read()
                    if response.status_code == 200:
                        held += 1
            proc.send_signal(signal.SIGKILL)  # the moment the last byte is read
        finally:
            proc.kill()
            proc.wait()
        recorded += steps_in(directory / "rec.yaml")
    return {"tries": tries, "held": held, "recorded": recorded, "lost": held - recorded}


async def _streams(url: str, count: int, started: asyncio.Event) -> list[bool]:
    limits = httpx.Limits(max_connections=count + 10)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        ready = 0

        async def one(n: int) -> bool:
            nonlocal ready
            headers = {"x-mockoss-transport": "ttft_ms=0,tokens_per_s=100"}
            try:
                async with client.stream("POST", url + "/v1/chat/completions", json=body(n, True), headers=headers) as response:
                    ready += 1
                    if ready == count:
                        started.set()
                    data = b"".join([chunk async for chunk in response.aiter_raw()])
                return response.status_code == 200 and data.endswith(b"data: [DONE]\n\n")
            except httpx.HTTPError:
                return False

        return await asyncio.gather(*(one(n) for n in range(count)))


def sigterm(tmp: Path, count: int, sig: int = signal.SIGTERM) -> dict[str, Any]:
    """``count`` paced streams in flight, then ``sig`` (SIGTERM or SIGINT); complete streams held vs recorded."""
    directory = tmp / f"signal-{int(sig)}"
    proc, url = start(tmp, "--record", str(directory), "--record-name", "rec")

    async def run() -> list[bool]:
        started = asyncio.Event()
        task = asyncio.create_task(_streams(url, count, started))
        await asyncio.wait_for(started.wait(), 60)
        proc.send_signal(sig)
        return await task

    try:
        complete = asyncio.run(run())
        code = proc.wait(60)
    finally:
        proc.kill()
        proc.wait()
    held = sum(complete)
    recorded = steps_in(directory / "rec.yaml")
    return {"streams": count, "held": held, "recorded": recorded, "lost": held - recorded, "exit": code}


async def _load(url: str, connections: int, seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=connections)) as client:

        async def worker(w: int) -> None:
            nonlocal errors
            n = 0
            while time.perf_counter() < deadline:
                n += 1
                began = time.perf_counter()
                response = await client.post(url + "/v1/chat/completions", json=body(w * 1_000_000 + n, n % 2 == 0))
                if response.status_code != 200:
                    errors += 1
                latencies.append(time.perf_counter() - began)

        await asyncio.gather(*(worker(w) for w in range(connections)))
    latencies.sort()
    count = len(latencies)
    return {
        "requests": count,
        "rps": count / seconds,
        "p50_ms": latencies[count // 2] * 1000 if count else None,
        "p99_ms": latencies[min(count - 1, int(count * 0.99))] * 1000 if count else None,
        "errors": errors,
    }


def cost(tmp: Path, seconds: float, connections: list[int]) -> list[dict[str, Any]]:
    """req/s and latency without and with ``--record``, per connection count."""
    rows = []
    for conns in connections:
        row: dict[str, Any] = {"connections": conns}
        for label, extra in (("plain", ()), ("record", ("--record", str(tmp / f"cost-{conns}"), "--record-name", "rec"))):
            proc, url = start(tmp, *extra)
            try:
                asyncio.run(_load(url, conns, min(1.0, seconds)))  # warm-up
                row[label] = asyncio.run(_load(url, conns, seconds))
                if label == "record":
                    metrics = httpx.get(url + "/mockoss/metrics", timeout=10)
                    if metrics.status_code == 200:
                        row["recorder"] = {
                            line.split()[0]: float(line.split()[1])
                            for line in metrics.text.splitlines()
                            if line.startswith("mockoss_recorder_") and not line.startswith("#")
                        }
            finally:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(30)
                finally:
                    proc.kill()
                    proc.wait()
        if label == "record":
            row["recorded"] = steps_in(tmp / f"cost-{conns}" / "rec.yaml")
        row["ratio_rps"] = row["record"]["rps"] / row["plain"]["rps"]
        row["added_p50_ms"] = row["record"]["p50_ms"] - row["plain"]["p50_ms"]
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=20, help="kill -9 runs (default 20)")
    parser.add_argument("--per-try", type=int, default=3, help="requests per kill -9 run (default 3)")
    parser.add_argument("--streams", type=int, default=250, help="streams in flight at SIGTERM (default 250)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per cost run (default 5)")
    parser.add_argument("--quick", action="store_true", help="3 tries, 25 streams, 2 s runs")
    parser.add_argument("--skip", choices=("kill9", "sigterm", "cost"), action="append", default=[])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.tries, args.streams, args.seconds = 3, 25, 2.0
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mockoss-bench-rec-") as name:
        tmp = Path(name)
        if "kill9" not in args.skip:
            report["kill9"] = kill9(tmp, args.tries, args.per_try)
        if "sigterm" not in args.skip:
            report["sigterm"] = sigterm(tmp, args.streams)
        if "cost" not in args.skip:
            report["cost"] = cost(tmp, args.seconds, [1, 8])
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        if "kill9" in report:
            k = report["kill9"]
            print(f"kill -9 at 0 ms: {k['tries']} tries, {k['held']} exchanges held by clients, {k['recorded']} recorded, lost {k['lost']}")
        if "sigterm" in report:
            t = report["sigterm"]
            print(f"SIGTERM: {t['streams']} streams in flight, {t['held']} complete, {t['recorded']} recorded, lost {t['lost']}, exit {t['exit']}")
        for row in report.get("cost", []):
            plain, rec = row["plain"], row["record"]
            print(
                f"cost, {row['connections']} connection(s): plain {plain['rps']:.0f} req/s p50 {plain['p50_ms']:.1f} ms p99 {plain['p99_ms']:.1f} ms | "
                f"record {rec['rps']:.0f} req/s p50 {rec['p50_ms']:.1f} ms p99 {rec['p99_ms']:.1f} ms | "
                f"ratio {row['ratio_rps']:.2f}, +{row['added_p50_ms']:.1f} ms p50, {row['recorded']} steps written"
                + (f" | recorder {row['recorder']}" if row.get("recorder") else "")
            )
    lost = report.get("kill9", {}).get("lost", 0) + report.get("sigterm", {}).get("lost", 0)
    return 1 if lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
