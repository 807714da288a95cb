"""What rule matchers read from a request: turn number, declared tools, tool choice, last messages.

Read from the parsed JSON body by its shape, so every endpoint with the same body shape reads the
same way:

``messages`` (``chat``, ``ollama.chat``)
    Each message is ``(role, text)``; ``text`` is ``content`` when it is a string, else the
    ``text`` of its content parts joined with ``"\\n"`` (``None`` → ``""``). Tool results are the
    messages with role ``tool``. **turn** = number of ``assistant`` messages + 1.
``input`` (``responses``)
    A string is one user message. In a list, message items (``type: message``, or no ``type`` and
    a ``role``) give ``(role, text)``; ``function_call_output`` and the other ``*_call_output``
    items are tool results (``output`` as text). Items the model produced earlier (assistant
    messages, ``reasoning``, ``function_call``, ``mcp_call`` and the other ``*_call`` items) are
    grouped: each run of consecutive model items is one earlier response, so
    **turn** = number of such runs + 1 (``[user, reasoning, function_call, function_call, output,
    output]`` is turn 2). ``item_reference`` items are skipped. With ``previous_response_id`` the
    input holds only the new items; use a session (``X-Mockoss-Session``) to count turns then.
``prompt`` (``completions`` and other endpoints without a conversation)
    The prompt (the last one, if a list) is the only user message; **turn** is always 1.

With the header ``X-Mockoss-Session: KEY`` the turn is counted by the server instead: the number
of earlier requests in that session that reached the scenario, + 1.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["LowerCaseHeaders", "RequestFacts", "SharedHeaders", "body_turn", "conversation_key", "header_of", "response_id", "text_of"]

#: Responses input item types the model produced (an earlier response's output).
MODEL_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "computer_call",
        "image_generation_call",
        "local_shell_call",
    }
)

#: ``(role, content)``: content as sent (converted to text by :func:`text_of` when read).
Message = tuple[str, Any]


def text_of(content: Any) -> str:
    """Message content as text: a string as is, content parts' ``text`` joined with newlines,
    ``None`` as ``""``, anything else as compact JSON."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return json.dumps(content, separators=(",", ":"), ensure_ascii=False)


def _chat(messages: list[Any]) -> tuple[list[Message], int]:
    conversation = [(m.get("role"), m.get("content")) for m in messages if isinstance(m, dict)]
    return conversation, _chat_turn(messages)


def _chat_turn(messages: list[Any], prefix: Any = None) -> int:
    """1 + the assistant messages: a chat request's turn, by a plain loop (0.2 us for 3 messages,
    where a list comprehension and ``count`` take 0.28).

    ``prefix``: a stored prefix of these messages that the request's validation found
    (:class:`mockoss.harmony.prompt.prefix.Prefix`: equal data, so the same assistant messages),
    whose ``assistants`` count is taken instead of reading its messages again (the agent turn of
    ``benchmarks/bench_prompt.py``, 48 of 50 messages seen: 2.6 -> 0.4 us)."""
    turn, start = 1, 0
    if prefix is not None and prefix.assistants >= 0 and prefix.length <= len(messages):
        turn, start = 1 + prefix.assistants, prefix.length
    for m in messages[start:] if start else messages:
        if isinstance(m, dict) and m.get("role") == "assistant":
            turn += 1
    return turn


def _responses(items: Any) -> tuple[list[Message], int]:
    if isinstance(items, str):
        return [("user", items)], 1
    conversation: list[Message] = []
    turns, in_run, answered = 1, False, False
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        if not isinstance(kind, str):
            # A list/object `type` is unhashable (`in MODEL_ITEMS` would raise): the profile's
            # validation answers such an item; here it is just not a model item (breaker D4).
            kind = None
        if kind == "item_reference":
            continue
        role = item.get("role")
        model_item = kind in MODEL_ITEMS or (kind == "message" and role == "assistant")
        # A new response starts after a non-model item, or at a `reasoning` item that follows the
        # previous response's answer (gpt-oss reasons first, so a response never holds reasoning
        # after its message or calls): clients such as openai-agents resend earlier outputs back
        # to back when no tool output separates them.
        if model_item and (not in_run or (kind == "reasoning" and answered)):
            turns += 1
            answered = False
        if model_item and kind != "reasoning":
            answered = True
        in_run = model_item
        if kind == "message":
            conversation.append((role, item.get("content")))
        elif isinstance(kind, str) and kind.endswith("_call_output"):
            conversation.append(("tool", item.get("output")))
    return conversation, turns


def _prompt(prompt: Any) -> tuple[list[Message], int]:
    if isinstance(prompt, list) and prompt and isinstance(prompt[-1], str):
        prompt = prompt[-1]
    return ([("user", prompt)] if isinstance(prompt, str) else []), 1


