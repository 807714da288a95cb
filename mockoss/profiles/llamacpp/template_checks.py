"""The gpt-oss chat template's refusals a llama-server client can trigger, in each engine's words.

llama-server renders the model's Jinja template (``chat_template.jinja`` of openai/gpt-oss-20b,
embedded in the GGUF) on the request's messages before generating, for ``/v1/chat/completions``,
``/v1/responses`` (converted to chat messages) and ``/apply-template``. Its ``raise_exception``
calls a client can reach (template text at openai/gpt-oss-20b ``cbf31f6``, 2025-08-08, mirrored in
EchoCog/gpt-oss-20b@cbf31f62; lines 265-319), checked in message order, the first one wins:

* an assistant message whose ``content`` holds ``<|channel|>analysis<|message|>`` or
  ``<|channel|>final<|message|>`` (:data:`CHANNEL_IN_CONTENT`). llama.cpp patches this check out
  of the template at load (``{%- if false %}``; PR #15243, commit fba5c0d6, 2025-08-11,
  ``common_chat_templates_init`` in common/chat.cpp, still there in 2026): only launch builds
  raise it (``template_channel_check``);
* the same markup in the assistant's ``thinking`` (:data:`CHANNEL_IN_THINKING`). The gpt-oss handler
  copies ``reasoning_content`` to ``thinking`` (``common_chat_params_init_gpt_oss``, where PR #16937
  moved it on 2025-11-02): only for a message with tool calls, its ``content`` kept
  (``thinking_field="with_tool_calls"``), until PR #19704 (2026-02-18, fixing #19703) dropped the
  ``content``; in 2026's common/parsers/gpt-oss.cpp every message with ``reasoning_content`` gets
  it, ``content`` dropped beside tool calls (``"always"``; the two steps are one value here);
* an assistant message with ``tool_calls``, a ``content`` and a ``thinking``
  (:data:`CONTENT_AND_THINKING`): reachable with ``"with_tool_calls"`` only (ggml-org/llama.cpp#17040
  under minja; anomalyco/opencode#10805 under the new engine, gpt-oss-120b, 2026-01-27);
* a ``tool`` message while no assistant tool call is remembered (:data:`TOOL_WITHOUT_CALL`): the
  template remembers the last call's name, forgets it at an assistant message without
  ``tool_calls``, and ignores ``system``/``developer``/``user`` messages. A leading
  ``system``/``developer`` message is not in the loop.

A trailing assistant message never reaches the template: llama-server prefills it
(``--prefill-assistant``, on by default), popping it before ``common_chat_templates_apply`` and
appending its text to the prompt (``oaicompat_chat_params_parse``,
ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp, which also reads ``response_format``
and ``reasoning_format`` before the template: their errors come first).

llama-server re-serialises messages before templating (``common_chat_msg::to_json_oaicompat``):
``tool_calls`` and ``reasoning_content`` reach the template only when non-empty.

The exception is not an ``std::invalid_argument``: ``ex_wrapper`` (tools/server/server.cpp) answers
HTTP 500 ``server_error`` with ``e.what()`` as the message (the gpt-oss handler,
``common_chat_try_specialized_template`` in ``common_chat_templates_apply_jinja``, runs before the
autoparser's ``try``, whose ``std::invalid_argument`` makes other templates' raises a 400).
``e.what()`` depends on the engine (:func:`error_text`):

* ``"jinja"`` (llama.cpp's own engine, PR #18462, from b7756 per ggml-org/llama.cpp#19476):
  ``raise_exception`` throws ``"Jinja Exception: " + msg`` (common/jinja/value.cpp) and the
  innermost statement, the ``CallExpression``, re-throws it decorated
  (``statement::execute``, ggml-org/llama.cpp@07129346:common/jinja/runtime.cpp;
  ``peak_source``, ggml-org/llama.cpp@5c5f166e:common/jinja/utils.h): ``"\\n------------\\nWhile
  executing CallExpression at line L, column C in source:\\n..." + 40 bytes either side of the call's
  ``(`` with newlines shown as ``↵`` + "...\\n" + 43 spaces + "^\\nError: Jinja Exception: " + msg``.
  Line and column are those of the template above (byte columns; the #15243 patch keeps lines).
  anomalyco/opencode#10805 shows this text for :data:`CONTENT_AND_THINKING` byte for byte but at
  ``line 296`` (unsloth's GGUF template); #20733 (``line 85, column 32``) shows the column is the
  ``(``'s; anomalyco/opencode#47367 shows the JSON body (500, ``server_error``, the leading
  ``"\\n------------\\n"``). Which template revision a given GGUF embeds is not checked (the launch
  one, openai/gpt-oss-20b@ec854da, has the raises 75 lines lower: #15091's ``row 340``).
* ``"minja"`` (b7755 and before): minja throws the message and each enclosing node appends a
  location (``" at row R, column C:\\n"`` and the source lines around, several times: #15091's
  report, ``… at row 340, column 36:\\n …``; #17040's, ``… at row 290, column 178:\\n …``). Those
  suffixes are NOT reproduced: minja's ``error_location_suffix`` is known (google/minja
  ``minja.hpp``), but which nodes append it, and where a call's position lies, changed between the
  minja versions llama.cpp vendored (column 36 in #15091, 178 in #17040 for the same kind of call),
  and the vendored versions were not read. mockoss answers the template's message alone, the
  start of the real text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ARRAY_WITHOUT_ITEMS",
    "CHANNEL_IN_CONTENT",
    "CHANNEL_IN_THINKING",
    "CONTENT_AND_THINKING",
    "TOOL_WITHOUT_CALL",
    "TemplateRaise",
    "error_text",
    "messages_refusal",
    "tools_refusal",
]

_FIELD_TAIL = (
    " field. Instead of doing this, you should pass analysis messages (the string between '<|message|>' and "
    "'<|end|>') in the 'thinking' field, and final messages (the string between '<|message|>' and '<|end|>') in "
    "the 'content' field."
)


@dataclass(frozen=True, slots=True)
class TemplateRaise:
    """One ``raise_exception`` of the template: its ``message``, the ``line`` and byte ``column`` of
    the call's ``(``, and ``before``/``after``, the 40 bytes of template source either side of it."""

    message: str
    line: int
    column: int
    before: str
    after: str
    #: the statement that re-throws it and the prefix of the engine's own exception text
    statement: str = "CallExpression"
    prefix: str = "Jinja Exception: "


