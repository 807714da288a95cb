"""The CLI and docs friction points of issue 11, each as a user meets it."""

from __future__ import annotations

import importlib.resources
import json
import socket
import tomllib
from pathlib import Path

import pytest
import yaml

from mockoss import steps as steps_module
from mockoss.cli import main
from mockoss.cli_parser import build_parser
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.scenario.loader import ScenarioError, load_scenario
from mockoss.server.core import MockServer
from mockoss.server.run import ThreadedServer

ROOT = Path(__file__).resolve().parent.parent
CHAT = {"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def request_file(tmp_path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps(CHAT))
    return str(path)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_eval_with_nothing_listening_exits_non_zero(request_file, capsys):
    code = main(["eval", "--url", f"http://127.0.0.1:{_free_port()}", "--request", request_file, "-n", "2"])
    assert code == 3
    err = capsys.readouterr().err
    assert "2 of 2 requests did not reach" in err and "connection error (is the server running" in err


def test_eval_takes_the_root_url_and_fails_on_a_wrong_path(request_file, capsys):
    running = ThreadedServer(MockServer(scenario="clean-answer")).start()
    try:
        assert main(["eval", "--url", running.url, "--request", request_file, "-n", "2", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["url"] == running.url + "/v1" and sum(o["count"] for o in out["outcomes"]) == 2
        assert main(["eval", "--url", running.url + "/v2", "--request", request_file, "-n", "1"]) == 3
        assert "HTTP 404" in capsys.readouterr().err
    finally:
        running.stop()


def test_misspelt_scenario_gets_a_suggestion_not_the_whole_list():
    with pytest.raises(ScenarioError) as caught:
        load_scenario("persistnt-leak")
    message = str(caught.value)
    assert "did you mean 'persistent-leak'?" in message
    assert len(message) < 200


def test_misspelt_switch_gets_a_suggestion():
    with pytest.raises(ProfileError, match=r"has no switch 'harmony_eror_status' \(did you mean 'harmony_error_status'\?\)"):
        get_profile("vllm", {"harmony_eror_status": 400})
    with pytest.raises(ScenarioError, match=r"switches\.strikt: no profile has this switch; did you mean 'strict'\?"):
        MockServer(scenario=steps_module.script(steps_module.final("x"), switches={"strikt": True}))


def test_profiles_describes_each_switch(capsys):
    assert main(["profiles", "vllm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("  harmony_error_status = 500  (400 | 500)")
    assert lines[at + 1].startswith("      HTTP status of a ``HarmonyError``")
    assert main(["profiles", "--json"]) == 0
    vllm = json.loads(capsys.readouterr().out)[0]
    assert all(switch["description"] for switch in vllm["switches"])


def test_faults_lists_kinds_and_parameters(capsys):
    assert main(["faults"]) == 0
    out = capsys.readouterr().out
    assert "tool_call_as_text: The tool call is written as final-answer text" in out
    assert "    form = 'bare'  (one of 'bare', 'role', 'channel', 'json'):" in out
    assert main(["faults", "truncatd"]) == 2
    assert "did you mean 'truncated'?" in capsys.readouterr().err
    assert main(["faults", "truncated", "--json"]) == 0
    assert [p["name"] for p in json.loads(capsys.readouterr().out)[0]["params"]][:2] == ["at", "tokens"]


def test_show_prints_a_shipped_scenario_and_its_builder_code(capsys):
    shipped = (importlib.resources.files("mockoss.scenarios") / "clean-tool-call.yaml").read_text(encoding="utf-8")
    assert main(["show", "clean-tool-call"]) == 0
    assert capsys.readouterr().out == shipped
    assert main(["show", "clean-tool-call", "--python"]) == 0
    code = capsys.readouterr().out
    namespace = dict(vars(steps_module))
    exec(code, namespace)  # noqa: S102 - the command's own output
    assert namespace["scenario"].to_dict() == yaml.safe_load(shipped)
    assert main(["show", "clean-tool-cal"]) == 2
    assert "did you mean 'clean-tool-call' or" in capsys.readouterr().err


def test_switch_flag_takes_the_comma_list_the_header_takes():
    args = build_parser().parse_args(["serve", "--switch", "harmony_error_status=400,strict=false", "--switch", "x=a"])
    assert args.switch == [("harmony_error_status", 400), ("strict", False), ("x", "a")]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--switch", "harmony_error_status"])


def test_license_is_an_spdx_expression():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"


def test_a_near_miss_model_name_says_how_to_accept_it():
    server = MockServer(scenario="clean-answer")
    reply = server.handle("chat", json.dumps({**CHAT, "model": "gpt-oss-20b"}).encode(), {})
    assert reply.status == 404
    assert json.loads(reply.body)["error"]["message"] == (
        "The model `gpt-oss-20b` does not exist. (mockoss: this server answers to 'openai/gpt-oss-20b'; to accept "
        "'gpt-oss-20b' too, start it with --served-model-name openai/gpt-oss-20b gpt-oss-20b, or "
        "MockServer(served_model_names=[...]), or in pytest @pytest.mark.mockoss(served_model_names=[...]))"
    )
    other = server.handle("chat", json.dumps({**CHAT, "model": "other"}).encode(), {})
    assert json.loads(other.body)["error"]["message"] == "The model `other` does not exist."
    accepting = MockServer(scenario="clean-answer", served_model_names=["openai/gpt-oss-20b", "gpt-oss-20b"])
    assert accepting.handle("chat", json.dumps({**CHAT, "model": "gpt-oss-20b"}).encode(), {}).status == 200


def test_readme_has_an_install_section_and_the_recipe():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Install into your project" in readme and "### Test your agent's tool loop" in readme


def test_serve_takes_auto_session():
    assert build_parser().parse_args(["serve", "--auto-session"]).auto_session is True
    assert build_parser().parse_args(["serve"]).auto_session is False


def test_faults_transport_lists_the_transport_fields(capsys):
    assert main(["faults", "--transport"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ttft_ms = 0.0: Time to first token, ms")
    assert "disconnect_after_frames = None: Drop the connection after this many frames" in out
