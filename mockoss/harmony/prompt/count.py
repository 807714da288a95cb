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
fields) plus its texts' BPE counts (:func:`_message_tokens`, exact for the same reason).

The per-message cache key is the request message's content (:func:`_content_key`: its items when
all values are strings or null, else its :mod:`marshal` bytes, which decode back to it, so equal
keys mean equal JSON data: strings, numbers, booleans, null, lists and dicts, key order included)
plus, for a chat ``tool`` message or a Responses ``function_call_output``, the tool name looked up
by call id (the only thing the conversion reads outside the message). ``tests/harmony/test_prompt_count.py`` checks the counts
against ``len(render_…_prompt(body))`` on the scenario library's requests, the prompt tests'
bodies and random conversations, with whichever Harmony library is installed.

Bodies the renderer rejects (lone surrogates, NaN in a schema: a ``ValueError``) are counted by
rendering the repaired body whole, as :func:`~mockoss.harmony.prompt.render_chat_prompt` does.
Caches are bounded in bytes (:data:`MESSAGE_CACHE_BYTES`) and emptied by :func:`clear_caches`.
"""

from __future__ import annotations

import functools
import marshal
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from openai_harmony import Conversation, Message, RenderOptions, Role, TextContent, ToolNamespaceConfig

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.lru import BytesLRU
from mockoss.harmony.prompt._common import (
    DEFAULT_CONVERSATION_START_DATE,
    _developer_message,
    _key,
    _list,
    _mapping,
    _system_message,
    _text,
    _tool_description,
    legacy_tool_call_headers,
)
from mockoss.harmony.prompt.chat import _chat_message, _chat_parts, render_chat_prompt
from mockoss.harmony.prompt.responses import (
    _response_item,
    _responses_parts,
    previous_input_message,
    render_responses_prompt,
)

__all__ = ["MESSAGE_CACHE_BYTES", "cache_size", "clear_caches", "count_chat_prompt", "count_responses_prompt"]

#: Byte budget of the per-message count cache (keys hold the messages' text).
MESSAGE_CACHE_BYTES = 32 * 1024 * 1024

#: One rendered Harmony message: (its token count, written by the assistant, its channel).
Entry = tuple[int, bool, str | None]

_messages: BytesLRU[tuple[Entry, ...]] = BytesLRU(MESSAGE_CACHE_BYTES)
_preambles: BytesLRU[int] = BytesLRU(MESSAGE_CACHE_BYTES // 8)


def clear_caches() -> None:
    """Forget every cached count (``MockServer.reset`` calls this)."""
    _messages.clear()
    _preambles.clear()


def cache_size() -> int:
    """Bytes held by the count caches."""
    return _messages.size + _preambles.size


@functools.cache
def _suffix() -> int:
    """Tokens of ``<|start|>assistant`` as the renderer appends them (2 with o200k_harmony)."""
    return len(load_encoding().render_conversation_for_completion(Conversation.from_messages([]), Role.ASSISTANT))


@functools.cache
def _user_head() -> int:
    """Tokens of a user message with one empty text part (``<|start|>user<|message|><|end|>``)."""
    return _message_tokens(Message.from_role_and_contents(Role.USER, [TextContent(text="")]))


def _text_tokens(text: str) -> int:
    """Tokens of ``text`` as the renderer encodes a text piece (``render_text_into``:
    ``encode_ordinary``, special-token strings read as text)."""
    if not text.isascii():
        text.encode("utf-8")  # a lone surrogate: UnicodeEncodeError, a ValueError (repairing path)
    return len(load_encoding().encode(text, disallowed_special=()))


def _message_tokens(message: Message) -> int:
    """``len(encoding.render(message))`` without rendering the text again for every new message.

    ``Render<Message>`` emits the header (formatting tokens and the role, recipient, channel and
    content type pieces), then each content, then the closing token; a text content is
    ``render_text_into(text)`` alone. So the count is that of the same message with empty texts
    (cached by the header fields and the number of parts) plus each text's own BPE count. The
    legacy tool-call header rewrite (``_common.legacy_tool_call_headers``) touches the header only,
    so it is applied to the empty message's tokens.
    Non-text contents (system and developer contents) are rendered whole.
    """
    contents = message.content
    if not all(type(c) is TextContent for c in contents):
        return len(legacy_tool_call_headers(load_encoding().render(message)))
    author = message.author
    key = ("header", author.role, author.name, message.channel, message.recipient, message.content_type, len(contents))
    head = _preambles.get(key)
    if head is None:
        empty = message.model_copy(update={"content": [TextContent(text="") for _ in contents]})
        head = _preambles.put(key, len(legacy_tool_call_headers(load_encoding().render(empty))), 256)
    return head + sum(_text_tokens(c.text) for c in contents)


def _data_key(data: Any) -> bytes | str:
    """A key equal for two JSON values only if they are equal (key order included): their
    :mod:`marshal` serialisation, which decodes back to the value, so equal bytes mean equal
    data; ``repr`` for what marshal does not take (a ``Mapping`` that is not a ``dict``).

    marshal is chosen for speed: 13x faster than ``repr`` on twenty tool specs. Two equal values
    can serialise differently (marshal flags objects referenced elsewhere), which only costs a
    cache miss, never a wrong count."""
    try:
        return marshal.dumps(data)
    except ValueError:
        return repr(data)


def _content_key(message: Mapping[str, Any]) -> Any:
    """A key equal for two request messages only if their JSON data is equal (key order
    included): the items themselves when every value is a string or null (hashing strings is
    cheaper than writing them out; strings and ``None`` never compare equal to each other), else
    :func:`_data_key`."""
    for value in message.values():
        if value is not None and type(value) is not str:
            return _data_key(message)
    return tuple(message.items())


def _key_bytes(key: Any) -> int:
    if isinstance(key, (str, bytes)):
        return sys.getsizeof(key)
    return sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in key) + sys.getsizeof(key)


def _entries(key: tuple[str, str | None, Any], build: Callable[[], list[Message]]) -> tuple[Entry, ...]:
    cached = _messages.get(key)
    if cached is None:
        cached = tuple((_message_tokens(m), m.author.role == Role.ASSISTANT, m.channel) for m in build())
        _messages.put(key, cached, _key_bytes(key[2]) + 64 * len(cached))
    return cached


def _system_count(effort: Any, start_date: str, namespaces: Sequence[ToolNamespaceConfig], functions: bool) -> int:
    effort = effort if isinstance(effort, str) else None
    key = ("system", effort, start_date, tuple(n.name for n in namespaces) if namespaces else (), functions)
    cached = _preambles.get(key)
    if cached is None:
        message = _system_message(effort, start_date, namespaces)
        options = RenderOptions(conversation_has_function_tools=functions)
        cached = _preambles.put(key, len(load_encoding().render(message, options)), 256)
    return cached


def _developer_count(instructions: str | None, specs: list[Mapping[str, Any]]) -> int:
    text = _data_key((instructions, specs))
    key = ("developer", text)
    cached = _preambles.get(key)
    if cached is None:
        message = _developer_message(instructions, [_tool_description(spec) for spec in specs])
        cached = _preambles.put(key, len(load_encoding().render(message)), sys.getsizeof(text))
    return cached


def _preamble_count(
    instructions: str | None,
    specs: list[Mapping[str, Any]],
    effort: Any,
    start_date: str,
    namespaces: Sequence[ToolNamespaceConfig] = (),
) -> int:
    """Tokens of vLLM's ``build_harmony_preamble`` (see ``_common._preamble``)."""
    total = _system_count(effort, start_date, namespaces, bool(specs))
    if instructions or specs:
        total += _developer_count(instructions, specs)
    return total


