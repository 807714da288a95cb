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

Cost (issue 9, session 18). A message's cached part is its piece less its context's render.
A new ``user``, plain ``assistant`` or ``tool`` message is not rendered: its piece is the
template's fixed text around the content, derived once (:mod:`.template_skeleton`, which says
why that count is exact), plus the content's own count. The sum over the leading messages is a
:class:`.template_prefix.Fold` (the calls after the last plain answer kept with both of their
renderings, since a later plain answer drops their analysis text), stored as the run of leading
messages found counted and found again by its marshal bytes or its very objects
(:mod:`.template_prefix`): an agent's turn costs its new messages and the previous turn's, not
the conversation.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from typing import Any

from mockoss.harmony.lru import BytesLRU
from mockoss.profiles.sglang.template_input import TemplateInputError
from mockoss.profiles.sglang.template_prefix import PREFIX_MIN, Fold, PrefixStore
from mockoss.profiles.sglang.template_skeleton import piece_count

__all__ = ["CACHE_BYTES", "NotSummable", "summed_count"]

#: Byte budget of the head and piece caches together.
CACHE_BYTES = 8 * 1024 * 1024
#: Template variables the message loop never reads (only the head does).
_HEAD_VARIABLES = frozenset({"reasoning_effort", "model_identity", "builtin_tools", "thinking", "enable_thinking"})
_EMPTY: dict[str, Any] = {"role": "", "content": ""}  # renders nothing, is no system message
_FINAL: dict[str, Any] = {"role": "assistant", "content": ""}

