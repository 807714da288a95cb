#!/usr/bin/env python3
"""Pacing accuracy of a paced stream, alone and while the same server answers other requests.

Starts ``mockoss serve`` (one worker, a free 127.0.0.1 port) on a generated scenario whose chat
stream is exactly ``--tokens`` frames (one frame stands for one token), then measures:

1. the paced stream alone (``X-Mockoss-Transport: ttft_ms=300,tokens_per_s=50``): time to its
   first frame and to the end of its body, against ``ttft + tokens / tokens_per_s`` (4.3 s);
2. the same stream while ``--connections`` keep-alive connections send non-streamed chat requests
   (the same scenario, no transport header: answered at once) in a closed loop for as long as it
   lasts, with their req/s and p50/p99 latency; and, for comparison, that load alone for 2 s.

Prints expected vs measured and the ratio; exits 1 when a ratio is outside ``1 ± --tolerance``.
Loopback only, about 12 s, the server is stopped at the end or on interrupt.

    python benchmarks/bench_pacing.py [--tokens 200] [--ttft-ms 300] [--tokens-per-s 50] [--connections 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_http as bench  # the HTTP parser and request bodies
import benchlib  # the server runner and load generator

MODEL = bench.MODEL
PATH = "/v1/chat/completions"


def scenario_with_frames(frames: int) -> str:
    """A scenario (JSON) whose streamed chat completion is exactly ``frames`` SSE frames."""
    from mockoss.scenario.loader import scenario_from_data
    from mockoss.server.core import MockServer

    body = bench.request_body("chat", stream=True)
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "owls", "watch"]
    count = frames
    for _ in range(10):
        text = " ".join(words[i % len(words)] for i in range(count))
        data = {"version": 1, "steps": [{"completion": {"messages": [{"channel": "final", "content": text}]}}]}
        got = len(MockServer(scenario=scenario_from_data(data, name="pacing")).handle("chat", body, {}).frames)
        if got == frames:
            return json.dumps({**data, "description": f"benchmark: a {frames}-frame chat stream"})
        count += frames - got
    raise RuntimeError(f"could not build a {frames}-frame stream")


def raw_request(host: str, body: bytes, headers: dict[str, str]) -> bytes:
    """One keep-alive ``POST`` of ``body`` to the chat path with extra headers, as bytes."""
    extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    head = (
        f"POST {PATH} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body


async def paced_stream(host: str, port: int, request: bytes) -> dict[str, Any]:
    """Send one streamed request; time its first SSE frame and the end of its body (seconds)."""
    reader, writer = await asyncio.open_connection(host, port)
    parser, first = bench.ResponseParser(), None
    try:
        started = time.perf_counter()
        writer.write(request)
        while True:
            data = await asyncio.wait_for(reader.read(65536), timeout=60)
            now = time.perf_counter() - started
            if not data:
                raise RuntimeError("the server closed the paced stream early")
            if first is None and b"data:" in data:
                first = now
            for status, length, frames in parser.feed(data):
                return {"status": status, "bytes": length, "frames": frames, "first_s": first, "end_s": now}
    finally:
        writer.close()


async def run(args: argparse.Namespace, host: str, port: int) -> dict[str, Any]:
    expected = args.ttft_ms / 1000 + args.tokens / args.tokens_per_s
    transport = f"ttft_ms={args.ttft_ms:g},tokens_per_s={args.tokens_per_s:g}"
    stream = raw_request(f"{host}:{port}", bench.request_body("chat", stream=True), {"X-Mockoss-Transport": transport})
    load = raw_request(f"{host}:{port}", bench.request_body("chat"), {})  # same scenario, no transport: at once
    for _ in range(20):  # warm-up: both scenarios loaded, code paths hot
        await benchlib._python_load(host, port, load, 0.05, 1)
    alone = await paced_stream(host, port, stream)
    both = await asyncio.gather(
        paced_stream(host, port, stream), benchlib._python_load(host, port, load, expected, args.connections)
    )
    load_alone = await benchlib._python_load(host, port, load, 2.0, args.connections)
    return {
        "expected_s": expected,
        "transport": transport,
        "alone": alone,
        "loaded": both[0],
        "load": both[1],
        "load_alone": load_alone,
    }


def report(args: argparse.Namespace, result: dict[str, Any]) -> tuple[str, bool]:
    expected = result["expected_s"]
    last = args.ttft_ms / 1000 + (args.tokens - 1) / args.tokens_per_s
    out = [
        f"paced stream: {args.tokens} frames, X-Mockoss-Transport: {result['transport']}; loopback, one mockoss serve worker",
        f"expected (ttft + tokens / tokens_per_s): {expected:.3f} s (last frame scheduled at {last:.3f} s)",
    ]
    ok = True
    for label, key in (("alone", "alone"), ("under load", "loaded")):
        measured = result[key]
        ratio = measured["end_s"] / expected
        ok &= abs(ratio - 1) <= args.tolerance and measured["status"] == 200 and measured["frames"] == args.tokens
        out.append(
            f"paced stream {label:<10}: first frame {measured['first_s']:.3f} s (expected {args.ttft_ms / 1000:.3f}), "
            f"end {measured['end_s']:.3f} s, measured/expected {ratio:.4f}; {measured['frames']} frames, status {measured['status']}"
        )
    for label, key in (("during the stream", "load"), ("alone (2 s)", "load_alone")):
        load = result[key]
        out.append(
            f"non-streamed load {label:<17}: {args.connections} connections, {load['requests']} requests, "
            f"{load['requests'] / load['seconds']:.0f} req/s, p50 {load['p50_ms']:.2f} ms, p99 {load['p99_ms']:.2f} ms, "
            f"errors {load['errors']}"
        )
    out.append(f"result: {'PASS' if ok else 'FAIL'} (each end within {args.tolerance:.0%} of {expected:.3f} s)")
    return "\n".join(out), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=200, help="frames in the paced stream (default 200)")
    parser.add_argument("--ttft-ms", type=float, default=300.0, help="time to first token, ms (default 300)")
    parser.add_argument("--tokens-per-s", type=float, default=50.0, help="pacing, frames per second (default 50)")
    parser.add_argument("--connections", type=int, default=8, help="keep-alive connections of the load (default 8)")
    parser.add_argument("--tolerance", type=float, default=0.05, help="allowed |ratio - 1| (default 0.05)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the finally below runs
    with tempfile.TemporaryDirectory(prefix="mockoss-pacing-") as tmp:
        scenario = Path(tmp) / "paced.yaml"
        scenario.write_text(scenario_with_frames(args.tokens))
        argv_serve = [sys.executable, "-m", "mockoss", "serve", "--scenario", str(scenario), "--port", "0"]
        server = benchlib.Server("mockoss", [*argv_serve, "--log-level", "warning"])
        try:
            try:
                from uvloop import new_event_loop as factory
            except ImportError:
                factory = None
            with asyncio.Runner(loop_factory=factory) as runner:
                result = runner.run(run(args, server.host, server.port))
        finally:
            server.stop()
    text, ok = report(args, result)
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
