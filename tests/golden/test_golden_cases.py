"""The golden case list and file store (mockoss.golden.cases, mockoss.golden.store, issue 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mockoss.golden.cases import CHAT, MODEL, RESPONSES, all_cases, case_by_id, cut_point, exchanges
from mockoss.golden.store import GoldenFormatError, read_golden, record_exchange, write_golden
from mockoss.harmony.faults import FAULTS
from mockoss.scenario.loader import builtin_names, load_scenario


def test_every_shipped_scenario_completion_and_every_fault_kind_is_a_case() -> None:
    ids = [case.id for case in all_cases()]
    assert len(ids) == len(set(ids))
    for name in builtin_names():
        scenario = load_scenario(name)
        with_completion = [
            i for i, step in enumerate(scenario.steps)
            if step.completion is not None or step.template is not None or step.options
        ]
        assert with_completion, name
        for position in with_completion:
            assert any(i == f"scenario-{name}-{position}" or i.startswith(f"scenario-{name}-{position}-") for i in ids)
    assert [i.removeprefix("fault-") for i in ids if i.startswith("fault-")] == list(FAULTS)


def test_case_completion_is_the_scenario_step_completion() -> None:
    step = load_scenario("clean-tool-call").steps[0]
    case = case_by_id("scenario-clean-tool-call-0")
    assert case.completion.tokens == step.completion.tokens
    assert case.tools == ("get_weather",)
    with pytest.raises(KeyError, match="no golden case"):
        case_by_id("scenario-nope-0")


def test_tools_are_the_functions_the_completion_calls() -> None:
    assert case_by_id("scenario-tool-name-with-channel-token-0").tools == ("bash",)
    assert case_by_id("scenario-hyphenated-tool-name-ok-0").tools == ("web-browsing",)


def test_exchange_matrix_has_fixed_ids_and_deterministic_bodies() -> None:
    case = case_by_id("fault-duplicate_recipient")
    got = exchanges(case)
    ids = [e.id for e in got]
    assert ids[:8] == [
        "chat-nostream-notools", "chat-nostream-tools", "chat-stream-notools", "chat-stream-tools",
        "responses-nostream-notools", "responses-nostream-tools", "responses-stream-notools", "responses-stream-tools",
    ]
    assert len(ids) == len(set(ids))
    assert [e.request for e in got] == [e.request for e in exchanges(case)]
    by_id = {e.id: e for e in got}
    chat = by_id["chat-stream-tools"]
    assert chat.endpoint == CHAT and chat.stream and chat.request["stream"] is True
    assert chat.request["model"] == MODEL
    assert [t["function"]["name"] for t in chat.request["tools"]] == ["get_weather"]
    responses = by_id["responses-nostream-tools"]
    assert responses.endpoint == RESPONSES and "stream" not in responses.request
    assert [t["name"] for t in responses.request["tools"]] == ["get_weather"]
    assert "tools" not in by_id["chat-nostream-notools"].request
    assert by_id["chat-nostream-notools-max-tokens"].request["max_tokens"] == cut_point(case) < len(case.completion.tokens)
    assert by_id["chat-nostream-tools-choice-none"].request["tool_choice"] == "none"


def test_store_round_trip_normalises_what_it_records(tmp_path: Path) -> None:
    case = case_by_id("scenario-clean-answer-0")
    chat, stream = exchanges(case)[0], exchanges(case)[2]
    recorded = [
        record_exchange(chat, 200, body=b'{"id":"chatcmpl-0123456789abcdef","created":5}'),
        record_exchange(stream, 200, frames=['data: {"id":"chatcmpl-0123456789abcdef"}', "data: [DONE]"]),
    ]
    header = {"server": "vllm", "version": "9.9.9", "harmony_library": "oss-harmony 0.0.11",
              "level": "serving-code", "generator": "test"}
    path = write_golden(tmp_path / "vllm-9.9.9", header, case, recorded)
    golden = read_golden(path)
    assert golden.case == case.id and golden.header["format"] == 1
    assert golden.completion["tokens"] == list(case.completion.tokens)
    assert golden.exchanges[0].body == {"id": "<chatcmpl-:hex16#1>", "created": "<TIME>"}
    assert golden.exchanges[1].frames == ['data: {"id":"<chatcmpl-:hex16#1>"}', "data: [DONE]"]
    with pytest.raises(GoldenFormatError, match="missing generator"):
        write_golden(tmp_path, {k: v for k, v in header.items() if k != "generator"}, case, recorded)


def test_read_golden_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"header": {"server": "vllm"}, "case": "c", "exchanges": []}))
    with pytest.raises(GoldenFormatError, match=r"x\.json: header: missing field 'version'"):
        read_golden(path)
