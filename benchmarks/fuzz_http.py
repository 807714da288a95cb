"""The ``http`` part of ``bench_fuzz.py``: the mutated requests sent to ``mockoss serve``, over sockets.

For each profile it starts ``mockoss serve`` (``benchlib.Server``) and runs ``--workers`` clients,
each on its own keep-alive connection, sending the cases of :func:`fuzz_mutations.http_case`; a
dropped connection is a crash unless the same request answered in process is a scripted drop.
The served process's log is read for tracebacks (:func:`server_tracebacks`, also the soak's).
"""

from __future__ import annotations

import http.client
import random
import tempfile
import threading
import time
from typing import Any

from benchlib import Server, mockoss_argv
from fuzz_checks import Tally, documented, frames_of, reply_problem
from fuzz_inprocess import LOG_BYTES
from fuzz_mutations import HTTP_SCENARIO, PATHS, endpoint_of, http_case, json_or_none

from mockoss.server.settings import DEFAULT_MAX_BODY_BYTES

#: ``mockoss serve``'s body limit: a bigger body is answered 413 from its ``Content-Length`` and the
#: connection closed while the client still sends, which the client sees as a reset.
MAX_BODY_BYTES = DEFAULT_MAX_BODY_BYTES


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
            if problem and documented(self.profile, problem, status, body, json_or_none(raw)):
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


def part_http(seed: int, seconds: float, profiles: list[str], workers: int, timeout: float) -> dict[str, Any]:
    """The ``http`` part: each of ``profiles`` served in turn for ``seconds / len(profiles)`` s, sent
    mutated requests by ``workers`` clients; no answer within ``timeout`` s is a hang, a traceback
    in the server's log a crash. Returns the part's :meth:`fuzz_checks.Tally.summary` plus ``profiles``."""
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
