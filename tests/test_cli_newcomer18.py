"""The command line's friction from the eighteenth session's newcomer (items 6-8) and breaker (item 7).

* ``mockoss profiles`` is an overview (switch names); ``mockoss profiles NAME[@RELEASE]`` one
  profile with whole descriptions, wrapped to the terminal; ``--json`` unchanged.
* ``mockoss`` alone prints the help (exit 2, as before: nothing ran).
* ``mockoss validate``: ``ok: 1 scenario, 1 rule, 1 step``.
* A switch named twice on the command line is refused as ``X-Mockoss-Switch`` refuses it
  (``mockoss.server.replies._parse_switches``), exit 2.
* ``mockoss --version``, ``--help`` and a mistyped ``--scenario`` import only what they need.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from mockoss import cli_parser
from mockoss.cli import main
from mockoss.profiles.catalog import describe_profiles
from mockoss.profiles.registry import PROFILES, ProfileError, get_profile

# -- mockoss profiles ------------------------------------------------------------------------------


def test_overview_is_short_and_names_every_switch(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["profiles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) < 100  # 382 lines before, every switch with a cut description
    text = " ".join(lines)
    for entry in describe_profiles():
        assert f"{entry['name']}: endpoints {', '.join(entry['endpoints'])}; model {entry['default_model']}" in lines
        for switch in entry["switches"]:
            assert switch["name"] in text
    assert "…" not in text and "mockoss profiles NAME" in text
    assert max(map(len, lines)) <= 100


def test_one_profile_prints_each_description_whole_wrapped_to_the_terminal(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "72")
    assert main(["profiles", "vllm"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("vllm: endpoints ")
    described = [line for line in out.splitlines() if line.startswith("      ")]
    assert all(len(line) <= 72 or " " not in line.strip() for line in described)  # a long path stays whole
    flat = " ".join(out.split())
    for switch in describe_profiles()[0]["switches"]:
        assert " ".join(switch["description"].split()) in flat, switch["name"]  # whole, not cut at 110
    assert "  harmony_error_status = 500  (400 | 500)" in out.splitlines()


def test_a_release_shows_that_releases_defaults(capsys):
    newest, old = get_profile("vllm"), get_profile("vllm@0.10.1")
    differ = [
        name for name in ("error_body", "reasoning_field", "id_digits") if getattr(newest, name) != getattr(old, name)
    ]
    assert differ
    assert main(["profiles", "vllm@0.10.1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("vllm@0.10.1: endpoints ")
    for name in differ:
        value = getattr(old, name)
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        assert any(line.startswith(f"  {name} = {shown}") for line in lines), name


def test_one_profile_as_json_is_its_entry_of_the_whole_listing(capsys):
    assert main(["profiles", "ollama", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one == next(entry for entry in describe_profiles() if entry["name"] == "ollama")
    assert main(["profiles", "--json"]) == 0  # unchanged: the list of every profile
    assert [entry["name"] for entry in json.loads(capsys.readouterr().out)] == list(PROFILES)


def test_an_unknown_profile_or_name_with_timeline_is_a_usage_error(capsys):
    assert main(["profiles", "olama"]) == 2
    with pytest.raises(ProfileError) as info:
        get_profile("olama")
    assert capsys.readouterr().err == f"mockoss: error: {info.value}\n"  # the words serve --profile and the marker use
    assert main(["profiles", "vllm", "--timeline", "vllm"]) == 2
    assert "not both" in capsys.readouterr().err


# -- mockoss with no arguments ---------------------------------------------------------------------


def test_no_arguments_print_the_help_and_exit_2(capsys):
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: mockoss ") and "serve a scenario over HTTP" in captured.out
    assert "required" not in captured.out + captured.err  # argparse's "the following arguments are required: command"


def test_python_dash_m_with_no_arguments_prints_the_help():
    done = subprocess.run([sys.executable, "-m", "mockoss"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stderr == ""
    assert "profiles" in done.stdout and "explain" in done.stdout and "options:" in done.stdout


def test_help_lines_of_lazily_added_commands_are_their_modules():
    from mockoss import explain
    from mockoss.eval import command

    assert cli_parser.HELP["eval"] == command.HELP and cli_parser.HELP["explain"] == explain.HELP


# -- mockoss validate ------------------------------------------------------------------------------


def _scenario(tmp_path, name, steps):
    path = tmp_path / f"{name}.yaml"
    path.write_text("version: 1\nsteps:\n" + "".join("  - completion: {raw: x}\n" for _ in range(steps)))
    return str(path)


def test_validate_counts_in_the_singular_for_one(tmp_path, capsys):
    assert main(["validate", _scenario(tmp_path, "a", 1)]) == 0
    assert capsys.readouterr().out == "ok: 1 scenario, 1 rule, 1 step\n"
    assert main(["validate", _scenario(tmp_path, "a", 1), _scenario(tmp_path, "b", 2)]) == 0
    assert capsys.readouterr().out == "ok: 2 scenarios, 2 rules, 3 steps\n"
    assert main(["validate", str(tmp_path / "missing.yaml")]) == 1
    assert capsys.readouterr().err == "1 problem\n"


# -- --switch given twice --------------------------------------------------------------------------


def _header_words(header: str) -> str:
    from mockoss.server.replies import SWITCH_HEADER, _parse_switches

    with pytest.raises(ProfileError) as info:
        _parse_switches(header)
    return str(info.value).removeprefix(f"{SWITCH_HEADER}: ")


@pytest.mark.parametrize(
    "flags",
    [
        ["--switch", "strict=true,strict=false"],
        ["--switch", "strict=true", "--switch", "strict=false"],
        ["--switch", "harmony_error_status=400,strict=true", "--switch", "strict=true"],
    ],
)
def test_a_switch_given_twice_is_refused_with_the_headers_words(flags, capsys, monkeypatch):
    from mockoss import cli

    monkeypatch.setattr(cli, "_serve", lambda args: 0)  # were the flags taken, nothing serves
    with pytest.raises(SystemExit) as info:
        main(["serve", *flags, "--port", "0"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(f"mockoss serve: error: argument --switch: {_header_words('strict=true,strict=false')}\n")


def test_stream_interval_and_the_switch_of_that_name_together_are_refused(capsys, monkeypatch):
    from mockoss import cli

    monkeypatch.setattr(cli, "_serve", lambda args: 0)
    with pytest.raises(SystemExit) as info:
        main(["serve", "--stream-interval", "2", "--switch", "stream_interval=3", "--port", "0"])
    assert info.value.code == 2
    assert "--stream-interval and --switch: switch 'stream_interval' is given more than once" in capsys.readouterr().err


def test_distinct_switches_still_collect_across_flags():
    args = cli_parser.build_parser().parse_args(
        ["serve", "--switch", "strict=false", "--switch", "harmony_error_status=400"]
    )
    assert args.switch == [("strict", False), ("harmony_error_status", 400)]


# -- start-up: what the paths that do not serve import ---------------------------------------------

_RUN_AND_LIST = textwrap.dedent(
    """
    import json, sys
    from mockoss.cli import main
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
    encoding = sys.modules.get("mockoss.harmony.encoding")
    loaded = bool(encoding and encoding.load_encoding.cache_info().currsize)
    print(json.dumps({"code": code, "modules": sorted(sys.modules), "encoding_loaded": loaded}))
    """
)


def _run_and_list(*argv: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _RUN_AND_LIST, *argv], capture_output=True, text=True, timeout=120, check=False
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_version_and_help_import_no_library_of_the_commands():
    for argv in (["--version"], ["--help"], ["serve", "--switch", "a=1,a=2"]):
        result = _run_and_list(*argv)
        assert result["code"] in (0, 2)
        heavy = {"openai_harmony", "pydantic", "yaml" if argv[0] != "serve" else "uvicorn", "uvicorn",
                 "mockoss.harmony", "mockoss.profiles.base", "mockoss.scenario.loader", "mockoss.server.core",
                 "mockoss.eval.command", "mockoss.explain", "mockoss.upstream.config"}  # fmt: skip
        if argv[0] == "serve":
            heavy -= {"mockoss.upstream.config"}  # serve's own flags
        assert not heavy & set(result["modules"]), (argv, heavy & set(result["modules"]))


@pytest.mark.parametrize("scenario", ["clean-answr", "missing.yaml", "."])
def test_a_mistyped_scenario_is_refused_before_the_server_and_the_vocabulary_load(scenario):
    result = _run_and_list("serve", "--scenario", scenario, "--port", "0")
    assert result["code"] == 2 and not result["encoding_loaded"]
    assert not {"uvicorn", "mockoss.server.core", "mockoss.server.run"} & set(result["modules"])


def test_a_mistyped_scenario_gets_the_loaders_words(capsys):
    from mockoss.scenario.loader import ScenarioError, load_scenario

    with pytest.raises(ScenarioError) as info:
        load_scenario("clean-answr")
    assert main(["serve", "--scenario", "clean-answr", "--port", "0"]) == 2
    assert capsys.readouterr().err == f"mockoss: error: {info.value}\n"
