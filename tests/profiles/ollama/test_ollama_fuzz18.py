"""The t18 fuzzer's findings on Ollama's prompt-count paths (/tmp/team/t18_fuzz_report.md).

* F1, F3, F4, F11: a wrong JSON type in a field the /v1 prompt is made of was an unscripted 500 (or
  Python ``str()`` text in the prompt). Ollama binds the body into Go structs first and answers Go's
  decoding error as a 400 (``ollama/ollama@fb3076099``: ``middleware/openai.go:449-453``, :1169-1172;
  ``openai/openai.go`` ``Message``/``ToolCall`` :32-40, :185-193; ``openai/responses.go`` input
  items' ``UnmarshalJSON`` :62-330, ``ResponsesTool`` :355-366): mockoss answers it from the
  request checks (:mod:`mockoss.profiles.ollama.go_decode`), as it does a non-string effort.
* F2: tool-call arguments nested 1,000 deep were a RecursionError 500. Ollama decodes them with Go's
  ``encoding/json`` (10,000 levels, then ``exceeded max depth``) into ``api.ToolCallFunctionArguments``
  (an object): an array at any depth is its 400 ``invalid tool call arguments``, which mockoss does
  not write for any arguments it cannot read (not JSON, not an object: the existing fallback); a deep
  object is counted by Ollama. mockoss cannot decode either in Python and counts the request by the
  former approximation (the Harmony count): never a 500.
* F6: the tool name of a tool message (``nameFromToolCallID``, ``openai/openai.go:724-736``) was
  found by rescanning every message per tool message.
* F9: ``/api/generate`` ``context: [true, 1]`` answered 200 with ``True`` in its JSON. Go's
  ``[]int`` refuses a bool (and ``1.0``): a 400 as other wrong types there.
* F5: the /v1 count of a big request encoded its prompt in process, under the server lock.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from mockoss.endpoints import prompt_tokens
from mockoss.harmony.encoding import load_encoding
from mockoss.profiles.ollama import prompt
from mockoss.server import prelock
from mockoss.server.core import MockServer

MODEL = "gpt-oss:20b"
U = {"role": "user", "content": "x"}
T = {"role": "tool", "tool_call_id": "c", "content": "x"}


def _call(function: Any, call_id: Any = "c") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _go(endpoint: str, body: dict[str, Any]) -> tuple[int, Any]:
    server = MockServer("clean-answer", profile="ollama")
    reply = server.handle(endpoint, json.dumps({"model": MODEL, "stream": False, **body}).encode(), {})
    parsed = json.loads(reply.body)
    error = parsed.get("error")
    return reply.status, (error.get("message") if isinstance(error, Mapping) else error) if error else parsed


GO_ERRORS = [
    (  # F1a: function a string
        "chat",
        {"messages": [_call("f"), T]},
        (
            "json: cannot unmarshal string into Go struct field ToolCall.messages.tool_calls.function of type "
            'struct { Name string "json:\\"name\\""; Arguments string "json:\\"arguments\\"" }'
        ),
    ),
    (  # F1b: tool_calls a number
        "chat",
        {"messages": [{"role": "assistant", "content": "", "tool_calls": 5}, U]},
        "json: cannot unmarshal number into Go struct field Message.messages.tool_calls of type []openai.ToolCall",
    ),
    (
        "chat",
        {"messages": [_call({"name": "f", "arguments": {"a": 1}}), U]},
        "json: cannot unmarshal object into Go struct field .messages.tool_calls.function.arguments of type string",
    ),
    (
        "chat",
        {"messages": [U, {"role": "tool", "tool_call_id": 5, "content": "x"}]},
        "json: cannot unmarshal number into Go struct field Message.messages.tool_call_id of type string",
    ),
    (  # F3a: arguments an object
        "responses",
        {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {"a": 1}}]},
        "input[0]: json: cannot unmarshal object into Go struct field ResponsesFunctionCall.arguments of type string",
    ),
    (  # F4: a number where a list or string is expected
        "responses",
        {"input": [{"type": "message", "role": "user", "content": 5}]},
        "input[0]: content must be a string or array: json: cannot unmarshal number into Go value of type []json.RawMessage",
    ),
    (
        "responses",
        {"input": [U, {"type": "function_call_output", "call_id": "c", "output": True}]},
        "input[1]: output must be a string or array: json: cannot unmarshal bool into Go value of type []json.RawMessage",
    ),
    (
        "responses",
        {"input": "x", "tools": [{"type": "namespace", "name": "ns", "tools": 5}]},
        "json: cannot unmarshal number into Go struct field ResponsesTool.tools.tools of type []openai.ResponsesTool",
    ),
    (  # F11: a role or text that is not a string
        "responses",
        {"input": [{"type": "message", "role": {"a": 1}, "content": "x"}]},
        "input[0]: json: cannot unmarshal object into Go struct field .role of type string",
    ),
    (
        "responses",
        {"input": [{"role": "user", "content": [{"type": "input_text", "text": 7}]}]},
        "input[0]: content[0]: json: cannot unmarshal number into Go struct field ResponsesTextContent.text of type string",
    ),
]


@pytest.mark.parametrize(("endpoint", "body", "message"), GO_ERRORS)
def test_a_wrong_json_type_in_the_prompt_is_gos_400(endpoint, body, message):
    assert _go(endpoint, body) == (400, message)


def test_go_reports_the_first_wrong_field_in_the_body_and_the_input_before_the_effort():
    wrong_messages = {"messages": [{"role": "user", "content": "x", "name": 1}]}
    assert _go("chat", {"reasoning_effort": 5, **wrong_messages})[1].endswith(
        "ChatCompletionRequest.reasoning_effort of type string"
    )
    assert _go("chat", {**wrong_messages, "reasoning_effort": 5})[1].endswith("Message.messages.name of type string")
    assert _go("chat", {**wrong_messages, "reasoning_effort": "loud"})[1].endswith(
        "Message.messages.name of type string"
    )
    wrong_input = {"input": [{"role": "user", "content": 5}]}
    assert _go("responses", {"reasoning": {"effort": 5}, **wrong_input})[1].startswith("input[0]: content must be")


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        ("chat", {"messages": [_call({"name": "f", "arguments": "[" * 1000 + "]" * 1000}), U]}),
        ("chat", {"messages": [_call({"name": "f", "arguments": '{"a":' * 1000 + "1" + "}" * 1000}), U]}),
        (
            "responses",
            {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "[" * 1000 + "]" * 1000}]},
        ),
    ],
)
def test_arguments_nested_deeper_than_python_decodes_are_counted_by_the_approximation(endpoint, body):
    raw = json.dumps({"model": MODEL, "stream": False, **body}).encode()
    reply = MockServer("clean-answer", profile="ollama").handle(endpoint, raw, {})
    assert reply.status == 200
    usage = json.loads(reply.body)["usage"]
    assert usage.get("prompt_tokens", usage.get("input_tokens")) == prompt_tokens(endpoint, raw)


class _Counted(Mapping[str, Any]):
    """A message that counts the reads of its ``tool_calls``."""

    reads = 0

    def __init__(self, message: dict[str, Any]) -> None:
        self._message = message

    def __getitem__(self, key: str) -> Any:
        if key == "tool_calls":
            _Counted.reads += 1
        return self._message[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._message)

    def __len__(self) -> int:
        return len(self._message)


def test_tool_names_are_found_in_one_pass_the_last_call_of_an_id_winning():
    rounds = 60
    messages = [U]
    for index in range(rounds):
        messages += [_call({"name": f"f{index}", "arguments": "{}"}, f"c{index}"), {**T, "tool_call_id": f"c{index}"}]
    _Counted.reads = 0
    out = prompt.openai_chat_messages({"messages": [_Counted(m) for m in messages]})
    assert [m.tool_name for m in out if m.role == "tool"] == [f"f{index}" for index in range(rounds)]
    assert _Counted.reads <= 3 * len(messages)  # was ~len(messages) per tool message
    # Go scans every message, backwards: a later call of the same id wins, even after the result.
    later = [_call({"name": "first", "arguments": "{}"}), T, _call({"name": "second", "arguments": "{}"})]
    assert [m.tool_name for m in prompt.openai_chat_messages({"messages": later}) if m.role == "tool"] == ["second"]


@pytest.mark.parametrize("context", [[True, 1], [1.0]])
def test_a_generate_context_of_bools_or_floats_is_refused(context):
    status, message = _go("ollama.generate", {"prompt": "hi", "context": context})
    assert (status, message) == (400, "Invalid request: context.0: Input should be a valid integer")


def test_a_big_v1_prompt_is_encoded_in_the_worker_before_the_lock_once(monkeypatch):
    """F5: a 20,000-character word (~0.4 s of BPE holding the GIL) reached the count under the
    server lock, in process. The HTTP layer counts a big request before the lock
    (``prelock.PROMPT_COUNTER``); the profile's own count is made there, its text encoded by the
    worker process (``ENCODE_ELSEWHERE``). A small request counted meanwhile on another thread
    does not make the big one count again under the lock."""
    encoding = load_encoding()
    word = "a" * 20_000
    body = json.dumps({"model": MODEL, "stream": False, "messages": [{"role": "user", "content": word}]}).encode()
    alone = MockServer("clean-answer", profile="ollama").handle("chat", body, {})
    elsewhere: list[int] = []
    encoded: list[int] = []
    real_encode, real_count = prompt._encode, prompt.openai_prompt_tokens

    def in_worker(text: str, special: bool) -> list[int]:
        elsewhere.append(len(text))
        return encoding.encode(text, allowed_special="all")

    def count_then_another_client(endpoint: str, body: Any, counted: Any, raw: bytes = b"") -> int:
        found = real_count(endpoint, body, counted, raw)
        if len(raw) > len(word):  # another client's request, counted before this one reaches the lock
            side = threading.Thread(target=lambda: _go("chat", {"messages": [U]}))
            side.start()
            side.join()
        return found

    monkeypatch.setattr(prelock, "encode_in_worker", in_worker, raising=False)  # (not imported there before)
    monkeypatch.setattr(prompt, "_encode", lambda text: encoded.append(len(text)) or real_encode(text))
    monkeypatch.setattr(prompt, "openai_prompt_tokens", count_then_another_client)
    server = MockServer("clean-answer", profile="ollama")
    server.reset()
    token = prelock.PROMPT_COUNTER.set(lambda endpoint, raw: prompt_tokens(endpoint, raw))
    try:
        reply = server.respond("chat", body, {})[0]
    finally:
        prelock.PROMPT_COUNTER.reset(token)
    assert reply.status == 200 and json.loads(reply.body)["usage"] == json.loads(alone.body)["usage"]
    assert len(elsewhere) == 1 and elsewhere[0] > len(word)
    assert [n for n in encoded if n > len(word)] == elsewhere  # not encoded again under the lock
