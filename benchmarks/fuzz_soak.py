"""The ``soak`` part of ``bench_fuzz.py``: many keep-alive clients, then simultaneous streams.

Against one ``mockoss serve``: ``--clients`` clients mixing chat and Responses, streamed and not,
for ``--soak-seconds`` (errors and requests/s), then ``--streams`` streams opened at once, each
compared byte for byte with the same request answered alone.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import ResponseParser, Server, build_request, mockoss_argv
from fuzz_checks import KEEP, frames_of, sse_problem
from fuzz_http import server_tracebacks

SOAK_SCENARIO = """\
version: 1
steps:
  - completion:
      messages:
        - {channel: analysis, content: "The user asks about the weather. Answer briefly, with the temperature and the wind."}
        - {channel: final, content: "It is sunny in Paris today: 22 °C, a light breeze from the west. 🌤️ 晴れ, 雨は降らない。"}
"""


class BodyParser(ResponseParser):
    """:class:`benchlib.ResponseParser` that hands back each response's status, content type and body."""

    def _start(self, head: bytes) -> None:
        super()._start(head)
        self._type = next(
            (
                line.partition(b":")[2].strip().decode()
                for line in head.split(b"\r\n")[1:]
                if line.lower().startswith(b"content-type:")
            ),
            "",
        )

    def _finish(self) -> tuple[int, str, bytes]:  # type: ignore[override]
        body = b"".join(self._parts)
        self._parts, self._state = [], "head"
        return self._status, self._type, body


def soak_request(n: int, host: str, extra: dict[str, str] | None = None) -> tuple[str, bytes]:
    """Request ``n`` of the soak: chat or Responses, streamed or not (``n % 4``), a new conversation."""
    kind, stream = ("chat", "responses")[n % 2], n % 4 >= 2
    text = f"Request {n}: what is the weather in city number {n * 7919 % 100003}?"
    if kind == "chat":
        body = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": text}], "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True}
        path = "/v1/chat/completions"
    else:
        body = {"model": "openai/gpt-oss-20b", "input": text, "stream": stream}
        path = "/v1/responses"
    return path, build_request(path, host, json.dumps(body, separators=(",", ":")).encode(), extra)


def soak_problem(status: int, content_type: str, body: bytes, path: str, full: bool) -> str | None:
    """Why a soak answer is an error: not 200, or a broken stream (terminator, or every frame when ``full``)."""
    if status != 200:
        return f"HTTP {status}: {body[:200]!r}"
    if content_type.startswith("text/event-stream"):
        if not full:
            want = b"data: [DONE]\n\n" if "chat" in path else b"event: response.completed\n"
            return (
                None
                if (body.endswith(want) if "chat" in path else want in body[-4096:])
                else f"stream cut: {body[-120:]!r}"
            )
        return sse_problem(frames_of(content_type, body), "responses" in path, False)
    try:
        json.loads(body)
    except ValueError as exc:
        return f"body not JSON ({exc})"
    return None


class _SoakClient(asyncio.Protocol):
    def __init__(self, shared: dict[str, Any], host: str) -> None:
        self.shared, self.host, self.parser, self.path = shared, host, BodyParser(), ""

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.send()

    def send(self) -> None:
        shared = self.shared
        shared["sent"] += 1
        self.path, raw = soak_request(shared["sent"], self.host)
        self.transport.write(raw)

    def data_received(self, data: bytes) -> None:
        shared = self.shared
        for status, content_type, body in self.parser.feed(data):
            if shared["stopped"]:
                return
            shared["requests"] += 1
            problem = soak_problem(status, content_type, body, self.path, shared["requests"] % 25 == 0)
            if problem:
                shared["errors"] += 1
                shared["samples"].append(problem) if len(shared["samples"]) < KEEP else None
            self.send()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.shared["stopped"]:
            self.shared["errors"] += 1
            self.shared["samples"].append(f"connection lost: {exc!r}")


