"""Shared pieces of prompt rendering: value coercion, the system/developer preamble, rendering."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from openai_harmony import (
    Conversation,
    DeveloperContent,
    Message,
    ReasoningEffort,
    Role,
    SystemContent,
    TextContent,
    ToolDescription,
    ToolNamespaceConfig,
)

from mockoss.harmony.encoding import load_encoding

#: Fixed "Current date" of the system message. vLLM uses today's date (``datetime.now()``, or
#: ``$VLLM_SYSTEM_START_DATE`` when set), which would make token counts drift day to day.
DEFAULT_CONVERSATION_START_DATE = "2026-01-01"

_REASONING_EFFORT = {
    "low": ReasoningEffort.LOW,
    "medium": ReasoningEffort.MEDIUM,
    "high": ReasoningEffort.HIGH,
}

#: Responses tool types vLLM treats as built-ins (``MCP_BUILTIN_TOOLS``), in the order vLLM adds
#: their namespaces to the system message (browser, python, container).
_BUILTIN_TOOL_TYPES = ("web_search_preview", "code_interpreter", "container")


@functools.cache
def _builtin_namespace(tool_type: str) -> ToolNamespaceConfig | None:
    """The system-message tool namespace vLLM's demo tool server gives a built-in tool type."""
    if tool_type == "web_search_preview":
        return ToolNamespaceConfig.browser()
    if tool_type == "code_interpreter":
        return ToolNamespaceConfig.python()
    return None  # "container": the demo tool server has no description for it.


def _text(value: Any) -> str:
    """``value`` as prompt text: ``None`` is empty, strings as they are, objects as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _flatten_text(content: Any) -> str | None:
    """vLLM's ``flatten_input_text_content``: join the ``text`` of every part, ``None`` if none.

    Strings pass through; in a list, string items and the ``text`` of dict items count (whatever the
    part type); anything else is ``None``.
    """
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        item if isinstance(item, str) else _text(item.get("text"))
        for item in content
        if isinstance(item, str) or (isinstance(item, Mapping) and item.get("text") is not None)
    ]
    return "".join(texts) if texts else None


def _text_contents(content: Any) -> list[TextContent]:
    """vLLM's default content mapping: a string is one part, each list item one part (its ``text``).

    Parts without text (images, audio, refusals) become empty parts, which render as nothing.
    """
    if not isinstance(content, list):
        return [TextContent(text=_text(content))]
    return [TextContent(text=_part_text(item)) for item in content]


def _part_text(part: Any) -> str:
    if isinstance(part, Mapping):
        return _text(part.get("text"))
    return _text(part)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict or isinstance(value, Mapping) else {}  # dict first: ABC checks are slow


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _system_message(reasoning_effort: Any, start_date: str, namespaces: Iterable[ToolNamespaceConfig] = ()) -> Message:
    """vLLM's ``get_system_message`` (no model identity, no system instructions)."""
    content = SystemContent.new()
    effort = _REASONING_EFFORT.get(reasoning_effort) if isinstance(reasoning_effort, str) else None
    if effort is not None:
        content = content.with_reasoning_effort(effort)
    content = content.with_conversation_start_date(start_date)
    for namespace in namespaces:
        content = content.with_tools(namespace)
    return Message.from_role_and_content(Role.SYSTEM, content)


def _tool_description(spec: Mapping[str, Any]) -> ToolDescription:
    """``ToolDescription.new(name, description or "", parameters)`` (vLLM's ``create_tool_definition``)."""
    parameters = spec.get("parameters")
    return ToolDescription.new(
        name=_text(spec.get("name")),
        description=_text(spec.get("description")),
        parameters=parameters if isinstance(parameters, dict) else None,
    )


def _developer_message(instructions: str | None, tools: Sequence[ToolDescription]) -> Message:
    """vLLM's ``get_developer_message``: ``# Instructions`` if given, then the function tools."""
    content = DeveloperContent.new()
    if instructions is not None:
        content = content.with_instructions(instructions)
    if tools:
        content = content.with_function_tools(list(tools))
    return Message.from_role_and_content(Role.DEVELOPER, content)


def _preamble(
    *,
    instructions: str | None,
    tools: Sequence[ToolDescription],
    reasoning_effort: Any,
    start_date: str,
    namespaces: Iterable[ToolNamespaceConfig] = (),
) -> list[Message]:
    """vLLM's ``build_harmony_preamble``: the system message, plus a developer message when needed.

    The developer message appears only for non-empty instructions or at least one function tool.
    """
    messages = [_system_message(reasoning_effort, start_date, namespaces)]
    if instructions or tools:
        messages.append(_developer_message(instructions, tools))
    return messages


