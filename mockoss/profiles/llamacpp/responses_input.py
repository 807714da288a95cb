"""llama-server's refusal of a Responses ``function_call_output`` that answers no tool call.

llama-server keeps no responses: ``previous_response_id`` is refused outright (400 ``llama.cpp does
not support 'previous_response_id'.``, :meth:`mockoss.profiles.llamacpp.LlamacppProfile.responses`),
so the calls a ``function_call_output`` answers must be in the same ``input``. The request is
converted to Chat Completions messages (``server_chat_convert_responses_to_chatcmpl``,
ggml-org/llama.cpp@03eb25f3:tools/server/server-chat.cpp): a ``function_call`` item becomes an
assistant message with ``tool_calls`` (merged into the assistant message before it, if any), an
assistant ``message`` item or a ``reasoning`` item an assistant message (merged likewise), a
``function_call_output`` a ``tool`` message. The converter checks no ``call_id``; the gpt-oss chat
template (``chat_template.jinja`` of openai/gpt-oss-20b, embedded in the GGUF) does, by name only: it
remembers the function of the last assistant message with tool calls, forgets it at an assistant
message without, and at a ``tool`` message with none remembered raises ``Message has tool role, but
there was no previous assistant message with a tool call!``. The template's exception is not an
``std::invalid_argument``: llama-server answers it as a 500 (``server_error``), before generating.

So a ``function_call_output`` is refused when no ``function_call`` precedes it, or when an assistant
message (not merged into the call's) comes between; a call with *another* ``call_id`` answers it
(the template uses the last call's name). The message is the template engine's text for
:data:`~mockoss.profiles.llamacpp.template_checks.TOOL_WITHOUT_CALL`
(:func:`~mockoss.profiles.llamacpp.template_checks.error_text`: decorated with the source position
from b7756, the bare message before). Only the tool check is made on converted items (a
``reasoning`` item's text carrying Harmony markup, which the template would refuse as ``thinking``,
is not looked at).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["orphan_output_error"]


def _converted_roles(items: list[Any]) -> list[tuple[str, bool]]:
    """``(role, has tool_calls)`` of the chat messages ``server_chat_convert_responses_to_chatcmpl``
    makes from ``items`` (items it would refuse are skipped: their own errors are not emulated here)."""
    messages: list[tuple[str, bool]] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        merge = bool(messages) and messages[-1][0] == "assistant"
        role, kind = item.get("role"), item.get("type")
        if role in ("user", "system", "developer") and isinstance(item.get("content"), (str, list)):
            messages.append((role, False))
        elif (role == "assistant" and kind == "message") or kind == "reasoning":
            if not merge:
                messages.append(("assistant", False))
        elif kind == "function_call":
            if merge:
                messages[-1] = ("assistant", True)
            else:
                messages.append(("assistant", True))
        elif kind == "function_call_output":
            messages.append(("tool", False))
    return messages


def orphan_output_error(body: Mapping[str, Any], engine: str = "jinja") -> str | None:
    """The error message llama-server answers (HTTP 500, ``server_error``) if the gpt-oss template
    raises :data:`~mockoss.profiles.llamacpp.template_checks.TOOL_WITHOUT_CALL` on the chat messages
    made from ``body["input"]`` (a ``tool`` message while no assistant tool call is remembered),
    in ``engine``'s words (``"jinja"`` or ``"minja"``), else ``None``."""
    from mockoss.profiles.llamacpp.template_checks import error_text, messages_refusal

    items = body.get("input")
    if not isinstance(items, list):
        return None
    messages = [{"role": role, "tool_calls": [{}] if calls else []} for role, calls in _converted_roles(items)]
    refused = messages_refusal(messages)
    return None if refused is None else error_text(refused, engine)
