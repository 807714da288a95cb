"""Hints the request log carries when the emulated server's answer has a known cause a user would
not guess from the reply: a refusal before generating (a chat template's error), or a message the
server dropped without a word (a Harmony header its parser rejected). They go into the request-log
entry's ``warnings`` (:attr:`mockoss.server.records.RecordedRequest.warnings`), which the pytest
plugin's failure report, ``mockoss.requests[i]`` and ``GET /mockoss/requests`` show; each starts
with :data:`HINT` so that the tool-check assertion (``assert_tool_calls_match_declared_tools``)
leaves them out. The reply's bytes never change.

One mechanism for refusals: :func:`refusal_hint` looks the profile's hint function up by name
(:data:`REFUSAL_HINTS`), called only for a request the profile refused (nothing per answered
request). ``sglang``'s lives here for now (its package was being reworked when this was written);
``llamacpp``'s is :func:`mockoss.profiles.llamacpp.refusals.refusal_hint`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mockoss.server.records import HINT

if TYPE_CHECKING:
    from mockoss.profiles.base import Profile, Reply
    from mockoss.scenario.loader import Step

__all__ = ["HINT", "REFUSAL_HINTS", "dropped_message_hint", "refusal_hint", "sglang_refusal_hint"]

#: Profile name -> ``"module:function"`` of its refusal hint, called as ``fn(profile, endpoint,
#: body)`` and returning the hint's text (without :data:`HINT`) or ``None``.
REFUSAL_HINTS: dict[str, str] = {
    "sglang": "mockoss.server.request_notes:sglang_refusal_hint",
    "llamacpp": "mockoss.profiles.llamacpp.refusals:refusal_hint",
}

#: The error text SGLang answers when its chat template fails twice (the retry with the tools
#: flattened hides the first error): sgl-project/sglang@v0.5.23
#: python/sglang/srt/entrypoints/openai/serving_chat.py:2206-2227.
SGLANG_RETRY_ERROR = "'dict object' has no attribute 'function'"

#: Profiles that may skip what their Harmony parser rejects (switch ``harmony_errors``).
_SKIPPERS = frozenset({"vllm", "sglang"})
#: The memo key (with the library and strict mode) of a completion's skipped tokens.
_SKIPPED = "mockoss.server.request_notes.skipped"

#: Request fields limiting completion tokens (chat, chat legacy, responses), first set wins (as the
#: server core reads them).
_LIMIT_FIELDS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


def refusal_hint(profile: Profile, endpoint: str, body: Any, reply: Reply) -> tuple[str, ...]:
    """``(HINT + text,)`` explaining why ``profile`` refused ``body`` on ``endpoint`` with
    ``reply`` (its ``request_refusal``'s answer), when the cause is known; else ``()``.

    Never raises: a hint function that fails gives no hint (a hint must not turn the server's own
    reply into mockoss's 500)."""
    target = REFUSAL_HINTS.get(getattr(profile, "name", ""))
    if target is None or reply.status < 400:
        return ()
    module, _, name = target.partition(":")
    try:
        function: Callable[[Any, str, Any], str | None] = getattr(importlib.import_module(module), name)
        text = function(profile, endpoint, body)
    except Exception:  # noqa: BLE001  (a hint is optional; the reply stands either way)
        return ()
    return (HINT + text,) if text else ()


def _named_tool(choice: Any) -> str | None:
    if isinstance(choice, Mapping):
        function = choice.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return function["name"]
    return None


def sglang_refusal_hint(profile: Any, endpoint: str, body: Any) -> str | None:
    """Why SGLang's chat template refused a chat ``body``: the tools without a string
    ``function.description`` it renders (all of ``tools``, only the named one for a named
    ``tool_choice``, none for ``"none"``: serving_chat.py:1861-1872 at v0.5.23), which the model's
    template writes unguarded (``"// " + tool.description``, openai/gpt-oss-20b
    ``chat_template.jinja`` ``render_tool_namespace``); with none missing and tools declared, the
    retry that hid the first error (:data:`SGLANG_RETRY_ERROR`). ``None`` on other endpoints."""
    if endpoint != "chat" or not isinstance(body, Mapping):
        return None
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if not isinstance(tools, list) or not tools or choice == "none":
        return None
    named = _named_tool(choice)
    missing = []
    for position, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping):
            continue
        name = function.get("name")
        if named is not None and name != named:
            continue
        if not isinstance(function.get("description"), str):
            missing.append(f"{name!r} (tools[{position}])")
    if missing:
        which = ", ".join(missing)
        return (
            f'tool {which} has no "description": SGLang renders the model\'s gpt-oss chat template, which '
            "writes tool.description unguarded, and answers its retry's error "
            f"({SGLANG_RETRY_ERROR}) as a 400 before generating. Give each tool a description, or start the "
            "profile with the switch tool_description_required=false (a deployment whose --chat-template "
            "renders it)"
        )
    return (
        f"SGLang's chat template failed, then its retry with the tools flattened ({SGLANG_RETRY_ERROR}) hid "
        "the first error: a 'tool' message with no assistant tool call before it, assistant content holding "
        "Harmony markup (<|channel|>…), or tool-call arguments that are not a JSON object"
    )


def dropped_message_hint(profile: Profile, endpoint: str, step: Step | None, body: Any) -> str | None:
    """``HINT + text`` when ``profile`` surfaced ``step``'s completion on ``endpoint`` after
    skipping tokens its Harmony parser rejected (``harmony_errors="skip"``: vLLM 0.32/0.33's
    ``HarmonyParser.process_chunk``, vllm-project/vllm@v0.32.0:vllm/parser/harmony.py; SGLang's
    Responses guard after 0.5.23), so that what they held (a message whose header was rejected,
    tool call included) is missing from an HTTP 200 reply without an error; else ``None``. Which
    paths skip: vLLM's ``harmony_parser`` chat path and its Responses (``responses_mapping="2026"``),
    SGLang's Responses. ``body``: the request's parsed JSON (its token limit, first set of
    ``max_completion_tokens``, ``max_tokens``, ``max_output_tokens``).

    Called for every scripted reply: about 0.1 us on a profile that does not skip (its name), and
    on one that does one look-up of the completion's skipped tokens (kept on the completion under
    :data:`_SKIPPED`); the request's own limit is read only when some token was skipped."""
    if step is None or step.replay is not None or step.error is not None:
        return None
    completion = step.completion
    skipped = skipped_tokens(profile, endpoint, completion) if completion is not None else None
    if not skipped:
        return None
    limit = None
    if isinstance(body, Mapping):
        limit = next((body[k] for k in _LIMIT_FIELDS if isinstance(body.get(k), int)), None)
    inner, strict = _skipper(profile, endpoint)  # type: ignore[misc]  # skipped: a skipper
    server, before = _server_words(profile, inner)
    if limit is not None:  # a limit may end the completion before the first rejected token
        skipped = completion.trace(
            max_tokens=limit, strict=strict, library=inner.harmony_library, skip_errors=True
        ).skipped
        if not skipped:
            return None
    return (
        f"{HINT}{server} skipped the tokens its Harmony parser rejected "
        f"(harmony_errors=skip; first: {skipped[0][1]}) and answered HTTP 200 without an error: this reply "
        "holds nothing of them (a message whose header was rejected is dropped whole, tool call included). "
        f"For the error reply instead ({before}), switch harmony_errors=raise "
        "(switches={'harmony_errors': 'raise'}, --switch harmony_errors=raise)"
    )


def _skipper(profile: Profile, endpoint: str) -> tuple[Any, bool] | None:
    """``(inner profile, strict)`` when ``profile`` skips what its Harmony parser rejects on
    ``endpoint`` (see :func:`dropped_message_hint`), else ``None``. Called for every scripted
    reply: attribute reads only (the hint's words are :func:`_server_words`', once a token was
    skipped)."""
    name = profile.name
    if name not in _SKIPPERS:
        return None
    inner = getattr(profile, "_profile", profile)  # SGLang's /v1/responses scope wraps its profile
    if inner.harmony_errors != "skip":
        return None
    if name == "vllm":
        if endpoint == "chat":
            if inner.chat_parser != "harmony_parser":
                return None
            return inner, getattr(inner, "strict", True)
        if endpoint != "responses" or inner.responses_mapping != "2026":
            return None
    elif endpoint != "responses":
        return None
    return inner, True


def _server_words(profile: Profile, inner: Any) -> tuple[str, str]:
    """``(server name, the error reply's description)`` for the hint of :func:`dropped_message_hint`."""
    if profile.name == "vllm":
        return f"vLLM {inner.version}", "as vLLM before 0.32 answered"
    return "SGLang (its Responses guard after 0.5.23)", "SGLang 0.5.23's answer"


def skipped_tokens(profile: Profile, endpoint: str, completion: Any) -> Any:
    """The tokens ``profile``'s Harmony parser skips in the whole ``completion`` on ``endpoint``
    (``trace.skipped``: ``(index, error)`` pairs), memoised on the completion under
    :data:`_SKIPPED`; ``None`` when the profile does not skip there. The warm-up
    (:func:`mockoss.server.warmup.warmed`) calls it off the server lock for a long completion, as
    it builds the profile's plans, so that the first request's hint reads the memo under the lock."""
    found = _skipper(profile, endpoint)
    if found is None:
        return None
    inner, strict = found
    key = (_SKIPPED, inner.harmony_library, strict)
    skipped = completion._memo.get(key)
    if skipped is None:  # the whole completion's, once (the memo may refuse it: then every time)
        trace = completion.trace(max_tokens=None, strict=strict, library=inner.harmony_library, skip_errors=True)
        skipped = completion._memo[key] = trace.skipped
    return skipped
