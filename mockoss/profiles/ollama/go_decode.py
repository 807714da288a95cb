"""Go's decoding errors for the ``/v1`` fields Ollama's prompt is made of (a wrong JSON type: 400).

Ollama's OpenAI layer binds a ``/v1`` body into Go structs (``c.ShouldBindJSON``,
``ollama/ollama@fb3076099``: ``middleware/openai.go:449-453`` chat, :1169-1172 responses) and
answers a decoding error as a 400 whose message is Go's ``err.Error()``. The structs are
``openai/openai.go`` ``ChatCompletionRequest``, ``Message`` and ``ToolCall`` (:32-40, :105-124,
:185-193) and ``openai/responses.go`` ``ResponsesRequest``, its ``ResponsesInput`` with the input
items' own ``UnmarshalJSON`` (:56-330) and ``ResponsesTool`` (:355-366). A field of another JSON
type than its Go type is Go's ``*json.UnmarshalTypeError`` (``encoding/json``: ``json: cannot
unmarshal KIND into Go struct field STRUCT.PATH of type TYPE``, ``STRUCT`` the innermost struct's
name, empty for an anonymous struct, ``PATH`` the JSON names from the decoded value's root);
``null`` leaves a field unset. Such errors are kept while decoding goes on and the first one is
answered, except that an input item's ``UnmarshalJSON`` returns its error at once, prefixed
(``input[0]: ``, ``content must be a string or array: ``, ``content[0]: ``).

:func:`decode_refusal` gives that message for the fields mockoss's prompt port reads
(:mod:`~mockoss.profiles.ollama.prompt`, :mod:`~mockoss.profiles.ollama.prompt_responses`), so a
wrong type is refused before the count instead of reaching it (t18 fuzz findings F1, F3, F4,
F11: unscripted 500s or Python ``str()`` text in the prompt). A number Go would take for an
``int`` field but not as written (``1.5``) is ``number 1.5`` in Go's words; mockoss writes the
number as Python's JSON does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mockoss.profiles.ollama.effort import effort_refusal

__all__ = ["decode_refusal"]

_KINDS = {str: "string", bool: "bool", int: "number", float: "number", list: "array", dict: "object"}
_FUNCTION = 'struct { Name string "json:\\"name\\""; Arguments string "json:\\"arguments\\"" }'
_TYPE_ROLE = 'struct { Type string "json:\\"type\\""; Role string "json:\\"role\\"" }'
_TYPE_ONLY = 'struct { Type string "json:\\"type\\"" }'
_RAW_LIST = "[]json.RawMessage"


class _Refused(Exception):
    """Go's first decoding error (its message)."""


def _kind(value: Any) -> str:
    return "object" if isinstance(value, Mapping) else _KINDS.get(type(value), "number")


def _field(struct: str, path: str, go_type: str, value: Any) -> str:
    return f"json: cannot unmarshal {_kind(value)} into Go struct field {struct}.{path} of type {go_type}"


def _value(go_type: str, value: Any) -> str:
    return f"json: cannot unmarshal {_kind(value)} into Go value of type {go_type}"


def _strings(fields: Mapping[str, Any], names: tuple[str, ...], struct: str, prefix: str) -> None:
    """Refuse the first of ``names`` (in the body's order) that is neither a string nor ``null``."""
    for name, value in fields.items():
        if name in names and value is not None and not isinstance(value, str):
            raise _Refused(_field(struct, prefix + name, "string", value))


def _chat(body: Mapping[str, Any]) -> str | None:
    messages = body.get("messages")
    if messages is None:
        return None
    if not isinstance(messages, list):
        return _field("ChatCompletionRequest", "messages", "[]openai.Message", messages)
    try:
        for message in messages:
            _chat_message(message)
    except _Refused as refused:
        return str(refused)
    return None


def _chat_message(message: Any) -> None:
    if message is None:
        return
    if not isinstance(message, Mapping):
        raise _Refused(_field("ChatCompletionRequest", "messages", "openai.Message", message))
    for name, value in message.items():
        if name in ("role", "reasoning", "name", "tool_call_id"):
            _strings({name: value}, (name,), "Message", "messages.")
        elif name == "tool_calls" and value is not None:
            if not isinstance(value, list):
                raise _Refused(_field("Message", "messages.tool_calls", "[]openai.ToolCall", value))
            for call in value:
                _chat_call(call)


def _chat_call(call: Any) -> None:
    if call is None:
        return
    if not isinstance(call, Mapping):
        raise _Refused(_field("Message", "messages.tool_calls", "openai.ToolCall", call))
    for name, value in call.items():
        if name in ("id", "type"):
            _strings({name: value}, (name,), "ToolCall", "messages.tool_calls.")
        elif name == "index" and value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _Refused(_field("ToolCall", "messages.tool_calls.index", "int", value))
            if isinstance(value, float) and not value.is_integer():
                kind = f"number {json.dumps(value)}"
                raise _Refused(
                    f"json: cannot unmarshal {kind} into Go struct field ToolCall.messages.tool_calls.index of type int"
                )
        elif name == "function" and value is not None:
            if not isinstance(value, Mapping):
                raise _Refused(_field("ToolCall", "messages.tool_calls.function", _FUNCTION, value))
            _strings(value, ("name", "arguments"), "", "messages.tool_calls.function.")


