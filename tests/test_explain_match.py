"""`mockoss explain` sends, for a rule with a ``match`` block, requests that rule answers.

Before the eighteenth session explain sent the same minimal body whatever the rule matched, so
``tool-choice-none-still-calls`` (``match: {tool_choice: none}``) showed vLLM returning the
``get_weather`` call for a request without ``tool_choice``, where the rule answers only
``tool_choice: "none"`` and current vLLM drops the call for it (vllm-project/vllm PR #30867,
``--exclude-tools-when-tool-choice-none``; mockoss's vllm switch ``tool_choice_none``).
"""

import json

import pytest

from mockoss.cli import main
from mockoss.explain_request import matched_request, sample_text
from mockoss.explain_rows import request_body
from mockoss.scenario.match_spec import MatchSpec


def run_json(capsys, *args):
    assert main(["explain", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def rows_of(rows, profile, endpoint, tools):
    return [r for r in rows if (r["profile"], r["endpoint"], r["tools"]) == (profile, endpoint, tools)]


def test_tool_choice_none_rule_is_shown_with_tool_choice_none(capsys):
    rows = run_json(capsys, "tool-choice-none-still-calls", "--endpoint", "chat")
    (vllm,) = rows_of(rows, "vllm", "chat", "tools")
    assert vllm["status"] == 200 and vllm["tool_calls"] == []  # the call is dropped (vllm PR #30867)
    assert vllm["request"] == "tool_choice=none"
    (old,) = rows_of(rows, "vllm-2025", "chat", "tools")  # before the fix: the call comes back
    assert [c["name"] for c in old["tool_calls"]] == ["get_weather"]
    (plain,) = rows_of(rows, "vllm", "chat", "no-tools")  # no tools: tool_choice counts as none already
    assert plain["request"] is None


def test_tool_choice_none_table_names_what_was_sent(capsys):
    assert main(["explain", "tool-choice-none-still-calls", "--endpoint", "chat"]) == 0
    out = capsys.readouterr().out
    assert "chat · tools · sent with tool_choice=none" in out
    assert main(["explain", "tool-choice-none-still-calls", "--endpoint", "chat", "--full"]) == 0
    assert "request" in capsys.readouterr().out.splitlines()[0]


def write(tmp_path, match):
    path = tmp_path / "s.yaml"
    path.write_text(
        "version: 1\nrules:\n  - name: r\n    match: " + json.dumps(match) + "\n    steps:\n"
        "      - completion: {messages: [{channel: final, content: done}]}\n"
    )
    return str(path)


def test_unanswerable_variants_are_not_sent_but_said(tmp_path, capsys):
    rows = run_json(capsys, write(tmp_path, {"tools": True, "endpoint": "chat"}))
    assert {r["endpoint"] for r in rows if r["profile"] != "-"} == {"chat"}
    assert {r["tools"] for r in rows if r["profile"] != "-"} == {"tools"}
    skipped = {(r["endpoint"], r["tools"]): r["error"] for r in rows if r["profile"] == "-"}
    assert set(skipped) == {("chat", "no-tools"), ("responses", "tools"), ("responses", "no-tools")}
    assert "no tools declared" in skipped[("chat", "no-tools")]
    assert "endpoint responses not in [chat]" in skipped[("responses", "tools")]
    assert main(["explain", write(tmp_path, {"tools": True, "endpoint": "chat"})]) == 0
    assert "not sent: the rule answers no such request (no tools declared)" in capsys.readouterr().out


def test_stream_true_cannot_be_shown(tmp_path, capsys):
    rows = run_json(capsys, write(tmp_path, {"stream": True}))
    assert {r["profile"] for r in rows} == {"-"}
    assert all("not a streamed request" in r["error"] for r in rows)


@pytest.mark.parametrize(
    ("match", "check"),
    [
        ({"last_user": "(?i)^weather in [A-Z][a-z]+\\?$"}, lambda b: b["messages"][-1]["content"] == "weather in Aa?"),
        ({"turn": {"min": 3}}, lambda b: [m["role"] for m in b["messages"]] == ["user", "assistant"] * 2 + ["user"]),
        (
            {"last_tool": "error \\d+"},
            lambda b: b["messages"][-1] == {"role": "tool", "tool_call_id": "call_0", "content": "error 0"},
        ),
        ({"role": "tool", "turn": 2}, lambda b: [m["role"] for m in b["messages"]] == ["user", "assistant", "tool"]),
        ({"model": {"regex": "gpt-oss-(20|120)b$"}}, lambda b: b["model"] == "openai/gpt-oss-20b"),
        ({"model": ["my-model", "other"]}, lambda b: b["model"] == "my-model"),
        ({"tool_choice": "lookup"}, lambda b: b["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}),
        ({"tool_names": ["terminal"]}, lambda b: [t["function"]["name"] for t in b["tools"]] == ["lookup", "terminal"]),
        ({"last_message": "^done$"}, lambda b: b["messages"][-1]["content"] == "done"),
    ],
)
def test_chat_request_meets_the_match(match, check):
    body, _headers, _note, unmet = matched_request("chat", request_body("chat", ["lookup"]), MatchSpec.model_validate(match),
                                                   served_model="openai/gpt-oss-20b")  # fmt: skip
    assert unmet == [] and check(body)


@pytest.mark.parametrize(
    "match", [{"turn": 2, "last_tool": "ok"}, {"tool_choice": "named"}, {"last_user": "x", "tool_choice": "required"}]
)
def test_responses_request_meets_the_match(match):
    spec = MatchSpec.model_validate(match)
    _body, _headers, note, unmet = matched_request("responses", request_body("responses", ["lookup"]), spec,
                                                  served_model="openai/gpt-oss-20b")  # fmt: skip
    assert unmet == [] and note


def test_headers_are_sampled_and_checked():
    spec = MatchSpec.model_validate({"headers": {"X-Agent": "^hermes/\\d"}})
    _body, headers, note, unmet = matched_request("chat", request_body("chat", []), spec, served_model="m")
    assert headers == {"x-agent": "hermes/0"} and unmet == [] and "X-Agent: hermes/0" in note


def test_turn_one_with_a_tool_result_is_unmet():
    spec = MatchSpec.model_validate({"turn": 1, "last_tool": "x"})
    *_, unmet = matched_request("chat", request_body("chat", ["lookup"]), spec, served_model="m")
    assert unmet == ["turn 2 not in [1]"]


def test_sample_text():
    assert sample_text("Hi") == "Hi"
    assert sample_text("^a+b{2}(c|d)[^x]\\s\\w$") == "abbca a"
    assert sample_text("(?i)ERROR") == "ERROR"
    assert sample_text("[^a-zA-Z0-9 ]x") == "_x"
    assert sample_text("\\d{3}-\\d{4}") == "000-0000"


@pytest.mark.parametrize(
    "flags", [["--switch", "strict=true", "--switch", "strict=false"], ["--switch", "strict=1,strict=2"]]
)
def test_a_repeated_switch_is_refused(flags, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["explain", "clean-answer", *flags])
    assert exc.value.code == 2
    assert "switch 'strict' is given more than once; give each switch once" in capsys.readouterr().err
