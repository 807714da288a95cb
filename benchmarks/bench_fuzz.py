#!/usr/bin/env python3
"""Crashes under fuzz and soak: issue 9's "unchanged: 0 crashes" target, re-measured.

A **crash** is an answer mockoss did not script:

* an HTTP 500 whose body says ``mockoss internal error`` (:func:`mockoss.server.replies.failure_reply`,
  the answer to an exception in a request);
* an exception escaping :meth:`MockServer.respond <mockoss.server.core.MockServer.respond>`, or a
  traceback in a served process's log (Starlette's plain ``Internal Server Error`` comes with one;
  without one it is scripted: the gpt-oss reference server's answer to a Harmony error);
* a malformed reply: a JSON body that is not strict JSON (RFC 8259: no ``NaN``), an SSE frame whose
  ``data:`` is neither strict JSON nor ``[DONE]``, an NDJSON line that is not JSON, or a stream
  without its terminator (``data: [DONE]``; a Responses stream's ``response.completed``,
  ``response.incomplete``, ``response.failed`` or ``error`` event; Ollama's ``"done": true`` or
  ``error`` line) unless the profile drops the connection on purpose (``Reply.abort``, a
  server's cut stream);
* over HTTP, a dropped connection the profile does not script: the same request answered in
  process has no ``Reply.abort`` (a body over the 32 MiB limit, answered 413 while the client
  still sends, is counted as ``over-limit``);
* a hung request: over ``HUNG_S`` in process, no answer within the client timeout over HTTP.

4xx answers and scripted 5xx (a HarmonyError's 500, llama.cpp's ``peg-native`` 500, …) are
documented answers; they are counted, not flagged. So are the few replies the generic checks would
flag but a profile documents as its server's own, each checked rather than assumed:
``fuzz_checks.documented`` (mlx-lm) and :func:`ollama_cut` (Ollama's streams cut by a tool call
that does not decode).

Parts (each bounded by ``--seconds``, or ``--soak-seconds`` for the soak):

1. ``completions``: random scripted completions (Harmony messages on random channels, recipients
   including invented ones, content types, leaked ``to=functions.bash {…}`` text, emoji, CJK,
   lone surrogates; a random fault of :data:`mockoss.harmony.faults.FAULTS` with random params;
   ``raw`` text of random special tokens and pieces) played in process through every profile
   (and the oldest release of one timeline in turn) x endpoint x streamed / not, with random
   request limits, tools, ``tool_choice`` and an ``X-Mockoss-Switch`` from the profile's switches.
2. ``http``: mutated request bodies (type swaps, missing and extra fields, deep nesting, huge,
   negative, ``NaN``, ``1e400`` numbers, huge strings, lone surrogates, truncated JSON, non-UTF-8
   bytes, wrong content types, junk ``X-Mockoss-*`` headers; 1 in 25 to a ``/mockoss`` control
   route: junk scenario uploads and query parameters) against ``mockoss serve`` for several
   profiles (``python -P -m mockoss`` from a temporary directory, as ``benchlib``).
3. ``requests``: the same mutated requests answered in process by every profile in turn (no
   socket: ~100 times the requests per second; control routes and bodies over 2 MB excluded).
4. ``soak``: ``--clients`` keep-alive clients for ``--soak-seconds`` mixing chat and Responses,
   streamed and not, every body unique, against one ``mockoss serve``: errors (non-200, broken
   streams, connection errors) and requests/s; then ``--streams`` streams opened at once, each
   compared byte for byte with the same request answered alone (its own test-id session, reset
   between the two, so ids match).

Every case is derived from ``--seed`` and its index (``random.Random(f"{seed}/{part}/{i}")``), so
a run is reproducible and a crash is printed with what reproduces it.

    python benchmarks/bench_fuzz.py [--seconds 60] [--soak-seconds 60] [--clients 200]
        [--streams 1000] [--seed 0] [--parts completions,requests,http,soak] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import logging
import random
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ResponseParser, Server, build_request, mockoss_argv
from fuzz_cases import (
    HTTP_PROFILES,
    PATHS,
    QUICK_HTTP_PROFILES,
    http_case,
    random_completion,
    random_request,
    switch_header,
)
from fuzz_checks import HUNG_S, KEEP, Tally, documented, frames_of, media_type, reply_problem, sse_problem

from mockoss.server.settings import DEFAULT_MAX_BODY_BYTES

#: ``mockoss serve``'s body limit: a bigger body is answered 413 from its ``Content-Length`` and the
#: connection closed while the client still sends, which the client sees as a reset.
MAX_BODY_BYTES = DEFAULT_MAX_BODY_BYTES
#: Valid ``X-Mockoss-Transport`` values the completions part sends with 1 in 10 requests.
TRANSPORTS = [
    "ttft_ms=0",
    "tokens_per_s=1000,jitter=0.5",
    "split_special=true",
    "truncate_after_frames=-1",
    "disconnect_after_frames=2",
    "malformed_at_frame=-2",
    "frames_per_write=3",
    "stall_after_frames=1,stall_ms=0",
]
#: Address space this process may use (bytes), see main().
MEMORY_LIMIT = 8 << 30
#: Request log each in-process server keeps (bytes): the fuzz never reads it back.
LOG_BYTES = 1 << 20


# -- part 1: random completions, in process ------------------------------------------------------


def play(
    tally: Tally, server: Any, endpoint: str, raw: bytes, headers: dict[str, str], repro: dict[str, Any]
) -> tuple[Any, float] | None:
    """Answer one request in process with ``server.respond``, counted in ``tally``: ``(reply,
    seconds)``, or ``None`` when an exception escaped (counted as a crash)."""
    tally.cases += 1
    start = time.perf_counter()
    try:
        reply, _delivery = server.respond(endpoint, raw, headers)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        tally.statuses["exception"] += 1
        tally.crash(f"respond raised {type(exc).__name__}: {exc}", **repro)
        return None
    took = time.perf_counter() - start
    tally.statuses[reply.status] += 1
    if took > tally.extra.get("slowest_s", 0):
        tally.extra.update(slowest_s=round(took, 3), slowest=repro)
    return reply, took


def in_process_problem(profile: str, reply: Any, took: float, endpoint: str, request: Any) -> str | None:
    """Why a reply answered in process is a crash (:func:`fuzz_checks.reply_problem`, less what the
    profile documents), or a hang; ``None`` if it is neither."""
    problem = reply_problem(
        reply.status, media_type(reply), reply.body, list(reply.frames), endpoint, reply.abort is not None
    )
    if problem and documented(profile, problem, reply.status, reply.body, request):
        problem = None
    return f"hung: answered after {took:.1f} s" if took > HUNG_S else problem


def ollama_cut(server: Any, endpoint: str, body: dict[str, Any], headers: dict[str, str]) -> bool:
    """Whether an Ollama stream without its terminator is Ollama's own: a tool call that fails to
    decode ends the stream where the error line arrives (``error parsing tool call``; before PR
    #11861, switch ``tool_call_error=v0.11.3``, the native line ``{"error parsing tool call": …}``
    and non-streamed ``unexpected error format in response``; ``mockoss/profiles/ollama/
    openai_chat.py``, ``responses.py``, ``native.py``; ollama#11781). Checked, not assumed: the
    same request non-streamed must be that 500."""
    if not server.profile.startswith("ollama"):
        return False
    reply = server.handle(endpoint, json.dumps({**body, "stream": False}).encode(), headers)
    return reply.status == 500 and (
        b"error parsing tool call" in reply.body or b"unexpected error format in response" in reply.body
    )


def _servers() -> tuple[list[tuple[str, Any, list[dict[str, Any]]]], list[str]]:
    """One MockServer per profile (with its switch specs), and the oldest release of each timeline."""
    from mockoss.profiles.catalog import describe_profiles
    from mockoss.profiles.releases import TIMELINES
    from mockoss.server.core import MockServer

    servers = [
        (p["name"], MockServer(profile=p["name"], request_log_bytes=LOG_BYTES), p["switches"])
        for p in describe_profiles()
    ]
    releases = [f"{name}@{timeline.ordered_releases[0].name}" for name, timeline in TIMELINES.items()]
    return servers, releases


def part_completions(seed: int, seconds: float, limit: int | None) -> dict[str, Any]:
    from mockoss.scenario.loader import ScenarioError, scenario_from_data
    from mockoss.server.core import MockServer

    tally = Tally("completions")
    servers, releases = _servers()
    switches = {name: specs for name, _, specs in servers}
    refused = completions = 0
    deadline = time.monotonic() + seconds
    i = 0
    while time.monotonic() < deadline and (limit is None or i < limit):
        rng = random.Random(f"{seed}/completions/{i}")
        data = {"steps": [{"completion": random_completion(rng)}]}
        i += 1
        try:
            scenario = scenario_from_data(data, name=f"fuzz-{i}", default_version=True)
        except ScenarioError:
            refused += 1
            continue
        except BaseException as exc:  # a loader bug: the file format promises a ScenarioError
            if isinstance(exc, KeyboardInterrupt):
                raise
            tally.crash(f"scenario load raised {type(exc).__name__}: {exc}", case=i - 1, scenario=data)
            continue
        completions += 1
        release = releases[i % len(releases)]
        chosen = [
            *servers,
            (release, MockServer(profile=release, request_log_bytes=LOG_BYTES), switches[release.split("@")[0]]),
        ]
        for name, server, specs in chosen:
            server.use_scenario(scenario)
            model = server.served_model_names[0]
            for endpoint in sorted(server._base_profile.endpoints):
                for stream in (False, True):
                    body = random_request(rng, endpoint, model, stream)
                    headers = switch_header(rng, specs)
                    if rng.random() < 0.1:  # how the reply travels: a Delivery, built by respond()
                        headers["x-mockoss-transport"] = rng.choice(TRANSPORTS)
                    raw = json.dumps(body).encode()
                    repro = {
                        "case": i - 1,
                        "profile": name,
                        "endpoint": endpoint,
                        "scenario": data,
                        "body": raw.decode("utf-8", "replace")[:800],
                        "headers": headers,
                    }
                    played = play(tally, server, endpoint, raw, headers, repro)
                    if played is None:
                        continue
                    problem = in_process_problem(name, *played, endpoint, body)
                    if problem and "without" in problem and ollama_cut(server, endpoint, body, headers):
                        problem, tally.extra["ollama_cut_streams"] = None, tally.extra.get("ollama_cut_streams", 0) + 1
                    if problem:
                        tally.crash(problem, **repro)
    tally.extra.update(
        completions=completions, scenarios_refused=refused, profiles=[s[0] for s in servers], releases=releases
    )
    return tally.summary()


# -- part 2: mutated requests over HTTP ----------------------------------------------------------


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _send(
    conn: http.client.HTTPConnection, method: str, path: str, raw: bytes, headers: dict[str, str]
) -> tuple[int, str, bytes]:
    conn.putrequest(method, path, skip_accept_encoding=True)
    for name, value in headers.items():
        conn.putheader(name, value.encode("utf-8", "surrogatepass"))
    conn.putheader("Content-Length", str(len(raw)))
    conn.endheaders(raw)
    response = conn.getresponse()
    return response.status, response.getheader("content-type", ""), response.read()


def server_tracebacks(server: Server) -> list[str]:
    """The exceptions the server logged (uvicorn's ``Exception in ASGI application``, mockoss's
    ``mockoss failed to answer request``, or a bare traceback), each with the lines after it."""
    marks = ("Exception in ASGI application", "mockoss failed to answer")
    lines = server.output
    starts = [i for i, line in enumerate(lines) if any(mark in line for mark in marks)]
    if not starts:
        starts = [i for i, line in enumerate(lines) if line.startswith("Traceback")][:1]
    ends = [*starts[1:], len(lines)][: len(starts)]
    return ["".join(lines[a:b])[-3000:] for a, b in zip(starts, ends, strict=True)]


_ENDPOINT_OF = {path: endpoint for endpoint, path in PATHS.items()}


def endpoint_of(path: str) -> str | None:
    """The endpoint an http case's ``path`` names (its query, a trailing slash and the session
    prefix ``/s/fz`` aside), else ``None`` (a control route, an unknown path)."""
    return _ENDPOINT_OF.get(path.split("?")[0].rstrip("/").removeprefix("/s/fz"))


#: The scenario the served profiles of the http part answer with: two steps (a call, an answer).
HTTP_SCENARIO = "clean-tool-call"


class _HttpFuzz:
    """The clients of one served profile: each sends mutated requests on its own keep-alive
    connection until ``deadline``, counting into ``tally`` under ``lock``."""

    def __init__(
        self,
        server: Server,
        profile: str,
        endpoints: list[str],
        model: str,
        seed: int,
        tally: Tally,
        timeout: float,
        deadline: float,
    ) -> None:
        self.server, self.profile, self.endpoints, self.model, self.seed = server, profile, endpoints, model, seed
        self.tally, self.timeout, self.deadline = tally, timeout, deadline
        self.lock, self.next_case = threading.Lock(), 0

    def scripted_drop(self, path: str, raw: bytes, headers: dict[str, str]) -> bool:
        """Whether the profile drops this request's connection on purpose: the same request answered
        in process (same profile and scenario, at either of its two steps: the served session may
        be at either) is a reply with ``abort`` set (a server whose stream generator raised after
        HTTP 200, e.g. TensorRT-LLM's Responses stream on a HarmonyError), or the request asked for
        a transport fault."""
        if "x-mockoss-transport" in headers:
            return True
        endpoint = endpoint_of(path)
        if endpoint is None:
            return False
        from mockoss.server.core import MockServer

        mirror = MockServer(scenario=HTTP_SCENARIO, profile=self.profile, request_log_bytes=LOG_BYTES)
        lowered = {k.lower(): v for k, v in headers.items()}
        return any(mirror.handle(endpoint, raw, lowered).abort is not None for _ in range(2))

    def _connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.server.host, self.server.port, timeout=self.timeout)

    def run(self) -> None:
        tally, conn = self.tally, self._connect()
        while time.monotonic() < self.deadline:
            with self.lock:
                i, self.next_case = self.next_case, self.next_case + 1
            method, path, raw, headers = http_case(
                random.Random(f"{self.seed}/http/{self.profile}/{i}"), self.profile, self.endpoints, self.model
            )
            repro = {
                "case": i,
                "profile": self.profile,
                "method": method,
                "path": path,
                "headers": headers,
                "body": raw[:600].decode("utf-8", "backslashreplace"),
            }
            start = time.perf_counter()
            try:
                try:
                    status, content_type, body = _send(conn, method, path, raw, headers)
                except (ConnectionError, http.client.RemoteDisconnected):
                    # The keep-alive connection may have been closed after the previous answer (its
                    # request's doing, e.g. a transport fault): once more on a new connection.
                    conn.close()
                    conn, start = self._connect(), time.perf_counter()
                    status, content_type, body = _send(conn, method, path, raw, headers)
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                conn = self._connect()
                hung, over = isinstance(exc, TimeoutError), len(raw) > MAX_BODY_BYTES
                scripted = not hung and not over and self.scripted_drop(path, raw, headers)
                with self.lock:
                    tally.cases += 1
                    if hung:
                        tally.statuses["timeout"] += 1
                        tally.crash(f"hung: no answer within {self.timeout:.0f} s", **repro)
                    elif over:  # 413 from the Content-Length, then closed mid-body
                        tally.statuses["over-limit"] += 1
                    elif scripted:
                        tally.statuses["scripted-drop"] += 1
                    else:
                        tally.statuses["dropped"] += 1
                        tally.crash(f"dropped: {exc!r}, which the profile does not script", **repro)
                continue
            took = time.perf_counter() - start
            problem = reply_problem(
                status,
                content_type,
                body,
                frames_of(content_type, body),
                "responses" if "responses" in path else "",
                False,
            )
            if problem and not problem.startswith("500") and "x-mockoss-transport" in headers:
                problem = None  # truncate_after_frames, malformed_at_frame: broken on purpose
            if problem and documented(self.profile, problem, status, body, _json_or_none(raw)):
                problem = None
            with self.lock:
                tally.cases += 1
                tally.statuses[status] += 1
                if took > tally.extra.get("slowest_s", 0):
                    tally.extra.update(slowest_s=round(took, 3), slowest=repro)
                if problem:
                    tally.crash(problem, **repro)
                elif status >= 500:
                    tally.note(f"{status}: {body[:200]!r}", **repro)
        conn.close()


def part_requests(seed: int, seconds: float) -> dict[str, Any]:
    """The http part's mutated requests (bodies and headers), answered in process by every profile
    in turn: ~100x the requests per second, for what does not need a socket (validation, the
    headers, the answer). Control-route cases and bodies over 2 MB are left to the http part."""
    from mockoss.profiles.catalog import describe_profiles
    from mockoss.server.core import MockServer

    tally = Tally("requests")
    described = [p for p in describe_profiles() if any(e in PATHS for e in p["endpoints"])]
    servers = {
        p["name"]: MockServer(scenario=HTTP_SCENARIO, profile=p["name"], request_log_bytes=LOG_BYTES) for p in described
    }
    deadline, i = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        profile = described[i % len(described)]
        name, endpoints = profile["name"], [e for e in profile["endpoints"] if e in PATHS]
        method, path, raw, headers = http_case(
            random.Random(f"{seed}/requests/{i}"), name, endpoints, profile["default_model"]
        )
        i += 1
        endpoint = endpoint_of(path)
        if method != "POST" or endpoint is None or len(raw) > 2_000_000:
            continue
        lowered = {k.lower(): v for k, v in headers.items()}
        repro = {
            "case": i - 1,
            "profile": name,
            "endpoint": endpoint,
            "headers": headers,
            "body": raw[:600].decode("utf-8", "backslashreplace"),
        }
        played = play(tally, servers[name], endpoint, raw, lowered, repro)
        if played is None:
            continue
        problem = in_process_problem(name, *played, endpoint, _json_or_none(raw))
        if problem and "x-mockoss-transport" in lowered and not problem.startswith(("500", "hung")):
            problem = None  # the transport faults are applied over HTTP; in process the frames are whole
        if problem:
            tally.crash(problem, **repro)
    return tally.summary()


def part_http(seed: int, seconds: float, profiles: list[str], workers: int, timeout: float) -> dict[str, Any]:
    from mockoss.profiles.catalog import describe_profiles

    tally = Tally("http")
    described = {p["name"]: p for p in describe_profiles()}
    with tempfile.TemporaryDirectory() as tmp:
        for profile in profiles:
            argv = mockoss_argv("serve", "--profile", profile, "--port", "0", "--scenario", HTTP_SCENARIO)
            server = Server(profile, argv, cwd=tmp)
            endpoints = [e for e in described[profile]["endpoints"] if e in PATHS]
            fuzz = _HttpFuzz(
                server,
                profile,
                endpoints,
                described[profile]["default_model"],
                seed,
                tally,
                timeout,
                time.monotonic() + seconds / len(profiles),
            )
            threads = [threading.Thread(target=fuzz.run) for _ in range(workers)]
            try:
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
            finally:
                server.stop()
            for block in server_tracebacks(server):
                last = block.rstrip().splitlines()[-1]
                tally.crash(f"server log: {last}", profile=profile, log=block)
    tally.extra.update(profiles=profiles)
    return tally.summary()


# -- part 3: soak and simultaneous streams -------------------------------------------------------

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


# -- the run -------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="time for each fuzz part (default 60)")
    parser.add_argument("--soak-seconds", type=float, default=60.0, help="soak duration (default 60)")
    parser.add_argument("--clients", type=int, default=200, help="soak clients (default 200)")
    parser.add_argument("--streams", type=int, default=1000, help="simultaneous streams (default 1000; 0: skip)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parts", default="completions,requests,http,soak", help="comma-separated parts to run")
    parser.add_argument("--profiles", default="", help="profiles of the http part (default: all; --quick: 4)")
    parser.add_argument("--workers", type=int, default=4, help="concurrent clients of the http part (default 4)")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds an HTTP answer may take before it counts as hung"
    )
    parser.add_argument(
        "--quick", action="store_true", help="~30 s: 6 s per fuzz part, a 5 s soak at 50 clients, 200 streams"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    # The machine is shared: a case that grows beyond reason fails here (MemoryError) instead of
    # driving the whole machine out of memory.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    # In process, mockoss's warnings about odd requests (a prompt it estimates) are expected here;
    # its errors (an internal error's traceback) still print.
    logging.getLogger("mockoss").setLevel(logging.ERROR)
    if args.quick:
        args.seconds, args.soak_seconds = min(args.seconds, 6.0), min(args.soak_seconds, 5.0)
        args.clients, args.streams = min(args.clients, 50), min(args.streams, 200)
    profiles = args.profiles.split(",") if args.profiles else (QUICK_HTTP_PROFILES if args.quick else HTTP_PROFILES)
    parts = args.parts.split(",")
    results: dict[str, Any] = {"seed": args.seed}
    started = time.monotonic()
    if "completions" in parts:
        results["completions"] = part_completions(args.seed, args.seconds, None)
    if "requests" in parts:
        results["requests"] = part_requests(args.seed, args.seconds)
    if "http" in parts:
        results["http"] = part_http(args.seed, args.seconds, profiles, args.workers, args.timeout)
    if "soak" in parts:
        results["soak"] = part_soak(args.seed, args.soak_seconds, args.clients, args.streams, args.timeout)
    results["total_crashes"] = sum(results[p]["crashes"] for p in parts if p in results)
    results["seconds"] = time.monotonic() - started
    if args.json:
        print(json.dumps(results, indent=2, default=str))
        return 0
    report(results)
    return 0


def report(results: dict[str, Any]) -> None:
    if "completions" in results:
        r = results["completions"]
        print(
            f"completions (in process): {r['cases']} replies to {r['completions']} random completions "
            f"({r['scenarios_refused']} more refused at load, as documented), {r['4xx']} 4xx, "
            f"statuses {r['statuses']}, slowest {r.get('slowest_s', 0):.2f} s, crashes {r['crashes']}"
        )
    if "requests" in results:
        r = results["requests"]
        print(
            f"requests (the mutated requests, in process, every profile): {r['cases']} requests, {r['4xx']} 4xx, "
            f"statuses {r['statuses']}, slowest {r.get('slowest_s', 0):.2f} s, crashes {r['crashes']}"
        )
    if "http" in results:
        r = results["http"]
        print(
            f"http (mutated requests, {len(r['profiles'])} profiles): {r['cases']} requests, {r['4xx']} 4xx, "
            f"statuses {r['statuses']}, slowest {r.get('slowest_s', 0):.2f} s, crashes {r['crashes']}"
        )
    if "soak" in results:
        r = results["soak"]
        soak, streams = r["soak"], r["streams"]
        if soak:
            print(
                f"soak: {r['clients']} clients for {soak['seconds']:.1f} s: {soak['requests']} requests, "
                f"{soak['requests_per_s']:.0f} requests/s, {soak['errors']} errors "
                f"(server CPU {soak['server_cpu_s']:.1f} s)"
            )
        if streams:
            print(
                f"streams: {streams['streams']} at once ({streams['frames']} frames, {streams['seconds_together']:.1f} s): "
                f"{streams['bad']} incomplete or differing from the same request alone"
            )
        if r["server_tracebacks"]:
            print(f"soak server tracebacks: {len(r['server_tracebacks'])}")
    for part in ("completions", "requests", "http", "soak"):
        r = results.get(part)
        if not r or not r["crashes"]:
            continue
        print(f"\n{part}: crash kinds")
        for kind, n in (r.get("crash_kinds") or {}).items():
            print(f"  {n:6d}  {kind}")
        for sample in (r.get("samples") or r["soak"].get("samples", []) + r["streams"].get("samples", []))[:5]:
            print("  e.g.", json.dumps(sample, ensure_ascii=True)[:1200])
    print(f"\ncrashes: {results['total_crashes']} (seed {results['seed']}, {results['seconds']:.0f} s)")


if __name__ == "__main__":
    raise SystemExit(main())
