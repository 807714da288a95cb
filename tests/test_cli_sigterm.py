"""``mockoss serve`` and stop signals.

SIGTERM: the serve command cleans up, and still exits by the signal. uvicorn re-raises the signal
after its shutdown, and with the default action the process died there, before the serve
command's ``finally`` (a ``--engine`` subprocess, started in its own session, kept running). See
mockoss.cli._serve.

Ctrl-C (SIGINT) exits 0, as uvicorn's own command does. Kept on purpose (the sixteenth session's
breaker, item 15, asked for 130, the shell's code for a command killed by SIGINT): uvicorn, the
server under ``mockoss serve``, catches the ``KeyboardInterrupt`` its ``Server.capture_signals``
re-raises after a graceful shutdown and returns (encode/uvicorn@0.55.0:uvicorn/main.py ``run``:
``except KeyboardInterrupt: pass``; uvicorn/server.py ``capture_signals``), so ``uvicorn app:app``
stopped by Ctrl-C exits 0 and by SIGTERM with -15 (measured with uvicorn 0.55.0: 0 and -15).
Ctrl-C is how a user stops a server they started, and a CI script that stops its background
server with ``kill -INT $pid; wait $pid`` under ``set -e`` would fail on 130.
"""

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


def _stop_once_started(argv: list[str], sig: signal.Signals, log: Path, cwd: Path) -> int:
    """Run ``argv``, send ``sig`` once it printed its base URL, and give its exit status."""
    with log.open("w") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
    try:
        deadline = time.monotonic() + 60
        while "base URL" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "did not start"
            time.sleep(0.1)
        process.send_signal(sig)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_runs_the_serve_clean_up_and_still_exits_by_the_signal(tmp_path):
    marker, log = tmp_path / "stopped", tmp_path / "serve.log"
    status = _stop_once_started([sys.executable, "-P", "-c", CHILD, str(marker)], signal.SIGTERM, log, tmp_path)
    assert marker.read_text() == "stopped", log.read_text()
    assert status == -signal.SIGTERM, log.read_text()
    assert "Traceback" not in log.read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_of_an_idle_serve_exits_0(tmp_path):
    log = tmp_path / "serve.log"
    argv = [sys.executable, "-m", "mockoss", "serve", "--scenario", "clean-answer", "--port", "0"]
    assert _stop_once_started(argv, signal.SIGINT, log, tmp_path) == 0, log.read_text()
    assert "Traceback" not in log.read_text()
