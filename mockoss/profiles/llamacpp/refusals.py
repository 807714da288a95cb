"""What llama-server refuses before it generates: a request's errors in llama-server's order.

llama-server turns a request into a prompt before it starts a task: ``oaicompat_chat_params_parse``
(ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp) checks the request's fields and
messages (:func:`.options.check_chat_params`), pops a trailing assistant message to prefill it
(``--prefill-assistant``, on by default) and refuses another assistant message before it, or a
prefill with ``enable_thinking`` on (400s), renders the chat template, whose ``raise_exception``
is a 500 (:mod:`.template_checks`), then reads ``logprobs`` (400s, :func:`.options.check_logprobs`).
``/v1/responses`` first converts the body to a chat body (:mod:`.responses_input`, its own 400s),
then parses it the same way; ``/apply-template`` parses the body as chat does and renders the
prompt (``post_responses_oai``, ``post_apply_template``: tools/server/server-context.cpp, read in
the copy vendored at Telosnex/fllama@1d28604d). None of these generates anything, so none plays a
scripted step: :meth:`~mockoss.profiles.llamacpp.LlamacppProfile.request_refusal` answers them
before the server core draws one or surfaces a given completion (an upstream's, the goldens':
:meth:`mockoss.server.core.MockServer.respond`), and ``chat``/``responses`` give the same answers
to a caller that surfaces a completion directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from mockoss.profiles.llamacpp.options import RequestError, check_chat_params, check_logprobs

if TYPE_CHECKING:
    from mockoss.profiles.llamacpp import LlamacppProfile

__all__ = [
    "PREFILL_WITH_THINKING",
    "TWO_ASSISTANTS_AT_END",
    "chat_refusal",
    "checked",
    "mark_checked",
    "refusal_hint",
    "request_refusal",
    "take_checked",
]

#: The prefill's sanity check (``--prefill-assistant``, on by default): after popping a trailing
#: assistant message, another one before it is an ``std::invalid_argument``, a 400
#: (ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp ``oaicompat_chat_params_parse``;
#: agents hit it in the field, e.g. compaction that leaves two assistant turns last).
TWO_ASSISTANTS_AT_END = "Cannot have 2 or more assistant messages at the end of the list."
#: The prefill with thinking on, a 400 right after that check (the same function). The gpt-oss
#: template reads no ``enable_thinking``, so the server's default is off
#: (``common_chat_templates_support_enable_thinking``); a request turns it on with
#: ``chat_template_kwargs: {"enable_thinking": true}``. Agent loops meet it in the field when they
#: send the last assistant turn back (the message is quoted in many client workarounds).
PREFILL_WITH_THINKING = "Assistant response prefill is incompatible with enable_thinking."


def request_refusal(profile: LlamacppProfile, endpoint: str, body: Any) -> tuple[int, str] | None:
    """``(status, message)`` of the first refusal llama-server gives ``body`` on ``endpoint``
    (``"chat"`` or ``"responses"``; any other endpoint, or a body that is not an object: ``None``)
    before generating, under ``profile``'s switches, else ``None``: for ``"responses"`` the
    converter's 400s (:func:`.responses_input.to_chat_body`), then :func:`chat_refusal` of the
    converted body; for ``"chat"`` :func:`chat_refusal` of the body.
    """
    return checked(profile, endpoint, body)[0]


def checked(
    profile: LlamacppProfile, endpoint: str, body: Any
) -> tuple[tuple[int, str] | None, Mapping[str, Any] | None]:
    """:func:`request_refusal`'s answer and the chat body it checked: ``body`` itself on ``"chat"``,
    the converted body on ``"responses"`` (``None`` when the converter refused it, or for a body
    that is not an object or another endpoint), so that the reply need not convert it again."""
    if not isinstance(body, Mapping) or endpoint not in ("chat", "responses"):
        return None, None
    if endpoint == "responses":
        from mockoss.profiles.llamacpp.responses_input import to_chat_body

        try:
            body = to_chat_body(body)
        except RequestError as exc:
            return (exc.status, exc.message), None
    return chat_refusal(profile, body), body


def chat_refusal(profile: LlamacppProfile, body: Mapping[str, Any]) -> tuple[int, str] | None:
    """``oaicompat_chat_params_parse``'s refusal of a chat ``body`` as ``(status, message)``, else
    ``None``, in its order: the fields and messages (:func:`.options.check_chat_params`), the
    prefill's two trailing assistant messages (400, :data:`TWO_ASSISTANTS_AT_END`) and its
    ``enable_thinking`` (400, :data:`PREFILL_WITH_THINKING`), the template (500,
    :meth:`~mockoss.profiles.llamacpp.LlamacppProfile.template_refusal`), then ``logprobs``
    (400, :func:`.options.check_logprobs`)."""
    try:
        check_chat_params(body, profile.reasoning_format)
    except RequestError as exc:
        return exc.status, exc.message
    messages = body.get("messages")
    if _ends_with_assistant(messages):  # the prefill, after the fields and before the template
        if _ends_with_assistant(messages[:-1]):
            return 400, TWO_ASSISTANTS_AT_END
        if profile.prefill_thinking_check and _thinking_on(body):
            return 400, PREFILL_WITH_THINKING
    refused = profile.template_refusal(messages, body.get("tools"))
    if refused is not None:
        return 500, refused
    try:
        check_logprobs(body)
    except RequestError as exc:
        return exc.status, exc.message
    return None


#: What a user does about each of the template's 500s (:mod:`.template_checks`), by its message.
_TEMPLATE_HINTS = {
    "Message has tool role": (
        "the gpt-oss chat template raised at a 'tool' message with no assistant tool call remembered (none "
        "before it, or an assistant message without tool_calls came between): send the assistant message with "
        "its tool_calls before the tool results. llama-server answers the template's exception as a 500"
    ),
    "Cannot pass both content": (
        "an assistant message with tool_calls has both content and reasoning_content; this build passes "
        "reasoning_content to the template as thinking beside content (switch thinking_field=with_tool_calls, "
        "llama.cpp before PR #19704), and the gpt-oss template refuses both: send one of them"
    ),
    "You have passed a message containing <|channel|> tags in the content": (
        "an assistant message's content holds raw Harmony markup (<|channel|>analysis<|message|> or "
        "<|channel|>final<|message|>), which this build's template refuses (switch template_channel_check, "
        "launch builds): send the parsed text back (reasoning in reasoning_content), not the raw completion"
    ),
    "You have passed a message containing <|channel|> tags in the thinking": (
        "an assistant message's reasoning_content holds raw Harmony markup (<|channel|>analysis<|message|> or "
        "<|channel|>final<|message|>), which the gpt-oss template refuses: send the parsed reasoning back, "
        "not the raw completion"
    ),
    "Function is not a bool value": (
        "a declared tool's parameters hold an array without \"items\": llama.cpp's Jinja engine reads "
        "param_spec['items'] as the dict's items method and cannot test it (a 500, b9553): add \"items\" to "
        "the array's schema, or switch template_items_check=false for a build that renders it"
    ),
}


def refusal_hint(profile: LlamacppProfile, endpoint: str, body: Any) -> str | None:
    """What a user does about llama-server's refusal of ``body`` on ``endpoint`` when it is one of
    the gpt-oss chat template's 500s (:data:`_TEMPLATE_HINTS`, :mod:`.template_checks`), whose
    text (an exception with a template excerpt) does not say it; else ``None`` (the 400s name
    their cause). Called by :func:`mockoss.server.request_notes.refusal_hint` for a refused
    request only: the request log's ``hint: …``; the reply is unchanged."""
    refused = request_refusal(profile, endpoint, body)
    if refused is None or refused[0] != 500:
        return None
    message = refused[1]
    for start, hint in _TEMPLATE_HINTS.items():
        if start in message:
            return hint
    return None


