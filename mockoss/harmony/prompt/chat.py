"""``/v1/chat/completions`` bodies rendered as vLLM renders them for gpt-oss."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openai_harmony import Author, Message, Role

from mockoss.harmony.prompt._common import (
    DEFAULT_CONVERSATION_START_DATE,
    _flatten_text,
    _instruction_message,
    _key,
    _leading_instructions,
    _list,
    _mapping,
    _preamble,
    _render,
    _text,
    _text_contents,
    _tool_description,
)


def _chat_message(msg: Mapping[str, Any], tool_names: Mapping[Any, str]) -> list[Message]:
    """vLLM's ``parse_chat_input_to_harmony_message`` for one chat message."""
    role = msg.get("role")
    reasoning = msg.get("reasoning")
    if reasoning is None:
        reasoning = msg.get("reasoning_content")  # the older name; see the module docstring
    reasoning = _text(reasoning)
    tool_calls = [call for call in _list(msg.get("tool_calls")) if isinstance(call, Mapping)]

    if role == "assistant" and tool_calls:
        out: list[Message] = []
        text = _flatten_text(msg.get("content"))
        if text:  # a preamble the model wrote next to its calls
            out.append(Message.from_role_and_content(Role.ASSISTANT, text).with_channel("commentary"))
        if reasoning:
            out.append(Message.from_role_and_content(Role.ASSISTANT, reasoning).with_channel("analysis"))
        for call in tool_calls:
            function = _mapping(call.get("function"))
            out.append(
                Message.from_role_and_content(Role.ASSISTANT, _text(function.get("arguments")))
                .with_channel("commentary")
                .with_recipient(f"functions.{_text(function.get('name'))}")
                .with_content_type("json")  # vLLM: `json`, not `<|constrain|>json`
            )
        return out

    if role == "tool":
        name = tool_names.get(_key(msg.get("tool_call_id")), "")
        return [
            Message.from_author_and_content(
                Author.new(Role.TOOL, f"functions.{name}"), _flatten_text(msg.get("content")) or ""
            )
            .with_channel("commentary")
            .with_recipient("assistant")
        ]

    if role == "assistant":
        out = []
        if reasoning:
            out.append(Message.from_role_and_content(Role.ASSISTANT, reasoning).with_channel("analysis"))
        contents = _text_contents(msg.get("content") or "")
        if contents and contents[0].text:  # vLLM looks at the first part only
            out.append(Message.from_role_and_contents(Role.ASSISTANT, contents).with_channel("final"))
        return out

    if role in ("system", "developer"):
        text = _flatten_text(msg.get("content"))
        return [] if text is None else [_instruction_message(text)]

    if role == "user":
        return [Message.from_role_and_contents(Role.USER, _text_contents(msg.get("content") or ""))]

    return []  # e.g. the legacy "function" role, which openai-harmony has no role for


def _drop_stale_analysis(messages: list[Message]) -> list[Message]:
    """vLLM's ``auto_drop_analysis_messages``: drop every analysis message before the last
    assistant final message (vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/parser/harmony_utils.py
    ``render_for_completion`` applies it to chat and Responses prompts alike)."""
    last_final = max(
        (i for i, m in enumerate(messages) if m.author.role == Role.ASSISTANT and m.channel == "final"),
        default=-1,
    )
    return [m for i, m in enumerate(messages) if not (i < last_final and m.channel == "analysis")]


def _chat_parts(
    body: Mapping[str, Any], exclude_tools_when_tool_choice_none: bool
) -> tuple[str | None, list[Mapping[str, Any]], list[Mapping[str, Any]], dict[Any, str]]:
    """What vLLM reads from a chat body: (instructions, function specs, the other messages, tool
    names by call id). Shared by rendering and by :mod:`mockoss.harmony.prompt.count`."""
    raw = [m for m in _list(body.get("messages")) if type(m) is dict or isinstance(m, Mapping)]
    instructions, rest = _leading_instructions(raw)

    specs = _function_specs(_rendered_tools(body, exclude_tools_when_tool_choice_none))
    tool_names: dict[Any, str] = {}
    for msg in rest:
        _add_call_names(msg, tool_names)
    return instructions, specs, rest, tool_names


def _rendered_tools(body: Mapping[str, Any], exclude_tools_when_tool_choice_none: bool) -> Any:
    """The body's ``tools`` when vLLM renders them (``None`` when it leaves them out)."""
    tools = body.get("tools")
    if exclude_tools_when_tool_choice_none and body.get("tool_choice") == "none":
        return None
    return tools


