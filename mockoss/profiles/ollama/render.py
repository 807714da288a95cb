"""The prompt text Ollama renders for gpt-oss: the model's Go template, executed as Ollama does.

Ollama v0.33.0-rc2 (``ollama/ollama@fb3076099``) has no built-in renderer for gpt-oss
(``model/renderers/renderer.go`` names none): a model of family ``gptoss`` whose template holds
``<|start|>`` and ``<|end|>`` uses the harmony parser (``server/routes.go:77-87``), so its chat
mode is "rendered" (``:2357-2374``) and ``chatPrompt`` (``server/prompt.go:23-92``) executes the
model's Go template (``renderPrompt``, ``:135-155``) through Ollama's template package
(``template/template.go``: ``Execute`` with ``collate``, ``convertToolsForTemplate``,
``convertMessagesForTemplate``). The template is the registry's ``gpt-oss`` one, as
``unslothai/unsloth@015bdef0d9:unsloth/ollama_template_mappers.py`` records it (``gptoss_ollama``,
"ollama.com/library/gpt-oss:latest/blobs/fa6710a93d78"; not byte-verified against the blob).
:func:`render_template` writes what that template writes, section by section (each comment names
the template's part); its output was compared with the template run by Ollama's own package in
``tools/goldens/ollama_harness_prompt.go`` (the goldens' prompt counts).

The clock: the template's ``{{ currentDate }}`` is ``time.Now()`` (``template/template.go:125-129``);
mockoss writes :data:`~mockoss.harmony.prompt.DEFAULT_CONVERSATION_START_DATE` (2026-01-01), as
its other profiles do, so counts and ``context`` ids do not drift day to day.

Not ported (:class:`Unported`, the caller falls back to an approximation): the built-in tools'
sections (tools named ``browser.search``, ``browser.open``, ``browser.find``, ``python``) and a
property without a ``type`` (the template's ``index $prop.Type 0`` fails: Ollama answers 500).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mockoss.harmony.prompt import DEFAULT_CONVERSATION_START_DATE
from mockoss.profiles.ollama.gojson import dumps, go_any

__all__ = ["BUILTIN_TOOLS", "Message", "Unported", "render_template"]

#: Tool names the template treats as built-in (its ``$hasBrowserSearch``… checks).
BUILTIN_TOOLS = frozenset({"browser.search", "browser.open", "browser.find", "python"})


class Unported(ValueError):
    """A request whose prompt needs a part of the template mockoss does not write."""


@dataclass(slots=True)
class Message:
    """``api.Message`` as the template sees it: ``role``, ``content``, ``thinking``,
    ``tool_calls`` as ``(name, arguments)`` (arguments: a JSON object as decoded, or ``None``),
    ``tool_name``; ``call_ids``: the tool calls' ids (not rendered)."""

    role: str
    content: str = ""
    thinking: str = ""
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    tool_name: str = ""
    call_ids: list[str] = field(default_factory=list)


def _collate(messages: Sequence[Message]) -> tuple[str, list[Message]]:
    """``collate`` (template/template.go:357-374): system contents joined by a blank line, and the
    messages with consecutive same-role ones (but ``tool``) merged into the first's content (the
    first keeps its thinking and tool calls; the others' are dropped). Linear: a run's contents are
    joined once."""
    system: list[str] = []
    runs: list[tuple[Message, list[str]]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.content)
        if runs and runs[-1][0].role == message.role and message.role != "tool":
            runs[-1][1].append(message.content)
        else:
            runs.append((message, [message.content]))
    collated = [
        first
        if len(parts) == 1
        else Message(first.role, "\n\n".join(parts), first.thinking, first.tool_calls, first.tool_name)
        for first, parts in runs
    ]
    return "\n\n".join(system), collated


def _type(prop: Any) -> str:
    """``{{ if gt (len $prop.Type) 1 }}…{{ else }}{{ index $prop.Type 0 }}{{ end }}``: the JSON
    Schema type names (``api.PropertyType``: a string or a list of them), ``" | "``-joined."""
    kind = prop.get("type") if isinstance(prop, Mapping) else None
    names = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
    if not names:
        raise Unported("a property without a type (the template's index fails: HTTP 500)")
    return " | ".join(map(str, names))


