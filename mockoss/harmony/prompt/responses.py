"""``/v1/responses`` bodies rendered as vLLM renders them for gpt-oss."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openai_harmony import Author, Message, Role, TextContent, ToolNamespaceConfig

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
from mockoss.harmony.prompt.chat import _drop_stale_analysis


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


def _harmony_format_message(msg: Mapping[str, Any]) -> list[Message]:
    """vLLM's ``_parse_harmony_format_message``: a ``previous_input_messages`` entry written as a
    Harmony message (``{"author": {"role", "name"?}, "channel"?, "recipient"?, "content_type"?,
    "content": str | [{"text"}]}``), rebuilt with its channel, recipient and content type (each
    set only when non-empty). An unknown role gives no message (vLLM: ``Role(role)`` raises a
    ``ValueError``, answered 400 before rendering)."""
    author = _mapping(msg.get("author"))
    try:
        role = Role(author.get("role"))
    except ValueError:
        return []
    raw = msg.get("content", "")
    if isinstance(raw, list):
        contents = [TextContent(text=_text(_mapping(part).get("text", ""))) for part in raw]
    else:
        contents = [TextContent(text=raw if isinstance(raw, str) else "")]
    name = author.get("name")
    if role == Role.TOOL and not name:
        return []  # openai-harmony cannot render a nameless tool author ("Tools should have a name!")
    if name:
        message = Message(author=Author.new(role, _text(name)), content=contents)
    else:
        message = Message.from_role_and_contents(role, contents)
    if channel := msg.get("channel"):
        message = message.with_channel(_text(channel))
    if recipient := msg.get("recipient"):
        message = message.with_recipient(_text(recipient))
    if content_type := msg.get("content_type"):
        message = message.with_content_type(_text(content_type))
    return [message]


def previous_input_message(msg: Mapping[str, Any]) -> list[Message]:
    """vLLM's ``response_previous_input_to_harmony`` for one ``previous_input_messages`` entry.

    Source: vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/responses/harmony.py and
    vllm-project/vllm@v0.33.0:vllm/entrypoints/openai/responses/harmony.py (identical there).

    Args:
        msg: the entry: a Harmony-format dict (it has an ``author`` object, see
            :func:`_harmony_format_message`) or a chat-format one (``{"role", "content", …}``).

    Returns:
        The Harmony messages, before :func:`previous_input_messages` drops system/developer ones.
        Chat format: an assistant message with ``tool_calls`` is one ``commentary`` message to
        ``functions.<name>`` (content type ``json``, arguments or ``""``) per call, its content
        and reasoning ignored; a ``tool`` message is authored by ``functions.<name>`` (the
        message's own ``name``, prefixed unless it already is) on ``commentary`` to ``assistant``
        with its flattened text; ``system``/``developer`` become a developer message with
        ``# Instructions`` when they have text; any other role keeps its role, one text part per
        content part (a part's ``text`` or ``""``) and no channel. An entry without ``role`` or
        with a role openai-harmony does not know gives no message (vLLM answers 400; the
        ``vllm`` profile checks the missing role before rendering), and so does a ``tool``
        message without a ``name`` (vLLM builds it, then openai-harmony refuses to render it:
        ``HarmonyError: Tools should have a name!``; mockoss renders the rest).
    """
    if isinstance(msg.get("author"), Mapping):
        return _harmony_format_message(msg)
    role = msg.get("role")
    tool_calls = msg.get("tool_calls")
    if role == "assistant" and tool_calls:
        calls = []
        for call in _list(tool_calls):
            function = _mapping(_mapping(call).get("function"))
            calls.append(
                Message.from_role_and_content(Role.ASSISTANT, _text(function.get("arguments")) or "")
                .with_channel("commentary")
                .with_recipient(f"functions.{_text(function.get('name', ''))}")
                .with_content_type("json")
            )
        return calls
    if role == "tool":
        name = _text(msg.get("name", ""))
        if not name:
            return []  # vLLM builds a nameless tool author, which openai-harmony refuses to render
        if not name.startswith("functions."):
            name = f"functions.{name}"
        return [
            Message.from_author_and_content(Author.new(Role.TOOL, name), _flatten_text(msg.get("content")) or "")
            .with_channel("commentary")
            .with_recipient("assistant")
        ]
    if role in ("system", "developer"):
        text = _flatten_text(msg.get("content"))
        return [_instruction_message(text)] if text else []
    if role not in ("user", "assistant"):
        return []
    content = msg.get("content", "")
    contents = _text_contents(content) if isinstance(content, list) else [TextContent(text=_text(content))]
    return [Message.from_role_and_contents(Role(role), contents)]


def previous_input_messages(body: Mapping[str, Any]) -> list[Message]:
    """vLLM's ``construct_harmony_previous_input_messages``: every entry of the Responses body's
    ``previous_input_messages`` (a vLLM extension for gpt-oss) converted by
    :func:`previous_input_message`, system and developer messages left out (instructions come
    from the current request only). Entries that are not objects are skipped (vLLM's request
    model rejects them with a 400). Same sources as :func:`previous_input_message`."""
    out: list[Message] = []
    for entry in _list(body.get("previous_input_messages")):
        if isinstance(entry, Mapping):
            out.extend(m for m in previous_input_message(entry) if m.author.role not in (Role.SYSTEM, Role.DEVELOPER))
    return out


def missing_role_error(body: Mapping[str, Any]) -> str | None:
    """The message of the 400 vLLM 0.32/0.33 answer for a chat-format ``previous_input_messages``
    entry without ``role`` (``_parse_chat_format_message`` raises ``VLLMValidationError(f"Message
    has no 'role' key: {chat_msg}", parameter="input")``; its ``str`` appends ``(parameter=input)``,
    vllm-project/vllm@v0.33.0:vllm/exceptions.py), or ``None``. The dict is shown as Python's
    ``repr`` of the JSON entry, as vLLM formats it."""
    for entry in _list(body.get("previous_input_messages")):
        if isinstance(entry, Mapping) and not isinstance(entry.get("author"), Mapping) and entry.get("role") is None:
            return f"Message has no 'role' key: {dict(entry)} (parameter=input)"
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
    turns = previous_input_messages(body)
    if isinstance(request_input, str):
        if request_input or not body.get("previous_input_messages"):
            turns.append(Message.from_role_and_content(Role.USER, request_input))
    else:
        call_names: dict[Any, str] = {}
        for item in _list(request_input):
            if isinstance(item, Mapping) and (msg := _response_item(item, call_names)) is not None:
                turns.append(msg)
    messages.extend(_drop_stale_analysis(turns))
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
            ``web_search_preview``, ``code_interpreter``, ``container``), ``reasoning.effort``,
            ``previous_input_messages`` (see below).
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
    ``content`` become analysis messages (their texts joined by newlines).
    ``previous_input_messages`` (vLLM's own field: earlier turns as chat-format or Harmony-format
    messages, :func:`previous_input_messages`) come between the preamble and the input; with them
    an empty string ``input`` adds no user message. As in chat, every analysis message before the
    last assistant final message is dropped (``render_for_completion`` runs
    ``auto_drop_analysis_messages`` and renders with ``auto_drop_analysis=False``,
    vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/parser/harmony_utils.py, same at v0.33.0;
    openai-harmony's own drop rule then removes nothing more). ``previous_response_id`` is not
    followed: there is no response store here.
    """
    body = _mapping(body)
    return _render(lambda b: _responses_messages(b, conversation_start_date, builtin_tools), body)
