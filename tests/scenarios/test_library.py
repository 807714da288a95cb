"""The shipped scenario library: for every scenario, what a client of each emulated server sees.

``CASES`` (``library_table_parser.py``, ``library_table_servers.py``) maps each shipped scenario to
targets, ``"PROFILE ENDPOINT [SWITCH=VALUE]"`` (a row whose server none of the scenario's sources
involves, per ``tests/sources.yaml``, has ``-unsourced`` in its test id: its expected values are
mockoss's reading of that server's code, not an observation), and to what a client
sees for each request: status, Responses item types, content, reasoning, tool calls (name and
arguments), finish reason, exact error text and type. Reading across one scenario shows where the
servers disagree. Every target is replayed in process through ``MockServer.handle`` (the server's
own request path, scenario rules and switches included); the ``vllm`` targets are replayed again
over HTTP with the official ``openai`` SDK against the ``mockoss`` fixture. Streams are checked
where the report is about a stream.
"""

from __future__ import annotations

import importlib.resources
import json
import re
import sys
from pathlib import Path

import openai
import pytest
import yaml
from library_support import (
    MODEL,
    OLLAMA_MODEL,
    Case,
    replay_in_process,
    request_body,
    sdk_chat,
    sdk_responses,
)
from library_table_parser import PARSER_CASES
from library_table_servers import SERVER_CASES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sources_index import row_is_sourced

from mockoss.cli import main
from mockoss.harmony.faults import FAULTS
from mockoss.scenario.loader import builtin_names, load_scenario
from mockoss.server.core import MockServer

CASES: dict[str, Case] = {**PARSER_CASES, **SERVER_CASES}
TARGETS = [(name, key) for name, case in CASES.items() for key in case.expect]
SDK_TARGETS = [(name, key) for name, key in TARGETS if key in ("vllm chat", "vllm responses")]


def _id(name: str, key: str) -> str:
    """``scenario[target]``, with ``-unsourced`` when no source of the scenario involves the
    target's server (``tests/sources.yaml`` ``servers``): that row's expected values come from
    mockoss's reading of the server's code, not from the cited report."""
    mark = "" if row_is_sourced(name, key) else "-unsourced"
    return f"{name}[{key.replace(' ', ':')}]{mark}"


@pytest.fixture
def client(mockoss):
    with openai.OpenAI(base_url=mockoss.base_url, api_key="unused", max_retries=0) as client:
        yield client


# --------------------------------------------------------------------------- the table


def test_every_shipped_scenario_has_a_row_and_nothing_else():
    assert sorted(CASES) == builtin_names()
    assert len(CASES) >= 30


@pytest.mark.parametrize(("name", "key"), TARGETS, ids=[_id(n, k) for n, k in TARGETS])
def test_what_each_server_returns(name, key):
    case = CASES[name]
    assert replay_in_process(name, key, case) == list(case.expect[key])


@pytest.mark.mockoss(assert_all_requests_were_expected=False)  # scenarios that end in an exhausted error, on purpose
@pytest.mark.parametrize(("name", "key"), SDK_TARGETS, ids=[_id(n, k) for n, k in SDK_TARGETS])
def test_vllm_through_the_openai_sdk(mockoss, client, name, key):
    mockoss.use(name)
    case = CASES[name]
    fold = sdk_chat if key == "vllm chat" else sdk_responses
    assert [fold(client, case) for _ in case.expect[key]] == list(case.expect[key])


# --------------------------------------------------------------------------- streams


def _stream_chat(client, name, tools):
    """Fold a chat stream: (reasoning, content, error message or None)."""
    reasoning = content = ""
    stream = client.chat.completions.create(**request_body("chat", tools, {}), stream=True)
    try:
        for chunk in stream:
            for choice in chunk.choices:
                reasoning += (choice.delta.model_extra or {}).get("reasoning") or ""
                content += choice.delta.content or ""
    except openai.APIError as exc:
        return reasoning, content, exc.message
    return reasoning, content, None


def test_header_error_arrives_after_http_200_in_a_chat_stream(mockoss, client):
    """openai/harmony#38: the stream starts (HTTP 200, reasoning deltas), then the HarmonyError.
    Releases that raised (switch ``harmony_errors=raise``); vLLM 0.32/0.33 skip the erroring tokens
    (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py, ``HarmonyParser.process_chunk``)."""
    mockoss.use("extra-content-type-header-error")
    mockoss.switches(harmony_errors="raise")
    assert _stream_chat(client, "extra-content-type-header-error", ["bash"]) == (
        "Need to list files.",
        "",
        'unexpected tokens remaining in message header: Some("to=functions.bash")',
    )
    assert [r.status for r in mockoss.requests] == [200]


