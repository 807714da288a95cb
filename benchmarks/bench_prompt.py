#!/usr/bin/env python3
"""What a request's prompt costs: a prompt-size sweep on real (unique) traffic, and the agent turn.

``usage.prompt_tokens`` is exact: mockoss renders the request as vLLM does and counts its tokens,
from per-message counts cached by content (:mod:`mockoss.harmony.prompt.count`). So a message
already seen costs a lookup and a new one its tokenization. Every request here is new (no body is
sent twice); per case, mockoss (``clean-answer``) and the bare Starlette baseline (same reply
bytes, body read in full) are loaded in turn and the server CPU per request is compared:

* ``short``: a new short conversation per request (the reference for the agent turn);
* ``agent 50+20``: 50 messages and 20 tools, the first 48 messages the same in every request
  (an agent resending its conversation), the last two new: issue 9's target is <= 2x ``short``;
* ``user 1k`` … ``user 200k``: one new user message of that many bytes (tokenized in full);
* ``history 200``: 200 messages, 199 seen before, one new.

    python benchmarks/bench_prompt.py [--seconds 3] [--rounds 3] [--connections 8] [--json]
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_http import CHAT, MODEL, capture, measure_interleaved
from benchlib import Server, mockoss_argv

TARGET = 2.0
WORDS = "the quick brown fox jumps over a lazy dog while seven wise owls watch quietly".split()


def _text(size: int, seed: int) -> str:
    """About ``size`` characters of words, numbered here and there (distinct for distinct seeds)."""
    count = size // 5 + 1
    words = [WORDS[i % len(WORDS)] + ("" if i % 7 else f"{i}") for i in range(seed, seed + count)]
    return " ".join(words)[:size]


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": f"tool_{k}",
            "description": f"Tool number {k}: reads, edits or runs something in the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "a file path"}, "count": {"type": "integer"}},
                "required": ["path"],
            },
        },
    }
    for k in range(20)
]


def history(length: int) -> list[dict[str, Any]]:
    """``length`` messages of a coding-agent conversation: user turns, tool calls, tool results."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent. " + _text(400, 1)}]
    k = 0
    while len(messages) < length:
        messages.append({"role": "user", "content": _text(300, k)})
        call = {"id": f"call_{k}", "type": "function", "function": {"name": f"tool_{k % 20}", "arguments": json.dumps({"path": f"src/m{k}.py"})}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{k}", "content": _text(600, k + 3)})
        k += 1
    return messages[:length]


def _body(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> bytes:
    body: dict[str, Any] = {"model": MODEL, "messages": messages}
    if tools:
        body["tools"] = tools
    return json.dumps(body, separators=(",", ":")).encode()


def short(n: int) -> bytes:
    return _body([{"role": "user", "content": "What is 2 + 2?"}, {"role": "assistant", "content": "4."}, {"role": "user", "content": f"And {n} + 2? ({n})"}])


def agent(prefix: int, tools: list[dict[str, Any]] | None) -> Any:
    seen = history(prefix)

    def make(n: int) -> bytes:
        new = [{"role": "assistant", "content": f"Step {n} done."}, {"role": "user", "content": f"Now step {n + 1}, file src/n{n}.py."}]
        return _body(seen + new, tools)

    return make


def user(size: int) -> Any:
    text = _text(size, 11)
    return lambda n: _body([{"role": "user", "content": f"{n}: {text}"}])


def cases() -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = [("short", "clean", CHAT, short, short(0), {}, False)]
    rows.append(("agent 50+20", "clean", CHAT, (make := agent(48, TOOLS)), make(0), {}, False))
    for size in (1_000, 10_000, 100_000, 200_000):
        rows.append((f"user {size // 1000}k", "clean", CHAT, (make := user(size)), make(0), {}, False))
    rows.append(("history 200", "clean", CHAT, (make := agent(198, None)), make(0), {}, False))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measured time per run (default 3)")
    parser.add_argument("--warmup", type=float, default=0.5, help="unmeasured warm-up per run (default 0.5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds the measured time is split into, the servers in turn (default 3)")
    parser.add_argument("--connections", type=int, default=8, help="keep-alive connections (default 8)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.generator, args.threads = "python", 1
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mockoss-bench-prompt-") as tmpdir:
        tmp = Path(tmpdir)
        servers: list[Server] = []
        try:
            mock = {"clean": Server("mockoss", mockoss_argv("serve", "--scenario", "clean-answer", "--port", "0", "--log-level", "warning"), cwd=tmp)}
            servers.append(mock["clean"])
            spec, served, notes = capture(mock, cases(), 64)
            (tmp / "baseline.pickle").write_bytes(pickle.dumps(spec))
            bench_http = str(Path(__file__).with_name("bench_http.py"))
            baseline = Server("baseline", [sys.executable, "-P", bench_http, "--serve-baseline", str(tmp / "baseline.pickle")], cwd=tmp)
            servers.append(baseline)
            # The target's two cases are measured together, their rounds in turn: its ratio then
            # compares runs taken under the same machine conditions.
            together = [case for case in served if case[0] in ("short", "agent 50+20")]
            groups = [together] + [[case] for case in served if case not in together]
            for group in groups:
                runs = [(f"{case[0]}|{label}", server, case) for case in group for label, server in (("mockoss", mock["clean"]), ("baseline", baseline))]
                measured = measure_interleaved(args, runs, tmp)
                for case in group:
                    results[case[0]] = {"body_bytes": len(case[4]), **{label: measured[f"{case[0]}|{label}"] for label in ("mockoss", "baseline")}}
            results = {case[0]: results[case[0]] for case in served}  # in the cases' order
        finally:
            for server in servers:
                server.stop()
    short_cpu = results["short"]["mockoss"]["cpu_us_per_request"]
    agent_ratio = results["agent 50+20"]["mockoss"]["cpu_us_per_request"] / short_cpu
    rounds = [a / b for a, b in zip(results["agent 50+20"]["mockoss"]["rounds_cpu_us"], results["short"]["mockoss"]["rounds_cpu_us"])]
    report = {"results": results, "agent_over_short": agent_ratio, "rounds": rounds, "target": TARGET, "met": agent_ratio <= TARGET, "notes": notes}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{'case':<14}{'body KB':>9}{'mockoss us/req':>16}{'baseline us/req':>17}{'ratio':>8}{'mockoss req/s':>15}")
    for name, r in results.items():
        m, b = r["mockoss"], r["baseline"]
        print(
            f"{name:<14}{r['body_bytes'] / 1024:>9.1f}{m['cpu_us_per_request']:>16.0f}{b['cpu_us_per_request']:>17.0f}"
            f"{m['cpu_us_per_request'] / b['cpu_us_per_request']:>8.2f}{m['rps']:>15.0f}"
        )
    verdict = "met" if report["met"] else "NOT met"
    spread = f"; rounds {min(rounds):.2f}-{max(rounds):.2f}" if len(rounds) > 1 else ""
    print(f"agent turn (50 messages, 20 tools, 48 seen) / short request, server CPU: {agent_ratio:.2f}x (target <= {TARGET:g}x: {verdict}{spread})")
    for note in notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