#: ``raise_exception`` calls of the gpt-oss template (openai/gpt-oss-20b@cbf31f6 chat_template.jinja).
CHANNEL_IN_CONTENT = TemplateRaise(
    "You have passed a message containing <|channel|> tags in the content" + _FIELD_TAIL,
    265, 36, "t %}\n                {{- raise_exception", '("You have passed a message containing <',
)  # fmt: skip
CHANNEL_IN_THINKING = TemplateRaise(
    "You have passed a message containing <|channel|> tags in the thinking" + _FIELD_TAIL,
    270, 36, "g %}\n                {{- raise_exception", '("You have passed a message containing <',
)  # fmt: skip
CONTENT_AND_THINKING = TemplateRaise(
    "Cannot pass both content and thinking in an assistant message with tool calls! Put the analysis "
    "message in one or the other, but not both.",
    290, 36, "g %}\n                {{- raise_exception", '("Cannot pass both content and thinking ',
)  # fmt: skip
TOOL_WITHOUT_CALL = TemplateRaise(
    "Message has tool role, but there was no previous assistant message with a tool call!",
    319, 32, " none %}\n            {{- raise_exception", '("Message has tool role, but there was n',
)  # fmt: skip

#: Not a ``raise_exception``: the engine's own error on ``{%- if param_spec['items'] -%}`` (template
#: line 12, in ``render_typescript_type``) for a declared tool whose parameters hold an array
#: without an ``items`` key (:func:`tools_refusal`). llama.cpp's Jinja engine looks a missing key
#: up as a built-in, finds the dict's ``items`` method and cannot test a function as a bool:
#: ``member_expression::execute_impl`` (common/jinja/runtime.cpp:818-822) and ``as_bool``'s
#: ``throw_type_error("is not a bool value")`` (common/jinja/value.h:135), re-thrown by the ``If``
#: statement, HTTP 500 (Telosnex/fllama@1d28604d, llama.cpp b9553; byte for byte in
#: tests/golden/llamacpp-b9553). The same fallback is in runtime.cpp@07129346 (January 2026) and
#: @6897f5df (not dated here): whether a later build fixed it is not known.
ARRAY_WITHOUT_ITEMS = TemplateRaise(
    "Function is not a bool value",
    12, 13, 'am_spec.type == "array" -%}\n        {%- ', "if param_spec['items'] -%}\n            {",
    statement="If", prefix="",
)  # fmt: skip

_MARKERS = ("<|channel|>analysis<|message|>", "<|channel|>final<|message|>")


