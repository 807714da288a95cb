#!/usr/bin/env python3
"""Isolation: how much longer another client's small request waits while an expensive one is handled.

Starts ``mockoss serve`` (a subprocess, its own scenario with a ``match.last_user`` rule whose
pattern backtracks exponentially in Python's ``re``: ``^(a+)+$``) and, as the baseline, a bare
Starlette app on uvicorn that reads each body and answers fixed bytes. For each server it measures
a small chat request alone (median of ``--probes`` requests), then again while another client
sends each of:

* ``10MB``: one 10 MB user message (a new one: nothing cached);
* ``many``: a 4 MB body of 20,000 short messages;
* ``many100k``: 100,000 shorter ones (3.7 MB), whose parsing and validation take ~0.5 s;
* ``regex``: a user message of 26 ``a`` and a ``b``, the pathological text for ``^(a+)+$``;
* ``100MB``: a body over the 32 MiB limit (mockoss answers 413 from the ``Content-Length``);
* ``batch``: ``/v1/completions`` with ``"prompt": ["hi"] * 40000``, streamed (240 KB; the
  breaker's D8: it held the event loop ~10 s and built a 162 MB stream; now a 400, the reply
  over ``MAX_REPLY_BYTES``);
* ``batch6k``: 6,000 distinct prompts, streamed 16 tokens each (24 MB, under the reply limit: the
  biggest batch still answered);
* ``echo``: a 5 MB message to a rule whose answer echoes it through a template (D10: 12-15 s for
  every client; now a 400, the rendering over ``MAX_RENDERED_CHARS``);
* ``echo8k``: the same echo of an 8,000-character message (answered: the biggest echo allowed);
* ``log``: ``GET /mockoss/requests`` of the full request log (64 MiB, filled by the memory row
  before the cases run; D16a: 0.17-0.31 s in one go on the loop);
* ``schema``: a 3 KB chat body whose ``lookup`` tool declares a crafted ``parameters`` schema
  (nested ``anyOf``/``$ref``, exponential to validate) to a rule whose step calls ``lookup``
  twice: the tool check of both calls runs under the server lock (before the per-request budget
  of :data:`mockoss.scenario.tool_check.REQUEST_BUDGET_S`: 0.5 s of CPU per call; the other
  client waited 1.07-1.24 s more; with it 23-26 ms). A request with a plain schema first imports
  jsonschema (the first tool check of a process: ~0.1-0.2 s, once), as ``/mockoss/ready`` builds
  FastAPI.
* ``longword``: ``/v1/completions`` echoing a prompt of one 50,000-character word (50 KB):
  openai-harmony's tokenizer is quadratic in a word's length (~0.75 s here); the prompt is
  counted in the worker process (a long run sends the request off the loop) and echoed as text;
* ``tokenize``: vLLM's ``/tokenize`` of the same word: tokenized in process, in one call that
  holds the GIL (on a worker thread too, measured), it held every other client 725-818 ms; a side
  route's big body or long word is now tokenized in the worker process
  (:func:`mockoss.server.offload.probe_elsewhere`);
* ``tools100k``: the same rule with 100,000 declared tools (14 MB): their view and the walk the
  tool check makes held the server lock 133 ms and 58-98 ms; both are now done before it.
* ``ollamaword``: Ollama's ``/api/generate`` of the same word, not streamed, on a second mockoss
  server with the Ollama profile (:data:`PROFILES`; the small probe is that server's
  ``/v1/chat/completions``): the reply's ``context`` holds the prompt's token ids, which were
  rendered in process under the server lock (~0.8-1.4 s for every other client); they are now
  rendered in the worker process before the lock (:mod:`mockoss.server.prelock`);
* ``ollama10MB``: the same with the 10 MB text of ``10MB`` as the prompt (2,000,000 ids in
  ``context``: rendered, and joined into the reply's text, in the worker process).
* ``gword``, ``gitems`` (gptoss-reference profile, whose reply counts its own whole prompt): a
  Responses ``input`` of one 70,000-character word, and of 1,000 one-letter user items: rendered
  under the server lock on the event loop (session 15's breaker: 2.6 s and 235 ms for another
  client), now before the lock, in the worker process (:mod:`mockoss.profiles.gptoss_ref.prerender`).

The issue 9 review of the seventh session (a breaker's hunt) added, each once over the limit:

* ``spacerun``: a Responses ``input`` of ``" \\n" * 87000`` (261 KB): one whitespace piece for the
  tokenizer, under the size at which a body leaves the loop and not caught by the long-run check
  (every other client waited 9.4 s);
* ``nbsp``: a chat message of ``"\\u00a0 " * 40000`` as UTF-8 (120 KB of non-ASCII whitespace: 4.5 s);
* ``longnames``: 60 declared tools named with 3,900 characters each (239 KB; 283 ms);
* ``tokmsgs``: vLLM's ``/tokenize`` of 7,000 messages (rendered in process: 480 ms);
* ``tokstrs``: vLLM's ``/tokenize`` of 36,000 words with ``return_token_strs`` (208 ms);
* ``template`` and ``pieces`` (llama.cpp profile): ``/apply-template`` of the 7,000 messages
  (467 ms) and ``/tokenize`` of the words ``with_pieces`` (266 ms);
* ``parts`` (the final review's): a system message of 2,000 content parts of 80 letters, each
  with an extra field ``"j": " a"`` (248 KB): parts are rendered joined, so the text is one
  piece, while the raw bytes show a space before a letter in every field (8.5 s);
* ``trtbatch`` (TensorRT-LLM profile): 127 prompts streamed with ``continuous_usage_stats``
  against the ``long`` rule's 3,000-word answer: the frames were built before the size check
  (436-520 ms, then a 400).

The eighth session added long scripted answers (the cost is the answer's, not the request's):

* ``long40k``, ``long40ks``, ``long40kcut``: the first chat request, then the first streamed one,
  then one with ``max_tokens`` 39,000 (a limit that cuts the answer: its own plan), on a
  40,000-word answer: each built the answer's plan for its shape on the event loop (~250 ms
  non-streamed in process);
* ``trtlong``, ``trtlong2`` (TensorRT-LLM profile): a streamed Responses request on the ``long``
  rule's 3,000-word answer, twice: the profile built every frame again for every request.

It prints, per case, the heavy request's own time and status, the probes' extra wait over their
median alone (p50, p99, max; the issue 9 target: ≤ 50 ms), and the server's resident memory after
the case; a last ``noise`` row probes, with no heavy request, for as long as the longest one took
(on a busy machine the scheduler alone delays some probe in any window that long).
Issue 9's figures before this work: 10 MB body 15.7 s with the other client waiting 15.3 s; the
regex stalled every client 6.4 s; 100 MB took 51 s and 1.58 GB.

Its loads (the scenario, the heavy requests) are ``isolation_loads.py``, its measurement (the
probes, the servers on free ports) ``isolation_measure.py``; this script starts the servers in
turn and prints the report.

    python benchmarks/bench_isolation.py [--probes 40] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from isolation_loads import MODEL, PROFILES, SCENARIO, cases
from isolation_measure import _serving, measure

BASELINE = """\
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
BODY = b'{"object":"chat.completion","choices":[{"message":{"content":"Hi!"}}]}'
async def chat(request):
    await request.body()
    return Response(BODY, media_type="application/json")
