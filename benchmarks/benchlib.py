"""Shared pieces of the HTTP benchmarks: raw HTTP/1.1 requests and responses, the closed-loop load
generators, server subprocesses, and the bare Starlette baseline that replays captured bytes.

Servers run as subprocesses started with ``python -P -m …`` from a temporary directory, so the
installed package is what runs. ``python -m mockoss`` run from the repository root imports the
checkout's ``mockoss`` (the current directory comes first on ``sys.path``) instead of the
installed one; after a plain (non-editable) install that fails with ``No module named
'mockoss.scenarios'``: the checkout has no such directory, the build maps the top-level
``scenarios/`` into the package (``pyproject.toml``, ``package-dir``).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from benchfail import failure_report, missing_fast

#: Header that tells the baseline which captured reply to send (mockoss ignores it).
CASE_HEADER = "X-Bench-Case"


# -- requests and responses (tests/test_benchmark_script.py) -----------------------------------


def build_request(path: str, host: str, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    """One keep-alive HTTP/1.1 ``POST`` with a JSON body (and extra ``headers``), as raw bytes."""
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
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


# -- the closed-loop load generator --------------------------------------------------------------

#: A fixed request, or a function of a global request counter giving each request's bytes.
Requests = bytes | Callable[[int], bytes]


class _Connection(asyncio.Protocol):
    """One closed-loop keep-alive connection: send, read the whole response, send again."""

    def __init__(self, requests: Requests, stats: dict[str, Any]) -> None:
        self.requests, self.stats, self.parser, self.sent = requests, stats, ResponseParser(), 0.0

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def send(self) -> None:
        requests = self.requests
        if callable(requests):
            self.stats["sent"] += 1
            payload = requests(self.stats["sent"])
        else:
            payload = requests
        self.sent = time.perf_counter()
        self.transport.write(payload)

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


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of sorted ``values`` (nan when empty)."""
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


async def _python_load(host: str, port: int, requests: Requests, seconds: float, connections: int) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    stats: dict[str, Any] = {"requests": 0, "frames": 0, "errors": 0, "latencies": [], "stopped": False, "sent": 0}
    conns = [
        (await loop.create_connection(lambda: _Connection(requests, stats), host, port))[1] for _ in range(connections)
    ]
    for conn in conns:
        conn.send()
    await asyncio.sleep(seconds)
    stats["stopped"] = True  # responses still in flight are dropped, as wrk does
    for conn in conns:
        conn.transport.close()
    latencies = sorted(stats.pop("latencies"))
    return {k: stats[k] for k in ("requests", "frames", "errors")} | {
        "seconds": seconds,
        "p50_ms": percentile(latencies, 0.5) * 1e3,
        "p99_ms": percentile(latencies, 0.99) * 1e3,
    }


def python_load(host: str, port: int, requests: Requests, seconds: float, connections: int) -> dict[str, Any]:
    """Run the asyncio raw-socket client (on uvloop when installed) in this process."""
    try:
        from uvloop import new_event_loop as factory
    except ImportError:
        factory = None
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(_python_load(host, port, requests, seconds, connections))