def _function_specs(tools: Any) -> list[Mapping[str, Any]]:
    """The ``function`` objects of a chat ``tools`` list's function tools."""
    return [
        _mapping(tool.get("function"))
        for tool in _list(tools)
        if isinstance(tool, Mapping) and tool.get("type", "function") == "function"
    ]


def _add_call_names(msg: Mapping[str, Any], tool_names: dict[Any, str]) -> None:
    """Record the tool name of each of ``msg``'s tool calls by call id (a later call with the
    same id overrides: vLLM builds the same dict over the messages in order)."""
    for call in _list(msg.get("tool_calls")):
        if type(call) is dict or isinstance(call, Mapping):
            tool_names[_key(call.get("id"))] = _text(_mapping(call.get("function")).get("name"))


def _lead(messages: list[Any]) -> tuple[int, str | None]:
    """vLLM's ``extract_instructions_from_messages`` as :func:`_leading_instructions` on the
    mapping items of ``messages``, without copying them: (the index of the leading system/developer
    message, -1 if none; its text as the instructions). For the incremental count."""
    i = 0
    if messages and type(messages[0]) is not dict:  # rare: find the first mapping item
        i = next((i for i, m in enumerate(messages) if isinstance(m, Mapping)), len(messages))
    if i < len(messages) and messages[i].get("role") in ("system", "developer"):
        return i, _flatten_text(messages[i].get("content"))
    return -1, None


def _call_names(messages: list[Any], start: int, lead: int, end: int | None = None) -> dict[Any, str]:
    """Tool names by call id over ``messages[start:end]`` (the leading instructions left out)."""
    names: dict[Any, str] = {}
    for i in range(start, len(messages) if end is None else end):
        msg = messages[i]
        if i != lead and (type(msg) is dict or isinstance(msg, Mapping)):
            _add_call_names(msg, names)
    return names


def _chat_messages(
    body: Mapping[str, Any], start_date: str, exclude_tools_when_tool_choice_none: bool
) -> list[Message]:
    instructions, specs, rest, tool_names = _chat_parts(body, exclude_tools_when_tool_choice_none)
    tools = [_tool_description(spec) for spec in specs]
    messages = _preamble(
        instructions=instructions, tools=tools, reasoning_effort=body.get("reasoning_effort"), start_date=start_date
    )
    turns: list[Message] = []
    for msg in rest:
        turns.extend(_chat_message(msg, tool_names))
    messages.extend(_drop_stale_analysis(turns))
    return messages


def render_chat_prompt(
    body: Mapping[str, Any],
    *,
    conversation_start_date: str = DEFAULT_CONVERSATION_START_DATE,
    exclude_tools_when_tool_choice_none: bool = False,
) -> list[int]:
    """Render a ``/v1/chat/completions`` body the way vLLM renders it for gpt-oss.

    Args:
        body: the request JSON. Read: ``messages`` (``role`` ``system``/``developer``/``user``/
            ``assistant``/``tool``; ``content`` a string, a list of content parts, or null;
            assistant ``tool_calls`` ``[{"id", "function": {"name", "arguments"}}]`` and
            ``reasoning`` (or ``reasoning_content``); tool ``tool_call_id``), ``tools``
            (``[{"type": "function", "function": {"name", "description", "parameters"}}]``),
            ``reasoning_effort`` (``low``/``medium``/``high``), ``tool_choice``.
        conversation_start_date: the system message's "Current date"; fixed by default for
            deterministic counts where vLLM uses today's date.
        exclude_tools_when_tool_choice_none: vLLM's ``--exclude-tools-when-tool-choice-none``
            (off by default, so ``tool_choice: "none"`` still renders the tools, as vLLM does).

    Returns:
        The prompt's o200k_harmony token ids, ending with ``<|start|>assistant``.

    vLLM's chat path (``_make_request_with_harmony``): a leading system/developer message becomes
    the developer message's ``# Instructions`` (later ones become extra developer messages); tools
    are rendered whenever ``tools`` is present; assistant tool calls become
    ``<|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>ARGS<|call|>`` after
    the assistant's text (commentary) and reasoning (analysis); tool results become
    ``<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>…<|end|>``, NAME looked up
    by ``tool_call_id``; plain assistant text is a final-channel message; and every analysis message
    before the last final message is dropped.
    """
    body = _mapping(body)
    return _render(lambda b: _chat_messages(b, conversation_start_date, exclude_tools_when_tool_choice_none), body)