def body_turn(body: Mapping[str, Any], prefix: Any = None) -> int:
    """A request's turn as its body counts it: :attr:`RequestFacts.turn` without a session turn,
    for a caller that needs only the turn (the player, for a scenario without ``match`` checks).

    Chat turns are counted by :func:`_chat_turn` without building the conversation (a
    50-message agent turn: 9 us -> 1.8 us), from ``prefix`` on when given (see there).
    """
    messages = body.get("messages")
    if isinstance(messages, list):
        return _chat_turn(messages, prefix)
    if "input" in body:
        return _responses(body["input"])[1]
    return 1  # a prompt: always turn 1 (_prompt)


def header_of(headers: Mapping[str, str], name: str) -> str | None:
    """A request header by lower-case ``name``, else ``None``: what :meth:`RequestFacts.header`
    gives, for one look-up.

    A plain ``dict`` may have names with capitals; it is searched by lower-cased name only when
    one of them lower-cases to ``name`` (a ``map`` in C, 0.25 us for six headers, where building
    the lower-cased copy costs 0.5 us on every request without the header).
    """
    value = headers.get(name)
    if value is None and type(headers) is dict:
        try:
            present = name in map(str.lower, headers)
        except TypeError:  # a name that is not a str: look it up as RequestFacts.header does
            present = True
        if present:
            value = {k.lower(): v for k, v in headers.items()}.get(name)
    return value


class RequestFacts:
    """One request as rule matchers see it; everything is computed on first use.

    Args:
        endpoint: endpoint name, e.g. ``"chat"``.
        body: the parsed JSON body.
        headers: request headers (lower-cased names, or a case-insensitive mapping).
        model: the resolved model name.
        session_turn: the turn counted by the server for a session, else ``None`` (derive it).
        prefix: a stored prefix of the body's messages (see :func:`_chat_turn`), else ``None``.
    """

    __slots__ = ("_conversation", "_lower", "_prefix", "_tools", "_turn", "body", "endpoint", "headers", "model")

    def __init__(
        self,
        endpoint: str,
        body: Mapping[str, Any],
        headers: Mapping[str, str],
        model: str,
        session_turn: int | None = None,
        prefix: Any = None,
    ) -> None:
        self.endpoint = endpoint
        self.body = body
        self.headers = headers
        self.model = model
        self._prefix = prefix
        self._turn = session_turn
        self._conversation: list[Message] | None = None
        self._tools: frozenset[str] | None = None
        self._lower: dict[str, str] | None = None

    def _read(self) -> list[Message]:
        body = self.body
        if isinstance(body.get("messages"), list):
            conversation, turn = _chat(body["messages"])
        elif "input" in body:
            conversation, turn = _responses(body["input"])
        else:
            conversation, turn = _prompt(body.get("prompt"))
        self._conversation = conversation
        if self._turn is None:
            self._turn = turn
        return conversation

    @property
    def turn(self) -> int:
        """1 for the first request of a conversation, 2 for the one after the model's first reply, …"""
        if self._turn is None:
            messages = self.body.get("messages")
            if isinstance(messages, list):
                # Chat: counted without building the conversation, which only rules that read it need.
                self._turn = _chat_turn(messages, self._prefix)
            else:
                self._read()
        return self._turn  # type: ignore[return-value]

    @property
    def conversation(self) -> list[Message]:
        """The messages as ``(role, content)`` pairs, in order, content as sent."""
        return self._read() if self._conversation is None else self._conversation

    def last(self, role: str | None = None) -> tuple[str, str] | None:
        """The last message (with ``role``, if given) as ``(role, text)``, else ``None``."""
        for message_role, content in reversed(self.conversation):
            if role is None or message_role == role:
                return str(message_role), text_of(content)
        return None

    @property
    def tool_names(self) -> frozenset[str]:
        """Names of the declared tools: a function's ``name``, an MCP tool's ``server_label``,
        else a built-in tool's ``type``."""
        if self._tools is None:
            names = set()
            for tool in self.body.get("tools") or ():
                if not isinstance(tool, dict):
                    continue
                function = tool.get("function")
                name = function.get("name") if isinstance(function, dict) else None
                name = name or tool.get("name") or tool.get("server_label") or tool.get("type")
                if isinstance(name, str):
                    names.add(name)
            self._tools = frozenset(names)
        return self._tools

    @property
    def declares_tools(self) -> bool:
        return bool(self.body.get("tools"))

    @property
    def tool_choice(self) -> tuple[str, str | None]:
        """``(mode, name)``: mode is ``auto``, ``none``, ``required`` or ``named`` (then ``name``
        is the chosen tool: a function name, an MCP server label, or a built-in tool type)."""
        choice = self.body.get("tool_choice")
        if choice is None:
            return ("auto" if self.declares_tools else "none"), None
        if isinstance(choice, str):
            return choice, None
        if isinstance(choice, dict):
            if choice.get("type") == "allowed_tools" and isinstance(choice.get("mode"), str):
                return choice["mode"], None
            function = choice.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            name = name or choice.get("name") or choice.get("server_label") or choice.get("type")
            return "named", name if isinstance(name, str) else None
        return str(choice), None

    def header(self, name: str) -> str | None:
        """A request header by lower-case name, else ``None``."""
        value = self.headers.get(name)
        if value is None and type(self.headers) is dict:  # not LowerCaseHeaders: names may have capitals
            if self._lower is None:
                self._lower = {k.lower(): v for k, v in self.headers.items()}
            value = self._lower.get(name)
        return value