def _kept(turns: Iterable[Entry], vllm_drop: bool) -> int:
    """Sum of the turns' tokens after vLLM's (chat) and openai-harmony's analysis drops."""
    turns = list(turns)
    if not any(t[2] == "analysis" for t in turns):  # nothing either rule could drop
        return sum(t[0] for t in turns)
    if vllm_drop:
        last_final = max((i for i, (_, by_assistant, ch) in enumerate(turns) if by_assistant and ch == "final"), default=-1)
        turns = [t for i, t in enumerate(turns) if not (i < last_final and t[2] == "analysis")]
    last_assistant = next((t for t in reversed(turns) if t[1]), None)
    if last_assistant is not None and last_assistant[2] == "final":
        first_final = next(i for i, t in enumerate(turns) if t[2] == "final")
        turns = [t for i, t in enumerate(turns) if not (i < first_final and t[2] == "analysis")]
    return sum(t[0] for t in turns)


def _previous(entry: Mapping[str, Any]) -> list[Message]:
    """One ``previous_input_messages`` entry as rendered (system/developer messages left out)."""
    return [m for m in previous_input_message(entry) if m.author.role not in (Role.SYSTEM, Role.DEVELOPER)]


def count_chat_prompt(
    body: Mapping[str, Any],
    *,
    conversation_start_date: str = DEFAULT_CONVERSATION_START_DATE,
    exclude_tools_when_tool_choice_none: bool = False,
) -> int:
    """``len(render_chat_prompt(body, …))``, computed from cached per-message counts.

    Same arguments as :func:`~mockoss.harmony.prompt.render_chat_prompt`; see the module docstring
    for why the count is exact. Raises what rendering raises (a tokenizer panic on pathological text).
    """
    body = _mapping(body)
    try:
        instructions, specs, rest, tool_names = _chat_parts(body, exclude_tools_when_tool_choice_none)
        total = _preamble_count(instructions, specs, body.get("reasoning_effort"), conversation_start_date)
        turns: list[Entry] = []
        for msg in rest:
            role = msg.get("role")
            name = tool_names.get(_key(msg.get("tool_call_id")), "") if role == "tool" else None
            key = ("chat", name, _content_key(msg))
            cached = _messages.get(key)
            if cached is None:
                content = msg.get("content")
                if role == "user" and (content is None or type(content) is str):
                    # One user message whose text is the whole content (_chat_message): its
                    # header's tokens plus its text's, without building the Harmony message.
                    cached = _messages.put(key, ((_user_head() + _text_tokens(content or ""), False, None),), _key_bytes(key[2]) + 64)
                else:
                    cached = _entries(key, lambda m=msg: _chat_message(m, tool_names))
            turns.extend(cached)
        return total + _kept(turns, vllm_drop=True) + _suffix()
    except ValueError:  # openai-harmony cannot render it as is: the repairing path
        return len(
            render_chat_prompt(
                body,
                conversation_start_date=conversation_start_date,
                exclude_tools_when_tool_choice_none=exclude_tools_when_tool_choice_none,
            )
        )


