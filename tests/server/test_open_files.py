"""``mockoss serve`` raises its soft open-files limit (a reviewer's reproducer: with a plain install,
1,100 idle sockets against a 1,024-descriptor soft limit made asyncio's accept loop spin, 28 s of
CPU in 30 s and 176 MB of tracebacks; see mockoss.server.run.raise_open_files_limit)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

resource = pytest.importorskip("resource")


def _soft_limit(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open-files line")


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="needs /proc")
def test_serve_raises_a_low_soft_limit_towards_the_hard_one(tmp_path):
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"the hard limit here is {hard}")
    ceiling = 2048 if hard == resource.RLIM_INFINITY else min(hard, 70_000)

    # The child lowers its own soft limit, then execs the server (no preexec_fn: it is unsafe when
    # the test process has threads, as a pytest run with servers in threads does).
    lowered = (
        "import os, resource, sys; "
        f"resource.setrlimit(resource.RLIMIT_NOFILE, (1024, {ceiling})); "
        "os.execv(sys.executable, [sys.executable, '-P', '-m', 'mockoss', 'serve', '--scenario', 'clean-answer', '--port', '0'])"
    )
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-c", lowered], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not re.search("base URL", log.read_text()):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "did not start"
            time.sleep(0.1)
        assert _soft_limit(process.pid) == min(ceiling, 65_536)
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_limit_is_never_lowered():
    from mockoss.server.run import raise_open_files_limit

    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    raise_open_files_limit(wanted=16)
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before
