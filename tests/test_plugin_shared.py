"""Two pytest workers (-n 2) share one `mockoss serve` through the mockoss_remote fixture and get
what a server of their own gives each test (mockoss/server/control.py sessions)."""

import json
import os
import signal
import subprocess
import sys
import threading

import httpx
import pytest

SCENARIO = """\
version: 1
steps:
  - completion: {raw: "<|channel|>final<|message|>One<|return|>"}
  - completion: {raw: "<|channel|>final<|message|>Two<|return|>"}
"""

SUITE = '''
import json, os, pathlib, httpx, pytest

@pytest.mark.parametrize("n", range(6))
def test_each_test_has_its_own_session(mockoss_remote, n):
    mockoss_remote.use(pathlib.Path(os.environ["SHARED_SCENARIO"]))
    chat = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}
    bodies = [httpx.post(mockoss_remote.base_url + "/chat/completions", json=chat).json() for _ in range(2)]
    httpx.get(mockoss_remote.base_url + "/models")
    log = mockoss_remote.requests
    assert [(e["method"], e["path"]) for e in log] == [("POST", "/v1/chat/completions")] * 2 + [("GET", "/v1/models")]
    assert {e["test_id"] for e in log} == {mockoss_remote.test_id}
    out = pathlib.Path(os.environ["SHARED_OUT"]) / f"{n}.json"
    out.write_text(json.dumps(bodies))
'''


def _drain(stream):
    for _ in stream:
        pass
    stream.close()


def _stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    proc.stdout.close()


def _serve(*args):
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockoss.cli", "serve", "--port", "0", "--scenario", "clean-answer", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    for line in proc.stdout:
        if line.startswith("root URL: "):
            threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
            return proc, line.split()[2]
    proc.kill()
    proc.stdout.close()
    raise RuntimeError("mockoss serve did not start")


def test_two_workers_sharing_one_server_get_what_their_own_servers_give(pytester, tmp_path, monkeypatch):
    scenario = tmp_path / "shared.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "out"
    out.mkdir()
    proc, url = _serve()
    try:
        monkeypatch.setenv("SHARED_SCENARIO", str(scenario))
        monkeypatch.setenv("SHARED_OUT", str(out))
        for name in ("CI", "BUILD_NUMBER"):
            monkeypatch.delenv(name, raising=False)
        pytester.makepyfile(test_shared=SUITE)
        result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--mockoss-url", url)
        result.assert_outcomes(passed=6)
        # A dedicated server, fresh, gives the same bytes (ids included) as each shared session.
        alone, alone_url = _serve("--scenario", str(scenario))
        try:
            chat = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "Hi"}]}
            expected = [httpx.post(alone_url + "/v1/chat/completions", json=chat).json() for _ in range(2)]
        finally:
            _stop(alone)
    finally:
        _stop(proc)
    results = [json.loads((out / f"{n}.json").read_text()) for n in range(6)]
    assert [r[0]["choices"][0]["message"]["content"] for r in results] == ["One"] * 6
    assert all(r == expected for r in results)


def test_mockoss_remote_without_a_url_fails_clearly(pytester, monkeypatch):
    monkeypatch.delenv("MOCKOSS_URL", raising=False)
    pytester.makepyfile("def test_x(mockoss_remote): pass")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*mockoss_remote needs a shared server: pytest --mockoss-url*"])


if os.name != "posix":  # pragma: no cover
    pytestmark = pytest.mark.skip("signals")
