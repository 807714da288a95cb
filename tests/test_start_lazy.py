"""What ``mockoss serve`` defers to first use stays what it was (issue 9: cold start).

The start no longer imports the recorder (``mockoss.upstream.Recorder``), the eval and explain
commands, or uvicorn's WebSocket protocol (``tests/test_start_imports.py`` checks the modules a
start loads). These tests check that each deferral changes nothing a user sees: the names the
packages export, the command line's help and errors, and the answer to a WebSocket handshake.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from mockoss import cli, cli_parser
from mockoss.server import run
from mockoss.server.core import MockServer


def test_lazy_package_names_are_the_modules_objects():
    import mockoss.eval
    import mockoss.eval.classify
    import mockoss.eval.report
    import mockoss.eval.run
    import mockoss.upstream
    import mockoss.upstream.record
    from mockoss.eval import EvalResult, classify, run_requests
    from mockoss.upstream import Recorder

    assert Recorder is mockoss.upstream.record.Recorder
    assert EvalResult is mockoss.eval.report.EvalResult and run_requests is mockoss.eval.run.run_requests
    # the function, not the submodule of the same name (imported above), as before
    assert classify is sys.modules["mockoss.eval.classify"].classify and mockoss.eval.classify is classify
    assert set(mockoss.eval.__all__) <= set(dir(mockoss.eval)) | set(mockoss.eval._HOME)
    for package in (mockoss.upstream, mockoss.eval):
        with pytest.raises(AttributeError, match="no attribute 'nope'"):
            package.nope  # noqa: B018


def _subparsers(parser):
    return next(action for action in parser._actions if action.choices and isinstance(action.choices, dict)).choices


def test_each_subcommand_parses_and_helps_as_with_the_full_parser():
    full = _subparsers(cli_parser.build_parser())
    assert {"serve", "eval", "explain", "profiles", "validate"} <= set(full)
    for name, sub in full.items():
        assert _subparsers(cli_parser.build_parser(name))[name].format_help() == sub.format_help(), name
    # named another command, eval and explain are added bare: their modules are not imported for it
    bare = _subparsers(cli_parser.build_parser("serve"))
    assert bare["eval"].format_help() != full["eval"].format_help()


@pytest.mark.parametrize(("argv", "command"), [
    (["serve", "--port", "0"], "serve"),
    (["eval", "--help"], "eval"),
    (["-h", "serve"], None),  # the top-level help: every subcommand's line
    (["--version"], None),
    ([], None),
    (["nope"], "nope"),
])
def test_command_is_the_first_word_unless_an_option_comes_first(argv, command):
    assert cli._command(argv) == command


@pytest.mark.parametrize("argv", [["-h", "serve"], ["nope"]])
def test_top_level_help_and_errors_list_every_subcommand_with_its_help(argv):
    from mockoss.eval.command import HELP as EVAL_HELP

    done = subprocess.run([sys.executable, "-m", "mockoss", *argv], capture_output=True, text=True, timeout=60, check=False)
    shown = done.stdout + done.stderr
    assert "explain" in shown and "eval" in shown
    if argv[0] == "-h":
        assert done.returncode == 0 and " ".join(EVAL_HELP.split()[:4]) in " ".join(shown.split())
    else:
        assert done.returncode == 2 and "invalid choice: 'nope'" in shown


def test_websocket_handshake_gets_the_403_uvicorns_auto_protocol_gives():
    """uvicorn's WebSocket protocol answers a handshake on a path with no WebSocket route with 403
    (Kludex/uvicorn 0.54.0 ``protocols/websockets``; mockoss serves none). The deferred protocol
    keeps that answer, where ``ws="none"`` would serve the request as plain HTTP (200 on
    ``/v1/models``) and log two warnings per request."""
    pytest.importorskip("websockets")
    config = run._config(MockServer(scenario="clean-answer"), "warning")
    assert callable(config.ws)
    server = run.ThreadedServer(MockServer(scenario="clean-answer")).start()
    try:
        port = int(server.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            )
            head = sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 403 "), head
    finally:
        server.stop()


def test_websocket_protocol_is_none_without_a_websocket_library(monkeypatch):
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in ("websockets", "wsproto") else found(name, *a))
    assert run._websocket_protocol() is None  # what ws="auto" resolves to then


def test_a_loaded_scenario_builds_only_the_file_model_and_errors_are_unchanged(tmp_path):
    # The scenario models nested in ScenarioFile (steps, rules, match, transport, replay) are
    # deferred (pydantic defer_build): ScenarioFile's validator holds their schemas, and each is
    # built alone only when used alone (`mockoss schema`, an X-Mockoss-Transport header). A plain
    # serve used to build all of them at import (issue 9, start-up).
    code = (
        "import json\n"
        "from mockoss.scenario.loader import load_scenario\n"
        "from mockoss.scenario import schema, match_spec, transport, replay\n"
        "load_scenario('clean-answer')\n"
        "models = [schema.StepSpec, schema.RuleSpec, schema.PickOption, schema.CompletionSpec, schema.HarmonyMessageSpec,\n"
        "          match_spec.MatchSpec, transport.TransportSpec, replay.ReplaySpec]\n"
        "print(json.dumps({m.__name__: m.__pydantic_complete__ for m in models}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert not any(__import__("json").loads(done.stdout.splitlines()[-1]).values()), done.stdout
    # the same problems found with the same words, through the file model or a model alone
    from mockoss.scenario.loader import ScenarioError, scenario_from_data
    from mockoss.scenario.transport import TransportSpec

    with pytest.raises(ScenarioError) as info:
        scenario_from_data({"version": 1, "steps": [{"completion": {"raw": "x"}, "transport": {"ttft_ms": -1}}]}, name="t")
    assert str(info.value) == "<inline>: steps[0].transport.ttft_ms: Input should be greater than or equal to 0"
    assert TransportSpec.model_validate({"ttft_ms": 5}).ttft_ms == 5


def test_profile_errors_without_the_hint_and_timeline_modules_loaded_at_start():
    from mockoss.profiles.registry import ProfileError, get_profile

    with pytest.raises(ProfileError, match=r"unknown profile 'vlm' \(did you mean 'vllm'\?\)"):
        get_profile("vlm")
    with pytest.raises(ProfileError, match=r"has no switch 'strictt' \(did you mean 'strict'\?\)"):
        get_profile("vllm", {"strictt": True})
    with pytest.raises(ProfileError, match=r"^vllm@x: 'x' is not a release name; releases: 0\.10\.1\+gptoss, "):
        get_profile("vllm@x")
    assert get_profile("vllm@0.26.0").name == "vllm@0.26.0"
