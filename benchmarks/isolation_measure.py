"""The measurement of ``bench_isolation.py``: serve, send, probe, and time another client's wait.

:func:`measure` times a small chat request alone (median), then while each heavy request of
:func:`isolation_loads.cases` is answered (the extra wait's p50, p99 and max), and the server's
resident memory; :func:`_serving` starts and stops a server on a free port.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from isolation_loads import Heavy, _body, _tool_body, cases


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_up(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status, _ = post(port, _body([{"role": "user", "content": "hi"}]))
            if status:
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server on port {port} did not start")


def post(port: int, body: Heavy, timeout: float = 120.0) -> tuple[int, float]:
    """POST a chat request; ``body`` an int sends that many bytes of spaces (stopping if the
    server closes); ``(path, body)`` posts ``body`` to ``path`` (``None``: ``GET path``)."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if isinstance(body, tuple):
            path, data = body
            if data is None:
                conn.request("GET", path)
            else:
                conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
        elif isinstance(body, int):
            conn.putrequest("POST", "/v1/chat/completions")
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(body))
            conn.endheaders()
            chunk = b" " * (1024 * 1024)
            try:
                for _ in range(body // len(chunk)):
                    conn.send(chunk)
            except OSError:  # the server answered (413) and closed before the whole body
                pass
        else:
            conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        return response.status, time.perf_counter() - start
    finally:
        conn.close()


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid``, MB (Linux ``/proc``; 0 elsewhere)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def probe_alone(port: int, probes: int) -> float:
    small = _body([{"role": "user", "content": "hi"}])
    return statistics.median(post(port, small)[1] for _ in range(probes))


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def probe_during(port: int, heavy: Heavy | float) -> dict[str, Any]:
    """Send ``heavy`` on one thread and small requests back to back on this one until it is done.

    ``heavy`` a float: no heavy request, probe for that many seconds (the noise of the machine
    over a window as long as a heavy request: a busy machine delays some probe in any window)."""
    small = _body([{"role": "user", "content": "hi"}])
    result: dict[str, Any] = {}

    def run_heavy() -> None:
        if isinstance(heavy, float):
            time.sleep(heavy)
            result["status"], result["seconds"] = 0, heavy
        else:
            result["status"], result["seconds"] = post(port, heavy)

    thread = threading.Thread(target=run_heavy)
    waits: list[float] = []
    thread.start()
    time.sleep(0.005)
    while thread.is_alive():
        waits.append(post(port, small)[1])
    thread.join()
    result["waits"] = waits
    return result


def memory(port: int, pid: int, requests: int, size: int = 200_000) -> dict[str, float]:
    """Resident memory before and after ``requests`` unique chat requests of ``size`` bytes (issue 9:
    200 KB requests drove the server to 1.1-2.0 GB; the request log and caches are now bounded in bytes)."""
    before = rss_mb(pid)
    for n in range(requests):
        post(port, _body([{"role": "user", "content": f"request {n}: " + "lorem ipsum dolor " * (size // 18)}]))
    return {"requests": requests, "before_mb": before, "after_mb": rss_mb(pid)}


def measure(
    port: int, pid: int, probes: int, log_requests: int, only: set[str] | None = None, window: float | None = 0.0
) -> dict[str, Any]:
    """Probe alone, then during each case (``only``: those cases; default all), then the noise row,
    probing as long as the longest case or ``window`` seconds (``None``: no noise row)."""
    try:  # build mockoss's /mockoss routes (FastAPI, imported on first use: ~0.1-0.4 s, once) before timing
        post(port, ("/mockoss/ready", None))
    except OSError:
        pass
    # The first tool check of a process imports jsonschema (~0.1-0.2 s, once): before timing too.
    post(port, _tool_body({"type": "object", "properties": {"location": {"type": "integer"}}}))
    alone = probe_alone(port, probes)
    out: dict[str, Any] = {"alone_ms": alone * 1000}
    if log_requests:
        out["memory"] = memory(port, pid, log_requests)
    for name, heavy in cases().items():
        if only is not None and name not in only:
            continue
        during = probe_during(port, heavy)
        waits = during["waits"]
        out[name] = {
            "status": during["status"],
            "heavy_s": during["seconds"],
            "extra_p50_ms": max(0.0, _quantile(waits, 0.5) - alone) * 1000,
            "extra_p99_ms": max(0.0, _quantile(waits, 0.99) - alone) * 1000,
            "extra_max_ms": max(0.0, max(waits, default=alone) - alone) * 1000,
            "probes": len(waits),
            "rss_mb": rss_mb(pid),
        }
    if window is None:
        return out
    window = max([window, *(row["heavy_s"] for row in out.values() if isinstance(row, dict) and "heavy_s" in row)])
    noise = probe_during(port, float(window or 1.0))["waits"]
    out["noise"] = {
        "status": 0,
        "heavy_s": window,
        "extra_p50_ms": max(0.0, _quantile(noise, 0.5) - alone) * 1000,
        "extra_p99_ms": max(0.0, _quantile(noise, 0.99) - alone) * 1000,
        "extra_max_ms": max(0.0, max(noise, default=alone) - alone) * 1000,
        "probes": len(noise),
        "rss_mb": rss_mb(pid),
    }
    return out


@contextlib.contextmanager
def _serving(command: list[str], cwd: str, port_flag: str | None) -> Iterator[tuple[int, int]]:
    """Start ``command`` on a free port (``port_flag PORT`` appended, or ``PORT`` when ``None``);
    yield ``(port, pid)`` once it answers; stop it."""
    port = _free_port()
    command = command + ([port_flag, str(port)] if port_flag else [str(port)])
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, cwd=cwd, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        _wait_up(port)
        yield port, process.pid
    finally:
        process.terminate()
        process.wait(timeout=10)
