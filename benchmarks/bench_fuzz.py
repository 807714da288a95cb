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
``fuzz_checks.documented`` (mlx-lm) and :func:`fuzz_inprocess.ollama_cut` (Ollama's streams cut by a tool call
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

The parts live in their own modules: ``fuzz_inprocess`` (``completions``, ``requests``),
``fuzz_http`` (``http``), ``fuzz_soak`` (``soak``); the cases in ``fuzz_cases`` (completions,
request bodies) and ``fuzz_mutations`` (their mutations); the checks in ``fuzz_checks``; the text
report in ``fuzz_report``. This script reads the options and runs the parts.

    python benchmarks/bench_fuzz.py [--seconds 60] [--soak-seconds 60] [--clients 200]
        [--streams 1000] [--seed 0] [--parts completions,requests,http,soak] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_http import part_http
from fuzz_inprocess import part_completions, part_requests
from fuzz_mutations import HTTP_PROFILES, QUICK_HTTP_PROFILES
from fuzz_report import report
from fuzz_soak import part_soak

#: Address space this process may use (bytes), see main().
MEMORY_LIMIT = 8 << 30


def main() -> int:
    """Run the parts ``--parts`` names, then print their results (``--json``: as JSON). Exit status 0."""
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


if __name__ == "__main__":
    raise SystemExit(main())
