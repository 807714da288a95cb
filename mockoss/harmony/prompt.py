"""Request bodies rendered as the Harmony prompt vLLM feeds gpt-oss, for realistic ``prompt_tokens``.

Both entry points take the validated JSON body of a request as plain dicts and return the prompt's
token ids (o200k_harmony), ending with ``<|start|>assistant``. Rendering is openai-harmony's own
(``Conversation.from_messages`` then ``render_conversation_for_completion(conv, Role.ASSISTANT)``
with its default config); this module only decides *which* Harmony messages vLLM builds.

vLLM sources reproduced (vllm-project/vllm; read for facts, no code copied):

* ``vllm/entrypoints/openai/parser/harmony_utils.py``, the version that has ``build_harmony_preamble``,
  ``extract_instructions_from_messages`` and ``get_system_or_developer_message`` (introduced by
  PR #44330, merged 2026-06-02; the index that served the file could not name its commit). Its
  ``get_system_message`` / ``get_developer_message`` / ``parse_chat_input_to_harmony_message`` match
  ``harmony_utils.py@0142105b`` apart from the system/developer handling.
* ``vllm/entrypoints/openai/responses/harmony.py@2506874329a0`` (``response_input_to_harmony``).
* The renderer that calls them (``_make_request_with_harmony`` for chat,
  ``_render_responses_with_harmony`` for Responses; the successor of
  ``vllm/entrypoints/serve/render/serving.py@9f0eedbc``, commit not resolvable either).
* Built-in tool descriptions: vLLM's ``DemoToolServer`` returns openai-harmony's
  ``ToolNamespaceConfig.browser()`` / ``.python()`` and nothing for ``container``.

What vLLM renders (and so do we):

* System message: ``SystemContent.new()`` (model identity "You are ChatGPT, a large language model
  trained by OpenAI.", knowledge cutoff 2024-06, all three channels) with the conversation start
  date, ``Reasoning: {effort}`` (``medium`` unless the request says ``low``/``medium``/``high``) and,
  for Responses only, the built-in tool namespaces.
* Developer message, only when there are instructions or tools: ``# Instructions`` then the
  ``functions`` namespace of the request's function tools.
* Conversation turns, then ``<|start|>assistant``.

Assistant ``reasoning_content`` is read when ``reasoning`` is absent: vLLM's converter reads only
``reasoning``; whether its request layer still maps the older name onto it is unverified.

Other vLLM versions differ: ``harmony_utils.py@6a22fe6f`` removed ``commentary`` from the valid
channels when the request had no function tools and rendered a chat system message as a second,
raw ``<|start|>system`` message (chat serving then also always added a developer message);
``harmony_utils.py@0142105b`` drops analysis messages only within the current turn (after the last
user message).

Deviations, all for inputs vLLM rejects (HTTP 400/500) rather than renders; this module never raises:
unknown roles and item types are skipped, a reasoning effort vLLM rejects (``"none"``,
``"minimal"``…) renders as the default, unsupported tool types are left out, a
``function_call_output`` whose ``call_id`` matches no earlier ``function_call`` gets the empty tool
name, non-string values are stringified (JSON for objects), and strings vLLM's renderer cannot encode
(lone surrogates, NaN in a schema) are repaired.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from openai_harmony import (
    Author,
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

__all__ = ["DEFAULT_CONVERSATION_START_DATE", "render_chat_prompt", "render_responses_prompt"]

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


# --- value coercion: request JSON is validated, but not necessarily to vLLM's stricter models ----


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
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# --- the preamble: system and developer messages -------------------------------------------------


def _system_message(
    reasoning_effort: Any, start_date: str, namespaces: Iterable[ToolNamespaceConfig] = ()
) -> Message:
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


# --- /v1/chat/completions -------------------------------------------------------------------------


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
    assistant final message (chat path only)."""
    last_final = max(
        (i for i, m in enumerate(messages) if m.author.role == Role.ASSISTANT and m.channel == "final"),
        default=-1,
    )
    return [m for i, m in enumerate(messages) if not (i < last_final and m.channel == "analysis")]


def _chat_messages(
    body: Mapping[str, Any], start_date: str, exclude_tools_when_tool_choice_none: bool
) -> list[Message]:
    raw = [m for m in _list(body.get("messages")) if isinstance(m, Mapping)]
    instructions, rest = _leading_instructions(raw)

    tools_field = body.get("tools")
    include_tools = tools_field is not None and not (
        exclude_tools_when_tool_choice_none and body.get("tool_choice") == "none"
    )
    tools: list[ToolDescription] = []
    if include_tools:
        for tool in _list(tools_field):
            if isinstance(tool, Mapping) and tool.get("type", "function") == "function":
                tools.append(_tool_description(_mapping(tool.get("function"))))

    messages = _preamble(
        instructions=instructions, tools=tools, reasoning_effort=body.get("reasoning_effort"), start_date=start_date
    )
    tool_names: dict[Any, str] = {}
    for msg in rest:
        for call in _list(msg.get("tool_calls")):
            if isinstance(call, Mapping):
                tool_names[_key(call.get("id"))] = _text(_mapping(call.get("function")).get("name"))
    turns: list[Message] = []
    for msg in rest:
        turns.extend(_chat_message(msg, tool_names))
    messages.extend(_drop_stale_analysis(turns))
    return messages


def _key(value: Any) -> Any:
    """An id as a dict key (ids are strings, but any JSON value must not crash a lookup)."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else _text(value)


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


# --- /v1/responses --------------------------------------------------------------------------------


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


def _responses_messages(body: Mapping[str, Any], start_date: str, builtin_tools: bool) -> list[Message]:
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
    function_tools = [_tool_description(t) for t in tools if t.get("type") == "function"]
    namespaces: list[ToolNamespaceConfig] = []
    if builtin_tools:
        for tool_type in _BUILTIN_TOOL_TYPES:
            if tool_type in tool_types and (namespace := _builtin_namespace(tool_type)) is not None:
                namespaces.append(namespace)

    reasoning = _mapping(body.get("reasoning")).get("effort")
    messages = _preamble(
        instructions=instructions,
        tools=function_tools,
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


# --- rendering ------------------------------------------------------------------------------------


def _render(build: Any, body: Mapping[str, Any]) -> list[int]:
    """Render ``build(body)`` with openai-harmony; on a ``ValueError`` (openai-harmony cannot
    serialise a lone surrogate or a NaN, pydantic rejected a value) retry once on a repaired body."""
    encoding = load_encoding()
    try:
        messages = build(body)
        return encoding.render_conversation_for_completion(Conversation.from_messages(messages), Role.ASSISTANT)
    except ValueError:
        messages = build(_repair(body))
        return encoding.render_conversation_for_completion(Conversation.from_messages(messages), Role.ASSISTANT)


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
