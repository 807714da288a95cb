"""The prompt the gpt-oss reference server renders for a Responses request, and where rendering it fails.

Facts from openai/gpt-oss@7b58334:gpt_oss/responses_api/api_server.py (``generate``) and
``types.py`` (``ResponsesRequest``); the code is ours.

The prompt (its length is ``usage.input_tokens``): a system message (``SystemContent`` with the
conversation start date and ``reasoning.effort``, ``low`` when the request sends no ``reasoning``,
none when it sends ``"reasoning": null``); a developer message when the request has
``instructions`` or any ``tools`` (the function tools as ``with_function_tools``); then ``input``:
a string is one user message; list items map as the server maps them (a message per content part,
an assistant message on channel ``final``, ``function_call`` as a ``commentary`` message to
``functions.NAME``, ``function_call_output`` as a ``tool`` message from ``functions.NAME``, a
``reasoning`` item only after the last assistant message when the last item is a
``function_call_output``). Rendered with ``render_conversation_for_completion(…, Role.ASSISTANT)``.

mockoss runs oss-harmony 0.0.11, which writes a recipient after the channel (``<|start|>assistant
<|channel|>commentary to=functions.f<|message|>``); openai-harmony 0.0.8, what the server runs by
default, writes it after the role (``<|start|>assistant to=functions.f<|channel|>commentary
<|message|>``): the same tokens in another order (seen rendering one conversation with each;
``metadata.__debug_input`` shows it, ``usage`` does not), so the prompt's headers are reordered
for that library (:func:`_recipients_after_role`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openai_harmony import (
    Author,
    Conversation,
    DeveloperContent,
    Message,
    ReasoningEffort,
    Role,
    SystemContent,
    ToolDescription,
)

from mockoss.harmony import load_encoding

__all__ = ["PromptError", "prompt_tokens"]

_EFFORTS = {"low": ReasoningEffort.LOW, "medium": ReasoningEffort.MEDIUM, "high": ReasoningEffort.HIGH}


class PromptError(ValueError):
    """The server raises while building the prompt (an uncaught exception in the route: HTTP 500,
    streamed or not, since the prompt is built before the stream starts)."""


def _system(body: Mapping[str, Any], date: str) -> Message:
    content = SystemContent.new().with_conversation_start_date(date)
    if "reasoning" not in body or body["reasoning"] is not None:
        effort = (body.get("reasoning") or {}).get("effort", "low")
        content = content.with_reasoning_effort(_EFFORTS.get(effort, ReasoningEffort.LOW))
    return Message.from_role_and_content(Role.SYSTEM, content)


def _developer(body: Mapping[str, Any]) -> Message | None:
    tools = body.get("tools") or []
    if not (body.get("instructions") or tools):
        return None
    if body.get("tools", []) is None:  # ``for tool in body.tools`` with tools: null
        raise PromptError("TypeError: 'NoneType' object is not iterable")
    content = DeveloperContent.new().with_instructions(body.get("instructions"))
    functions = [
        ToolDescription.new(t.get("name", ""), t.get("description", ""), t.get("parameters"))
        for t in tools
        if isinstance(t, Mapping) and t.get("type") == "function"
    ]
    if functions:
        content = content.with_function_tools(functions)
    return Message.from_role_and_content(Role.DEVELOPER, content)


def _text_parts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [str(part.get("text", "")) for part in content or () if isinstance(part, Mapping)]


def _input_messages(items: list[Any], out: list[Message]) -> None:
    """Append the messages of the ``input`` items to ``out`` (the system and developer messages so
    far): an assistant item marks ``out[-1]`` ``final`` even when it added no message (``content:
    []``), so the message before it (the system or developer message, or an earlier one) gets the
    channel, as ``messages[-1]`` does in the server (seen from it: 2 more prompt tokens)."""
    last_is_output = bool(items) and isinstance(items[-1], Mapping) and items[-1].get("type") == "function_call_output"
    last_assistant = max((i for i, it in enumerate(items) if isinstance(it, Mapping) and it.get("type", "message") == "message"
                          and it.get("role") == "assistant"), default=-1)
    calls: dict[str, Mapping[str, Any]] = {}
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            role = Role(item.get("role", "user"))
            for text in _text_parts(item.get("content")):
                out.append(Message.from_role_and_content(role, text))
            if role == Role.ASSISTANT:
                out[-1] = out[-1].with_channel("final")
        elif kind == "reasoning" and index > last_assistant and last_is_output:
            if item.get("content", []) is None:  # ``for content_item in item.content``
                raise PromptError("TypeError: 'NoneType' object is not iterable")
            for part in item.get("content") or ():
                out.append(Message.from_role_and_content(Role.ASSISTANT, str(part.get("text", ""))).with_channel("analysis"))
        elif kind == "function_call":
            calls[str(item.get("call_id", "call_1234"))] = item
            out.append(Message.from_role_and_content(Role.ASSISTANT, str(item.get("arguments", "")))
                       .with_recipient(f"functions.{item.get('name')}").with_channel("commentary"))
        elif kind == "function_call_output":
            call = calls.get(str(item.get("call_id", "call_1234")))
            if call is None:
                raise PromptError(f"Function call {item.get('call_id', 'call_1234')} not found")
            out.append(Message.from_author_and_content(Author.new(Role.TOOL, f"functions.{call.get('name')}"), str(item.get("output", "")))
                       .with_recipient("assistant").with_channel("commentary"))


def _recipients_after_role(tokens: list[int], messages: list[Message]) -> list[int]:
    """``tokens`` with each header's `` to=RECIPIENT`` tokens moved from after the channel name to
    before ``<|channel|>``, openai-harmony 0.0.8's order (module docstring); a header whose channel
    segment does not end with a recipient of ``messages`` is left as it is."""
    encoding = load_encoding()
    # Each distinct recipient once, as ordinary text: the Rust renderer writes header text without
    # reading special tokens in it (a recipient "functions.a<|end|>b" renders "<|end|>" as 5 text
    # tokens), and openai_harmony's Python encode() with its default disallowed_special="all"
    # rebuilt its special-token regex on every call (1.7 ms: an agent turn of 40 calls blocked
    # every client for 140-250 ms, a breaker's F1) and raised on such a name (an unscripted 500).
    recipients = {m.recipient for m in messages if m.recipient and m.channel}
    suffixes = {tuple(encoding.encode(f" to={r}", disallowed_special=())) for r in recipients}
    if not suffixes:
        return tokens
    start, channel, message = (encoding.encode(t, allowed_special="all")[0] for t in ("<|start|>", "<|channel|>", "<|message|>"))
    out = list(tokens)
    at = -1
    for index, token in enumerate(out):
        if token == start:
            at = index
        elif token == message and at >= 0:
            header = out[at:index]
            if channel in header:
                cut = header.index(channel)
                found = next((x for x in suffixes if len(x) < len(header) - cut and tuple(header[-len(x):]) == x), None)
                if found is not None:
                    out[at:index] = [*header[:cut], *found, *header[cut:-len(found)]]
            at = -1
    return out


def prompt_tokens(body: Mapping[str, Any], date: str, library: str = "openai-harmony-0.0.8") -> list[int]:
    """The prompt tokens the reference server renders for ``body`` on day ``date`` (``YYYY-MM-DD``)
    with Harmony library ``library`` (the profile's ``harmony_library``: ``openai-harmony-0.0.8``
    puts a recipient before the channel, ``oss-harmony`` after it; module docstring).

    ``body`` must have passed :func:`~mockoss.profiles.gptoss_ref.request.validation_errors`
    (its item shapes are taken for granted).

    Raises:
        PromptError: where the server's ``generate`` raises, each an HTTP 500: a
            ``function_call_output`` names no earlier ``function_call`` (its ``ValueError("Function
            call … not found")``); ``instructions`` with ``tools: null`` (``for tool in
            body.tools``: ``TypeError``); a function tool with ``description: null``
            (openai-harmony's ``ToolDescription`` rejects it: pydantic ``ValidationError``); a lone
            UTF-16 surrogate (``"\\ud800"``) in any text the prompt holds (``input``, message
            content, ``instructions``, a tool's name, description or parameters, a call's name,
            arguments or output): openai-harmony sends the conversation to its Rust renderer as
            JSON, which refuses the escape (``ValueError: invalid conversation JSON: unexpected end
            of hex escape …``; seen from the real server, openai/gpt-oss@7b58334 with
            openai-harmony 0.0.8).
    """
    try:
        messages = [_system(body, date)]
        developer = _developer(body)
        if developer is not None:
            messages.append(developer)
        given = body.get("input")
        if isinstance(given, str):
            messages.append(Message.from_role_and_content(Role.USER, given))
        elif isinstance(given, list):
            _input_messages(given, messages)
        tokens = list(load_encoding().render_conversation_for_completion(Conversation.from_messages(messages), Role.ASSISTANT))
        return _recipients_after_role(tokens, messages) if library == "openai-harmony-0.0.8" else tokens
    except PromptError:
        raise
    except (ValueError, RecursionError) as exc:  # pydantic's ValidationError is a ValueError too
        # RecursionError: data nested too deep for openai-harmony's to_json (json.dumps) from this
        # stack; the server raises there too (or, nested past 128 levels, its Rust renderer's
        # serde_json refuses the JSON: "recursion limit exceeded"), an HTTP 500 either way.
        raise PromptError(f"{type(exc).__name__}: {exc}") from exc