def _ends_with_assistant(messages: Any) -> bool:
    """Whether ``messages`` is a list whose last message is an assistant's (two of them at the end:
    the second breaker's M4, 14th session, where mockoss popped the last and rendered the one
    before it, a 200)."""
    return (
        isinstance(messages, list)
        and bool(messages)
        and isinstance(messages[-1], Mapping)
        and messages[-1].get("role") == "assistant"
    )


def _thinking_on(body: Mapping[str, Any]) -> bool:
    """Whether ``chat_template_kwargs.enable_thinking`` is JSON ``true`` (the kwarg's dump is
    ``"true"``; anything else but ``"false"`` and a string leaves the default, off for gpt-oss)."""
    kwargs = body.get("chat_template_kwargs")
    return isinstance(kwargs, Mapping) and kwargs.get("enable_thinking") is True


#: The last ``(profile, endpoint, body, chat body)`` :func:`mark_checked` recorded, in the caller's
#: context: over HTTP each request is answered in its own task (or a worker thread's copy of its
#: context), so a body whose request played an ``error:``/``replay:`` step (``chat``/``responses``
#: never called) is released with the request; a caller of :meth:`MockServer.handle
#: <mockoss.server.core.MockServer.handle>` keeps that one body until its next llama.cpp request.
_PASSED: ContextVar[tuple[Any, str, Any, Any] | None] = ContextVar("mockoss_llamacpp_checked", default=None)


def mark_checked(profile: LlamacppProfile, endpoint: str, body: Any, chat_body: Mapping[str, Any] | None) -> None:
    """Record that ``body`` passed :func:`request_refusal` under ``profile`` on ``endpoint`` (the
    server core's call before it surfaces any completion, scripted or given), with the chat body it
    checked (:func:`checked`), so that ``chat``/``responses`` do not check or convert it again:
    ~0.5 ms for a 401-message history, measured, twice per request otherwise. (SGLang's chat
    template check needs no mark: its ``surface`` leaves it to the core's call altogether; the
    mark here hands over the converted body, and keeps a direct caller of ``chat`` checked.)"""
    _PASSED.set((profile, endpoint, body, chat_body))


def take_checked(profile: LlamacppProfile, endpoint: str, body: Any) -> Mapping[str, Any] | None:
    """The chat body :func:`mark_checked` recorded for this very ``profile`` and ``body`` object
    (identity: request bodies are not modified) on ``endpoint`` last in this context, else ``None``
    (check it); the record is emptied either way."""
    last = _PASSED.get()
    if last is None:
        return None
    _PASSED.set(None)
    return last[3] if last[0] is profile and last[1] == endpoint and last[2] is body else None