def _instruction_message(text: str) -> Message:
    """vLLM's ``get_system_or_developer_message``: a later system/developer message becomes a
    developer message with ``# Instructions`` (``VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS`` unset)."""
    return _developer_message(text, ())


def _leading_instructions(items: list[Any]) -> tuple[str | None, list[Any]]:
    """vLLM's ``extract_instructions_from_messages``: peel a leading system/developer message."""
    if items and isinstance(items[0], Mapping) and items[0].get("role") in ("system", "developer"):
        return _flatten_text(items[0].get("content")), items[1:]
    return None, items


def _render(build: Any, body: Mapping[str, Any]) -> list[int]:
    """Render ``build(body)`` with openai-harmony, tool-call headers in the legacy shape
    (:func:`legacy_tool_call_headers`); on a ``ValueError`` (openai-harmony cannot serialise a lone
    surrogate or a NaN, pydantic rejected a value) retry once on a repaired body."""
    encoding = load_encoding()
    try:
        messages = build(body)
        tokens = encoding.render_conversation_for_completion(Conversation.from_messages(messages), Role.ASSISTANT)
    except ValueError:
        messages = build(_repair(body))
        tokens = encoding.render_conversation_for_completion(Conversation.from_messages(messages), Role.ASSISTANT)
    return legacy_tool_call_headers(tokens)


@functools.cache
def _header_tokens() -> tuple[int, int, int, int]:
    encoding = load_encoding()
    return tuple(encoding.encode(t, allowed_special="all")[0] for t in ("<|start|>", "<|channel|>", "<|constrain|>", "<|message|>"))  # type: ignore[return-value]


def legacy_tool_call_headers(tokens: list[int]) -> list[int]:
    """``tokens`` with every assistant tool-call header in the shape gpt-oss was trained on.

    oss-harmony (0.0.10 on) renders a call's header as ``<|start|>assistant<|channel|>commentary
    to=functions.f <|constrain|>json<|message|>``; vLLM 0.32.0/0.33.0 rewrite each such header, at
    the token level, to ``<|start|>assistant to=functions.f<|channel|>commentary json<|message|>``
    (``render_for_completion`` → ``_use_legacy_tool_call_headers``,
    vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/parser/harmony_utils.py, same at v0.33.0),
    the shape openai-harmony 0.0.8 and the gpt-oss chat template render. Two tokens fewer per call
    here. A header is rewritten when its author is ``assistant`` and, between ``<|channel|>`` and
    ``<|constrain|>``, it reads ``<channel> to=<recipient> `` with both parts and a content type
    after ``<|constrain|>``; any other header is kept. Tokens outside headers are never touched, so
    the rewrite of a conversation is the rewrite of each message (what the incremental counts in
    :mod:`mockoss.harmony.prompt.count` rely on).

    Args:
        tokens: o200k_harmony token ids.

    Returns:
        A new list (``tokens`` itself is not modified).
    """
    start, channel_token, constrain, message = _header_tokens()
    if constrain not in tokens:
        return list(tokens)
    encoding = load_encoding()
    out: list[int] = []
    i, n = 0, len(tokens)
    while i < n:
        if tokens[i] != start:
            out.append(tokens[i])
            i += 1
            continue
        try:
            end = tokens.index(message, i + 1)
            ch = tokens.index(channel_token, i + 1, end)
            co = tokens.index(constrain, ch + 1, end)
        except ValueError:
            out.append(tokens[i])
            i += 1
            continue
        author = encoding.decode(tokens[i + 1 : ch])
        middle = encoding.decode(tokens[ch + 1 : co])
        content_type = encoding.decode(tokens[co + 1 : end])
        name, sep, recipient = middle[:-1].partition(" to=")
        if author != "assistant" or not middle.endswith(" ") or not sep or not name or not recipient or not content_type:
            out.extend(tokens[i : end + 1])
        else:
            out.append(start)
            out.extend(encoding.encode(f"assistant to={recipient}", disallowed_special=()))
            out.append(channel_token)
            out.extend(encoding.encode(f"{name} {content_type}", disallowed_special=()))
            out.append(message)
        i = end + 1
    return out


def _repair(value: Any) -> Any:
    """A copy of ``value`` with lone surrogates replaced by U+FFFD and non-finite floats by strings."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Mapping):
        return {_repair(k): _repair(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_repair(v) for v in value]
    return value


def _key(value: Any) -> Any:
    """An id as a dict key (ids are strings, but any JSON value must not crash a lookup)."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else _text(value)
