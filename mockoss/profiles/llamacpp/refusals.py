"""What llama-server refuses before it generates: a request's errors in llama-server's order.

llama-server turns a request into a prompt before it starts a task: ``oaicompat_chat_params_parse``
(ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp) checks the messages (400), reads
``reasoning_format`` and ``response_format`` (their errors), then renders the chat template, whose
``raise_exception`` is a 500 (:mod:`.template_checks`); a Responses request is first converted to
chat messages (``server_chat_convert_responses_to_chatcmpl``, which refuses ``previous_response_id``
with a 400; :mod:`.responses_input`). None of these generates anything, so none plays a scripted
step: :meth:`~mockoss.profiles.llamacpp.LlamacppProfile.request_refusal` answers them before the
server core draws one (:meth:`mockoss.server.core.MockServer.respond`), and ``chat``/``responses``
give the same answers to a caller that surfaces a completion directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mockoss.profiles.llamacpp.options import RequestError, check_chat_params, check_fields

if TYPE_CHECKING:
    from mockoss.profiles.llamacpp import LlamacppProfile

__all__ = ["PREVIOUS_RESPONSE_REFUSAL", "TWO_ASSISTANTS_AT_END", "checked_already", "mark_checked", "request_refusal"]

#: ``server_chat_convert_responses_to_chatcmpl``'s 400 to any ``previous_response_id``.
PREVIOUS_RESPONSE_REFUSAL = "llama.cpp does not support 'previous_response_id'."
#: The prefill's sanity check (``--prefill-assistant``, on by default): after popping a trailing
#: assistant message, another one before it is an ``std::invalid_argument``, a 400
#: (ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp ``oaicompat_chat_params_parse``;
#: agents hit it in the field, e.g. compaction that leaves two assistant turns last).
TWO_ASSISTANTS_AT_END = "Cannot have 2 or more assistant messages at the end of the list."


def request_refusal(profile: LlamacppProfile, endpoint: str, body: Any) -> tuple[int, str] | None:
    """``(status, message)`` of the first refusal llama-server gives ``body`` on ``endpoint``
    (``"chat"`` or ``"responses"``; any other endpoint, or a body that is not an object: ``None``)
    before generating, under ``profile``'s switches, else ``None``.

    Order: chat: the request's fields and messages in ``oaicompat_chat_params_parse``'s order
    (:func:`.options.check_chat_params`: ``json_schema`` with ``grammar``, ``response_format``,
    the messages, ``reasoning_format``, ``grammar`` with tools, ``enable_thinking``), then the prefill's
    two trailing assistant messages (400, :data:`TWO_ASSISTANTS_AT_END`), then the template
    (500, :meth:`~mockoss.profiles.llamacpp.LlamacppProfile.template_refusal`). Responses:
    ``previous_response_id`` (400), the fields, then the template on the converted input.
    """
    if not isinstance(body, Mapping):
        return None
    try:
        if endpoint == "chat":
            check_chat_params(body, profile.reasoning_format)
            messages = body.get("messages")
        elif endpoint == "responses":
            if body.get("previous_response_id"):
                return 400, PREVIOUS_RESPONSE_REFUSAL
            check_fields(body, profile.reasoning_format)
            from mockoss.profiles.llamacpp.responses_input import converted_messages

            messages = converted_messages(body)
        else:
            return None
    except RequestError as exc:
        return exc.status, exc.message
    if _two_assistants_at_end(messages):  # the prefill, after the fields and before the template
        return 400, TWO_ASSISTANTS_AT_END
    refused = profile.template_refusal(messages)
    return None if refused is None else (500, refused)


def _two_assistants_at_end(messages: Any) -> bool:
    """Whether ``messages`` end with two assistant messages (the second breaker's M4, 14th
    session: mockoss popped the last and rendered the one before it, a 200)."""
    return (
        isinstance(messages, list)
        and len(messages) >= 2
        and all(isinstance(m, Mapping) and m.get("role") == "assistant" for m in messages[-2:])
    )


class _Passed:
    """The last ``(profile, endpoint, body)`` :func:`mark_checked` recorded (one slot)."""

    last: tuple[Any, str, Any] | None = None


def mark_checked(profile: LlamacppProfile, endpoint: str, body: Any) -> None:
    """Record that ``body`` passed :func:`request_refusal` under ``profile`` on ``endpoint`` (the
    server core's call before the step), so that ``chat``/``responses`` do not check it again:
    ~0.5 ms for a 401-message history, measured, twice per request otherwise."""
    _Passed.last = (profile, endpoint, body)


def checked_already(profile: LlamacppProfile, endpoint: str, body: Any) -> bool:
    """Whether :func:`mark_checked` recorded this very ``profile`` and ``body`` object (identity:
    request bodies are not modified) on ``endpoint`` last; the slot is emptied either way, so no
    body is kept past its request. Another thread's request in between only costs a second check."""
    last, _Passed.last = _Passed.last, None
    return last is not None and last[0] is profile and last[1] == endpoint and last[2] is body
