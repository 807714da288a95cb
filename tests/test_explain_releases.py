"""`mockoss explain --profile a,b,c`: one completion across releases of one server."""

from __future__ import annotations

import json

from mockoss.cli import main


def test_one_completion_across_three_vllm_releases(capsys):
    assert main(["explain", "clean-tool-call", "--step", "0", "--profile", "vllm@0.10.1,vllm@0.26.0,vllm", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["profile"] for r in rows} == {"vllm@0.10.1", "vllm@0.26.0", "vllm"}
    chat_tools = [r for r in rows if (r["endpoint"], r["tools"]) == ("chat", "tools")]
    # side by side, in the order given: 0.10.1 had no chat tool support, later releases return the call
    assert [r["profile"] for r in chat_tools] == ["vllm@0.10.1", "vllm@0.26.0", "vllm"]
    assert chat_tools[0]["status"] == 500 and "not supported for gpt-oss yet" in chat_tools[0]["error"]
    assert [c["name"] for c in chat_tools[2]["tool_calls"]] == ["get_weather"]


def test_the_table_ends_with_the_timeline_changes_between_the_releases(capsys):
    assert main(["explain", "clean-answer", "--profile", "vllm@0.10.1,vllm@0.26.0,vllm", "--endpoint", "chat"]) == 0
    out = capsys.readouterr().out
    assert "vllm@0.10.1 -> vllm@0.26.0:" in out
    assert "0.10.2 chat_parser: 'reasoning_and_final' -> 'openai_tool_parser'" in out
    assert "vllm@0.26.0 -> vllm:" in out and "harmony_library: 'openai-harmony-0.0.8' -> 'oss-harmony'" in out


def test_an_unknown_release_exits_2(capsys):
    assert main(["explain", "clean-answer", "--profile", "vllm@0.1.0"]) == 2
    assert "the vllm timeline starts at" in capsys.readouterr().err
