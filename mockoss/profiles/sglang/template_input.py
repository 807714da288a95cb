"""What SGLang hands the chat template of a chat request: messages, tools and template arguments.

SGLang 0.5.23 renders a chat prompt with the model's own chat template through transformers'
``apply_chat_template`` (:mod:`.template` renders it); this module builds that call's arguments
from the request body as ``OpenAIServingChat`` does (sgl-project/sglang v0.5.23, the package
index's wheel, ``python/sglang/srt/entrypoints/openai/serving_chat.py``, read):

* ``_process_messages`` (line 1861): the template gets ``tools`` only when the request has tools
  and ``tool_choice`` is not ``"none"`` (absent, it is ``"auto"`` with tools:
  ``protocol.py set_tool_choice_default``); a named ``tool_choice`` keeps only the named tool
  (``or None``). Each tool is the pydantic ``Tool.model_dump()``: ``function`` holds ``description``
  and ``parameters`` even when the request left them out (``None``), its own keys in the request's
  order (``Function._serialize``).
* ``_apply_jinja_template`` (line 2011): each message is its pydantic model dumped
  (``ChatCompletionMessageUserParam`` for ``user``, else ``ChatCompletionMessageGenericParam``,
  the role lower-cased), so only the model's fields reach the template: no ``thinking`` (the
  template's analysis field; ``reasoning_content`` is kept but the template never reads it);
  ``normalize_assistant_tool_call_arguments`` (line 198, strict for gpt-oss) parses an assistant
  tool call's string ``arguments`` into an object, refusing what is not a JSON object (a
  ``ValueError``: SGLang's 400, :class:`TemplateInputError`); ``content: null`` becomes ``""``;
  ``process_content_for_template_format`` with the ``string`` format
  (``parser/jinja_template_utils.py``: the gpt-oss template never loops over a message's content,
  ``detect_jinja_template_content_format``) joins a list content's ``text`` parts with one space
  and drops every ``None`` field.
* ``_handle_last_assistant_message`` (line 513, always run: a chat request's
  ``_format_add_generation_prompt`` is ``None``): a last ``assistant`` message with text content
  becomes a ``user`` message of that text, or, with ``continue_final_message``, is taken out and
  its text's tokens follow the prompt (``_append_assistant_prefix_to_prompt_ids``).
* The template's keyword arguments: ``reasoning_effort`` when the request sets it (or
  ``reasoning.effort``: ``protocol.py normalize_reasoning_inputs``), then the request's
  ``chat_template_kwargs`` over them; ``add_generation_prompt`` is true.

A request with ``input_ids`` skips the template (its ids are the prompt): :func:`prompt_ids`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "TemplateInput",
    "TemplateInputError",
    "message_shape",
    "process_message",
    "prompt_ids",
    "template_input",
    "template_kwargs",
    "template_tools",
]

#: ``protocol.py normalize_reasoning_inputs``: the effort names taken from ``reasoning.effort``.
_EFFORTS = frozenset({"none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max"})
#: ``protocol.py Function``'s fields (``key_order`` is excluded from its dump).
_FUNCTION_FIELDS = frozenset({"description", "name", "parameters", "strict", "defer_loading"})
_NOT_JSON = "Assistant tool call function.arguments must be valid JSON."
_NOT_OBJECT = "Assistant tool call function.arguments must be a JSON object."


class TemplateInputError(ValueError):
    """A request SGLang refuses while preparing the template's input (a ``ValueError`` its
    ``handle_request`` answers as a 400 ``BadRequest`` with this message), e.g. an assistant tool
    call whose ``arguments`` are not a JSON object."""


@dataclass(frozen=True, slots=True)
class TemplateInput:
    """The arguments of SGLang's ``apply_chat_template`` call.

    Attributes:
        messages: the processed messages (dicts with ``role``, ``content`` and, for an assistant
            call, ``tool_calls``), as the template reads them.
        tools: the tools as ``Tool.model_dump()`` gives them, or ``None`` (none given, or
            ``tool_choice: "none"``).
        kwargs: the template's other variables (``reasoning_effort``, ``chat_template_kwargs``).
        assistant_prefix: the last assistant message's text under ``continue_final_message``
            (encoded after the rendered prompt), else ``None``.
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    kwargs: dict[str, Any]
    assistant_prefix: str | None


def prompt_ids(body: dict[str, Any]) -> list[Any] | None:
    """The request's ``input_ids`` (SGLang then renders no template: ``_process_messages``,
    ``if request.input_ids is not None``), else ``None``."""
    ids = body.get("input_ids")
    return ids if isinstance(ids, list) else None


def template_input(body: dict[str, Any]) -> TemplateInput:
    """The chat template's input for the request ``body`` (a JSON object, as validated), as SGLang
    0.5.23 builds it (module docstring).

    Raises:
        TemplateInputError: an assistant tool call's ``arguments`` string is not a JSON object.
    """
    messages = [process_message(m) for m in body.get("messages") or () if isinstance(m, dict)]
    prefix = None
    if messages and messages[-1]["role"] == "assistant" and isinstance(messages[-1]["content"], str):
        if body.get("continue_final_message"):
            prefix = messages.pop()["content"]
        else:
            messages[-1] = {"role": "user", "content": messages[-1]["content"]}
    return TemplateInput(messages, template_tools(body), template_kwargs(body), prefix)


