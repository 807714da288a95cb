"""The quick chat validation (mockoss.schemas.chat.quick_validate) decides as the model does.

``validate_request`` answers most chat bodies with a :class:`QuickChatRequest` (plain-dict messages
and tools) instead of a :class:`ChatCompletionRequest`; every decision, error (message, location,
type, input) and view must be the model's. The model itself is unchanged, so it is the reference.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from pydantic import ValidationError
from quick_support import fields_of_model, fields_of_typed_dict, outcome, refusals_agree  # tests/server is on sys.path

from mockoss.schemas import chat
from mockoss.schemas.chat import ChatCompletionRequest, QuickChatRequest, quick_validate
from mockoss.server.validation import SLICE_ITEMS, validate_request

MESSAGES: list[Any] = [
    {"role": "user", "content": "hi"}, {"role": "system", "content": "s"}, {"role": "assistant", "content": None},
    {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c", "content": "r"}, {"role": "developer", "content": [{"type": "text", "text": "x"}]},
    {"role": "function", "name": "f", "content": "x"}, {"role": "user"}, {"role": "user", "content": []},
    # invalid ones
    {"role": "user", "content": [1]}, {"role": "user", "content": ["x"]}, {"role": "user", "content": 1},
    {"role": "user", "content": {"a": 1}}, {"role": "robot"}, {"role": 1}, {"role": None}, {"content": "x"}, {},
    1, "x", None, [], {"role": "User"}, {"role": "user", "content": 1.5},
]
FUNCTIONS: list[Any] = [
    {"name": "f"}, {"name": "g", "description": "d", "parameters": {"type": "object"}}, {"name": "f", "strict": True},
    {"name": "f", "parameters": None, "description": None},
    # invalid ones
    {"name": ""}, {"name": 1}, {"name": None}, {}, {"name": "f", "description": 1}, {"name": "f", "parameters": []},
    {"name": "f", "parameters": "x"}, "f", None, 1,
]
SCALARS: dict[str, list[Any]] = {
    "model": ["openai/gpt-oss-20b", None, 1],
    "stream": [True, False, None, "true", 1, "x", 2],
    "stream_options": [None, {}, {"include_usage": True}, {"include_usage": "x"}, {"continuous_usage_stats": True}, 1],
    "max_tokens": [None, 0, 1, 5, "5", 1.5, 2.0, True],
    "max_completion_tokens": [None, 0, 7, "7"],
    "tool_choice": [None, "none", "auto", "required", "bad", {"type": "function", "function": {"name": "f"}},
                    {"type": "function", "function": {"name": "zz"}}, {"function": {"name": "g"}}, {"function": {}}, 1],
    "include_reasoning": [True, False, None, "false", "x"],
    "temperature": [None, 0.5, "x"],
    "reasoning_effort": [None, "low", "max"],
    "n": [None, 1, 2, 0, "1", 1.0],
    "user": ["u"],
}


def _tool(rng: random.Random) -> Any:
    tool: dict[str, Any] = {}
    kind = rng.random()
    if kind < 0.6:
        tool["type"] = "function"
    elif kind < 0.7:
        tool["type"] = rng.choice(["fn", None, 1])
    if rng.random() < 0.95:
        tool["function"] = rng.choice(FUNCTIONS[:4] if rng.random() < 0.7 else FUNCTIONS)
    return tool if rng.random() < 0.95 else rng.choice([1, "x", None])


def _body(rng: random.Random) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if rng.random() < 0.92:
        body["messages"] = [rng.choice(MESSAGES[:9] if rng.random() < 0.85 else MESSAGES) for _ in range(rng.choice([0, 1, 2, 3, 6]))]
    else:
        body["messages"] = rng.choice([None, "x", {}, {"role": "user"}])
    if rng.random() < 0.4:
        body["tools"] = [_tool(rng) for _ in range(rng.choice([0, 1, 2, 3]))]
    elif rng.random() < 0.05:
        body["tools"] = rng.choice([None, {}, "x"])
    for key, values in SCALARS.items():
        if rng.random() < 0.15:
            body[key] = rng.choice(values)
    return json.loads(json.dumps(body))  # JSON data, as a request body is


def test_decisions_errors_and_views_are_the_models():
    rng = random.Random(20261201)
    bodies = [_body(rng) for _ in range(4000)]
    quick = 0
    for body in bodies:
        assert outcome(lambda b: validate_request(ChatCompletionRequest, b), body) == outcome(ChatCompletionRequest.model_validate, body), body
        quick += quick_validate(body, SLICE_ITEMS) is not None
    accepted = sum(outcome(ChatCompletionRequest.model_validate, b)[0] == "accepted" for b in bodies)
    assert 400 < accepted < 3600  # the sample holds both kinds
    assert quick == accepted  # and every accepted body took the quick path


def test_an_agent_turn_takes_the_quick_path_and_keeps_its_tool_names():
    tools = [{"type": "function", "function": {"name": f"tool_{k}", "description": "d", "parameters": {"type": "object", "properties": {}}}} for k in range(20)]
    messages = [{"role": "system", "content": "s"}] + [
        {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{k}", "type": "function", "function": {"name": "tool_1", "arguments": "{}"}}]}
        if k % 2 else {"role": "tool", "tool_call_id": f"c{k}", "content": "out"}
        for k in range(49)
    ]
    body = {"model": "m", "messages": messages, "tools": tools, "tool_choice": {"type": "function", "function": {"name": "tool_7"}}}
    request = validate_request(ChatCompletionRequest, body)
    assert type(request) is chat.SeenChatRequest  # a QuickChatRequest looked up first: it has tools
    assert request.view("m", body) == ChatCompletionRequest.model_validate(body).view("m", body)
    assert [t.name for t in request.view("m", body).tools] == [f"tool_{k}" for k in range(20)]


@pytest.mark.parametrize(
    "body",
    [
        {"messages": [{"role": "user", 1: "x"}]},  # a key that is not a string: only a Python caller can send one
        {"messages": [{"role": "user"}], "tools": [{"function": {"name": "f"}, 2: 0}]},
        {"messages": [{"role": "user"}], "tools": [{"function": {"name": "f", b"k": 0}}]},
    ],
)
def test_a_key_that_is_not_a_string_is_left_to_the_model(body):
    assert quick_validate(body, SLICE_ITEMS) is None
    assert refusals_agree(ChatCompletionRequest, body)[0]["type"] == "invalid_key"


def test_a_tuple_or_an_iterator_of_messages_is_left_to_the_model():
    message = {"role": "user", "content": "x"}
    assert quick_validate({"messages": (message,)}, SLICE_ITEMS) is None
    assert quick_validate({"messages": [message], "tools": ()}, SLICE_ITEMS) is None
    request = validate_request(ChatCompletionRequest, {"messages": iter([message])})  # not consumed by a first try
    assert type(request) is ChatCompletionRequest and len(request.messages) == 1


def test_a_list_longer_than_a_slice_is_left_to_the_sliced_validation():
    """validation.py validates long lists a slice at a time (the GIL is let go between slices);
    the quick path validates a body in one call, so it declines them."""
    messages = [{"role": "user", "content": "x"}] * (SLICE_ITEMS + 1)
    tools = [{"function": {"name": f"f{k}"}} for k in range(SLICE_ITEMS + 1)]
    assert quick_validate({"messages": messages}, SLICE_ITEMS) is None
    assert quick_validate({"messages": messages[:1], "tools": tools}, SLICE_ITEMS) is None
    assert isinstance(quick_validate({"messages": messages[:SLICE_ITEMS], "tools": tools[:SLICE_ITEMS]}, SLICE_ITEMS), QuickChatRequest)
    assert type(validate_request(ChatCompletionRequest, {"messages": messages})) is ChatCompletionRequest


def test_a_named_tool_choice_needs_the_tool_and_tools_as_the_model_says():
    body = {"messages": [{"role": "user"}], "tools": [{"function": {"name": "f"}}], "tool_choice": {"type": "function", "function": {"name": "g"}}}
    assert quick_validate(body, SLICE_ITEMS) is None
    with pytest.raises(ValidationError, match="Tool 'g' has not been passed in `tools`"):
        validate_request(ChatCompletionRequest, body)
    with pytest.raises(ValidationError, match="When using `tool_choice`, `tools` must be set"):
        validate_request(ChatCompletionRequest, {"messages": [{"role": "user"}], "tool_choice": "auto"})


def test_the_quick_items_declare_the_models_fields():
    """If a model's field changes, its TypedDict twin must change with it (the quick path's
    argument rests on the same annotations and constraints)."""
    models = {chat._Function: chat.FunctionDefinition}
    for model, twin in ((chat.ChatMessageParam, chat._Message), (chat.FunctionDefinition, chat._Function), (chat.ChatToolParam, chat._Tool)):
        assert fields_of_typed_dict(twin, models) == fields_of_model(model), twin
        assert twin.__pydantic_config__ == {"extra": "ignore"} and model.model_config["extra"] == "allow"
    own = {name: f for name, f in QuickChatRequest.model_fields.items() if name not in ("messages", "tools")}
    assert own.keys() == ChatCompletionRequest.model_fields.keys() - {"messages", "tools"}
    assert all(repr(f) == repr(ChatCompletionRequest.model_fields[name]) for name, f in own.items())


def test_every_view_field_comes_from_the_request():
    """The view is built positionally: each field must hold its own value (the two bodies give
    the four flags four different pairs of values, so swapping any two shows)."""
    base = {
        "model": "asked", "messages": [{"role": "user", "content": "x"}], "max_tokens": 9, "max_completion_tokens": 7,
        "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "function", "function": {"name": "f"}},
    }
    first = {**base, "stream": True, "stream_options": {"include_usage": True, "continuous_usage_stats": False}, "include_reasoning": False}
    second = {**base, "stream": True, "stream_options": {"include_usage": False, "continuous_usage_stats": True}, "include_reasoning": False}
    flags = []
    for body in (first, second):
        views = [request.view("served", body) for request in (validate_request(ChatCompletionRequest, body), ChatCompletionRequest.model_validate(body))]
        for view in views:
            assert (view.model, view.max_tokens, view.body, [(t.type, t.name) for t in view.tools]) == ("served", 7, body, [("function", "f")])
            assert view.tool_choice == {"type": "function", "function": {"name": "f"}}
        assert views[0] == views[1]
        flags.append((views[0].stream, views[0].include_usage, views[0].continuous_usage_stats, views[0].include_reasoning))
    assert list(zip(*flags)) == [(True, True), (True, False), (False, True), (False, False)]


def test_responses_tools_view_as_declared():
    from mockoss.profiles.base import ToolDecl
    from mockoss.schemas.responses import ResponsesRequest

    tools = [{"type": "function", "name": "f"}, {"type": "mcp", "server_label": "s", "name": "ignored"}, {"type": "web_search_preview"}, {"type": "function", "name": "f"}]
    body = {"input": "hi", "tools": tools}
    view = ResponsesRequest.model_validate(body).view("m", body)
    assert view.tools == (ToolDecl("function", "f"), ToolDecl("mcp", "s"), ToolDecl("web_search_preview", None), ToolDecl("function", "f"))


def test_every_responses_view_field_comes_from_the_request():
    from mockoss.schemas.responses import ResponsesRequest

    body = {"model": "asked", "input": "hi", "tools": [{"type": "function", "name": "f"}], "tool_choice": "required", "stream": True, "max_output_tokens": 5}
    view = validate_request(ResponsesRequest, body).view("served", body)
    assert (view.model, [(t.type, t.name) for t in view.tools], view.tool_choice, view.stream, view.max_output_tokens, view.body) == (
        "served", [("function", "f")], "required", True, 5, body,
    )
    bare = ResponsesRequest.model_validate({"input": "hi"}).view("served", {})
    assert (bare.tools, bare.tool_choice, bare.stream, bare.max_output_tokens) == ((), "auto", False, None)


RESPONSES_TOOLS: list[Any] = [
    {"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": True},
    {"type": "function", "name": "g", "description": "d"},
    {"type": "mcp", "server_label": "s", "server_url": "http://x"},
    {"type": "web_search_preview"},
    {"type": "function"},
    # invalid ones
    {"type": ""}, {"type": 1}, {}, {"type": "function", "name": 1}, {"type": "mcp", "server_label": []}, "x", None, 1,
]
RESPONSES_SCALARS: dict[str, list[Any]] = {
    "model": ["m", None, 1],
    "instructions": ["be brief", None, 1],
    "stream": [True, False, "yes", None],
    "tool_choice": ["auto", "none", {"type": "function", "name": "f"}, 1, None],
    "max_output_tokens": [None, 0, 1, "3", 2.5],
    "store": [True, None, "x"],
    "include": [["a"], None, "a", [1]],
    "metadata": [{"k": "v"}, None, "x"],
    "parallel_tool_calls": [False, "no"],
    "reasoning": [{"effort": "low"}, "low"],
    "temperature": [0.2, "hot"],
}


def _responses_body(rng: random.Random) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if rng.random() < 0.95:
        body["input"] = rng.choice(["hi", [{"type": "message", "role": "user", "content": "hi"}], [], [1], {"a": 1}, None, 5])
    if rng.random() < 0.6:
        pool = RESPONSES_TOOLS[:5] if rng.random() < 0.7 else RESPONSES_TOOLS
        body["tools"] = [rng.choice(pool) for _ in range(rng.choice([0, 1, 2, 4]))]
    elif rng.random() < 0.1:
        body["tools"] = rng.choice([None, {}, "x"])
    for key, values in RESPONSES_SCALARS.items():
        if rng.random() < 0.12:
            body[key] = rng.choice(values)
    return json.loads(json.dumps(body))


def test_responses_decisions_errors_and_views_are_the_models():
    from mockoss.schemas.responses import QuickResponsesRequest, ResponsesRequest

    rng = random.Random(1201)
    bodies = [_responses_body(rng) for _ in range(3000)]
    kinds = set()
    for body in bodies:
        expected = outcome(ResponsesRequest.model_validate, body)
        assert outcome(lambda b: validate_request(ResponsesRequest, b), body) == expected, body
        if expected[0] == "accepted":
            kinds.add(type(validate_request(ResponsesRequest, body)))
    assert kinds == {QuickResponsesRequest}  # every accepted body took the quick path
    accepted = sum(outcome(ResponsesRequest.model_validate, b)[0] == "accepted" for b in bodies)
    assert 300 < accepted < 2700


def test_responses_quick_items_declare_the_models_fields_and_leave_odd_keys_to_it():
    from mockoss.schemas import responses
    from mockoss.schemas.responses import ResponsesRequest

    assert fields_of_typed_dict(responses._Tool, {}) == fields_of_model(responses.ResponsesToolParam)
    own = {name: f for name, f in responses.QuickResponsesRequest.model_fields.items() if name != "tools"}
    assert own.keys() == ResponsesRequest.model_fields.keys() - {"tools"}
    assert all(repr(f) == repr(ResponsesRequest.model_fields[name]) for name, f in own.items())
    body = {"input": "hi", "tools": [{"type": "function", 3: "x"}]}
    assert responses.quick_validate(body, SLICE_ITEMS) is None
    assert responses.quick_validate({"input": "hi", "tools": ({"type": "function"},)}, SLICE_ITEMS) is None
    with pytest.raises(ValidationError) as quick:
        validate_request(ResponsesRequest, body)
    assert quick.value.errors()[0]["type"] == "invalid_key"