def test_stray_return_fails_the_stream_after_the_answer(mockoss, client):
    """vllm#46464 (0.23): the answer streams, then 'Unexpected token 200002 …' as an error chunk
    (switch ``harmony_errors=raise``; vLLM 0.32/0.33 skip the stray token and end normally)."""
    mockoss.use("end-then-return-after-answer")
    mockoss.switches(harmony_errors="raise")
    assert _stream_chat(client, "end-then-return-after-answer", []) == (
        "Simple arithmetic.",
        "The answer is 5!",
        "Unexpected token 200002 while expecting start token 200006",
    )


def _frames(scenario, profile, endpoint, tools, model=MODEL):
    server = MockServer(scenario=scenario, profile=profile, served_model_names=[model])
    body = {**request_body(endpoint, tools, {}, model), "stream": True}
    reply = server.handle(endpoint, json.dumps(body).encode(), {})
    assert reply.status == 200
    return [frame.decode() for frame in reply.frames]


def test_vllm_0101_stream_ends_with_a_flat_error_chunk_then_done():
    """charmbracelet/crush#611: vLLM 0.10.1+gptoss streamed the tool-call JSON as reasoning, then a
    flat error object the SDK does not recognise as an error, then [DONE]."""
    frames = _frames("end-then-call-after-tool-call", "vllm-0.10.1", "chat", ["view"])
    flat_error = (
        'data: {"object": "error", "message": "Unexpected token 200012 while expecting start token 200006", '
        '"type": "BadRequestError", "param": null, "code": 400}\n\n'
    )
    assert frames[-2:] == [flat_error, "data: [DONE]\n\n"]
    deltas = [json.loads(f[6:])["choices"][0]["delta"] for f in frames[1:-2]]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == 'Need to read the config.{"file_path":"crush.json"}'
    assert not any("content" in d or "tool_calls" in d for d in deltas)


@pytest.mark.parametrize(
    ("scenario", "last_line"),
    [
        ("ollama-0113-wrong-error-key", {"error parsing tool call": "invalid character 'c' looking for beginning of value"}),
        (
            "tool-arguments-not-json",
            {"error": "error parsing tool call: raw='ls -R\n', err=invalid character 'l' looking for beginning of value"},
        ),
    ],
    ids=["ollama-0.11.3-wrong-key", "ollama-current"],
)
def test_ollama_native_stream_ends_with_the_tool_call_error_line(scenario, last_line):
    """ollama#11781 (0.11.3) and continue#10221 (current): thinking lines, then one error line at HTTP 200."""
    tools = ["shell"] if scenario.startswith("ollama") else ["terminal"]
    lines = [json.loads(line) for line in _frames(scenario, "ollama", "ollama.chat", tools, OLLAMA_MODEL)]
    assert lines[-1] == last_line
    assert all(line["done"] is False and line["message"]["content"] == "" for line in lines[:-1])


# --------------------------------------------------------------------------- guards


def _shipped_yaml(name: str) -> tuple[str, dict]:
    text = (importlib.resources.files("mockoss.scenarios") / f"{name}.yaml").read_text(encoding="utf-8")
    return text, yaml.safe_load(text)


def _fault_kinds(node) -> set[str]:
    if isinstance(node, dict):
        found = {node["fault"]["kind"]} if isinstance(node.get("fault"), dict) else set()
        return found.union(*(_fault_kinds(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_fault_kinds(v) for v in node))
    return set()


def test_every_fault_kind_is_used_by_a_shipped_scenario():
    used = set().union(*(_fault_kinds(_shipped_yaml(name)[1]) for name in builtin_names()))
    assert set(FAULTS) - used == set()


@pytest.mark.parametrize("name", builtin_names())
def test_every_shipped_scenario_cites_its_report(name):
    """A kebab-case name, a one-line description, a ``source`` naming an issue, PR or commit, and a
    leading comment saying what the real server returned. That each source is in the project's
    index of sources (``tests/sources.yaml``) is checked in ``tests/test_sources.py``."""
    text, _ = _shipped_yaml(name)
    scenario = load_scenario(name)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9.]+)+", name)
    assert scenario.description and "\n" not in scenario.description
    assert scenario.source
    assert all(re.search(r"#\d+|@[0-9a-f]{7}|docs/|pull request \"", source) for source in scenario.source), scenario.source
    assert text.startswith("#")


def test_mockoss_scenarios_lists_every_name_with_its_description(capsys):
    assert main(["scenarios"]) == 0
    rows = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert rows == {name: load_scenario(name).description for name in builtin_names()}


def test_mockoss_validate_accepts_the_library(capsys):
    files = sorted(str(p) for p in importlib.resources.files("mockoss.scenarios").iterdir() if p.name.endswith(".yaml"))
    assert main(["validate", *files]) == 0
    assert capsys.readouterr().out.startswith(f"ok: {len(builtin_names())} scenarios, ")
