#!/usr/bin/env python3
"""The first request on a completion is linear in its length (issue 9 target: 10,000 tokens <= 12x 1,000).

In process, no HTTP: for each length, a scenario whose final answer has about N tokens is compiled
with every cache empty, then the first vLLM chat request (non-streamed, then streamed) is timed:
parser trace, plan, chunk serialisation, all the work a new completion costs, in CPU time (single-threaded; wall time on a shared machine
measures the neighbours). Best of ``--repeat`` runs. With ``--reference`` the parser trace is also timed the old way (``state`` and
``messages`` read after every token), at the two shorter lengths only (it is quadratic).

    python benchmarks/bench_first_request.py [--repeat 3] [--reference] [--json]

``--messages`` instead times the first request on completions of many short messages (1,000 to
8,000: reasoning and preambles; an agent's long scripted turn), and the
parser trace alone, which read every completed message's JSON again at each message's end
(quadratic in the messages until the trace replaced its parser at message boundaries).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

MODEL = "openai/gpt-oss-20b"
LENGTHS = (1_000, 2_000, 10_000)
TARGET = 12.0


def scenario_data(tokens: int) -> dict[str, Any]:
    """A one-step scenario whose final answer is ``tokens`` words (about as many tokens)."""
    words = "the quick brown fox jumps over a lazy dog while seven wise owls watch quietly".split()
    text = " ".join(words[i % len(words)] for i in range(tokens))
    messages = [{"channel": "analysis", "content": "Write a long answer."}, {"channel": "final", "content": text}]
    return {"version": 1, "steps": [{"completion": {"messages": messages}}]}


def first_request_ms(tokens: int) -> tuple[float, int]:
    """Milliseconds of the first non-streamed + streamed chat request on a new completion."""
    from mockoss.scenario.loader import scenario_from_data

    try:
        from mockoss.harmony.completion import clear_completion_cache
    except ImportError:  # a version without the completion cache: every completion is new anyway
        clear_completion_cache = lambda: None
    from mockoss.server.core import MockServer

    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    plain, stream = json.dumps(body).encode(), json.dumps({**body, "stream": True}).encode()
    server = MockServer(scenario_from_data(scenario_data(tokens + 1), name="warm-up"))
    server.handle("chat", plain, {})  # the prompt count is now cached: only completion work is timed
    clear_completion_cache()
    scenario = scenario_from_data(scenario_data(tokens), name="long")
    server.use_scenario(scenario)
    started = time.process_time()
    assert server.handle("chat", plain, {}).status == 200
    server.use_scenario(scenario)
    assert server.handle("chat", stream, {}).status == 200
    return (time.process_time() - started) * 1e3, len(scenario.steps[0].completion.tokens)  # type: ignore[union-attr]


MESSAGE_COUNTS = (1_000, 2_000, 4_000, 8_000)


def many_messages_data(count: int) -> dict[str, Any]:
    """A one-step scenario of ``count`` short messages: reasoning and preambles, then the answer
    (no tool call: the engine stops at the first ``<|call|>``)."""
    kinds = (
        lambda i: {"channel": "analysis", "content": f"Think about step {i}."},
        lambda i: {"channel": "commentary", "content": f"Checking the weather for step {i}."},
    )
    messages = [kinds[i % 2](i) for i in range(count - 1)] + [{"channel": "final", "content": "Done."}]
    return {"version": 1, "steps": [{"completion": {"messages": messages}}]}


def many_messages_ms(count: int) -> dict[str, Any]:
    """CPU ms of the parser trace alone, and of the first non-streamed + streamed vLLM chat
    requests on a new completion of ``count`` messages (every cache empty)."""
    from mockoss.harmony.trace import parse_tokens
    from mockoss.scenario.loader import scenario_from_data

    try:
        from mockoss.harmony.completion import clear_completion_cache
    except ImportError:
        clear_completion_cache = lambda: None
    from mockoss.server.core import MockServer

    request = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    plain, stream = json.dumps(request).encode(), json.dumps({**request, "stream": True}).encode()
    server = MockServer(scenario_from_data(scenario_data(10), name="warm-up"))
    server.handle("chat", plain, {})
    clear_completion_cache()
    scenario = scenario_from_data(many_messages_data(count), name="many")
    tokens = scenario.steps[0].completion.tokens  # type: ignore[union-attr]
    started = time.process_time()
    parse_tokens(tokens)
    trace_ms = (time.process_time() - started) * 1e3
    clear_completion_cache()
    scenario = scenario_from_data(many_messages_data(count), name="many")
    started = time.process_time()
    server.use_scenario(scenario)
    assert server.handle("chat", plain, {}).status == 200
    server.use_scenario(scenario)
    assert server.handle("chat", stream, {}).status == 200
    return {"trace_ms": trace_ms, "request_ms": (time.process_time() - started) * 1e3, "tokens": len(tokens)}


def main_messages(args: argparse.Namespace) -> int:
    results = {}
    for count in MESSAGE_COUNTS:
        runs = [many_messages_ms(count) for _ in range(args.repeat)]
        results[str(count)] = {key: min(run[key] for run in runs) for key in runs[0]}
    first, last = results[str(MESSAGE_COUNTS[0])], results[str(MESSAGE_COUNTS[-1])]
    scale = MESSAGE_COUNTS[-1] / MESSAGE_COUNTS[0]
    report = {"results": results, "trace_ratio": last["trace_ms"] / first["trace_ms"], "request_ratio": last["request_ms"] / first["request_ms"], "linear_ratio": scale}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for count, row in results.items():
            print(f"{int(count):>5} messages, {row['tokens']:>6} tokens: trace {row['trace_ms']:8.1f} ms, first request {row['request_ms']:8.1f} ms")
        print(f"{MESSAGE_COUNTS[-1]:,} / {MESSAGE_COUNTS[0]:,} messages: trace {report['trace_ratio']:.2f}x, first request {report['request_ratio']:.2f}x (linear: {scale:g}x)")
    return 0


def reference_trace_ms(tokens: int) -> float:
    """The parser trace read the old way: ``state`` and ``messages`` after every token."""
    from openai_harmony import Role, StreamableParser

    from mockoss.harmony import Completion
    from mockoss.harmony.encoding import load_encoding

    completion = Completion.from_text(
        "<|channel|>final<|message|>" + " ".join(["word"] * tokens) + "<|return|>"
    )
    started = time.process_time()
    parser = StreamableParser(load_encoding(), Role.ASSISTANT, strict=True)
    for token in completion.tokens:
        parser.process(token)
        _ = parser.state, parser.messages
    return (time.process_time() - started) * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per length, best kept (default 3)")
    parser.add_argument("--reference", action="store_true", help="also time the old per-token trace (1,000 and 2,000)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--messages", action="store_true", help="completions of 1,000-8,000 short messages instead")
    args = parser.parse_args(argv)
    if args.messages:
        return main_messages(args)
    from mockoss.harmony.encoding import load_encoding

    load_encoding()
    first_request_ms(100)  # imports and one-time set-up out of the way
    results: dict[str, Any] = {}
    for tokens in LENGTHS:
        runs = [first_request_ms(tokens) for _ in range(args.repeat)]
        results[str(tokens)] = {"ms": min(ms for ms, _ in runs), "tokens": runs[0][1]}
        if args.reference and tokens <= 2_000:
            results[str(tokens)]["reference_trace_ms"] = min(reference_trace_ms(tokens) for _ in range(args.repeat))
    ratio = results["10000"]["ms"] / results["1000"]["ms"]
    report = {"results": results, "ratio_10000_over_1000": ratio, "target": TARGET, "met": ratio <= TARGET}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for tokens, row in results.items():
            ref = f"   (old per-token trace alone: {row['reference_trace_ms']:.1f} ms)" if "reference_trace_ms" in row else ""
            print(f"first request, {row['tokens']:>6} tokens: {row['ms']:8.2f} ms{ref}")
        verdict = "met" if report["met"] else "NOT met"
        print(f"10,000 / 1,000 tokens: {ratio:.2f}x (target <= {TARGET:g}x: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