class LowerCaseHeaders(dict[str, str]):
    """Request headers whose names are all lower-case already (the HTTP layer's, from ASGI), so
    :meth:`RequestFacts.header` need not build a lower-cased copy to look up an absent header."""

    __slots__ = ()


def _read_only(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError("a request's headers are read-only (dict(headers) is a copy to change)")


class SharedHeaders(LowerCaseHeaders):
    """:class:`LowerCaseHeaders` shared by the requests that sent the same header block
    (:func:`mockoss.server.request_headers.header_map`; a copy when only ``content-length``
    changed), so read-only: every method that would change it raises :class:`TypeError`.
    ``pairs``: ``tuple(self.items())`` as the request log keeps it
    (:func:`mockoss.server.records.header_items`), made once for the block."""

    __slots__ = ("pairs",)
    pairs: tuple[tuple[str, str], ...]

    __setitem__ = __delitem__ = setdefault = pop = popitem = clear = update = __ior__ = _read_only

    def __reduce__(self) -> Any:  # a copy (copy, pickle) is a plain LowerCaseHeaders of the same items
        return LowerCaseHeaders, (dict(self),)


class RecordedHeaders(dict[str, str]):
    """A logged request's headers as :attr:`mockoss.server.records.RecordedRequest.headers` hands
    them to a test: a dict of lower-cased names (iteration, ``==``, JSON as before) whose look-ups
    ignore case, as HTTP header names do (RFC 9110, section 5.1): ``headers["X-Custom"]``,
    ``headers.get("X-Custom")`` and ``"X-Custom" in headers`` find ``x-custom`` (a plain dict gave
    ``None``: issue 9, eleventh-session breaker, finding 9). A name already lower-case is looked up
    as in a dict, at a dict's speed."""

    __slots__ = ()

    def __missing__(self, name: Any) -> str:
        if isinstance(name, str) and not name.islower() and name.lower() in self:
            return dict.__getitem__(self, name.lower())
        raise KeyError(name)

    def get(self, name: Any, default: Any = None) -> Any:
        if isinstance(name, str) and name not in self.keys():
            name = name.lower()
        return dict.get(self, name, default)

    def __contains__(self, name: Any) -> bool:
        return dict.__contains__(self, name) or (isinstance(name, str) and dict.__contains__(self, name.lower()))


# --------------------------------------------------------------------------- conversation keys

_RESPONSE_ID = re.compile(rb'"id"\s*:\s*"(resp[^"]*)"')


def _first_texts(endpoint: str, body: Mapping[str, Any]) -> tuple[str, str]:
    """``(instructions, first user message)`` of a request, as text."""
    system: list[str] = []
    if isinstance(body.get("instructions"), str):
        system.append(body["instructions"])
    if isinstance(body.get("system"), str):  # Ollama /api/generate
        system.append(body["system"])
    if isinstance(body.get("messages"), list):
        items: Any = body["messages"]
    elif "input" in body:
        items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
    else:
        prompt = body.get("prompt")
        return "\n".join(system), text_of(prompt[0] if isinstance(prompt, list) and prompt else prompt)
    for item in items:
        if not isinstance(item, dict):
            continue
        role = item.get("role")
        if role in ("system", "developer"):
            system.append(text_of(item.get("content")))
        elif role == "user":
            return "\n".join(system), text_of(item.get("content"))
    return "\n".join(system), ""


def conversation_key(endpoint: str, body: Mapping[str, Any]) -> str:
    """The automatic conversation key of a request: ``auto:`` + 16 hex digits of the SHA-256 of its
    system text (``instructions``, system and developer messages) and its first user message.

    Every request of one conversation repeats both (a client resends the history), so they share
    the key; two conversations that start differently get different keys. Two conversations that
    start with the same words share one: give them ``X-Mockoss-Session`` keys instead.
    """
    system, user = _first_texts(endpoint, body)
    digest = hashlib.sha256(f"{system}\x00{user}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"auto:{digest[:16]}"


def response_id(body: bytes, frames: tuple[bytes, ...]) -> str | None:
    """The Responses object id (``resp_…``) in a reply body or its first stream frames, else ``None``."""
    for chunk in (body, *frames[:3]):
        found = _RESPONSE_ID.search(chunk)
        if found is not None:
            return found.group(1).decode("utf-8", "replace")
    return None