WRK_SCRIPT = """\
local f = assert(io.open(%s, "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
%s
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nBENCH {"requests":%%d,"duration_us":%%d,"errors":%%d,"p50_us":%%.0f,"p99_us":%%.0f}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


def wrk_load(
    url: str,
    body: bytes,
    headers: dict[str, str],
    per_response: int,
    seconds: float,
    connections: int,
    threads: int,
    tmp: Path,
) -> dict[str, Any]:
    """Run ``wrk`` (fixed bodies only) and read the JSON line its ``done()`` hook prints.

    wrk gets no Lua ``response()`` hook: one makes it buffer every body and become the bottleneck
    on streams. SSE events are therefore successful responses x ``per_response``, the frames of a
    sampled response of the same server (bodies are deterministic).
    """
    (tmp / "wrk-body.json").write_bytes(body)
    extra = "\n".join(f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items())
    (tmp / "wrk.lua").write_text(WRK_SCRIPT % (json.dumps(str(tmp / "wrk-body.json")), extra))
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "30s"]
    out = subprocess.run(
        [*argv, "-s", str(tmp / "wrk.lua"), url], capture_output=True, text=True, timeout=seconds + 60, check=True
    )
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
    """Subprocess entry: bare Starlette on uvicorn (uvloop + httptools, no access log) replaying
    captured replies. Spec: case name → (media type, [chunk, …]); the ``X-Bench-Case`` header picks
    the case; a reply of one chunk is a plain response, more are streamed chunk by chunk. Every
    request body is read in full, as mockoss reads it. A spec holding :data:`LOAD_HARMONY` (true)
    first imports openai-harmony and loads its o200k_harmony encoding, as every server that counts
    or renders gpt-oss tokens with the library does before its first answer (``bench_start.py``'s
    "library floor"). Without the ``fast`` extra it exits with status 2 and :func:`missing_fast`'s
    message before it binds."""
    import socket

    if message := missing_fast("bench_http --serve-baseline"):
        print(message, file=sys.stderr, flush=True)
        raise SystemExit(2)

    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    spec = pickle.loads(Path(spec_path).read_bytes())
    encoding = None
    if spec.pop(LOAD_HARMONY, False):
        from openai_harmony import HarmonyEncodingName, load_harmony_encoding

        encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)  # held while serving

    async def handle(request: Any) -> Response:
        await request.body()
        media, chunks = spec[request.headers.get(CASE_HEADER, "")]
        if len(chunks) == 1:
            return Response(chunks[0], media_type=media)

        async def stream() -> Any:
            for chunk in chunks:
                yield chunk

        return StreamingResponse(stream(), media_type=media)

    async def ready(request: Any) -> Response:
        return Response(b'{"ok":true}', media_type="application/json")

    app = Starlette(routes=[Route("/ready", ready, methods=["GET"]), Route("/{path:path}", handle, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    print(f"base URL: http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, loop="uvloop", http="httptools", access_log=False, log_level="warning", lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
    del encoding


#: Spec key: the baseline loads openai-harmony's encoding before serving (:func:`serve_baseline`).
LOAD_HARMONY = "__load_harmony__"


def mockoss_argv(*args: str) -> list[str]:
    """``python -P -m mockoss ARGS``: the installed mockoss, never a checkout in the current directory."""
    return [sys.executable, "-P", "-m", "mockoss", *args]


class Server:
    """A server subprocess; it prints ``base URL: http://HOST:PORT[/v1]`` once it has bound.

    ``started`` and ``ready_s`` (spawn to that line) are kept for cold-start measurements; its
    output (stdout and stderr) is kept in ``output``, line by line.

    Raises:
        RuntimeError: the server exited, or printed no base URL within ``timeout`` seconds; the
            message is :func:`failure_report`'s (the output's tail, the ``fast`` extra's hint).
    """

    def __init__(
        self,
        name: str,
        argv: list[str],
        cwd: str | Path | None = None,
        timeout: float = 60.0,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name, self.output, self._ready = name, [], threading.Event()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env
        )
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        if not self._ready.wait(timeout):
            self.fail(f"printed no base URL within {timeout:g} s")
        if self.proc.poll() is not None or not any(line.startswith("base URL: ") for line in self.output):
            self.fail("exited before it started")
        self.ready_s = time.perf_counter() - self.started
        url = next(line for line in self.output if line.startswith("base URL: ")).split()[2]
        self.host, port = url.removeprefix("http://").split("/")[0].rsplit(":", 1)
        self.port = int(port)

    def _drain(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.output.append(line)
            if line.startswith("base URL: "):
                self._ready.set()
        self._ready.set()

    def fail(self, what: str) -> NoReturn:
        """Stop the server and raise :class:`RuntimeError` with :func:`failure_report`'s message."""
        self.stop()  # its output up to the end of the pipe is read by then
        raise RuntimeError(failure_report(self.name, what, self.output, self.proc.returncode))

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        """Resident memory of the server process (MiB)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def post(self, path: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
        """One request with the standard library client: (status, content type, decoded body)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            conn.request("POST", path, body, {"Content-Type": "application/json", **(headers or {})})
            response = conn.getresponse()
            return response.status, response.getheader("content-type", ""), response.read()
        finally:
            conn.close()

    def stop(self) -> None:
        """Terminate the server (kill it after 5 s), read the rest of its output, close the pipe."""
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._drainer.join(2)
        if not self._drainer.is_alive():  # else a child of the server still holds the pipe open
            self.proc.stdout.close()  # type: ignore[union-attr]
