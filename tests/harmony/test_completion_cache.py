"""Work that depends only on the scenario is done once: completions and scenarios kept by content."""

from __future__ import annotations

import json
from pathlib import Path

from openai_harmony import Message, Role

from mockoss.harmony import Completion
from mockoss.harmony.completion import clear_completion_cache
from mockoss.scenario.cache import loaded_scenarios
from mockoss.scenario.loader import load_scenario
from mockoss.server.core import MockServer

TEXT = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>"


def _final(text: str) -> Message:
    return Message.from_role_and_content(Role.ASSISTANT, text).with_channel("final")


def test_the_same_text_gives_the_same_completion_with_its_memoised_trace():
    first = Completion.from_text(TEXT)
    trace = first.trace()
    again = Completion.from_text(TEXT)
    assert again is first and again.trace() is trace
    assert Completion.from_text(TEXT + " ") is not first


def test_the_same_messages_give_the_same_completion():
    first = Completion.from_messages([_final("Sunny.")])
    assert Completion.from_messages([_final("Sunny.")]) is first
    assert Completion.from_messages([_final("Rainy.")]) is not first
    assert first.text == "<|channel|>final<|message|>Sunny.<|return|>"


def test_a_cleared_cache_gives_an_equal_new_completion():
    first = Completion.from_text(TEXT)
    clear_completion_cache()
    again = Completion.from_text(TEXT)
    assert again is not first and again == first


def _scenario_file(tmp_path: Path, answer: str) -> Path:
    path = tmp_path / "long.yaml"
    data = {"version": 1, "steps": [{"completion": {"messages": [{"channel": "final", "content": answer}]}}]}
    path.write_text(json.dumps(data))
    return path


def test_reloading_an_unchanged_scenario_file_reuses_the_compiled_scenario(tmp_path):
    path = _scenario_file(tmp_path, "word " * 500)
    first = load_scenario(path)
    assert load_scenario(path) is first
    _scenario_file(tmp_path, "word " * 499)  # edited: a new key
    edited = load_scenario(path)
    assert edited is not first
    assert len(edited.steps[0].completion.tokens) < len(first.steps[0].completion.tokens)
    assert loaded_scenarios.get((str(path), "long", path.read_bytes())) is edited


def test_a_reloaded_scenario_answers_byte_for_byte_as_a_fresh_one(tmp_path):
    path = _scenario_file(tmp_path, "word " * 300)
    body = json.dumps({"model": "openai/gpt-oss-20b", "messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()
    replies = []
    for _ in range(2):  # the second load comes from the cache, its plans already memoised
        server = MockServer(load_scenario(path))
        replies.append(server.handle("chat", body, {}))
    loaded_scenarios.clear()
    clear_completion_cache()
    fresh = MockServer(load_scenario(path)).handle("chat", body, {})
    assert replies[0].frames == replies[1].frames == fresh.frames and fresh.frames
