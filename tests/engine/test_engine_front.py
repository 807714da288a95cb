"""mockoss's side of ``--engine vllm``, without vLLM: the side channel, the scripted front, the flags.

A stand-in upstream echoes what it receives, so these tests see exactly what real vLLM would be
sent (tests/engine/test_vllm_engine.py runs the same path against real vLLM where it is installed).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpx
import pytest

from mockoss.cli import main
from mockoss.engines.vllm.launcher import DEFAULT_FLAGS, command
from mockoss.engines.vllm.sidechannel import XARGS_KEY, attach, script_of
from mockoss.scenario.loader import scenario_from_data
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer
from mockoss.upstream import Upstream

MODEL = "openai/gpt-oss-20b"
RAW = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hi!<|return|>"


class _Echo(BaseHTTPRequestHandler):
    """Answers every POST with 200 and ``{"path": …, "received": <the JSON body>}``."""

    seen: ClassVar[list[dict]] = []  # the bodies received, shared by every handler instance

    def do_POST(self) -> None:  # http.server's name
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.seen.append(body)
        data = json.dumps({"path": self.path, "received": body}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo() -> Iterator[str]:
    _Echo.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def front(echo: str) -> Iterator[ThreadedServer]:
    steps = [{"completion": {"raw": RAW}}, {"error": {"status": 429, "message": "slow down"}}]
    server = MockServer(scenario=scenario_from_data({"steps": steps}, name="front", default_version=True), upstream=Upstream(echo, mode="scripted"))
    running = ThreadedServer(server).start()
    yield running
    running.stop()


def test_attach_keeps_the_clients_xargs_and_script_of_reads_it_back() -> None:
    body = {"model": MODEL, "vllm_xargs": {"mine": 1}}
    sent = attach(body, (200005, 35644))
    assert sent["vllm_xargs"] == {"mine": 1, XARGS_KEY: [200005, 35644]}
    assert body["vllm_xargs"] == {"mine": 1}  # the client's body is not changed
    assert script_of(sent["vllm_xargs"]) == (200005, 35644)
    assert script_of({"mine": 1}) is None and script_of(None) is None
    for bad in ([-1], [201088], "200005", [True]):
        with pytest.raises(ValueError, match=XARGS_KEY):
            script_of({XARGS_KEY: bad})


def test_front_sends_the_scenario_tokens_and_relays_the_engine_answer(front: ThreadedServer) -> None:
    from mockoss.harmony import Completion

    request = {"model": MODEL, "input": "hello", "vllm_xargs": {"mine": "kept"}}
    with httpx.Client(timeout=30) as http:
        answer = http.post(front.url + "/v1/responses", json=request)
        scripted_error = http.post(front.url + "/v1/responses", json=request)
    assert answer.status_code == 200
    received = answer.json()["received"]
    assert answer.json()["path"] == "/v1/responses"
    assert received["vllm_xargs"] == {"mine": "kept", XARGS_KEY: list(Completion.from_text(RAW).tokens)}
    assert {k: v for k, v in received.items() if k != "vllm_xargs"} == {"model": MODEL, "input": "hello"}
    # The scripted 429 is mockoss's own answer: the engine never sees it.
    assert scripted_error.status_code == 429 and len(_Echo.seen) == 1
    first, second = front.server.requests
    assert (first.scenario, first.step, first.status, first.completion) == ("front", 0, 200, RAW)
    assert (second.step, second.status) == (1, 429)


def test_invalid_requests_are_answered_by_mockoss(front: ThreadedServer) -> None:
    with httpx.Client(timeout=30) as http:
        answer = http.post(front.url + "/v1/chat/completions", json={"model": MODEL, "messages": "not a list"})
    assert answer.status_code == 400 and _Echo.seen == []
    assert [r.status for r in front.server.requests] == [400]


def test_vllm_command_puts_user_flags_last(tmp_path: Path) -> None:
    argv = command("py", tmp_path, 1234, models=("a", "b"), extra=["--reasoning-parser", "openai_gptoss", "--max-model-len", "4096"])
    assert argv[:3] == ["py", "-m", "vllm.entrypoints.openai.api_server"]
    assert argv[argv.index("--served-model-name") + 1 : argv.index("--served-model-name") + 3] == ["a", "b"]
    assert argv[-4:] == ["--reasoning-parser", "openai_gptoss", "--max-model-len", "4096"]
    assert "--logits-processors" in argv and set(DEFAULT_FLAGS) <= set(argv)
    assert argv[argv.index("--host") + 1] == "127.0.0.1"


def test_serve_engine_flags_without_engine_are_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--scenario", "leaked-recipient-no-tools", "--vllm-arg=--max-model-len=4096"]) == 2
    assert "--vllm-arg needs --engine vllm" in capsys.readouterr().err


def test_serve_engine_without_vllm_says_how_to_install_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'missing: vllm' >&2\nexit 1\n")
    python.chmod(0o755)
    code = main(["serve", "--scenario", "leaked-recipient-no-tools", "--engine", "vllm", "--vllm-python", str(python)])
    err = capsys.readouterr().err
    assert code == 2
    assert "real vLLM is not usable" in err and "missing: vllm" in err
    # the checkout's extra, never 'mockoss[vllm]' from the index (mockoss is not published; 749efdf)
    assert "pip install -e '" in err and "[vllm]'" in err and "'mockoss[vllm]'" not in err


def test_serve_engine_rejects_another_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--scenario", "leaked-recipient-no-tools", "--engine", "vllm", "--profile", "ollama"]) == 2
    assert "--engine vllm cannot be combined with --profile ollama" in capsys.readouterr().err


def test_pytest_option_reports_a_missing_vllm(pytester: pytest.Pytester, tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'missing: vllm' >&2\nexit 1\n")
    python.chmod(0o755)
    pytester.makepyfile(
        """
        def test_uses_the_fixture(mockoss):
            mockoss.use("leaked-recipient-no-tools")
        """
    )
    result = pytester.runpytest_subprocess("--mockoss-engine", "vllm", "--mockoss-vllm-python", str(python), "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*real vLLM is not usable*pip install -e '*[[]vllm[]]'*"])  # the checkout, not the index


def test_plugin_is_inert_unless_mockoss_starts_vllm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed next to a real vLLM, mockoss must not replace its gpt-oss: without
    MOCKOSS_VLLM_SCRIPTED=1 the entry point returns before importing vLLM at all."""
    import sys

    from mockoss.engines.vllm.plugin import ENABLE_ENV, register

    monkeypatch.delenv(ENABLE_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "vllm", None)  # importing vllm now raises ImportError
    register()


def test_engine_environment_points_vllm_at_the_plugin_and_a_source_checkout(tmp_path: Path) -> None:
    from mockoss.engines.vllm.launcher import VllmEngine
    from mockoss.engines.vllm.plugin import ENABLE_ENV, PLUGIN_NAME

    env = VllmEngine(python="py", vllm_src=str(tmp_path), log_path=tmp_path / "log")._env()
    assert env[ENABLE_ENV] == "1" and env["VLLM_PLUGINS"] == PLUGIN_NAME
    assert env["PYTHONPATH"].split(":")[0] == str(tmp_path)
    assert env["HF_HUB_OFFLINE"] == "1" and (Path(env["TIKTOKEN_ENCODINGS_BASE"]) / "o200k_base.tiktoken").is_file()