def _function(tool: Mapping[str, Any], name: str) -> str:
    """One non-built-in tool of ``namespace functions`` (the template's ``range .Tools``)."""
    function = tool.get("function") if isinstance(tool.get("function"), Mapping) else {}
    out = "\n"  # the newline before {{if .Function.Description }}
    if description := function.get("description"):
        out += "\n// " + str(description)
    parameters = function.get("parameters") if isinstance(function.get("parameters"), Mapping) else {}
    properties = parameters.get("properties")
    if isinstance(properties, Mapping) and properties:
        out += "\ntype " + name + " = (_: {"
        for key in sorted(properties):  # text/template ranges over a map in key order
            prop = properties[key]
            if isinstance(prop, Mapping) and prop.get("description"):
                out += "\n  // " + str(prop["description"])
            out += "\n  " + key + ": " + _type(prop) + ","
        return out + "\n}) => any;"
    return out + "\ntype " + name + " = () => any;"


def _arguments(arguments: Any) -> str:
    """``{{ $toolCall.Function.Arguments }}``: ``templateArgs.String`` (json.Marshal, ``{}`` for nil)."""
    return "{}" if arguments is None else dumps(go_any(arguments))


def render_template(
    messages: Sequence[Message],
    tools: Sequence[tuple[Mapping[str, Any], str]],
    think: bool | str | None,
    date: str = DEFAULT_CONVERSATION_START_DATE,
) -> str:
    """The prompt text of the gpt-oss template (see the module docstring).

    Args:
        messages: the request's messages (the model has none of its own), before ``collate``.
        tools: each declared tool (``api.Tool`` JSON) with its prompt name (``FunctionNameMap``).
        think: ``ThinkValue``: ``None`` (unset), a bool, or a level (``"max"`` already ``"high"``).
        date: the ``Current date`` line.

    Raises:
        Unported: a built-in tool, or a property without a type.
    """
    if any(name in BUILTIN_TOOLS for _, name in tools):
        raise Unported("built-in tools (browser.*, python)")
    system, collated = _collate(messages)
    think_set = think is not None
    think_on = think is True or think in ("high", "medium", "low", "max")  # ThinkValue.Bool
    level = think if isinstance(think, str) else ("medium" if think is True else "")  # ThinkValue.String
    out = [
        "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
        "Knowledge cutoff: 2024-06\nCurrent date: " + date
    ]
    if think_set and think_on and level:
        out.append("\n\nReasoning: " + level)
    elif not think_set or think_on:
        out.append("\n\nReasoning: medium")
    out.append("\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.")
    if tools:  # $hasNonBuiltinTools
        out.append("\nCalls to these tools must go to the commentary channel: 'functions'.")
    out.append("<|end|>")
    if tools or system:  # the developer message
        out.append("<|start|>developer<|message|>")
        if tools:
            out.append("# Tools\n\n## functions\n\nnamespace functions {")
            out.extend(_function(tool, name) for tool, name in tools)
            out.append("\n\n} // namespace functions")
        if system:
            out.append("\n\n# Instructions\n\n" + system)
        out.append("<|end|>")
    last_user, prefill_content, prefill_thinking = -1, False, False
    for index, message in enumerate(collated):
        last = index == len(collated) - 1
        if message.role == "user":
            last_user = index
        if last and message.role == "assistant" and message.content:
            prefill_content = True
        elif last and message.role == "assistant" and message.thinking:
            prefill_thinking = True
    for index, message in enumerate(collated):
        if message.role == "tool":
            name = message.tool_name
            sender = name if name in BUILTIN_TOOLS else "functions." + name
            out.append("<|start|>" + sender + " to=assistant<|message|>" + message.content + "<|end|>")
        elif message.role == "assistant":
            if message.thinking and index > last_user:  # thinking only after the last user message
                out.append("<|start|>assistant<|channel|>analysis<|message|>" + message.thinking)
                out.append("" if prefill_thinking else "<|end|>")
            if message.content:
                out.append("<|start|>assistant<|channel|>final<|message|>" + message.content)
                out.append("" if prefill_content else "<|end|>")
            for name, arguments in message.tool_calls:
                builtin = name in BUILTIN_TOOLS
                header = "analysis to=" if builtin else "commentary to=functions."
                out.append("<|start|>assistant<|channel|>" + header + name + " <|constrain|>json<|message|>")
                out.append(_arguments(arguments) + "<|call|>")
        elif message.role == "user":
            out.append("<|start|>user<|message|>" + message.content + "<|end|>")
    if not (prefill_content or prefill_thinking):
        out.append("<|start|>assistant")
    return "".join(out)
