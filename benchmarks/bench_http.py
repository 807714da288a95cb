#!/usr/bin/env python3
"""HTTP throughput of ``mockoss serve`` against a bare Starlette app serving the same bytes.

Starts, on free 127.0.0.1 ports, one ``mockoss serve`` per scenario (``clean-answer``, and a
generated long-answer scenario for streams) and a baseline: a Starlette app on uvicorn (uvloop +
httptools) answering with the bytes captured from mockoss at start. Each server is a single-worker
subprocess. The load generator (``wrk`` when on PATH, else a raw-socket asyncio client in this
process) keeps ``--connections`` keep-alive connections busy for ``--seconds`` per run; the
ratios mockoss/baseline are printed.

    python benchmarks/bench_http.py [--seconds 5] [--connections 32] [--generator auto|wrk|python] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import importlib.util
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

MODEL = "openai/gpt-oss-20b"
PROMPT = "What is 2 + 2?"
STREAM_MARK = b'"stream":true'  # how the baseline tells a stream request (our bodies are compact JSON)
REFERENCE = (
    "reference figures from the brief (context, not measured here): bare Starlette ~6,500 req/s; "
    "best peer mock (Node) ~4,100 req/s and ~42k stream events/s; Python peer mocks 350-550 req/s"
)


# -- requests and response parsing (tests/test_benchmark_script.py) ----------------------------


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


def build_request(path: str, host: str, body: bytes) -> bytes:
    """One keep-alive HTTP/1.1 ``POST`` with a JSON body, as raw bytes."""
    head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def split_sse(body: bytes) -> list[bytes]:
    """Split an SSE body into its frames, each with its terminating blank line."""
    frames, start = [], 0
    while (end := body.find(b"\n\n", start)) != -1:
        frames.append(body[start : end + 2])
        start = end + 2
    return frames + [body[start:]] if start < len(body) else frames


class ResponseParser:
    """Incremental parser of the HTTP/1.1 responses on one keep-alive connection.

    :meth:`feed` takes bytes as they arrive, split anywhere, and returns one ``(status,
    body_length, sse_frames)`` per response it completed. Bodies are framed by ``Content-Length``
    or chunked encoding (decoded, extensions and trailers skipped); ``sse_frames`` counts the
    ``\\n\\n`` frame ends in the decoded body.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._state = "head"  # head | body | size (chunk-size line) | data (chunk) | trailer
        self._remaining = self._status = 0
        self._parts: list[bytes] = []

    def feed(self, data: bytes) -> list[tuple[int, int, int]]:
        buf, done = self._buf, []
        buf += data
        while True:
            state = self._state
            if state in ("body", "data"):
                if not buf:
                    return done
                take = bytes(buf[: self._remaining])
                del buf[: len(take)]
                self._parts.append(take)
                self._remaining -= len(take)
                if self._remaining:
                    return done
                if state == "data":
                    self._state = "size"  # the chunk's CRLF arrives as an empty "size" line
                else:
                    done.append(self._finish())
                continue
            end = buf.find(b"\r\n\r\n" if state == "head" else b"\r\n")
            if end < 0:
                return done
            line = bytes(buf[:end])
            del buf[: end + (4 if state == "head" else 2)]
            if state == "head":
                self._start(line)
                if self._state == "body" and not self._remaining:
                    done.append(self._finish())
            elif state == "size" and line:
                size = int(line.split(b";", 1)[0], 16)
                self._state, self._remaining = ("data", size) if size else ("trailer", 0)
            elif state == "trailer" and not line:
                done.append(self._finish())

    def _start(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        self._status = int(lines[0].split(b" ", 2)[1])
        self._state, self._remaining = "body", 0
        for header in lines[1:]:
            name, _, value = header.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                self._remaining = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                self._state = "size"

    def _finish(self) -> tuple[int, int, int]:
        body = b"".join(self._parts)
        self._parts, self._state = [], "head"
        return self._status, len(body), body.count(b"\n\n")


# -- load generators ---------------------------------------------------------------------------


class _Connection(asyncio.Protocol):
    """One closed-loop keep-alive connection: send, read the whole response, send again."""

    def __init__(self, request: bytes, stats: dict[str, Any]) -> None:
        self.request, self.stats, self.parser, self.sent = request, stats, ResponseParser(), 0.0

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def send(self) -> None:
        self.sent = time.perf_counter()
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        stats = self.stats
        for status, _length, frames in self.parser.feed(data):
            if stats["stopped"]:
                return
            stats["latencies"].append(time.perf_counter() - self.sent)
            stats["requests"] += 1
            stats["frames"] += frames
            stats["errors"] += not 200 <= status < 300
            self.send()

    def connection_lost(self, exc: Exception | None) -> None:
        self.stats["errors"] += not self.stats["stopped"]


async def _python_load(host: str, port: int, request: bytes, seconds: float, connections: int) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    stats: dict[str, Any] = {"requests": 0, "frames": 0, "errors": 0, "latencies": [], "stopped": False}
    conns = [(await loop.create_connection(lambda: _Connection(request, stats), host, port))[1] for _ in range(connections)]
    for conn in conns:
        conn.send()
    await asyncio.sleep(seconds)
    stats["stopped"] = True  # responses still in flight are dropped, as wrk does
    for conn in conns:
        conn.transport.close()
    latencies = sorted(stats.pop("latencies"))
    pct = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e3 if latencies else float("nan")  # noqa: E731
    return {k: stats[k] for k in ("requests", "frames", "errors")} | {"seconds": seconds, "p50_ms": pct(0.5), "p99_ms": pct(0.99)}


def python_load(host: str, port: int, request: bytes, seconds: float, connections: int) -> dict[str, Any]:
    """Run the asyncio raw-socket client (on uvloop when installed) in this process."""
    try:
        from uvloop import new_event_loop as factory
    except ImportError:
        factory = None
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(_python_load(host, port, request, seconds, connections))


WRK_SCRIPT = """\
local f = assert(io.open(%s, "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nBENCH {"requests":%%d,"duration_us":%%d,"errors":%%d,"p50_us":%%.0f,"p99_us":%%.0f}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


def wrk_load(url: str, body: bytes, per_response: int, seconds: float, connections: int, threads: int, tmp: Path) -> dict[str, Any]:
    """Run ``wrk`` and read the JSON line its ``done()`` hook prints.

    wrk gets no Lua ``response()`` hook: one makes it buffer every body and become the bottleneck
    on streams. SSE events are therefore successful responses x ``per_response``, the frames of a
    sampled response of the same server (bodies are deterministic).
    """
    (tmp / "wrk-body.json").write_bytes(body)
    (tmp / "wrk.lua").write_text(WRK_SCRIPT % json.dumps(str(tmp / "wrk-body.json")))
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "30s"]
    out = subprocess.run([*argv, "-s", str(tmp / "wrk.lua"), url], capture_output=True, text=True, timeout=seconds + 60, check=True)
    raw = json.loads(next(line for line in reversed(out.stdout.splitlines()) if line.startswith("BENCH "))[6:])
    ok = raw["requests"] - raw["errors"]
    return {
        "requests": ok,
        "frames": ok * per_response,
        "errors": raw["errors"],
        "seconds": raw["duration_us"] / 1e6,
        "p50_ms": raw["p50_us"] / 1e3,
        "p99_ms": raw["p99_us"] / 1e3,
    }


# -- servers -----------------------------------------------------------------------------------


def serve_baseline(spec_path: str) -> None:
    """Subprocess entry: bare Starlette replaying captured bodies. Spec: path -> {"plain": (media
    type, body), "stream": (media type, [chunk, ...])}, chunks grouped as mockoss writes them."""
    import socket

    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    def endpoint(entry: dict[str, Any]) -> Any:
        async def handle(request: Any) -> Response:
            if "stream" in entry and STREAM_MARK in await request.body():
                async def chunks() -> Any:
                    for chunk in entry["stream"][1]:
                        yield chunk

                return StreamingResponse(chunks(), media_type=entry["stream"][0])
            return Response(entry["plain"][1], media_type=entry["plain"][0])

        return handle

    spec = pickle.loads(Path(spec_path).read_bytes())
    app = Starlette(routes=[Route(path, endpoint(entry), methods=["POST"]) for path, entry in spec.items()])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(f"base URL: http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, loop="uvloop", http="httptools", access_log=False, log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


class Server:
    """A server subprocess; it prints ``base URL: http://HOST:PORT[/v1]`` once it has bound."""

    def __init__(self, name: str, argv: list[str], timeout: float = 60.0) -> None:
        self.name, self.output, self._ready = name, [], threading.Event()
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._drain, daemon=True).start()
        if not self._ready.wait(timeout) or self.proc.poll() is not None:
            self.stop()
            raise RuntimeError(f"{name} did not start:\n" + "".join(self.output[-20:]))
        url = next(line for line in self.output if line.startswith("base URL: ")).split()[2]
        self.host, port = url.removeprefix("http://").split("/")[0].rsplit(":", 1)
        self.port = int(port)

    def _drain(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.output.append(line)
            if line.startswith("base URL: "):
                self._ready.set()
        self._ready.set()

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def post(self, path: str, body: bytes) -> tuple[int, str, bytes]:
        """One request with the standard library client: (status, content type, decoded body)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            conn.request("POST", path, body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            return response.status, response.getheader("content-type", ""), response.read()
        finally:
            conn.close()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def long_scenario(tokens: int) -> str:
    """A scenario (JSON, hence YAML) whose final answer is about ``tokens`` tokens."""
    words = "the quick brown fox jumps over a lazy dog while seven wise owls watch quietly".split()
    text = " ".join(words[i % len(words)] for i in range(tokens))
    messages = [{"channel": "analysis", "content": "Write a long answer."}, {"channel": "final", "content": text}]
    return json.dumps({"version": 1, "description": "benchmark: long answer", "steps": [{"completion": {"messages": messages}}]})


# -- the run -----------------------------------------------------------------------------------

CASES = (  # name, mockoss server, path, body, stream
    ("chat", "clean", "/v1/chat/completions", request_body("chat"), False),
    ("responses", "clean", "/v1/responses", request_body("responses"), False),
    ("chat stream", "long", "/v1/chat/completions", request_body("chat", stream=True), True),
)


def capture(mock: dict[str, Server]) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[str]]:
    """Ask mockoss once per case: the baseline's spec, the cases mockoss can serve, skip notes."""
    try:
        from mockoss.server.app import (
            FRAMES_PER_WRITE as per_write,  # how mockoss groups frames per send
        )
    except ImportError:
        per_write = 64
    spec: dict[str, dict[str, Any]] = {}
    cases, notes = [], []
    for name, key, path, body, stream in CASES:
        status, media, payload = mock[key].post(path, body)
        if status != 200:
            notes.append(f"{name}: skipped, mockoss answered {status}: {payload[:160]!r}")
            continue
        if stream:
            frames = split_sse(payload)
            spec.setdefault(path, {})["stream"] = (media, [b"".join(frames[i : i + per_write]) for i in range(0, len(frames), per_write)])
        else:
            spec.setdefault(path, {})["plain"] = (media, payload)
        cases.append((name, key, path, body, stream))
    return spec, cases, notes


def measure(args: argparse.Namespace, server: Server, path: str, body: bytes, stream: bool, tmp: Path) -> dict[str, Any]:
    """Check one server, warm it up, then load it for ``--seconds``; adds rates and CPU shares."""
    status, _, sample = server.post(path, body)
    if status != 200:
        raise RuntimeError(f"{server.name} answered {path} with {status}: {sample[:200]!r}")
    per_response = sample.count(b"\n\n") if stream else 0

    def run(seconds: float) -> dict[str, Any]:
        if args.generator == "wrk":
            url = f"http://{server.host}:{server.port}{path}"
            return wrk_load(url, body, per_response, seconds, args.connections, args.threads, tmp)
        request = build_request(path, f"{server.host}:{server.port}", body)
        return python_load(server.host, server.port, request, seconds, args.connections)

    if args.warmup > 0:
        run(args.warmup)
    client_cpu = lambda: sum(os.times()[:4])  # noqa: E731 - this process + waited-for children (wrk)
    cpu0, client0, wall0 = server.cpu_seconds(), client_cpu(), time.perf_counter()
    result = run(args.seconds)
    wall = time.perf_counter() - wall0
    return result | {
        "response_bytes": len(sample),
        "events_per_response": per_response,
        "rps": result["requests"] / result["seconds"],
        "events_per_s": result["frames"] / result["seconds"],
        "server_cpu_pct": 100 * (server.cpu_seconds() - cpu0) / wall,
        "client_cpu_pct": 100 * (client_cpu() - client0) / wall,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time per run (default 5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured warm-up per run (default 1)")
    parser.add_argument("--connections", type=int, default=32, help="keep-alive connections (default 32)")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (default 1: 2 cores, 1 for the server)")
    parser.add_argument("--generator", choices=("auto", "wrk", "python"), default="auto", help="auto: wrk if on PATH")
    parser.add_argument("--tokens", type=int, default=500, help="final-answer words of the stream scenario (default 500)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--serve-baseline", metavar="SPEC", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    missing = [m for m in ("uvloop", "httptools") if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"bench_http: {', '.join(missing)} not installed; both servers must run on uvloop + httptools "
            "for a fair comparison: pip install -e '.[test,fast]'",
            file=sys.stderr,
        )
        return 2
    if args.serve_baseline:
        serve_baseline(args.serve_baseline)
        return 0
    if args.generator == "auto":
        args.generator = "wrk" if shutil.which("wrk") else "python"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that the finally below runs

    servers: list[Server] = []
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="mockoss-bench-") as tmpdir:
        tmp = Path(tmpdir)
        (tmp / "long.yaml").write_text(long_scenario(args.tokens))
        try:
            mock = {}
            for key, scenario in (("clean", "clean-answer"), ("long", str(tmp / "long.yaml"))):
                serve = ["serve", "--scenario", scenario, "--port", "0", "--log-level", "warning"]
                mock[key] = Server(f"mockoss ({key})", [sys.executable, "-m", "mockoss", *serve])
                servers.append(mock[key])
            spec, cases, notes = capture(mock)
            if not cases:
                print("\n".join(notes), file=sys.stderr)
                return 1
            (tmp / "baseline.pickle").write_bytes(pickle.dumps(spec))
            servers.append(Server("baseline", [sys.executable, __file__, "--serve-baseline", str(tmp / "baseline.pickle")]))
            for name, key, path, body, stream in cases:
                results[name] = {
                    label: measure(args, server, path, body, stream, tmp)
                    for label, server in (("mockoss", mock[key]), ("baseline", servers[-1]))
                }
        finally:
            for server in servers:
                server.stop()

    generator = f"wrk -t{args.threads}" if args.generator == "wrk" else "python asyncio raw-socket client"
    report = {"generator": generator, "seconds": args.seconds, "connections": args.connections}
    report |= {"results": results, "notes": notes, "reference": REFERENCE}
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


def table(report: dict[str, Any]) -> str:
    """metric / mockoss / baseline / ratio, then sizes, CPU shares, errors and the brief's figures."""
    out = [f"load generator: {report['generator']}, {report['connections']} connections, {report['seconds']:g} s per run"]
    out.append(f"{'metric':<26}{'mockoss':>12}{'baseline':>12}{'ratio':>9}")
    for name, result in report["results"].items():
        m, b = result["mockoss"], result["baseline"]
        rows = [("req/s", "rps", "%.0f"), ("p50 ms", "p50_ms", "%.2f"), ("p99 ms", "p99_ms", "%.2f")]
        if m["events_per_response"]:
            rows.insert(1, ("events/s", "events_per_s", "%.0f"))
        for label, key, fmt in rows:
            ratio = m[key] / b[key] if b[key] else float("nan")
            out.append(f"{name + ' ' + label:<26}{fmt % m[key]:>12}{fmt % b[key]:>12}{ratio:>9.3f}")
    for name, result in report["results"].items():
        m, b = result["mockoss"], result["baseline"]
        events = f", {m['events_per_response']}/{b['events_per_response']} events" if m["events_per_response"] else ""
        out.append(
            f"{name}: {m['response_bytes']}/{b['response_bytes']} B{events} per response (mockoss/baseline); "
            f"CPU % of a core, server+generator: mockoss {m['server_cpu_pct']:.0f}+{m['client_cpu_pct']:.0f}, "
            f"baseline {b['server_cpu_pct']:.0f}+{b['client_cpu_pct']:.0f}; errors {m['errors']}/{b['errors']}"
        )
    out += [f"note: {note}" for note in report["notes"]] + [report["reference"]]
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