_cache: BytesLRU[int] = BytesLRU(CACHE_BYTES)
#: Sums of leading messages (:mod:`.template_prefix`), in a budget of their own.
_prefixes = PrefixStore(CACHE_BYTES)
#: The last head counted: ``(tools, first entry, tool_choice, variables, count)``, reused when a
#: request holds the very same tools list and first message objects (a body parsed from a kept
#: one, :mod:`mockoss.jsonsplice`, shares them; no reader modifies a parsed body), which saves
#: marshalling the tools for the key (~10 us for 20 tools).
_head: list[Any] = [None]
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
    plain_render: Callable[[list[dict[str, Any]]], str] | None = None,
    count_text: Callable[[str], int] | None = None,
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
    ``plain_render(messages)`` (the loop template's text, no tools or variables) and
    ``count_text`` (:func:`.template.text_count`), when given, count a new plain message's
    piece without a render (:mod:`.template_skeleton`). The leading request messages' sum is
    kept whole and found again (:mod:`.template_prefix`).

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
        _prefixes.clear()
        _head[0] = None
        _generation[0] = generation

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

    missed = [False]

    def piece(key: Any, entry: tuple[dict[str, Any], bool], tool_of: Any = None, final: bool = False) -> int:
        """The render of the context, ``entry``'s message (and a plain assistant message when
        ``final``), no tools, no variables, less the context's render; cached under ``key``. The
        context: a ``""``-role message, then for a ``tool`` message a call to ``tool_of``."""

        def compute() -> int:
            missed[0] = True
            message = entry[0] if entry[1] else process_message(entry[0])
            if plain_render is not None and count_text is not None and not final:
                quick = piece_count(message, tool_of, plain_render, count_text)
                if quick is not None:
                    return quick
            before = [_EMPTY, _call_to(tool_of)] if tool_of is not None else [_EMPTY]
            after = [_FINAL] if final else []
            return render_count([*before, message, *after], None, {}, False) - context(before, after)

        return cached(key, compute)

    def context(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
        """The render of a piece's context alone (subtracted from the render with the piece)."""
        context_messages = [*before, *after]
        return cached(("context", context_messages), lambda: render_count(context_messages, None, {}, False))

    opening = bool(entries) and _role(entries[0]) in ("system", "developer")
    first = entries[0] if opening else None
    memo = _head[0]
    if (
        memo is not None
        and memo[0] is head_key[0]
        and (memo[1] is None) is (first is None)
        and (first is None or (memo[1][0] is first[0] and memo[1][1] == first[1]))
        and memo[2] == head_key[1]
        and memo[3] == variables
    ):
        head = memo[4]  # the very tools and first message of the last request (mockoss.jsonsplice)
    else:
        head = cached(
            ("head", head_key, variables, first),
            lambda: render_count(
                [(first[0] if first[1] else process_message(first[0])) if first else _EMPTY], tools(), variables, True
            ),
        )
        _head[0] = (head_key[0], first, head_key[1], variables, head)
    # The leading request messages (all but a last one SGLang rewrote) are summed once and found again.
    plain = len(entries) - 1 if entries and entries[-1][1] else len(entries)
    start = 1 if opening else 0
    fold = Fold(0, 0, 0, None)
    found = None
    messages: list[Any] = []
    if plain >= PREFIX_MIN:
        messages = [message for message, _ in entries[:plain]]
        found = _prefixes.find(messages)
        if found is not None:
            start, fold = found.length, found.fold
    run: tuple[int, Fold] | None = None  # the leading messages found counted, and their sum
    for index in range(start, len(entries)):
        if index == plain:
            break
        if not missed[0]:
            run = (index, fold)
        fold = _add(fold, entries[index], piece, message_shape)
    if not missed[0]:
        run = (plain, fold)
    if messages and run is not None and run[0] >= PREFIX_MIN and (found is None or found.length < run[0]):
        # As Harmony's count stores them (mockoss.harmony.prompt.prefix): the run of leading
        # messages found counted, which an agent's next turn holds (this turn's new messages
        # are then two lookups each), and a client resending a fixed history with a new tail too.
        _prefixes.store(messages, run[0], run[1], found)
    for index in range(max(start, plain), len(entries)):
        fold = _add(fold, entries[index], piece, message_shape)
    return head + fold.base + fold.tail  # no plain assistant message after the last calls


def _add(
    fold: Fold, entry: tuple[dict[str, Any], bool], piece: Callable[..., int], message_shape: Callable[..., Any]
) -> Fold:
    """``fold`` with the message of ``entry`` added (module docstring: what a message's piece reads)."""
    role, calls, name = _shape(entry[0]) if entry[1] else message_shape(entry[0])
    base, tail, tail_final, last_call = fold
    if role == "user":
        return Fold(base + piece(("piece", entry), entry), tail, tail_final, last_call)
    if role == "assistant" and not calls:  # the calls before it drop their analysis text
        return Fold(base + tail_final + piece(("piece", entry), entry), 0, 0, None)
    if role == "assistant":
        alone = piece(("call", entry, False), entry)
        content = entry[0].get("content")
        final = alone if content is None or content == "" else piece(("call", entry, True), entry, None, True)
        if not isinstance(name, str):
            raise NotSummable  # "functions." + name raised in the piece already
        return Fold(base, tail + alone, tail_final + final, name)
    if role == "tool":
        if last_call is None:
            raise NotSummable  # the template's raise_exception: the whole render words it
        return Fold(base + piece(("tool", entry, last_call), entry, last_call), tail, tail_final, last_call)
    return fold  # another role renders nothing


def _role(entry: tuple[dict[str, Any], bool]) -> Any:
    from mockoss.profiles.sglang.template_input import message_shape

    return (_shape(entry[0]) if entry[1] else message_shape(entry[0]))[0]


def _shape(message: dict[str, Any]) -> tuple[Any, bool, Any]:
    """:func:`.template_input.message_shape` of a processed message."""
    calls = message.get("tool_calls")
    first = calls[0] if isinstance(calls, list) and calls else None
    function = first.get("function") if isinstance(first, dict) else None
    return message.get("role"), "tool_calls" in message, function.get("name") if isinstance(function, dict) else None