app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def main() -> int:
    """Measure every server (``--json``: print the results as JSON; else :func:`report`). Exit status 0."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--probes", type=int, default=40, help="small requests for the median alone (default 40)")
    parser.add_argument(
        "--log-requests", type=int, default=600, help="unique 200 KB requests for the memory row (0: skip)"
    )
    parser.add_argument("--cases", default="", help="comma-separated case names to run (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.cases:
        wanted = set(args.cases.split(","))
        global cases
        every = cases
        cases = lambda: {name: heavy for name, heavy in every().items() if name in wanted}
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        scenario = Path(tmp, "isolation.yaml")
        scenario.write_text(SCENARIO)
        baseline = Path(tmp, "baseline.py")
        baseline.write_text(BASELINE)
        mockoss = [sys.executable, "-m", "mockoss", "serve", "--scenario", str(scenario)]
        # Cases of another profile first, each on its own mockoss server (no memory or noise row);
        # the bare Starlette baseline below answers every case (a path it lacks: a quick 404).
        others: dict[str, Any] = {}
        for profile in sorted({PROFILES[name] for name in cases() if name in PROFILES}):
            mine = {name for name in cases() if PROFILES.get(name) == profile}
            command = [*mockoss, "--profile", profile, "--served-model-name", MODEL]
            with _serving(command, tmp, "--port") as (port, pid):
                measured = measure(port, pid, args.probes, 0, only=mine, window=None)
            others.update({name: measured[name] for name in mine})
            others[f"alone_ms_{profile}"] = measured["alone_ms"]
        longest = max((row["heavy_s"] for row in others.values() if isinstance(row, dict)), default=0.0)
        # vLLM refuses a prompt over its max_model_len (131,072 by default) with a 400, and so
        # does its profile (a38cb27): room for the biggest prompt here (tools100k, 1.9M tokens),
        # so that 10MB, many, many100k and tools100k are counted and answered in full, as measured.
        vllm = [*mockoss, "--switch", "max_model_len=4000000"]
        servers = {"starlette": ([sys.executable, str(baseline)], None), "mockoss": (vllm, "--port")}
        for name, (command, port_flag) in servers.items():
            # measure() walks isolation_loads.cases in full: ``only`` keeps this run's (--cases).
            own = set(cases()) if name == "starlette" else {case for case in cases() if case not in PROFILES}
            with _serving(command, tmp, port_flag) as (port, pid):
                results[name] = measure(port, pid, args.probes, args.log_requests, only=own, window=longest)
        results["mockoss"].update(others)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    report(results)
    return 0


def report(results: dict[str, Any]) -> None:
    """Print ``results`` (:func:`main`'s, by server then case) as the text table and its summary lines."""
    print(
        f"small request alone: mockoss {results['mockoss']['alone_ms']:.2f} ms, bare Starlette {results['starlette']['alone_ms']:.2f} ms"
    )
    print("extra wait of another client's small request over its median alone, ms (p50 / p99 / max);")
    print("'noise': no heavy request, probing as long as the longest one (what the machine alone adds)")
    print(
        f"{'case':<8} {'server':<10} {'status':>6} {'heavy s':>8} {'p50':>7} {'p99':>7} {'max':>7} {'probes':>7} {'RSS MB':>7}"
    )
    for case in [*cases(), "noise"]:
        for name in ("mockoss", "starlette"):
            row = results[name][case]
            print(
                f"{case:<8} {name:<10} {row['status']:>6} {row['heavy_s']:>8.3f} {row['extra_p50_ms']:>7.1f} "
                f"{row['extra_p99_ms']:>7.1f} {row['extra_max_ms']:>7.1f} {row['probes']:>7} {row['rss_mb']:>7.0f}"
            )
    for name in ("mockoss", "starlette"):
        if "memory" in results[name]:
            row = results[name]["memory"]
            print(
                f"memory {name}: {row['before_mb']:.0f} MB -> {row['after_mb']:.0f} MB after {row['requests']} unique 200 KB requests"
            )
    worst = max(results["mockoss"][case]["extra_p99_ms"] for case in cases())
    worst_max, at = max((results["mockoss"][case]["extra_max_ms"], case) for case in cases())
    print(
        f"worst p99 extra wait under mockoss: {worst:.1f} ms (target <= 50 ms); machine noise max {results['mockoss']['noise']['extra_max_ms']:.1f} ms"
    )
    # A stall is one probe however long it lasts, so a long heavy request's p99 can hide it: the max shows it.
    print(f"worst single wait under mockoss: {worst_max:.1f} ms ({at})")


if __name__ == "__main__":
    raise SystemExit(main())
