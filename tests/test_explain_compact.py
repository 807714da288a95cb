"""`mockoss explain`'s default view: only the request variants where profiles disagree, in 100
columns, each group headed by the scenario rule and step it comes from (issue 11: "explain is 241
columns wide, highlights nothing, names no rules"). The full table stays behind --full."""

from __future__ import annotations

import json

from mockoss.cli import main

RULES = """\
version: 1
rules:
  - name: leak
    match: {turn: 1}
    steps:
      - completion: {messages: [{channel: final, content: 'to=functions.get_time {"city":"Paris"}'}]}
  - name: call
    steps:
      - completion:
          messages:
            - {channel: analysis, content: Call it.}
            - {channel: commentary, recipient: functions.get_time, content_type: "<|constrain|>json", content: '{"city":"Paris"}'}
      - completion: {messages: [{channel: final, content: Noon.}]}
"""


def _out(capsys, *args: str) -> str:
    assert main(["explain", *args]) == 0
    return capsys.readouterr().out


def _disagreeing_groups(rows: list[dict]) -> set[tuple]:
    """From the JSON rows: (rule, step, endpoint, tools) where profiles' replies differ."""
    replies: dict[tuple, set] = {}
    for r in rows:
        key = (r["rule"], r["step"], r["endpoint"], r["tools"])
        what = (r["status"], tuple(r["items"]), r["content"], r["reasoning"], json.dumps(r["tool_calls"]), r["error"])
        replies.setdefault(key, set()).add(what)
    return {k for k, v in replies.items() if len(v) > 1}


def _headers(text: str) -> set[tuple]:
    out = set()
    for line in text.splitlines():
        if line and not line.startswith(" ") and " · " in line:
            where, endpoint, tools = line.rsplit(" · ", 2)
            rule, _, step = where.rpartition(" step ") if " step " in where else (None, None, where.split()[-1])
            out.add((rule or None, int(step), endpoint, tools))
    return out


def test_default_view_lists_exactly_the_disagreeing_variants_in_100_columns(capsys):
    compact = _out(capsys, "clean-tool-call")
    rows = json.loads(_out(capsys, "clean-tool-call", "--json"))
    assert max(len(line) for line in compact.splitlines()) <= 100
    assert _headers(compact) == _disagreeing_groups(rows) != set()
    # vLLM 0.10.1's chat 500 sits in its own reply line, with the error column
    chat_tools = compact.split("step 0 · chat · tools\n")[1].split("\nstep ")[0].splitlines()
    assert chat_tools[0].split() == ["profiles", "status", "items", "content", "reasoning", "calls", "error"]
    (old,) = [line for line in chat_tools if line.split()[0] == "vllm-0.10.1"]
    assert " 500 " in old and "Tool call i" in old
    agreeing = len({(r["step"], r["endpoint"], r["tools"]) for r in rows}) - len(_disagreeing_groups(rows))
    assert f"{agreeing} of " in compact and "--full prints every row" in compact


def test_full_keeps_the_wide_table(capsys):
    full = _out(capsys, "clean-tool-call", "--full")
    assert full.splitlines()[0].split()[:3] == ["step", "profile", "endpoint"]
    assert len(full.splitlines()) == len(json.loads(_out(capsys, "clean-tool-call", "--json"))) + 1


def test_rows_name_their_rule_and_releases_keep_the_given_order(tmp_path, capsys):
    path = tmp_path / "rules.yaml"
    path.write_text(RULES)
    out = _out(capsys, str(path), "--endpoint", "chat", "--profile", "vllm@0.10.1,vllm@0.26.0,vllm")
    assert max(len(line) for line in out.splitlines()) <= 100
    headers = [line for line in out.splitlines() if line.startswith("rule ")]
    assert "rule 'leak' step 0 · chat · tools" in headers
    assert "rule 'call' step 0 · chat · tools" in headers and "rule 'call' step 1 · chat · tools" in headers
    call = out.split("rule 'call' step 0 · chat · tools\n")[1].splitlines()
    assert call[1].startswith("  vllm@0.10.1 ") and " 500 " in call[1]
    assert call[2].startswith("  vllm@0.26.0, vllm ") and "get_time(" in call[2]
    # the timeline notes follow, wrapped to 100 columns rather than cut
    assert "vllm@0.10.1 -> vllm@0.26.0:" in out and "(OpenAIToolParser)" in out
    rows = json.loads(_out(capsys, str(path), "--endpoint", "chat", "--json"))
    assert {r["rule"] for r in rows} == {"rule 'leak'", "rule 'call'"}


def test_all_agreeing_says_so(capsys):
    out = _out(capsys, "clean-answer", "--profile", "vllm@0.26.0,vllm", "--endpoint", "responses")
    assert out.splitlines()[0] == "all 2 profiles agree on all 2 request variants; --full prints every row"
    assert out.splitlines()[2].startswith("vllm@0.26.0 -> vllm: ")
