"""The engine's log file: made only when vLLM is launched, removed after a clean session, kept when
vLLM fails (its error names the file). Without vLLM: a stand-in interpreter answers the launcher's
probe and model-directory steps and serves ``/health`` where vLLM would.

Before this, every ``VllmEngine()`` made an empty ``mockoss-vllm-*.log`` in the temporary directory
at construction, so each default test run (which only checks whether vLLM is installed) left files
in /tmp that nothing removed.
"""

from __future__ import annotations

import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mockoss.engines import EngineError
from mockoss.engines.vllm.launcher import VllmEngine

#: A stand-in for vLLM's Python: ``-c`` (the version probe) prints a version, ``-m
#: mockoss.engines.vllm.model_dir`` prints a directory, and the server command serves 200 on
#: ``/health`` at its ``--port`` (or exits 3 at once when FAKE_VLLM_CRASH is set).
FAKE_PYTHON = """#!{python}
import http.server, os, sys
args = sys.argv[1:]
if args[0] == "-c":
    print("0.0.0-fake")
elif args[:2] == ["-m", "mockoss.engines.vllm.model_dir"]:
    print(os.environ.get("TMPDIR", "/tmp"))
else:
    print("fake vLLM starting", flush=True)
    if os.environ.get("FAKE_VLLM_CRASH"):
        sys.exit(3)
    port = int(args[args.index("--port") + 1])
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
        def log_message(self, *a):
            pass
    http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
"""


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary directory of the test's own, where ``tempfile`` puts the engine's log."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    yield scratch


@pytest.fixture
def fake_python(tmp_path: Path) -> str:
    path = tmp_path / "fake-python"
    path.write_text(FAKE_PYTHON.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _logs(directory: Path) -> list[Path]:
    return sorted(directory.glob("mockoss-vllm-*.log"))


def test_checking_for_vllm_leaves_no_file(own_tmp: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-python"
    with pytest.raises(EngineError):
        VllmEngine(python=str(missing)).check()
    with pytest.raises(EngineError):
        VllmEngine(python=str(missing)).start()
    assert _logs(own_tmp) == []


def test_a_clean_session_removes_its_temporary_log(own_tmp: Path, fake_python: str) -> None:
    with VllmEngine(python=fake_python, start_timeout_s=30) as engine:
        log = engine.log_path
        assert log.parent == own_tmp and "fake vLLM starting" in log.read_text()
    assert not log.exists() and _logs(own_tmp) == []


def test_keep_log_and_a_given_log_path_survive_a_clean_session(own_tmp: Path, fake_python: str, tmp_path: Path) -> None:
    with VllmEngine(python=fake_python, keep_log=True, start_timeout_s=30) as engine:
        kept = engine.log_path
    given = tmp_path / "vllm.log"
    with VllmEngine(python=fake_python, log_path=given, start_timeout_s=30):
        pass
    assert kept.exists() and given.exists()


def test_a_failed_start_keeps_the_log_it_names(own_tmp: Path, fake_python: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_VLLM_CRASH", "1")
    with pytest.raises(EngineError, match="exited with status 3") as failure:
        VllmEngine(python=fake_python, start_timeout_s=30).start()
    (log,) = _logs(own_tmp)
    assert str(log) in str(failure.value) and "fake vLLM starting" in log.read_text()
