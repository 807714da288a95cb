"""The gpt-oss chat template's token count at the cost of what is new in a conversation.

Rendering the whole template for every request (:func:`.template.render_prompt`) costs the whole
conversation each time, and more: for every assistant tool call the template scans all later
messages (``future_final_message``), so a render is quadratic in the length of a tool-using
conversation (measured: 100 messages 20 ms, 400 115 ms, 800 353 ms). Agents resend their
conversation every turn, so here the count is a sum of cached parts, each counted by rendering the
same template on a conversation of one or two messages.

Why the sum is exact. The template (openai/gpt-oss-20b ``chat_template.jinja``, shipped beside
this module) renders: a head (the system message, then the developer message when the first
message is ``system``/``developer`` or there are tools), one piece per remaining message (empty for
a role other than ``user``, ``assistant`` and ``tool``), then ``<|start|>assistant`` (SGLang always
asks for the generation prompt). Every piece begins with ``<|start|>`` and ends with ``<|end|>``,
``<|call|>`` or ``<|return|>``, and so does the head, so the text is cut at special tokens between
parts and each part's tokens are its own (:func:`.template.text_count` counts the texts between
special tokens one by one). What a part reads:

* the head: the tools, the template variables (``reasoning_effort``, ``model_identity``,
  ``builtin_tools``) and the first message when it is ``system``/``developer``; counted with the
  generation prompt as the render of that first message alone (or of a message of role ``""``,
  which renders nothing) with the request's tools and variables, cached by all of them;
* a message's piece: the message, plus, for an assistant tool call, whether a later ``assistant``
  message without ``tool_calls`` exists (``future_final_message``: the analysis text is dropped
  then), and for a ``tool`` message, the name of the last assistant tool call before it
  (``last_tool_call``, set by a tool call, reset by a plain assistant message; none: the template's
  error). It is counted as ``render(context + [message]) - render(context)``, the context being a
  ``""``-role message, then a plain assistant message after the call (a later final exists) or a
  call to that name before the tool message: the same head and generation prompt on both sides,
  and in both renders the context's own pieces are the same text. These renders leave out the
  system message's text (``build_system_message()``, a macro that only writes text:
  :func:`.template._loop_template`), which both sides would hold. Cached by the message and its
  context.

Anything else goes to the whole render (:func:`.template.render_prompt`), which is exact by
construction: template variables other than the head's (``chat_template_kwargs`` could shadow
``raise_exception``; the head's are not passed to the pieces' renders), and any part whose render raises (the whole render then gives SGLang's error,
retried with flattened tools as SGLang does). ``tests/profiles/sglang/test_sglang_template_count.py``
compares the sum with the whole render on random conversations; ``tools/goldens/sglang_serving_engine.py``
(SGLang 0.5.23's own serving code) was compared with it on 959 seeded requests in session 18.

The caches are bounded in bytes (:data:`CACHE_BYTES`, each entry its key's size) and emptied with
the other prompt caches (``MockServer.reset``: :func:`mockoss.endpoints.prompt_cache_generation`).
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from typing import Any

from mockoss.harmony.lru import BytesLRU
from mockoss.profiles.sglang.template_input import TemplateInputError

__all__ = ["CACHE_BYTES", "NotSummable", "summed_count"]

#: Byte budget of the head and piece caches together.
CACHE_BYTES = 8 * 1024 * 1024
#: Template variables the message loop never reads (only the head does).
_HEAD_VARIABLES = frozenset({"reasoning_effort", "model_identity", "builtin_tools", "thinking", "enable_thinking"})
_EMPTY: dict[str, Any] = {"role": "", "content": ""}  # renders nothing, is no system message
_FINAL: dict[str, Any] = {"role": "assistant", "content": ""}

_cache: BytesLRU[int] = BytesLRU(CACHE_BYTES)
_generation = [-1]


class NotSummable(Exception):
    """The count cannot be summed from parts (a part's render raised, or the template variables
    may change the message loop): render the whole template instead."""


def _call_to(name: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": {}}}]}


def summed_count(
    entries: list[tuple[dict[str, Any], bool]],
    head_key: Any,
    tools: Callable[[], list[dict[str, Any]] | None],
    variables: dict[str, Any],
    render_count: Callable[[list[dict[str, Any]], list[dict[str, Any]] | None, dict[str, Any], bool], int],
) -> int:
    """The token count of the template rendered on a conversation with its tools and
    ``variables``, as the sum of cached parts (module docstring).

    ``entries``: the conversation's messages as ``(message, processed)``: a request message
    (``processed`` false: :func:`.template_input.process_message` makes what the template reads,
    on a miss only) or one already processed (SGLang's last assistant message made a user
    message). ``head_key``: what the processed tools depend on (the request's ``tools`` and
    ``tool_choice``); ``tools()`` gives them (on a miss). ``render_count(messages, tools,
    variables, whole)`` renders the template and counts the text (on a miss; a message's piece
    with no variables, only the head reads those allowed here, and ``whole`` false: the template
    without its system message's text, which both renders of a difference would hold).

    Raises:
        NotSummable: render the whole template instead (module docstring).
        TemplateInputError: a new message's tool-call arguments are not a JSON object.
    """
    from mockoss.endpoints import prompt_cache_generation
    from mockoss.profiles.sglang.template_input import message_shape, process_message

    if any(name not in _HEAD_VARIABLES for name in variables):
        raise NotSummable
    generation = prompt_cache_generation()
    if _generation[0] != generation:
        _cache.clear()
        _generation[0] = generation
    shapes = [_shape(message) if processed else message_shape(message) for message, processed in entries]

    def cached(key: Any, compute: Callable[[], int]) -> int:
        data = marshal.dumps(key, 2)  # version 2: no back-references, whose flags vary with refcounts
        found = _cache.get(data)
        if found is None:
            try:
                found = compute()
            except TemplateInputError:
                raise
            except Exception as exc:
                raise NotSummable from exc
            _cache.put(data, found, len(data))
        return found

    def piece(
        key: Any, entry: tuple[dict[str, Any], bool], before: list[dict[str, Any]], after: list[dict[str, Any]]
    ) -> int:
        """The render of ``before + [entry's message] + after`` (no tools, no variables), cached under ``key``."""
        data = marshal.dumps(key, 2)
        found = _cache.get(data)
        if found is None:
            message, processed = entry
            found = cached(
                key,
                lambda: render_count(
                    [*before, message if processed else process_message(message), *after], None, {}, False
                ),
            )
        return found

    contexts: dict[str, int] = {}

    def context(name: str, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
        """The render of a piece's context alone (subtracted from the render with the piece),
        cached under ``name`` (what sets the context apart: a tool name, ``final``, ``""``)."""
        found = contexts.get(name)
        if found is None:
            found = contexts[name] = cached(("context", name), lambda: render_count([*before, *after], None, {}, False))
        return found

    opening = bool(entries) and shapes[0][0] in ("system", "developer")
    first = entries[0] if opening else None
    total = cached(
        ("head", head_key, variables, first),
        lambda: render_count(
            [(first[0] if first[1] else process_message(first[0])) if first else _EMPTY], tools(), variables, True
        ),
    )
    loop = range(1 if opening else 0, len(entries))
    # future_final_message of each message: a later assistant message without tool_calls exists.
    later_final = [False] * len(entries)
    seen = False
    for index in reversed(loop):
        later_final[index] = seen
        role, calls, _ = shapes[index]
        seen = seen or (role == "assistant" and not calls)
    last_call: Any = None
    empty = [_EMPTY]
    for index in loop:
        role, calls, name = shapes[index]
        entry = entries[index]
        if role == "user" or (role == "assistant" and not calls):
            total += piece(("piece", entry), entry, empty, []) - context("", empty, [])
            if role == "assistant":
                last_call = None
        elif role == "assistant":
            after = [_FINAL] if later_final[index] else []
            total += piece(("call", entry, bool(after)), entry, empty, after) - context(
                "final" if after else "", empty, after
            )
            if not isinstance(name, str):
                raise NotSummable  # "functions." + name raised in the piece already
            last_call = name
        elif role == "tool":
            if last_call is None:
                raise NotSummable  # the template's raise_exception: the whole render words it
            before = [_EMPTY, _call_to(last_call)]
            total += piece(("tool", entry, last_call), entry, before, []) - context("call " + last_call, before, [])
    return total


def _shape(message: dict[str, Any]) -> tuple[Any, bool, Any]:
    """:func:`.template_input.message_shape` of a processed message."""
    calls = message.get("tool_calls")
    first = calls[0] if isinstance(calls, list) and calls else None
    function = first.get("function") if isinstance(first, dict) else None
    return message.get("role"), "tool_calls" in message, function.get("name") if isinstance(function, dict) else None
