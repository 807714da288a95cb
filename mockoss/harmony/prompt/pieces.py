"""Token counts of the pieces a Harmony prompt is made of, and cache keys for request data.

Shared by the chat and Responses counts of :mod:`mockoss.harmony.prompt.count` (see its module
docstring for why a prompt's count is the sum of its messages' counts): a message's count is its
header's (cached by the header fields, :data:`_heads`) plus its texts' BPE counts.
"""

from __future__ import annotations

import functools
import marshal
import sys
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

from openai_harmony import Author, Conversation, Message, RenderOptions, Role, TextContent, ToolNamespaceConfig

from mockoss.harmony.encoding import load_encoding
from mockoss.harmony.lru import ClockCache
from mockoss.harmony.prompt._common import (
    _developer_message,
    _key,
    _system_message,
    _tool_description,
    legacy_tool_call_headers,
)
from mockoss.harmony.prompt.bpe import text_tokens as _text_tokens  # a text piece's tokens (render_text_into)
from mockoss.harmony.prompt.chat import _chat_message

#: One rendered Harmony message: (its token count, written by the assistant, its channel).
Entry = tuple[int, bool, str | None]

#: One request message's cached count: (its turns' tokens, some turn on the analysis channel, its
#: turns). The sum and the flag are kept so that a conversation with no analysis turn is a sum.
Counted = tuple[int, bool, tuple[Entry, ...]]

#: Header counts (by header fields, and tool results' by author): a few hundred bytes each.
_heads: ClockCache[int] = ClockCache(1024 * 1024)

#: System and developer message counts (by their inputs; a developer key holds its tools).
_preamble_parts: ClockCache[int] = ClockCache(4 * 1024 * 1024)


@functools.cache
def _suffix() -> int:
    """Tokens of ``<|start|>assistant`` as the renderer appends them (2 with o200k_harmony)."""
    return len(load_encoding().render_conversation_for_completion(Conversation.from_messages([]), Role.ASSISTANT))


@functools.cache
def _user_head() -> int:
    """Tokens of a user message with one empty text part (``<|start|>user<|message|><|end|>``)."""
    return _message_tokens(Message.from_role_and_contents(Role.USER, [TextContent(text="")]))


@functools.cache
def _final_head() -> int:
    """Tokens of an assistant final-channel message with one empty text part."""
    return _message_tokens(Message.from_role_and_contents(Role.ASSISTANT, [TextContent(text="")]).with_channel("final"))


def _tool_head(author: str) -> int:
    """Tokens of a chat tool result with an empty text, written by ``author`` (``functions.NAME``,
    ``_chat_message``)."""
    key = ("tool head", author)
    head = _heads.get(key)
    if head is None:
        empty = (
            Message.from_author_and_content(Author.new(Role.TOOL, author), "")
            .with_channel("commentary")
            .with_recipient("assistant")
        )
        head = _heads.put(key, _message_tokens(empty), sys.getsizeof(author) + 64)
    return head


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
    head = _heads.get(key)
    if head is None:
        empty = message.model_copy(update={"content": [TextContent(text="") for _ in contents]})
        head = _heads.put(key, len(legacy_tool_call_headers(load_encoding().render(empty))), 256)
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
    """Bytes held by a :func:`_content_key` (its strings and tuples, the value ``None`` included)."""
    if isinstance(key, (str, bytes)):
        return sys.getsizeof(key)
    return sum(map(sys.getsizeof, chain.from_iterable(key))) + sys.getsizeof(key) + 56 * len(key)  # + the item pairs


def _counted(entries: Iterable[Entry]) -> Counted:
    entries = tuple(entries)
    return sum(e[0] for e in entries), any(e[2] == "analysis" for e in entries), entries


def _kept(turns: Iterable[Entry], vllm_drop: bool) -> int:
    """Sum of the turns' tokens after vLLM's (chat) and openai-harmony's analysis drops."""
    turns = list(turns)
    if not any(t[2] == "analysis" for t in turns):  # nothing either rule could drop
        return sum(t[0] for t in turns)
    if vllm_drop:
        last_final = max(
            (i for i, (_, by_assistant, ch) in enumerate(turns) if by_assistant and ch == "final"), default=-1
        )
        turns = [t for i, t in enumerate(turns) if not (i < last_final and t[2] == "analysis")]
    last_assistant = next((t for t in reversed(turns) if t[1]), None)
    if last_assistant is not None and last_assistant[2] == "final":
        first_final = next(i for i, t in enumerate(turns) if t[2] == "final")
        turns = [t for i, t in enumerate(turns) if not (i < first_final and t[2] == "analysis")]
    return sum(t[0] for t in turns)


def _system_count(effort: Any, start_date: str, namespaces: Sequence[ToolNamespaceConfig], functions: bool) -> int:
    effort = effort if isinstance(effort, str) else None
    key = ("system", effort, start_date, tuple(n.name for n in namespaces) if namespaces else (), functions)
    cached = _preamble_parts.get(key)
    if cached is None:
        message = _system_message(effort, start_date, namespaces)
        options = RenderOptions(conversation_has_function_tools=functions)
        cached = _preamble_parts.put(key, len(load_encoding().render(message, options)), 256)
    return cached


def _developer_count(instructions: str | None, specs: list[Mapping[str, Any]]) -> int:
    text = _data_key((instructions, specs))
    key = ("developer", text)
    cached = _preamble_parts.get(key)
    if cached is None:
        message = _developer_message(instructions, [_tool_description(spec) for spec in specs])
        cached = _preamble_parts.put(key, len(load_encoding().render(message)), sys.getsizeof(text))
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


def _count_message(msg: Mapping[str, Any], role: Any, author: str | None) -> Counted:
    """The turns of a chat message not counted before (``_chat_message``'s conversion). A user,
    plain assistant or tool message whose content is a string is its header's tokens plus its
    text's, without building the Harmony message (about 5 us less)."""
    content = msg.get("content")
    if content is None or type(content) is str:
        if role == "user":
            tokens = _user_head() + _text_tokens(content or "")
            return tokens, False, ((tokens, False, None),)
        if role == "tool" and author is not None:
            tokens = _tool_head(author) + _text_tokens(content or "")
            return tokens, False, ((tokens, False, "commentary"),)
        if (
            role == "assistant"
            and msg.get("tool_calls") is None
            and msg.get("reasoning") is None
            and msg.get("reasoning_content") is None
        ):
            if not content:  # no reasoning, no calls, no text: nothing rendered
                return 0, False, ()
            tokens = _final_head() + _text_tokens(content)
            return tokens, False, ((tokens, True, "final"),)
    call_names = {} if author is None else {_key(msg.get("tool_call_id")): author[len("functions.") :]}
    return _counted(
        (_message_tokens(m), m.author.role == Role.ASSISTANT, m.channel) for m in _chat_message(msg, call_names)
    )