def message_shape(message: dict[str, Any]) -> tuple[Any, bool, Any]:
    """``(role, has tool_calls, first call's function name)`` of a request message as
    :func:`process_message` would give them, without processing it: the role lower-cased (but
    ``user``), ``tool_calls`` kept when a list (not for ``user``), the name of the first call's
    ``function`` (``None`` when there is none)."""
    role = message.get("role")
    if isinstance(role, str) and role != "user":
        role = role.lower()
    calls = message.get("tool_calls") if role != "user" else None
    if not isinstance(calls, list):
        return role, False, None
    first = next((call for call in calls if isinstance(call, dict)), None)
    function = first.get("function") if first is not None else None
    return role, True, function.get("name") if isinstance(function, dict) else None


def process_message(message: dict[str, Any]) -> dict[str, Any]:
    """One message as the template sees it: its pydantic dump, arguments parsed, content a string,
    ``None`` fields dropped (only the fields the gpt-oss template reads are kept).

    Raises:
        TemplateInputError: an assistant tool call's ``arguments`` string is not a JSON object.
    """
    role = message.get("role")
    if isinstance(role, str) and role != "user":
        role = role.lower()
    content = message.get("content")
    if content is None:
        content = ""
    elif isinstance(content, list):
        content = " ".join(
            part["text"] for part in content if isinstance(part, dict) and part.get("type") in ("text", "input_text")
        )
    out: dict[str, Any] = {"role": role, "content": content}
    calls = message.get("tool_calls") if role != "user" else None
    if isinstance(calls, list):
        out["tool_calls"] = [_call(call, role == "assistant") for call in calls if isinstance(call, dict)]
    return out


def _call(call: dict[str, Any], assistant: bool) -> dict[str, Any]:
    """``ToolCall.model_dump()``: ``id``, ``index``, ``type``, ``function`` with ``name`` and
    ``arguments`` (an assistant's string arguments parsed: ``parse_tool_call_arguments``)."""
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    arguments = function.get("arguments")
    if assistant and isinstance(arguments, str):
        arguments = _arguments(arguments)
    return {
        "id": call.get("id"),
        "index": call.get("index"),
        "type": call.get("type", "function"),
        "function": {"name": function.get("name"), "arguments": arguments},
    }


def _reject_constant(name: str) -> Any:
    raise ValueError(name)  # orjson reads no NaN or Infinity


def _arguments(text: str) -> dict[str, Any]:
    """``parse_tool_call_arguments``: ``orjson.loads``, which must give an object (nested past
    Python's recursion limit: orjson's 1,024 levels, :func:`.orjson_depth.loads_deep`)."""
    try:
        try:
            parsed = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            from mockoss.profiles.sglang.orjson_depth import loads_deep

            parsed = loads_deep(text, _reject_constant)
    except ValueError:
        raise TemplateInputError(_NOT_JSON) from None
    if not isinstance(parsed, dict):
        raise TemplateInputError(_NOT_OBJECT)
    return parsed


def template_tools(body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The tools the template renders (``None``: no tools, or ``tool_choice: "none"``)."""
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if not tools or not isinstance(tools, list) or choice == "none":
        return None
    dumped = [_tool(tool) for tool in tools if isinstance(tool, dict)]
    if isinstance(choice, dict):
        named = (choice.get("function") or {}).get("name") if isinstance(choice.get("function"), dict) else None
        dumped = [tool for tool in dumped if tool["function"].get("name") == named]
    return dumped or None


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    """``Tool.model_dump()``: ``function`` with the request's keys in order, ``description`` and
    ``parameters`` present (``None`` when left out); ``strict`` and ``defer_loading`` only when set."""
    given = tool.get("function") if isinstance(tool.get("function"), dict) else {}
    function = {key: value for key, value in given.items() if key in _FUNCTION_FIELDS}  # pydantic drops the others
    function.setdefault("description", None)
    function.setdefault("parameters", None)
    for key in ("strict", "defer_loading"):
        if function.get(key) is None:
            function.pop(key, None)
    return {"type": tool.get("type", "function"), "function": function, "defer_loading": tool.get("defer_loading")}


def template_kwargs(body: dict[str, Any]) -> dict[str, Any]:
    """``reasoning_effort`` (the field, else ``reasoning.effort``), then ``chat_template_kwargs``."""
    effort = body.get("reasoning_effort")
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        given = reasoning.get("effort")
        if given is None:
            given = reasoning.get("reasoning_effort")
        if isinstance(given, str) and given in _EFFORTS:
            effort = given
        elif isinstance(given, int | float) and not isinstance(given, bool):
            effort = float(given)
    kwargs: dict[str, Any] = {} if effort is None else {"reasoning_effort": effort}
    extra = body.get("chat_template_kwargs")
    if isinstance(extra, dict):
        kwargs.update(extra)
    return kwargs
