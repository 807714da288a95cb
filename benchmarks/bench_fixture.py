#!/usr/bin/env python3
"""Per-test overhead of the ``mockoss`` pytest fixture (issue 9 target: <= 1 ms, whatever the answer's length).

Two generated pytest files of ``--tests`` tests each run in a pytest subprocess, per answer length
(10, 2,000 and 10,000 tokens, a scenario file on disk):

* ``fixture``: every test takes the ``mockoss`` fixture with ``@pytest.mark.mockoss(scenario=FILE)``
  (the server is reset and the scenario loaded for each test) and sends one chat request;
* ``running``: every test sends the same request to one server started once for the module
  (nothing reset or loaded per test): a test calling a running server.

Both send with the same ``httpx`` client code; the per-test overhead is the difference of the two
runs' per-test CPU time (user + system of the pytest process, which runs the server too; wall time
on a shared machine measures the neighbours), so pytest's own per-test cost cancels out. Per-test
CPU is the slope between a run of 20 tests and one of 20 + ``--tests`` (start-up cancels out);
each run is the best of ``--repeat``.

    python benchmarks/bench_fixture.py [--tests 400] [--repeat 3] [--lengths 10,2000,10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

LENGTHS = (10, 2_000, 10_000)
SMALL = 20
TARGET_MS = 1.0

REQUEST = '''
BODY = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}


def ask(client, url):
    reply = client.post(url + "/v1/chat/completions", json=BODY)
    assert reply.status_code == 200, reply.text
'''

FIXTURE_TESTS = '''
import httpx
import pytest
{request}
CLIENT = httpx.Client(timeout=60)


@pytest.mark.mockoss(scenario={scenario!r})
@pytest.mark.parametrize("i", range({tests}))
def test_fixture(mockoss, i):
    ask(CLIENT, mockoss.url)
'''

RUNNING_TESTS = '''
import httpx
import pytest

from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer
{request}
CLIENT = httpx.Client(timeout=60)
RUNNING = ThreadedServer(MockServer({scenario!r})).start()


@pytest.mark.parametrize("i", range({tests}))
def test_running(i):
    RUNNING.server.use_scenario(RUNNING.server.scenario)  # rewind: one step, every test answered
    ask(CLIENT, RUNNING.url)
'''


def long_scenario(tokens: int) -> str:
    words = "the quick brown fox jumps over a lazy dog while seven wise owls watch quietly".split()
    text = " ".join(words[i % len(words)] for i in range(tokens))
    messages = [{"channel": "analysis", "content": "Write a long answer."}, {"channel": "final", "content": text}]
    return json.dumps({"version": 1, "steps": [{"completion": {"messages": messages}}]})


def run_pytest(path: Path) -> float:
    """CPU seconds of ``pytest path`` in a subprocess (session start-up included in both runs)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER", "PYTEST_ADDOPTS")}
    argv = [sys.executable, "-m", "pytest", str(path), "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, cwd=path.parent, env=env, capture_output=True, text=True, timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    elapsed = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(f"{path.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=400, help="extra tests of the long run (default 400)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per file, best kept (default 3)")
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)), help="answer lengths in tokens (default 10,2000,10000)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory(prefix="mockoss-bench-fixture-") as tmpdir:
        tmp = Path(tmpdir)
        for tokens in (int(n) for n in args.lengths.split(",")):
            scenario = tmp / f"long{tokens}.yaml"
            scenario.write_text(long_scenario(tokens))
            per_test = {}
            for kind, template in (("fixture", FIXTURE_TESTS), ("running", RUNNING_TESTS)):
                seconds = []
                for count in (SMALL, SMALL + args.tests):
                    path = tmp / f"test_{kind}_{tokens}_{count}.py"
                    path.write_text(template.format(request=REQUEST, scenario=str(scenario), tests=count))
                    seconds.append(min(run_pytest(path) for _ in range(args.repeat)))
                per_test[kind] = (seconds[1] - seconds[0]) / args.tests * 1e3
            overhead = per_test["fixture"] - per_test["running"]
            results[str(tokens)] = {**{f"{k}_ms": v for k, v in per_test.items()}, "overhead_ms": overhead}
    worst = max(r["overhead_ms"] for r in results.values())
    report = {"tests": args.tests, "results": results, "target_ms": TARGET_MS, "met": worst <= TARGET_MS}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for tokens, r in results.items():
            print(
                f"{tokens:>6}-token answer: CPU per test with the fixture {r['fixture_ms']:.2f} ms, "
                f"calling a running server {r['running_ms']:.2f} ms: overhead {r['overhead_ms']:+.2f} ms"
            )
        print(f"worst per-test overhead {worst:.2f} ms (target <= {TARGET_MS:g} ms: {'met' if report['met'] else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
