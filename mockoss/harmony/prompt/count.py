"""Exact prompt token counts at the cost of what is new in a request.

Agents resend the whole conversation every turn, so rendering each request's prompt from scratch
(:func:`~mockoss.harmony.prompt.render_chat_prompt`) costs the whole conversation every time. Here
the count is a sum of per-message counts, each cached by the message's content, so a turn costs
about its new messages.

Why the sum is exact. openai-harmony renders a conversation for completion
(openai/harmony@ec7606d:src/encoding.rs, ``render_conversation_into`` and
``render_conversation_for_completion_into``) as: every kept message rendered on its own by
``render_into(message, options)``, one after another, then ``<|start|>`` and the role name. A
message's tokens are produced from its own fields only: the formatting tokens (``<|start|>``,
``<|channel|>``, ``<|message|>``, ``<|end|>``…) are emitted as single special tokens and each
text piece between them is BPE-encoded on its own, so no merge ever spans two messages (nor a
message and a formatting token). The conversation reaches a message in two ways only, both
reproduced here:

* ``options.conversation_has_function_tools`` (some developer message has a non-empty
  ``functions`` namespace) changes the system message (its "Calls to these tools must go to the
  commentary channel" line); the system message's count is cached per value of that flag, and
  the flag is true exactly when the request's function tools are rendered;
* ``auto_drop_analysis`` (the default config): when the last assistant message is on the final
  channel, analysis messages before the first final-channel message are left out. vLLM's chat
  path first drops every analysis message before the last assistant final message
  (``auto_drop_analysis_messages``), and so does its Responses path (``render_for_completion``).
  Each cached entry keeps its messages' author role and channel,
  so both rules are applied to the cached counts.

A new message is counted without rendering it whole: its header's count (cached by the header
fields) plus its texts' BPE counts (:func:`~mockoss.harmony.prompt.pieces._message_tokens`, exact
for the same reason); a user, plain assistant or tool message with string content without even
building the Harmony message (:func:`~mockoss.harmony.prompt.pieces._count_message`).

The per-message cache key is the request message's content (``pieces._content_key``: its items
when all values are strings or null, else its :mod:`marshal` bytes, which decode back to it, so
equal keys mean equal JSON data: strings, numbers, booleans, null, lists and dicts, key order
included) plus, for a chat ``tool`` message or a Responses ``function_call_output``, the tool name
looked up by call id (the only thing the conversion reads outside the message). A chat message
that is exactly ``{"role": "user" | "assistant", "content": <string>}`` (most of a short
conversation) is keyed by its text alone in a cache of its role's (``caches._user_texts``,
``_assistant_texts``) instead, and a new user message of that shape is
counted inline (:func:`_count_chat`). In a chat
conversation of :data:`PREFIX_MIN` messages or more (a Responses ``input`` of as many items), a
run of leading messages already counted is found in one lookup (:mod:`mockoss.harmony.prompt.prefix`,
which says why that is exact), and the chat preamble is cached by its inputs, the whole tools list
as one key (:func:`_chat_preamble`). In the server, that lookup and the tools' key are made once,
by the request's validation, and handed here (:mod:`mockoss.harmony.prompt.seen`).
``tests/harmony/test_prompt_count.py`` and ``test_prompt_prefix.py`` check the counts against
``len(render_…_prompt(body))`` on the scenario library's requests, the prompt tests' bodies and
random conversations (grown turn by turn, each turn parsed fresh), with whichever Harmony library
is installed.

Measured in process, before -> after, same run, bodies parsed fresh (us per request): an agent
turn (``benchmarks/bench_prompt.py``: 50 messages, 20 tools, 48 seen) 98 -> 36 (``prompt_tokens``);
a growing conversation (10 to 390 messages, one more a turn, its BPE included) 344 -> 136; a new
short conversation 15.4 -> 12.3, 6-7 of it openai-harmony's BPE of its new 20-token message,
then (3 messages, the last one new, caches full and evicting) 12.8 -> 10.3, its Python part (BPE
stubbed out) 6.0 -> 3.0, with the plain-message keys and the plain preamble; a
Responses agent turn (49 input items, 48 seen, 20 tools) 80 -> 33.

Bodies the renderer rejects (lone surrogates, NaN in a schema: a ``ValueError``) are counted by
rendering the repaired body whole, as :func:`~mockoss.harmony.prompt.render_chat_prompt` does.
The caches are :mod:`mockoss.harmony.prompt.caches`'s (its names are re-exported here): bounded in
bytes (:data:`MESSAGE_CACHE_BYTES`) and emptied by :func:`clear_caches`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from itertools import chain
from sys import getsizeof as _getsizeof
from types import MappingProxyType
from typing import Any

from openai_harmony import Message, Role

from mockoss.harmony.prompt._common import (
    DEFAULT_CONVERSATION_START_DATE,
    _key,
    _list,
    _mapping,
    _text,
)
from mockoss.harmony.prompt.caches import (  # the F401s: read as count.X (seen.py, tests)
    _FINAL_TURNS,
    _SHARED_COUNTS,  # noqa: F401
    _USER_TURNS,
    MESSAGE_CACHE_BYTES,
    _assistant_texts,
    _item_prefixes,
    _messages,
    _plain,
    _plain_preambles,
    _preambles,
    _prefixes,
    _user_texts,
    _valid_tools,  # noqa: F401
    cache_size,
    clear_caches,
)
from mockoss.harmony.prompt.chat import (
    _call_names,
    _function_specs,
    _lead,
    render_chat_prompt,
)
from mockoss.harmony.prompt.pieces import (
    Counted,
    Entry,
    _content_key,
    _count_message,
    _counted,
    _data_key,
    _final_head,
    _kept,
    _key_bytes,
    _message_tokens,
    _preamble_count,
    _suffix,
    _text_tokens,
    _user_head,
)
from mockoss.harmony.prompt.prefix import Prefix, Seen, chat_prefix, item_prefix
from mockoss.harmony.prompt.responses import (
    _response_item,
    _responses_parts,
    previous_input_message,
    render_responses_prompt,
)

__all__ = ["MESSAGE_CACHE_BYTES", "cache_size", "clear_caches", "count_chat_prompt", "count_responses_prompt"]

#: A chat conversation of fewer messages is counted message by message only: a prefix lookup
#: (a marshal of the messages) would cost more than the few per-message lookups it replaces.
PREFIX_MIN = 8

_NO_NAMES: Mapping[Any, str] = MappingProxyType({})  # no prefix's call names (read only)


def _entries(key: tuple[str, str | None, Any], build: Callable[[], list[Message]]) -> Counted:
    cached = _messages.get(key)
    if cached is None:
        cached = _counted((_message_tokens(m), m.author.role == Role.ASSISTANT, m.channel) for m in build())
        _messages.put(key, cached, _key_bytes(key[2]) + 64 * len(cached[2]))
    return cached


def _previous(entry: Mapping[str, Any]) -> list[Message]:
    """One ``previous_input_messages`` entry as rendered (system/developer messages left out)."""
    return [m for m in previous_input_message(entry) if m.author.role not in (Role.SYSTEM, Role.DEVELOPER)]


def count_chat_prompt(
    body: Mapping[str, Any],
    *,
    conversation_start_date: str = DEFAULT_CONVERSATION_START_DATE,
    exclude_tools_when_tool_choice_none: bool = False,
    seen: Seen | None = None,
) -> int:
    """``len(render_chat_prompt(body, …))``, computed from cached counts.

    Same arguments as :func:`~mockoss.harmony.prompt.render_chat_prompt`; see the module docstring
    for why the count is exact. Raises what rendering raises (a tokenizer panic on pathological text).

    A conversation of :data:`PREFIX_MIN` messages or more first looks for a stored prefix of its
    messages (:mod:`mockoss.harmony.prompt.prefix`); the messages after it are counted one by one
    from the per-message cache, and the longest run of leading messages that were all found counted
    is stored as a prefix for the next turn. The prefix is looked up and stored while nothing but
    the body references the messages (its key is their marshal bytes; see that module).

    ``seen``: what the request's validation found of this body, unmodified since
    (:func:`mockoss.harmony.prompt.seen.find_seen`): its prefix is used instead of a second
    lookup, its tools' bytes as their key, and a prefix stored is marked validated if it says so.
    """
    if type(body) is not dict:
        body = _mapping(body)
    try:
        messages = body.get("messages")
        if not isinstance(messages, list):
            messages = []
        if seen is not None:
            prefix, tools_key = seen.prefix, seen.tools_key
        else:
            prefix, tools_key = (_prefixes.find(messages) if len(messages) >= PREFIX_MIN else None), None
        count, store = _count_chat(body, messages, prefix, conversation_start_date, exclude_tools_when_tool_choice_none, tools_key)
    except ValueError:  # openai-harmony cannot render it as is: the repairing path
        return len(
            render_chat_prompt(
                body,
                conversation_start_date=conversation_start_date,
                exclude_tools_when_tool_choice_none=exclude_tools_when_tool_choice_none,
            )
        )
    if store is not None:
        validated = seen is not None and seen.validated
        _prefixes.store(messages, store[0], lambda: chat_prefix(messages, *store, prefix, validated), after=prefix)
    return count


def _count_chat(
    body: Mapping[str, Any], messages: list[Any], prefix: Prefix | None, start_date: str, exclude: bool, tools_key: bytes | None
) -> tuple[int, tuple[int, tuple[Entry, ...]] | None]:
    """(the prompt's tokens, the prefix worth storing as (its length, its turns) or ``None``)."""
    first = messages[0] if messages else None
    if type(first) is dict and first.get("role") not in ("system", "developer"):
        lead, instructions = -1, None  # _lead's answer for the usual first message, without the call
    else:
        lead, instructions = _lead(messages)
    start, tokens, analysis = 0, 0, False
    earlier: Mapping[Any, str] = _NO_NAMES
    names: dict[Any, str] | None = None  # tool names by call id after the prefix, when needed
    if prefix is not None:
        names = _call_names(messages, prefix.length, lead) if prefix.deps else None
        if not names or prefix.deps.isdisjoint(names):
            start, tokens, analysis, earlier = prefix.length, prefix.tokens, prefix.analysis, prefix.names
        else:  # a later call redeclares an id the prefix's tool messages looked up: count it all
            prefix, names = None, None
    counted: list[Counted] = []
    get, user_get, assistant_get = _messages.get, _user_texts.get, _assistant_texts.get
    seen, seen_parts = len(messages), -1  # the first message not found counted, its index in counted
    for i in range(start, len(messages)):
        msg = messages[i]
        if i == lead or (type(msg) is not dict and not isinstance(msg, Mapping)):
            continue
        role = msg.get("role")
        content = msg.get("content")
        if type(content) is str and len(msg) == 2 and (role == "user" or role == "assistant"):
            # {"role", "content"} only: the count depends on the two strings alone, so the text
            # is the key in its role's own cache (caches._user_texts, _assistant_texts).
            user = role == "user"
            cached = user_get(content) if user else assistant_get(content)
            if cached is None:
                if seen_parts < 0:
                    seen, seen_parts = i, len(counted)
                if user:  # as _count_message
                    cached = _plain(_user_head() + _text_tokens(content), _USER_TURNS, False, None)
                elif content:  # a plain assistant text: one final-channel turn
                    cached = _plain(_final_head() + _text_tokens(content), _FINAL_TURNS, True, "final")
                else:  # an empty assistant message renders nothing
                    cached = (0, False, ())
                # content.__sizeof__() is sys.getsizeof(content) (a str is not GC-tracked), 60 ns less.
                (_user_texts if user else _assistant_texts).put(content, cached, content.__sizeof__() + 64 * len(cached[2]))
            tokens += cached[0]
            counted.append(cached)
            continue
        author = None  # a tool result's author, "functions.NAME": a new string (see below)
        if role == "tool":
            if names is None:
                names = _call_names(messages, start, lead)
            call_id = _key(msg.get("tool_call_id"))
            author = "functions." + (names[call_id] if call_id in names else earlier.get(call_id, ""))
        for value in msg.values():  # _content_key(msg), inline (3 calls less per short request)
            if value is not None and type(value) is not str:
                content_key: Any = _data_key(msg)
                break
        else:
            content_key = tuple(msg.items())
        # A tool result's key is (author, content key), any other message's its content key: a
        # tuple of pairs, bytes or a repr string, never equal to a tuple starting with a string
        # (which the Responses keys and tool results' keys are; an author starts with
        # "functions.", a Responses key has three items).
        key = content_key if author is None else (author, content_key)
        cached = get(key)
        if cached is None:
            if seen_parts < 0:
                seen, seen_parts = i, len(counted)
            # The key holds this message's own strings only, never a name from another message:
            # that would change how marshal writes the prefix holding it (prefix module docstring).
            cached = _count_message(msg, role, author)
            if type(content_key) is tuple and (content is None or type(content) is str):
                # The text, and per item its pair, its key and a short value (as _key_bytes, cheaper).
                size = _getsizeof(content) + 160 * len(content_key)
            else:
                size = _key_bytes(content_key)
            _messages.put(key, cached, size + 64 * len(cached[2]) + (0 if author is None else 120))
        tokens += cached[0]
        analysis = analysis or cached[1]
        counted.append(cached)
    if analysis:  # an analysis drop may apply: it depends on the whole list of turns
        turns = list(prefix.turns) if prefix is not None else []
        for c in counted:
            turns.extend(c[2])
        tokens = _kept(turns, vllm_drop=True)
    total = _chat_preamble(body, instructions, start_date, exclude, tools_key) + tokens
    if seen_parts < 0 or seen < PREFIX_MIN or seen <= start:
        return total, None  # no new message (nothing to resend next turn), or no longer run seen
    turns = chain(prefix.turns if prefix is not None else (), *(c[2] for c in counted[:seen_parts]))
    return total, (seen, tuple(turns))


def _chat_preamble(
    body: Mapping[str, Any], instructions: str | None, start_date: str, exclude: bool, tools_key: bytes | None = None
) -> int:
    """Tokens of the system and developer messages and of the closing ``<|start|>assistant``,
    cached by what they are built from: the instructions, the reasoning effort and the rendered
    tools (their marshal bytes: one key for the whole list, so a request's tools cost one marshal
    and one lookup; ``tools_key``: those bytes, when the validation took them already). Without
    any of the three (most short requests) the count depends on the start date only and is one
    lookup in :data:`_plain_preambles` (no key tuple to build and hash)."""
    tools = body.get("tools")
    effort = body.get("reasoning_effort")
    if instructions is None and effort is None and not tools:
        cached = _plain_preambles.get(start_date)
        if cached is None:
            cached = _plain_preambles[start_date] = _preamble_count(None, [], None, start_date) + _suffix()
        return cached
    if tools is not None and exclude and body.get("tool_choice") == "none":
        tools = None  # as chat._rendered_tools (inline: a call less on every request)
    if effort is not None and not isinstance(effort, str):
        effort = None
    if tools and isinstance(tools, list):
        tools_data: bytes | str | None = tools_key if tools_key is not None else _data_key(tools)
    else:
        tools_data = None
    key = ("chat", start_date, instructions, effort, tools_data)
    cached = _preambles.get(key)
    if cached is None:
        count = _preamble_count(instructions, _function_specs(tools), effort, start_date) + _suffix()
        size = sys.getsizeof(instructions) + sys.getsizeof(key[4])
        cached = _preambles.put(key, count, size + 128)
    return cached


def count_responses_prompt(
    body: Mapping[str, Any],
    *,
    conversation_start_date: str = DEFAULT_CONVERSATION_START_DATE,
    builtin_tools: bool = False,
) -> int:
    """``len(render_responses_prompt(body, …))``, computed from cached per-message counts.

    Same arguments as :func:`~mockoss.harmony.prompt.render_responses_prompt`; see the module
    docstring for why the count is exact. An ``input`` list of :data:`PREFIX_MIN` items or more
    first looks for a stored prefix of its items, as a chat conversation does for its messages
    (:func:`count_chat_prompt`): an item's turns depend only on it and the function calls before
    it, so a prefix needs no later-declaration check (its call names are kept for the rest).
    """
    body = _mapping(body)
    try:
        parts = _responses_parts(body, builtin_tools)
        items = parts[4] if isinstance(parts[4], list) else None
        prefix = _item_prefixes.find(items) if items is not None and len(items) >= PREFIX_MIN else None
        count, seen = _count_responses(body, parts, prefix, conversation_start_date)
    except ValueError:
        return len(
            render_responses_prompt(body, conversation_start_date=conversation_start_date, builtin_tools=builtin_tools)
        )
    if seen is not None and items is not None:
        _item_prefixes.store(items, seen[0], lambda: item_prefix(items, *seen, prefix), after=prefix)
    return count


def _count_responses(
    body: Mapping[str, Any], parts: tuple[Any, ...], prefix: Prefix | None, start_date: str
) -> tuple[int, tuple[int, tuple[Entry, ...]] | None]:
    """(the prompt's tokens, the prefix of the input items worth storing, as in ``_count_chat``)."""
    instructions, specs, namespaces, effort, request_input = parts
    total = _preamble_count(instructions, specs, effort, start_date, namespaces)
    turns: list[Entry] = []
    for entry in _list(body.get("previous_input_messages")):
        if type(entry) is dict or isinstance(entry, Mapping):
            turns.extend(_entries(("previous", None, _content_key(entry)), lambda e=entry: _previous(e))[2])
    if not isinstance(request_input, list):
        if isinstance(request_input, str) and (request_input or not body.get("previous_input_messages")):
            turns.extend(_entries(("input", None, request_input), lambda: [Message.from_role_and_content(Role.USER, request_input)])[2])
        return total + _kept(turns, vllm_drop=True) + _suffix(), None
    start, earlier = 0, len(turns)  # turns[earlier:] are the input items' turns
    call_names: dict[Any, str] = {}
    if prefix is not None:
        start, call_names = prefix.length, dict(prefix.names)
        turns.extend(prefix.turns)
    seen, seen_turns = len(request_input), -1  # the first item not found counted, len(turns) then
    for i in range(start, len(request_input)):
        item = request_input[i]
        if type(item) is not dict and not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        name = None
        if kind == "function_call":  # what _response_item records for later outputs
            call_names[_key(item.get("call_id"))] = _text(item.get("name"))
        elif kind == "function_call_output":  # a new string: see _count_chat on what keys hold
            name = "functions." + call_names.get(_key(item.get("call_id")), "")
        key = ("item", name, _content_key(item))
        cached = _messages.get(key)
        if cached is None:
            if seen_turns < 0:
                seen, seen_turns = i, len(turns)
            built = _response_item(item, dict(call_names))
            cached = _counted((_message_tokens(m), m.author.role == Role.ASSISTANT, m.channel) for m in ([built] if built is not None else []))
            _messages.put(key, cached, _key_bytes(key[2]) + 64 * len(cached[2]))
        turns.extend(cached[2])
    total += _kept(turns, vllm_drop=True) + _suffix()
    if seen_turns < 0 or seen < PREFIX_MIN or seen <= start:
        return total, None  # no new item, or no longer run seen
    return total, (seen, tuple(turns[earlier:seen_turns]))