def error_text(raised: TemplateRaise, engine: str) -> str:
    """The ``e.what()`` llama-server sends as the error ``message`` (module docstring): the bare
    message for ``"minja"``, the decorated text for ``"jinja"``."""
    if engine == "minja":
        return raised.message
    window = (raised.before + raised.after).replace("\n", "↵")
    return (
        f"\n------------\nWhile executing {raised.statement} at line {raised.line}, column {raised.column} in source:\n"
        f"...{window}...\n{' ' * (len(raised.before.encode()) + 3)}^\nError: {raised.prefix}{raised.message}"
    )


def _array_without_items(spec: Any) -> bool:
    """Whether ``render_typescript_type(spec)`` (template lines 10-106) reaches line 12 with no
    ``items`` key: an array; else the branches that call it again (an array's ``items`` of
    another type, every ``oneOf`` variant unless several and one an object, an object's
    ``properties``)."""
    if not isinstance(spec, Mapping):
        return False
    kind = spec.get("type")
    if kind == "array":
        if "items" not in spec:
            return True
        items = spec["items"]
        if not items or (
            isinstance(items, Mapping) and items.get("type") in ("string", "number", "integer", "boolean")
        ):
            return False
        return _array_without_items(items)
    if isinstance(kind, list) and kind:
        return False
    variants = spec.get("oneOf")
    if variants and isinstance(variants, list):
        objects = any(isinstance(v, Mapping) and v.get("type") == "object" for v in variants)
        return not (objects and len(variants) > 1) and any(_array_without_items(v) for v in variants)
    if kind == "object" and isinstance(spec.get("properties"), Mapping):
        return any(_array_without_items(p) for p in spec["properties"].values())
    return False


def tools_refusal(tools: Any) -> TemplateRaise | None:
    """:data:`ARRAY_WITHOUT_ITEMS` when a declared function tool's ``parameters.properties`` hold
    an array without ``items`` at any depth the template renders (``render_tool_namespace``, lines
    108-148, rendered before any message: it wins over :func:`messages_refusal`), else ``None``.
    ``tools``: the request's ``tools`` (anything but a list raises nothing here)."""
    if not isinstance(tools, list):
        return None
    for tool in tools:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        parameters = function.get("parameters") if isinstance(function, Mapping) else None
        properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
        if isinstance(properties, Mapping) and any(_array_without_items(p) for p in properties.values()):
            return ARRAY_WITHOUT_ITEMS
    return None


def _marked(text: Any) -> bool:
    return isinstance(text, str) and any(marker in text for marker in _MARKERS)


def _content_text(content: Any) -> str:
    """A message's ``content`` as the template reads it: a string, or its text parts joined
    (llama.cpp concatenates them for a template without typed content); anything else ``""``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
        return "\n".join(t for t in texts if isinstance(t, str) and t)
    return ""


def _assistant_refusal(message: Mapping[str, Any], *, channel_check: bool, thinking_field: str) -> TemplateRaise | None:
    calls = message.get("tool_calls")
    has_calls = isinstance(calls, list) and bool(calls)
    reasoning = message.get("reasoning_content")
    thinking = (
        reasoning if isinstance(reasoning, str) and reasoning and (has_calls or thinking_field == "always") else None
    )
    content = _content_text(message.get("content"))
    if thinking is not None and has_calls and thinking_field == "always":
        content = ""  # msg.erase("content") (common/parsers/gpt-oss.cpp)
    if channel_check and _marked(content):
        return CHANNEL_IN_CONTENT
    if _marked(thinking):
        return CHANNEL_IN_THINKING
    if has_calls and content and thinking:
        return CONTENT_AND_THINKING
    return None


def messages_refusal(
    messages: Any, *, channel_check: bool = False, thinking_field: str = "always"
) -> TemplateRaise | None:
    """The first :class:`TemplateRaise` the template hits on chat ``messages`` (a list of message
    objects; anything else, and malformed messages, raise nothing here), else ``None``.

    Args:
        channel_check: whether the content check is in the template (launch builds, before #15243).
        thinking_field: ``"always"`` or ``"with_tool_calls"``: which messages get ``thinking``.
    """
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        return None
    loop = list(messages)
    if loop and isinstance(loop[-1], Mapping) and loop[-1].get("role") == "assistant":
        loop.pop()  # the prefilled message, appended to the prompt after the template (--prefill-assistant)
    if loop and isinstance(loop[0], Mapping) and loop[0].get("role") in ("system", "developer"):
        loop = loop[1:]
    called = False
    for message in loop:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "assistant":
            refused = _assistant_refusal(message, channel_check=channel_check, thinking_field=thinking_field)
            if refused is not None:
                return refused
            calls = message.get("tool_calls")
            called = isinstance(calls, list) and bool(calls)
        elif role == "tool" and not called:
            return TOOL_WITHOUT_CALL
    return None
