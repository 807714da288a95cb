"""``mockoss serve`` cleans up on SIGTERM: uvicorn re-raises the signal after its shutdown, and
with the default action the process died there, before the serve command's ``finally`` (a
``--engine`` subprocess, started in its own session, kept running). See mockoss.cli._serve."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# A stand-in engine (a real one needs vLLM): engines.cli.start hands it to serve, whose clean-up
# must call its stop().
CHILD = r"""
import sys
from pathlib import Path
from mockoss import cli
from mockoss.engines import cli as engine_cli

class FakeEngine:
    url = "http://127.0.0.1:9"
    def stop(self, timeout=30):
        Path(sys.argv[1]).write_text("stopped")

engine_cli.start = lambda args, names: FakeEngine()
sys.exit(cli.main(["serve", "--scenario", "clean-answer", "--port", "0"]))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_runs_the_serve_clean_up_and_still_exits_by_the_signal(tmp_path):
    marker = tmp_path / "stopped"
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-P", "-c", CHILD, str(marker)], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path
        )
    try:
        deadline = time.monotonic() + 60
        while "base URL" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "did not start"
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert marker.read_text() == "stopped", log.read_text()
    assert process.returncode == -signal.SIGTERM, log.read_text()
    assert "Traceback" not in log.read_text()
