"""Ctrl-C (SIGINT) of a ``mockoss serve`` exits 0, as uvicorn's own command does; SIGTERM exits
by the signal (tests/test_cli_sigterm.py).

Kept on purpose (the sixteenth session's breaker, item 15, asked for 130, the shell's code for a
command killed by SIGINT): uvicorn, the server under ``mockoss serve``, catches the
``KeyboardInterrupt`` its ``Server.capture_signals`` re-raises after a graceful shutdown and
returns (encode/uvicorn@0.55.0:uvicorn/main.py ``run``: ``except KeyboardInterrupt: pass``;
uvicorn/server.py ``capture_signals``), so ``uvicorn app:app`` stopped by Ctrl-C exits 0 and by
SIGTERM with -15 (measured here with uvicorn 0.55.0: 0 and -15). Ctrl-C is how a user stops a
server they started, and a CI script that stops its background server with ``kill -INT $pid;
wait $pid`` under ``set -e`` would fail on 130.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_of_an_idle_serve_exits_0(tmp_path):
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "mockoss", "serve", "--scenario", "clean-answer", "--port", "0"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while "base URL" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "did not start"
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, log.read_text()
    assert "Traceback" not in log.read_text()
