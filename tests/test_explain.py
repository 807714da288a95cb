"""`mockoss explain`: every registered profile's view of a scenario, as a table and as JSON."""

import io
import json

import pytest

from mockoss.cli import main
from mockoss.profiles.registry import PROFILES

REASONING = "The user asks to call get_current_time on the time MCP server for America/Los_Angeles."
ARGUMENTS = '{"name":"get_current_time","arguments":{"timezone":"America/Los_Angeles"}}'
MCP = {"type": "mcp_call", "name": "mcp", "arguments": ARGUMENTS}


def run_json(capsys, *args):
    assert main(["explain", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def row(rows, profile, endpoint, tools):
    (found,) = [r for r in rows if (r["profile"], r["endpoint"], r["tools"]) == (profile, endpoint, tools)]
    return found


def test_leaked_recipient_is_an_mcp_call_for_vllm_responses(capsys):
    rows = run_json(capsys, "leaked-recipient-no-tools", "--endpoint", "responses")
    for profile in ("vllm", "vllm-2025", "vllm-0.10.1"):
        assert row(rows, profile, "responses", "no-tools") == {
            "step": 0,
            "profile": profile,
            "endpoint": "responses",
            "tools": "no-tools",
            "status": 200,
            "items": ["reasoning", "mcp_call"],
            "content": None,
            "reasoning": REASONING,
            "tool_calls": [MCP],
            "error": None,
            "answer": None,
            "rule": None,
            "request": None,
        }
    assert {r["endpoint"] for r in rows} == {"responses"}


def test_every_registered_profile_appears(capsys):
    rows = run_json(capsys, "leaked-recipient-no-tools")
    assert {r["profile"] for r in rows} == set(PROFILES)
    if "openai" in PROFILES:  # added by the openai profile: a message, not an MCP call
        assert "message" in row(rows, "openai", "responses", "no-tools")["items"]


def test_chat_rows_for_vllm_and_variants(capsys):
    rows = run_json(capsys, "clean-tool-call", "--step", "0", "--endpoint", "chat")
    assert {r["step"] for r in rows} == {0}
    vllm = row(rows, "vllm", "chat", "tools")
    assert (vllm["status"], vllm["items"], vllm["content"]) == (200, ["message"], None)
    assert vllm["reasoning"] == "Need to use function get_weather."
    assert vllm["tool_calls"] == [
        {"type": "function", "name": "get_weather", "arguments": '{"location": "San Francisco"}'}
    ]
    assert row(rows, "vllm", "chat", "no-tools")["tool_calls"] == []
    # 2025: tool_choice is never read, so a request without tools still gets the call.
    assert row(rows, "vllm-2025", "chat", "no-tools")["tool_calls"] == vllm["tool_calls"]
    old = row(rows, "vllm-0.10.1", "chat", "tools")
    assert (old["status"], old["error"]) == (
        500,
        "Tool call in Chat Completion API is not supported for gpt-oss yet. Please use Responses API instead.",
    )


def test_switch_and_tools_flags(capsys):
    rows = run_json(
        capsys,
        "leaked-recipient-no-tools",
        "--endpoint",
        "responses",
        "--tools",
        "a,b",
        "--switch",
        "responses_ignore_recipients_without_tools=true",
    )
    got = row(rows, "vllm", "responses", "no-tools")
    assert (got["items"], got["content"]) == (["reasoning", "message"], ARGUMENTS)
    assert row(rows, "vllm", "responses", "tools")["items"] == ["reasoning", "mcp_call"]


def test_raw_completion_on_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("<|channel|>final<|message|>Hello.<|return|>"))
    rows = run_json(capsys, "-", "--endpoint", "chat")
    assert row(rows, "vllm", "chat", "no-tools")["content"] == "Hello."
    # v0.10.1's parse_chat_output: one message is taken as the reasoning, the content is empty.
    old = row(rows, "vllm-0.10.1", "chat", "no-tools")
    assert (old["content"], old["reasoning"]) == ("", "Hello.")


def test_table_is_aligned(capsys):
    assert main(["explain", "leaked-recipient-no-tools", "--endpoint", "responses", "--full"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "step",
        "profile",
        "endpoint",
        "tools",
        "status",
        "items",
        "content",
        "reasoning",
        "tool_calls",
        "error",
    ]
    column = lines[0].index("items")
    vllm = next(line for line in lines if line.split()[1] == "vllm" and "no-tools" in line)
    assert vllm[column:].startswith("reasoning,mcp_call")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-scenario"], "unknown scenario"),
        (["clean-answer", "--switch", "nope=1"], "no profile has switch nope"),
    ],
)
def test_errors_exit_2(capsys, args, message):
    assert main(["explain", *args]) == 2
    assert message in capsys.readouterr().err


def test_pick_steps_show_one_row_per_answer_and_templates_are_rendered(tmp_path, capsys):
    path = tmp_path / "pick.yaml"
    path.write_text(
        "version: 1\n"
        "steps:\n"
        "  - pick:\n"
        "      - {weight: 3, completion: {messages: [{channel: final, content: 'Hi {{ request.model }}'}]}}\n"
        "      - {weight: 1, error: {status: 503, message: busy}}\n"
        "  - completion: {messages: [{channel: final, content: 'Echo {{ request.messages[-1].content }}'}]}\n"
    )
    rows = run_json(capsys, str(path), "--endpoint", "chat")
    vllm = [r for r in rows if r["profile"] == "vllm"]
    first = [r for r in vllm if r["step"] == 0 and r["tools"] == "no-tools"]
    assert [(r["answer"], r["content"]) for r in first] == [("pick 1/2, weight 3, template", "Hi openai/gpt-oss-20b")]
    (busy,) = [r for r in vllm if r["step"] == 0 and r["tools"] == "-"]
    assert (busy["answer"], busy["status"], busy["error"]) == ("pick 2/2, weight 1", 503, "busy")
    (needs,) = [r for r in rows if r["step"] == 1]
    assert needs["profile"] == "-" and needs["answer"].startswith("template needs a request: ")


def test_a_recording_of_replays_only_says_why_nothing_is_shown(tmp_path, capsys):
    path = tmp_path / "rec.yaml"
    path.write_text("version: 1\nsteps:\n  - replay: {status: 200, content_type: application/json, body: '{}'}\n")
    assert main(["explain", str(path)]) == 2
    assert "no step a profile can surface (only recorded replays)" in capsys.readouterr().err


def test_explain_says_when_no_chosen_profile_has_the_endpoint(capsys):
    # Newcomer report (second session): it printed "0 of 0 ... all 0 profiles" and exited 0.
    from mockoss.cli import main

    assert main(["explain", "clean-answer", "--profile", "mlx-lm", "--endpoint", "responses"]) == 2
    assert "mlx-lm has no responses endpoint" in capsys.readouterr().err
    assert main(["explain", "clean-answer", "--profile", "mlx-lm,vllm", "--endpoint", "responses"]) == 0