def _content(parts: Any, field: str) -> None:
    """``ResponsesInputMessage.UnmarshalJSON``'s content (``field`` ``content``) or
    ``ResponsesFunctionCallOutput``'s ``output``: a string, or an array of content parts."""
    if parts is None or isinstance(parts, str):
        return
    if not isinstance(parts, list):
        raise _Refused(f"{field} must be a string or array: {_value(_RAW_LIST, parts)}")
    for index, part in enumerate(parts):
        where = f"{field}[{index}]: "
        if not isinstance(part, Mapping):
            raise _Refused(where + _value(_TYPE_ONLY, part))
        try:
            _strings(part, ("type",), "", "")
            struct = {"input_text": "ResponsesTextContent", "output_text": "ResponsesOutputTextContent"}.get(
                part.get("type")
            )
            if struct is not None:
                _strings(part, ("type", "text"), struct, "")
        except _Refused as refused:
            raise _Refused(where + str(refused)) from None


def _item(item: Any) -> None:
    """``unmarshalResponsesInputItem`` (``openai/responses.go:240-298``)."""
    if not isinstance(item, Mapping):
        raise _Refused(_value(_TYPE_ROLE, item))
    _strings(item, ("type", "role"), "", "")
    kind = item.get("type") or ("message" if item.get("role") else "")
    if kind == "message":
        _content(item.get("content"), "content")
    elif kind == "function_call":
        _strings(item, ("id", "type", "call_id", "name", "arguments"), "ResponsesFunctionCall", "")
    elif kind == "function_call_output":
        _strings(item, ("type", "call_id"), "", "")
        _content(item.get("output"), "output")
    elif kind == "reasoning":
        _strings(item, ("id", "type", "encrypted_content"), "ResponsesReasoningInput", "")


def _input(given: Any) -> str | None:
    """``ResponsesInput.UnmarshalJSON``'s error (returned at once), else ``None``."""
    if given is None or isinstance(given, str):
        return None
    if not isinstance(given, list):
        return f"input must be a string or array: {_value(_RAW_LIST, given)}"
    for index, item in enumerate(given):
        try:
            _item(item)
        except _Refused as refused:
            return f"input[{index}]: {refused}"
    return None


def _tools(tools: Any, path: str, struct: str) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise _Refused(_field(struct, path, "[]openai.ResponsesTool", tools))
    for tool in tools:
        if tool is None:
            continue
        if not isinstance(tool, Mapping):
            raise _Refused(_field(struct, path, "openai.ResponsesTool", tool))
        for name, value in tool.items():
            if name in ("type", "name", "description"):
                _strings({name: value}, (name,), "ResponsesTool", path + ".")
            elif name == "parameters" and value is not None and not isinstance(value, Mapping):
                raise _Refused(_field("ResponsesTool", path + ".parameters", "map[string]interface {}", value))
            elif name == "tools":
                _tools(value, path + ".tools", "ResponsesTool")


def _responses_saved(body: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first kept (not returned) error of the fields the prompt reads besides ``input``:
    ``(top-level key, message)``."""
    for name, value in body.items():
        try:
            if name == "instructions":
                _strings({name: value}, (name,), "ResponsesRequest", "")
            elif name == "tools":
                _tools(value, "tools", "ResponsesRequest")
        except _Refused as refused:
            return name, str(refused)
    return None


def decode_refusal(endpoint: str, body: Any) -> str | None:
    """Ollama's 400 message for a ``/v1`` ``endpoint`` (``"chat"`` or ``"responses"``) request
    ``body`` (parsed JSON), else ``None``: Go's decoding error in a field the prompt is made of
    (see the module docstring) or in the reasoning effort, whichever Go reports first (on
    ``"responses"`` the input's, returned at once; then the first kept one in the body's order),
    then the effort's value (:func:`mockoss.profiles.ollama.effort.effort_refusal`)."""
    effort = effort_refusal(endpoint, body)
    if not isinstance(body, Mapping) or endpoint not in ("chat", "responses"):
        return effort
    if endpoint == "responses" and (early := _input(body.get("input"))) is not None:
        return early
    saved: tuple[str, str] | None
    if endpoint == "chat":
        message = _chat(body)
        saved = None if message is None else ("messages", message)
    else:
        saved = _responses_saved(body)
    if saved is None:
        return effort
    if effort is None or not effort.startswith("json: "):
        return saved[1]
    keys = list(body)
    effort_key = "reasoning_effort" if "ChatCompletionRequest.reasoning_effort" in effort else "reasoning"
    return effort if keys.index(effort_key) < keys.index(saved[0]) else saved[1]
