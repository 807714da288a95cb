"""The tables in :func:`mockoss.steps.leak`'s docstring, run cell by cell against the profiles.

Each cell says what a client gets as chat ``content`` for one leak form on one profile's default
release (tools declared; not streamed and streamed). The newcomer of session 18 found the old
prose wrong for ``sglang`` (it said ``stripped`` leaks nothing; SGLang's text fallback returns
``to=functions.NAME json{…}``) and silent about ``vllm``'s literal ``<|endoftext|>``: a table that
is checked here cannot go stale the same way. Every profile that serves chat has a row.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockoss.profiles.registry import PROFILES
from mockoss.server.core import MockServer
from mockoss.steps import leak, script

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "description": "Run a shell command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]
#: The text each form writes for terminal({"command": "ls"}) (hermes-agent#84158, PR #84231,
#: cloudflare/ai#574; tests/steps/test_builder.py checks the first three on vllm).
WRITTEN = {
    "bare": 'to=functions.terminal {"command":"ls"}',
    "role": 'assistant to=functions.terminal {"command":"ls"}',
    "channel": '<|channel|>commentary to=functions.terminal {"command":"ls"}',
    "json": '{"name": "terminal", "command": "ls"}',
}
#: The stripped completion: no `assistant` in front (the prompt's `<|start|>assistant` is not generated).
STRIPPED = 'commentary to=functions.terminal json{"command":"ls"}'
FORMS = ("bare", "role", "channel", "json", "stripped")


def _tables() -> dict[str, dict[str, dict[str, str]]]:
    """``{"not streamed" | "streamed": {profile: {form: cell}}}`` from leak's docstring."""
    doc = leak.__doc__ or ""
    tables: dict[str, dict[str, dict[str, str]]] = {}
    lines = [line.strip() for line in doc.splitlines()]
    for i, line in enumerate(lines):
        if not line.startswith("====") or i + 2 >= len(lines) or not lines[i + 2].startswith("===="):
            continue
        head = [c.strip() for c in lines[i + 1].split("  ") if c.strip()]
        if head[1:] != list(FORMS):
            continue
        rows: dict[str, dict[str, str]] = {}
        for row in lines[i + 3 :]:
            if row.startswith("===="):
                break
            cells = [c.strip() for c in row.split("  ") if c.strip()]
            assert len(cells) == 6, row
            rows[cells[0]] = dict(zip(FORMS, cells[1:], strict=True))
        tables[head[0]] = rows
    return tables


TABLES = _tables()


def _expected(cell: str, form: str) -> tuple[int, str | None, bool]:
    """``(status, content, error event in the stream)`` a cell names."""
    written = WRITTEN.get(form, STRIPPED)
    if cell == "500":
        return 500, None, False
    if cell == "error event":
        return 200, "", True
    content = {
        "as written": written,
        "text": STRIPPED,
        "text+eot": STRIPPED + "<|endoftext|>",
        "text from to=": STRIPPED.removeprefix("commentary "),
        '""': "",
        "null": None,
        "arguments": '{"command":"ls"}',
        "assistant arguments": 'assistant {"command":"ls"}',
        "no <|channel|>": written.replace("<|channel|>", ""),
        "markup": "<|channel|>final<|message|>" + written,
    }[cell]
    return 200, content, False


def _got(profile: str, form: str, stream: bool, tools: bool) -> tuple[int, str | None, bool]:
    server = MockServer(scenario=script(leak("terminal", {"command": "ls"}, form=form)), profile=profile)
    body: dict[str, Any] = {"messages": [{"role": "user", "content": "ls"}], "stream": stream}
    if tools:
        body["tools"] = TOOLS
    reply = server.handle("chat", json.dumps(body).encode(), {"content-type": "application/json"})
    if reply.status != 200:
        return reply.status, None, False
    if not stream:
        message = json.loads(reply.body)["choices"][0]["message"]
        assert not message.get("tool_calls"), message  # a leak is text, never a call
        return 200, message.get("content"), False
    content, error = "", False
    for frame in reply.frames:
        for line in frame.decode().splitlines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if "error" in chunk or chunk.get("object") == "error":
                error = True
                continue
            for choice in chunk.get("choices", []):
                content += choice.get("delta", {}).get("content") or ""
    return 200, content, error


def test_the_tables_cover_every_profile_that_serves_chat():
    chat_profiles = {name for name in PROFILES if "chat" in PROFILES[name].endpoints}
    assert set(TABLES) == {"not streamed", "streamed"}
    for rows in TABLES.values():
        assert set(rows) == chat_profiles


@pytest.mark.parametrize("stream", [False, True], ids=["not-streamed", "streamed"])
@pytest.mark.parametrize("profile", sorted(TABLES.get("streamed", {})))
def test_each_cell_is_what_the_profile_returns_with_tools(profile, stream):
    rows = TABLES["streamed" if stream else "not streamed"]
    got = {form: _got(profile, form, stream, tools=True) for form in FORMS}
    assert got == {form: _expected(rows[profile][form], form) for form in FORMS}


#: The docstring's "Without tools the same, but …" sentence, as cells.
WITHOUT_TOOLS = {
    ("vllm-mlx", False): {"bare": "as written", "role": "as written", "channel": "no <|channel|>", "stripped": "text"},
}


@pytest.mark.parametrize("stream", [False, True], ids=["not-streamed", "streamed"])
@pytest.mark.parametrize("profile", sorted(TABLES.get("streamed", {})))
def test_without_tools_only_the_named_cells_change(profile, stream):
    cells = {**TABLES["streamed" if stream else "not streamed"][profile], **WITHOUT_TOOLS.get((profile, stream), {})}
    got = {form: _got(profile, form, stream, tools=False) for form in FORMS}
    assert got == {form: _expected(cells[form], form) for form in FORMS}