def count_responses_prompt(
    body: Mapping[str, Any],
    *,
    conversation_start_date: str = DEFAULT_CONVERSATION_START_DATE,
    builtin_tools: bool = False,
) -> int:
    """``len(render_responses_prompt(body, …))``, computed from cached per-message counts.

    Same arguments as :func:`~mockoss.harmony.prompt.render_responses_prompt`; see the module
    docstring for why the count is exact.
    """
    body = _mapping(body)
    try:
        instructions, specs, namespaces, effort, request_input = _responses_parts(body, builtin_tools)
        total = _preamble_count(instructions, specs, effort, conversation_start_date, namespaces)
        turns: list[Entry] = []
        previous = _list(body.get("previous_input_messages"))
        for entry in previous:
            if type(entry) is dict or isinstance(entry, Mapping):
                turns.extend(_entries(("previous", None, _content_key(entry)), lambda e=entry: _previous(e)))
        if isinstance(request_input, str):
            if request_input or not body.get("previous_input_messages"):
                turns.extend(_entries(("input", None, request_input), lambda: [Message.from_role_and_content(Role.USER, request_input)]))
        else:
            call_names: dict[Any, str] = {}
            for item in _list(request_input):
                if type(item) is not dict and not isinstance(item, Mapping):
                    continue
                kind = item.get("type", "message")
                name = None
                if kind == "function_call":  # what _response_item records for later outputs
                    call_names[_key(item.get("call_id"))] = _text(item.get("name"))
                elif kind == "function_call_output":
                    name = call_names.get(_key(item.get("call_id")), "")
                build = lambda i=item: [m] if (m := _response_item(i, dict(call_names))) is not None else []  # noqa: E731
                turns.extend(_entries(("item", name, _content_key(item)), build))
        return total + _kept(turns, vllm_drop=True) + _suffix()
    except ValueError:
        return len(
            render_responses_prompt(body, conversation_start_date=conversation_start_date, builtin_tools=builtin_tools)
        )
