"""``/v1/responses`` bodies rendered as vLLM renders them for gpt-oss."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openai_harmony import Author, Message, Role, ToolNamespaceConfig

from mockoss.harmony.prompt._common import (
    _BUILTIN_TOOL_TYPES,
    DEFAULT_CONVERSATION_START_DATE,
    _builtin_namespace,
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


def _response_item(item: Mapping[str, Any], call_names: dict[Any, str]) -> Message | None:
    """vLLM's ``response_input_to_harmony`` for one input item (``None``: nothing rendered)."""
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role")
        content = item.get("content")
        if role in ("system", "developer"):
            text = _flatten_text(content)
            return _instruction_message(text) if text else None
        if role not in ("user", "assistant"):
            return None
        msg = Message.from_role_and_contents(Role(role), _text_contents(content))
        return msg.with_channel("final") if role == "assistant" else msg
    if kind == "function_call":
        call_names[_key(item.get("call_id"))] = _text(item.get("name"))
        return (
            Message.from_role_and_content(Role.ASSISTANT, _text(item.get("arguments")))
            .with_channel("commentary")
            .with_recipient(f"functions.{_text(item.get('name'))}")
            .with_content_type("json")
        )
    if kind == "function_call_output":
        name = call_names.get(_key(item.get("call_id")), "")
        output = item.get("output")
        text = _flatten_text(output) if isinstance(output, list) else _text(output)
        return (
            Message.from_author_and_content(Author.new(Role.TOOL, f"functions.{name}"), text or "")
            .with_channel("commentary")
            .with_recipient("assistant")
        )
    if kind == "reasoning":
        parts = [p for p in _list(item.get("content")) if isinstance(p, Mapping)]
        if not parts:  # e.g. only a summary: vLLM skips the item
            return None
        text = "\n".join(_text(p.get("text")) for p in parts)
        return Message.from_role_and_content(Role.ASSISTANT, text).with_channel("analysis")
    return None


def _responses_parts(
    body: Mapping[str, Any], builtin_tools: bool
) -> tuple[Any, list[Mapping[str, Any]], list[ToolNamespaceConfig], Any, Any]:
    """What vLLM reads from a Responses body: (instructions, function tool specs, built-in tool
    namespaces, reasoning effort, the input left after the instructions). Shared by rendering and
    by :mod:`mockoss.harmony.prompt.count`."""
    request_input = body.get("input")
    instructions = body.get("instructions")
    if isinstance(instructions, list):
        instructions = _flatten_text(instructions)
    elif instructions is not None:
        instructions = _text(instructions)
    if instructions is None and isinstance(request_input, list):
        instructions, request_input = _leading_instructions(request_input)

    tools = [t for t in _list(body.get("tools")) if isinstance(t, Mapping)]
    tool_types = {t.get("type") for t in tools if isinstance(t.get("type"), str)}
    # vLLM passes the tools on only when one is not a built-in (has_custom_tools); a function tool
    # is such a tool, so that test changes nothing here.
    specs = [t for t in tools if t.get("type") == "function"]
    namespaces: list[ToolNamespaceConfig] = []
    if builtin_tools:
        for tool_type in _BUILTIN_TOOL_TYPES:
            if tool_type in tool_types and (namespace := _builtin_namespace(tool_type)) is not None:
                namespaces.append(namespace)
    return instructions, specs, namespaces, _mapping(body.get("reasoning")).get("effort"), request_input


def _responses_messages(body: Mapping[str, Any], start_date: str, builtin_tools: bool) -> list[Message]:
    instructions, specs, namespaces, reasoning, request_input = _responses_parts(body, builtin_tools)
    messages = _preamble(
        instructions=instructions,
        tools=[_tool_description(spec) for spec in specs],
        reasoning_effort=reasoning,
        start_date=start_date,
        namespaces=namespaces,
    )
    if isinstance(request_input, str):
        messages.append(Message.from_role_and_content(Role.USER, request_input))
    else:
        call_names: dict[Any, str] = {}
        for item in _list(request_input):
            if isinstance(item, Mapping) and (msg := _response_item(item, call_names)) is not None:
                messages.append(msg)
    return messages


def render_responses_prompt(
    body: Mapping[str, Any],
    *,
    conversation_start_date: str = DEFAULT_CONVERSATION_START_DATE,
    builtin_tools: bool = False,
) -> list[int]:
    """Render a ``/v1/responses`` body the way vLLM renders it for gpt-oss.

    Args:
        body: the request JSON. Read: ``input`` (a string, or a list of items: messages
            ``{"type": "message", "role", "content": str | [{"type": "input_text"|"output_text",
            "text"}]}``, ``{"type": "function_call", "call_id", "name", "arguments"}``,
            ``{"type": "function_call_output", "call_id", "output"}``, ``{"type": "reasoning",
            "content": [{"type": "reasoning_text", "text"}]}``), ``instructions``, ``tools``
            (``{"type": "function", "name", "description", "parameters"}`` and the built-ins
            ``web_search_preview``, ``code_interpreter``, ``container``), ``reasoning.effort``.
        conversation_start_date: as for :func:`render_chat_prompt`.
        builtin_tools: render the built-in tools a request asks for into the system message, as
            vLLM does when started with ``--tool-server demo`` (``web_search_preview`` → the
            ``browser`` namespace, ``code_interpreter`` → ``python``; ``container`` has no
            description there). ``False`` is vLLM without a tool server: built-ins are not rendered.

    Returns:
        The prompt's o200k_harmony token ids, ending with ``<|start|>assistant``.

    vLLM's Responses path (``_render_responses_with_harmony``, no ``previous_response_id``):
    ``instructions`` (else a leading system/developer input message) become the developer message's
    ``# Instructions``; function tools are rendered only when some tool is not a built-in; a string
    ``input`` is one user message; input messages keep their role (assistant ones on the final
    channel, system/developer ones become developer instructions); ``function_call`` and
    ``function_call_output`` render like chat tool calls and results (the output's tool name comes
    from the earlier ``function_call`` with the same ``call_id``); ``reasoning`` items with
    ``content`` become analysis messages (their texts joined by newlines). Unlike chat, vLLM drops
    no analysis here itself; only openai-harmony's rule applies: when the last assistant message is
    a final one, analysis messages before the first final message are left out.
    ``previous_response_id`` and vLLM's ``previous_input_messages`` are not followed: there is no
    response store here.
    """
    body = _mapping(body)
    return _render(lambda b: _responses_messages(b, conversation_start_date, builtin_tools), body)
