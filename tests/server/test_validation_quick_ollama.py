"""The quick Ollama ``/api/chat`` validation decides as ``OllamaChatRequest`` does.

``validate_request`` answers most bodies with a :class:`QuickOllamaChatRequest` (plain-dict
messages and tools); every decision, error and view must be the model's, which is unchanged and so
the reference (see ``test_validation_quick.py`` for chat and Responses).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from quick_support import fields_of_model, fields_of_typed_dict, outcome, refusals_agree  # tests/server is on sys.path

from mockoss.schemas import ollama
from mockoss.schemas.ollama import OllamaChatRequest, QuickOllamaChatRequest, quick_validate_chat
from mockoss.server.validation import SLICE_ITEMS, validate_request

CALLS: list[Any] = [
    {"function": {"name": "f", "arguments": {"a": 1}}},
    {"id": "c1", "type": "function", "function": {"name": "g", "arguments": {}}},
    {},
    {"function": {}},
    # invalid ones
    {"function": {"name": 1}},
    {"function": {"arguments": "{}"}},
    {"id": 5},
    "x",
    None,
]
MESSAGES: list[Any] = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "", "thinking": "hmm"},
    {"role": "Assistant", "content": "done"},
    {"role": "tool", "content": "out", "tool_name": "f"},
    {"role": "user", "content": None, "images": ["aGk="]},
    {},
    {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
    # invalid ones (or odd)
    {"role": 1},
    {"role": "user", "content": ["x"]},
    {"role": "user", "images": "x"},
    {"role": "user", "images": [1]},
    {"role": "user", "thinking": 2},
    {"role": "user", "tool_call_id": 3},
    "x",
    None,
    1,
]
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "g", "description": "d"}},
    {},
    {"function": {}},
    # invalid ones
    {"type": 1},
    {"function": {"name": None}},
    {"function": {"parameters": []}},
    {"function": "f"},
    "x",
]
SCALARS: dict[str, list[Any]] = {
    "stream": [True, False, None, "false", 0],
    "options": [{"num_predict": 5}, {"num_predict": -1}, None, "x"],
    "think": [True, "high", "max", "extreme", None, 1],
    "top_logprobs": [0, 20, 21, -1, None, "3"],
    "format": ["json", {"type": "object"}],
    "keep_alive": ["5m", 0],
    "truncate": [True, "yes"],
}


def _message(rng: random.Random) -> Any:
    message = rng.choice(MESSAGES[:7] if rng.random() < 0.8 else MESSAGES)
    if isinstance(message, dict) and rng.random() < 0.2:
        message = {**message, "tool_calls": [rng.choice(CALLS[:4] if rng.random() < 0.7 else CALLS)]}
    return message


def _body(rng: random.Random) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if rng.random() < 0.95:
        body["model"] = rng.choice(["gpt-oss:20b", "gpt-oss:20b", "", 1])
    if rng.random() < 0.9:
        body["messages"] = [_message(rng) for _ in range(rng.choice([0, 1, 2, 4]))]
    elif rng.random() < 0.5:
        body["messages"] = rng.choice([None, "x", {}])
    if rng.random() < 0.4:
        body["tools"] = [rng.choice(TOOLS[:4] if rng.random() < 0.7 else TOOLS) for _ in range(rng.choice([0, 1, 3]))]
    for key, values in SCALARS.items():
        if rng.random() < 0.12:
            body[key] = rng.choice(values)
    return json.loads(json.dumps(body))  # JSON data, as a request body is


def test_decisions_errors_and_views_are_the_models():
    rng = random.Random(11434)
    bodies = [_body(rng) for _ in range(3000)]
    accepted = 0
    for body in bodies:
        expected = outcome(OllamaChatRequest.model_validate, body)
        assert outcome(lambda b: validate_request(OllamaChatRequest, b), body) == expected, body
        if expected[0] == "accepted":
            accepted += 1
            assert type(validate_request(OllamaChatRequest, body)) is QuickOllamaChatRequest
    assert 300 < accepted < 2700  # the sample holds both kinds


def test_the_quick_items_declare_the_models_fields():
    models = {ollama._ToolCallFunction: ollama.OllamaToolCallFunction, ollama._ToolFunction: ollama.OllamaToolFunction}
    models[list[ollama._ToolCall] | None] = list[ollama.OllamaToolCall] | None
    pairs = (
        (ollama.OllamaToolCallFunction, ollama._ToolCallFunction),
        (ollama.OllamaToolCall, ollama._ToolCall),
        (ollama.OllamaMessage, ollama._Message),
        (ollama.OllamaToolFunction, ollama._ToolFunction),
        (ollama.OllamaTool, ollama._Tool),
    )
    for model, twin in pairs:
        twin_fields = fields_of_typed_dict(twin, models)
        model_fields = fields_of_model(model)
        assert twin_fields.keys() == model_fields.keys(), twin
        for name, (annotation, required, metadata) in model_fields.items():
            assert twin_fields[name] == (annotation, False, metadata), (twin, name)  # all have defaults
            assert not required
        assert twin.__pydantic_config__ == {"extra": "allow"} and model.model_config["extra"] == "allow"
    own = {name: f for name, f in QuickOllamaChatRequest.model_fields.items() if name not in ("messages", "tools")}
    assert own.keys() == OllamaChatRequest.model_fields.keys() - {"messages", "tools"}
    assert all(repr(f) == repr(OllamaChatRequest.model_fields[name]) for name, f in own.items())


@pytest.mark.parametrize(
    "body",
    [
        {"model": "m", "messages": [{"role": "user", 1: "x"}]},
        {"model": "m", "messages": [{"tool_calls": [{"function": {"name": "f", 2: 0}}]}]},
        {"model": "m", "tools": [{"function": {"name": "f"}, b"k": 0}]},
    ],
)
def test_a_key_that_is_not_a_string_is_refused_as_the_model_does(body):
    assert quick_validate_chat(body, SLICE_ITEMS) is None
    refusals_agree(OllamaChatRequest, body)


def test_tuples_and_long_lists_are_left_to_the_model():
    message = {"role": "user", "content": "x"}
    assert quick_validate_chat({"model": "m", "messages": (message,)}, SLICE_ITEMS) is None
    assert quick_validate_chat({"model": "m", "messages": [message] * (SLICE_ITEMS + 1)}, SLICE_ITEMS) is None
    assert quick_validate_chat({"model": "m", "tools": [{}] * (SLICE_ITEMS + 1)}, SLICE_ITEMS) is None
    assert type(quick_validate_chat({"model": "m", "messages": [message] * SLICE_ITEMS}, SLICE_ITEMS)) is QuickOllamaChatRequest