async def _soak(host: str, port: int, clients: int, seconds: float) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    shared: dict[str, Any] = {"sent": 0, "requests": 0, "errors": 0, "stopped": False, "samples": []}
    conns = []
    for _ in range(clients):
        try:
            conns.append((await loop.create_connection(lambda: _SoakClient(shared, f"{host}:{port}"), host, port))[0])
        except OSError as exc:
            shared["errors"] += 1
            shared["samples"].append(f"connect: {exc!r}")
    start = time.perf_counter()
    await asyncio.sleep(seconds)
    shared["stopped"] = True
    elapsed = time.perf_counter() - start
    for transport in conns:
        transport.close()
    return {
        "requests": shared["requests"],
        "errors": shared["errors"],
        "seconds": elapsed,
        "requests_per_s": shared["requests"] / elapsed,
        "samples": shared["samples"],
    }


async def _exchange(host: str, port: int, raw: bytes, timeout: float) -> tuple[int, str, bytes]:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(raw)
        parser = BodyParser()
        while True:
            data = await asyncio.wait_for(reader.read(65536), timeout)
            if not data:
                raise ConnectionError("closed before the response ended")
            done = parser.feed(data)
            if done:
                return done[0]
    finally:
        writer.close()


async def _streams(host: str, port: int, count: int, timeout: float) -> dict[str, Any]:
    """``count`` streams at once, then each alone (its session reset first), compared byte for byte."""
    requests = []
    for k in range(count):
        path, raw = soak_request(4 * k + 2 + (k % 2), f"{host}:{port}", {"X-Mockoss-Test-Id": f"fuzz-stream-{k}"})
        requests.append((path, raw))
    start = time.perf_counter()
    together = await asyncio.gather(
        *(_exchange(host, port, raw, timeout) for _, raw in requests), return_exceptions=True
    )
    took = time.perf_counter() - start
    problems: list[str] = []
    frames = 0
    for k, ((path, raw), got) in enumerate(zip(requests, together, strict=True)):
        if isinstance(got, BaseException):
            problems.append(f"stream {k}: {got!r}")
            continue
        status, content_type, body = got
        frames += len(frames_of(content_type, body))
        problem = soak_problem(status, content_type, body, path, True)
        if problem is None:
            reset = f"POST /mockoss/reset?test_id=fuzz-stream-{k} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: 0\r\n\r\n"
            await _exchange(host, port, reset.encode(), timeout)
            alone = await _exchange(host, port, raw, timeout)
            if alone[2] != body:
                problem = f"differs from the same request alone ({len(body)} vs {len(alone[2])} bytes)"
        if problem:
            problems.append(f"stream {k}: {problem}")
    return {
        "streams": count,
        "bad": len(problems),
        "seconds_together": took,
        "frames": frames,
        "samples": problems[:KEEP],
    }


def part_soak(seed: int, seconds: float, clients: int, streams: int, timeout: float) -> dict[str, Any]:
    """The ``soak`` part: ``clients`` clients for ``seconds`` s (0: no soak), then ``streams`` streams
    at once (0: none), against one ``mockoss serve --seed seed``. Returns ``cases``, ``crashes``
    (errors, bad streams and server tracebacks), ``clients``, ``soak``, ``streams``, ``server_tracebacks``."""
    with tempfile.TemporaryDirectory() as tmp:
        scenario = Path(tmp, "soak.yaml")
        scenario.write_text(SOAK_SCENARIO, encoding="utf-8")
        server = Server(
            "soak", mockoss_argv("serve", "--port", "0", "--scenario", str(scenario), "--seed", str(seed)), cwd=tmp
        )
        try:
            cpu = server.cpu_seconds()
            soak = asyncio.run(_soak(server.host, server.port, clients, seconds)) if seconds > 0 else {}
            if soak:
                soak["server_cpu_s"] = server.cpu_seconds() - cpu
            together = asyncio.run(_streams(server.host, server.port, streams, timeout)) if streams else {}
        finally:
            server.stop()
        tracebacks = server_tracebacks(server)
    crashes = soak.get("errors", 0) + together.get("bad", 0) + len(tracebacks)
    return {
        "cases": soak.get("requests", 0) + together.get("streams", 0),
        "crashes": crashes,
        "clients": clients,
        "soak": soak,
        "streams": together,
        "server_tracebacks": tracebacks[:KEEP],
    }
