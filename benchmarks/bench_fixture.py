#!/usr/bin/env python3
"""Per-test overhead of the ``mockoss`` pytest fixture (issue 9 target: <= 1 ms, whatever the answer's length).

Two generated pytest files of ``--tests`` tests each run in a pytest subprocess, per answer length
(10, 2,000 and 10,000 tokens, a scenario file on disk):

* ``fixture``: every test takes the ``mockoss`` fixture with ``@pytest.mark.mockoss(scenario=FILE)``
  (the server is reset and the scenario loaded for each test) and sends one chat request;
* ``running``: every test sends the same request to one server started once for the module
  (nothing reset or loaded per test): a test calling a running server.

Both send with the same ``httpx`` client code; the per-test overhead is the difference of the two
runs' per-test CPU time (the pytest process's, which runs the server too; wall time on a shared
machine measures the neighbours), so pytest's own per-test cost cancels out. Per-test CPU is read
inside the run, from the first test's call to the last's (start-up and collection left out); each
is the best of ``--repeat`` runs. The server-side part of the overhead is also measured in
process (:func:`server_side_ms`), which is far less noisy.

    python benchmarks/bench_fixture.py [--tests 400] [--repeat 3] [--lengths 10,2000,10000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

LENGTHS = (10, 2_000, 10_000)
TARGET_MS = 1.0

REQUEST = '''
import time
from pathlib import Path

BODY = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}
START = []


def ask(client, url, i):
    reply = client.post(url + "/v1/chat/completions", json=BODY)
    assert reply.status_code == 200, reply.text
    if i == 0:
        START.append(time.process_time())
    elif i == {last}:
        Path({timing!r}).write_text(str(time.process_time() - START[0]))
'''

FIXTURE_TESTS = '''
import httpx
import pytest
{request}
CLIENT = httpx.Client(timeout=60)


@pytest.mark.mockoss(scenario={scenario!r})
@pytest.mark.parametrize("i", range({tests}))
def test_fixture(mockoss, i):
    ask(CLIENT, mockoss.url, i)
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
    ask(CLIENT, RUNNING.url, i)
'''


def long_scenario(tokens: int) -> str:
    words = "the quick brown fox jumps over a lazy dog while seven wise owls watch quietly".split()
    text = " ".join(words[i % len(words)] for i in range(tokens))
    messages = [{"channel": "analysis", "content": "Write a long answer."}, {"channel": "final", "content": text}]
    return json.dumps({"version": 1, "steps": [{"completion": {"messages": messages}}]})


def server_side_ms(scenario: Path, repeat: int) -> dict[str, float]:
    """In process, no pytest: the fixture's per-test server work (profile, reset, scenario load,
    one request) against one request on a running server, CPU ms per test. Less noisy than the
    pytest runs; it leaves out the plugin's own per-test work."""
    import time

    from mockoss.scenario.loader import load_scenario
    from mockoss.server.core import MockServer

    body = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}).encode()
    server = MockServer()

    def fixture() -> None:
        server.set_profile("vllm", {})
        server.reset()
        server.use_scenario(load_scenario(scenario))
        assert server.handle("chat", body, {}).status == 200

    def running() -> None:
        server.use_scenario(server.scenario)
        assert server.handle("chat", body, {}).status == 200

    fixture()
    best = {}
    for label, test in (("fixture", fixture), ("running", running)):
        runs = []
        for _ in range(repeat):
            started = time.process_time()
            for _ in range(200):
                test()
            runs.append((time.process_time() - started) / 200 * 1e3)
        best[label] = min(runs)
    return best


def run_pytest(path: Path) -> None:
    """Run ``pytest path`` in a subprocess; raise if a test failed."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER", "PYTEST_ADDOPTS")}
    argv = [sys.executable, "-m", "pytest", str(path), "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    done = subprocess.run(argv, cwd=path.parent, env=env, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{path.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=400, help="tests per run (default 400)")
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
                path, timing = tmp / f"test_{kind}_{tokens}.py", tmp / f"{kind}_{tokens}.cpu"
                request = REQUEST.replace("{last}", str(args.tests - 1)).replace("{timing!r}", repr(str(timing)))
                path.write_text(template.format(request=request, scenario=str(scenario), tests=args.tests))
                runs = []
                for _ in range(args.repeat):
                    run_pytest(path)
                    runs.append(float(timing.read_text()) / (args.tests - 1) * 1e3)
                per_test[kind] = min(runs)
            overhead = per_test["fixture"] - per_test["running"]
            inproc = server_side_ms(scenario, args.repeat)
            results[str(tokens)] = {
                **{f"{k}_ms": v for k, v in per_test.items()},
                "overhead_ms": overhead,
                "server_side_overhead_ms": inproc["fixture"] - inproc["running"],
            }
    worst = max(r["overhead_ms"] for r in results.values())
    report = {"tests": args.tests, "results": results, "target_ms": TARGET_MS, "met": worst <= TARGET_MS}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for tokens, r in results.items():
            print(
                f"{tokens:>6}-token answer: CPU per test with the fixture {r['fixture_ms']:.2f} ms, "
                f"calling a running server {r['running_ms']:.2f} ms: overhead {r['overhead_ms']:+.2f} ms "
                f"(server side alone, in process: {r['server_side_overhead_ms']:+.2f} ms)"
            )
        print(f"worst per-test overhead {worst:.2f} ms (target <= {TARGET_MS:g} ms: {'met' if report['met'] else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
