"""benchmarks/bench_start.py stops with the server's output when a server does not start, instead of
retrying its first request forever (session 15's newcomer, finding 1: without the ``fast`` extra the
bare baseline printed its base URL, died on ``import uvloop``, and bench_start hung silently)."""

import importlib.util
import socket
import sys
import threading
from pathlib import Path

import pytest

_DIR = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(_DIR))  # bench_start imports its siblings by name
_spec = importlib.util.spec_from_file_location("bench_start", _DIR / "bench_start.py")
bench_start = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_start)
import benchlib


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(argv, within=20.0, **options):
    """``one_run`` in a thread (the old code never returned): what it raised, or a test failure."""
    outcome = {}

    def target():
        try:
            outcome["result"] = bench_start.one_run(argv, Path.cwd(), 0, 0, **options)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(within)
    assert not thread.is_alive(), f"one_run still waiting after {within:g} s"
    return outcome.get("error")


def test_a_server_that_dies_after_its_base_url_fails_with_its_output_and_the_fast_hint():
    """What the bare baseline does without uvloop: print the URL, then die in uvicorn's loop import."""
    child = (
        f"print('base URL: http://127.0.0.1:{_free_port()}', flush=True)\n"
        "import sys\n"
        "sys.stderr.write(\"Traceback (most recent call last):\\nModuleNotFoundError: No module named 'uvloop'\\n\")\n"
        "sys.exit(1)\n"
    )
    error = _run([sys.executable, "-c", child])  # the default start-up timeout (60 s) plays no part
    assert isinstance(error, RuntimeError)
    message = str(error)
    assert message.startswith("server exited before its first 200 (exit status 1); the last lines of its output:")
    assert "ModuleNotFoundError: No module named 'uvloop'" in message
    assert message.endswith("pip install 'mockoss[fast]'")


def test_a_server_that_never_answers_fails_at_the_start_timeout():
    child = "import time\ntime.sleep(60)\n"
    error = _run([sys.executable, "-c", child], within=15.0, name="baseline", timeout=1.0)
    assert isinstance(error, RuntimeError)
    assert str(error).startswith("baseline printed no base URL within 1 s (exit status ")
    assert "(no output)" in str(error)


def test_a_server_that_binds_but_never_answers_200_fails_at_the_start_timeout():
    port = _free_port()
    child = (
        "import socket, time\n"
        f"s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(8)\n"
        f"print('base URL: http://127.0.0.1:{port}', flush=True)\n"
        "time.sleep(60)\n"
    )
    error = _run([sys.executable, "-c", child], within=20.0, name="baseline", timeout=2.0)
    assert isinstance(error, RuntimeError)
    assert str(error).startswith("baseline answered no 200 within 2 s of its spawn")


def test_main_without_the_fast_extra_stops_at_once_with_bench_https_hint(monkeypatch, capsys):
    # Both hidden: CI's install (the README's '.[test]') has neither, a developer's venv both.
    real = importlib.util.find_spec
    hidden = ("uvloop", "httptools")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in hidden else real(name, *a))
    assert bench_start.main(["--repeat", "1"]) == 2
    assert capsys.readouterr().err == (
        "bench_start: uvloop, httptools not installed; both servers must run on uvloop + httptools for a fair "
        "comparison: pip install 'mockoss[fast]'\n"
    )


def test_bench_http_says_the_same(monkeypatch, capsys):
    """bench_http.py's own check is the same function: one message for a missing extra."""
    import bench_http

    real = importlib.util.find_spec
    hidden = ("uvloop", "httptools")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in hidden else real(name, *a))
    assert bench_http.main(["--quick"]) == 2
    assert capsys.readouterr().err == (
        "bench_http: uvloop, httptools not installed; both servers must run on uvloop + httptools for a fair "
        "comparison: pip install 'mockoss[fast]'\n"
    )


@pytest.mark.parametrize("module", ["uvloop", "httptools"])
def test_the_baseline_itself_says_which_module_is_missing(monkeypatch, capsys, module):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    with pytest.raises(SystemExit) as caught:
        benchlib.serve_baseline("/nonexistent.pickle")
    assert caught.value.code == 2
    # the other module may be missing too (CI installs neither): the missing ones are named first
    named, _, rest = capsys.readouterr().err.removeprefix("bench_http --serve-baseline: ").partition(" not installed;")
    assert module in named.split(", ") and rest.endswith("pip install 'mockoss[fast]'\n")
