"""Prompt token counts for Ollama (``prompt_eval_count``, ``prompt_tokens``, generate's ``context``).

Ollama (``ollama/ollama@fb3076099``) renders a gpt-oss prompt with the model's Go template
(:mod:`mockoss.profiles.ollama.render`) and hands the text to its llama-server runner as
``/completion``'s prompt string, which tokenizes it with special tokens parsed and no BOS (the
gpt-oss GGUF's ``tokenizer.ggml.add_bos_token`` is false, ``convert/convert_gptoss.go:71-80``); the
count it reports is ``cache_n + prompt_n``, the whole prompt (``llm/llama_server.go:1511-1513``).
mockoss encodes the text with openai-harmony's o200k_harmony (``allowed_special="all"``): the gpt-oss
GGUF's vocabulary is the HF ``openai/gpt-oss-20b`` tokenizer's, o200k_harmony (``tokenizer.ggml.pre``
``gpt-4o``, the o200k pre-tokenizer; special ids 199998 ``<|startoftext|>``, 199999, 200002, 200012
as openai-harmony numbers them).

What each route gives the template:

* ``/api/chat``: the messages as sent, the declared tools renamed by the harmony parser's ``Init``
  (``FunctionNameMap``, ``harmony/harmonyparser.go:393-427``), ``think`` (unset → ``true`` for a
  thinking model, ``server/routes.go:2616-2620``; ``"max"`` → ``"high"``, :2662-2668).
* ``/api/generate``: ``system`` then the user's ``prompt``, no tools, ``think`` as above
  (``server/routes.go:424-455``, :494-610); ``raw`` sends ``prompt`` as it is. A ``context`` is
  detokenized and written in front of the rendered text (:func:`_context_ids`).
* ``/v1/chat/completions``: ``openai.FromChatRequest``'s messages (:func:`openai_chat_messages`),
  ``reasoning_effort`` as ``thinkFromReasoningEffort`` maps it (``openai/openai.go:531-546``;
  :mod:`~mockoss.profiles.ollama.effort`).
* ``/v1/responses``: ``openai.FromResponsesRequest``'s (:mod:`~mockoss.profiles.ollama.prompt_responses`).

Ollama truncates a prompt longer than ``num_ctx`` by dropping leading messages
(``server/prompt.go:35-74``); mockoss does not. A request the port does not cover
(:class:`~mockoss.profiles.ollama.render.Unported`) is counted by the former approximation: the
equivalent Chat Completions body rendered by openai-harmony (:func:`_approximate_chat`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from mockoss.body_counts import body_count
from mockoss.harmony.encoding import encode_text, load_encoding
from mockoss.harmony.prompt import render_chat_prompt
from mockoss.profiles.ollama.effort import requested, think_of
from mockoss.profiles.ollama.parser import FunctionNameMap
from mockoss.profiles.ollama.render import Message, Unported, render_template

__all__ = [
    "native_chat_prompt_text",
    "openai_chat_messages",
    "openai_chat_prompt_text",
    "openai_prompt_tokens",
    "render_native_chat_prompt",
    "render_native_generate_prompt",
    "render_ollama_responses_prompt",
    "render_openai_chat_prompt",
    "responses_prompt_text",
]


def _think(value: Any) -> bool | str:
    """A native ``think`` as the template gets it: unset → ``True``; ``"max"`` → ``"high"``."""
    if value is None:
        return True
    return "high" if value == "max" else value  # type: ignore[no-any-return]


def _tools(tools: Any) -> list[tuple[Mapping[str, Any], str]]:
    """The declared tools with the names the prompt shows (``Init``'s ``processedTools``)."""
    names = FunctionNameMap()
    out = []
    for tool in tools or ():
        if not isinstance(tool, Mapping):
            continue
        function = tool.get("function") if isinstance(tool.get("function"), Mapping) else {}
        name = str(function.get("name") or "")
        out.append((tool, names.add(name) if name else name))
    return out


def _native_message(message: Any) -> Message | None:
    if not isinstance(message, Mapping):
        return None
    calls = [
        (str((call.get("function") or {}).get("name") or ""), (call.get("function") or {}).get("arguments"))
        for call in message.get("tool_calls") or ()
        if isinstance(call, Mapping)
    ]
    return Message(
        str(message.get("role") or ""),
        str(message.get("content") or ""),
        str(message.get("thinking") or ""),
        calls,
        str(message.get("tool_name") or ""),
    )


def native_chat_prompt_text(body: Mapping[str, Any]) -> str:
    """The prompt text Ollama renders for a ``POST /api/chat`` body (see the module docstring).

    Raises:
        Unported: a prompt the port does not write."""
    messages = [m for m in map(_native_message, body.get("messages") or []) if m is not None]
    return render_template(messages, _tools(body.get("tools")), _think(body.get("think")))


def _tool_call(call: Any) -> tuple[str, Any]:
    """``FromCompletionToolCall``: the name, and the arguments string decoded (JSON)."""
    function = call.get("function") if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping) else {}
    arguments = function.get("arguments")
    try:
        decoded = json.loads(arguments) if isinstance(arguments, str) else arguments
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's decoder goes
        raise Unported(
            "tool call arguments that are not JSON (Ollama answers 400), or too deep to decode here"
        ) from None
    return str(function.get("name") or ""), decoded


def openai_chat_messages(body: Mapping[str, Any]) -> list[Message]:
    """``openai.FromChatRequest``'s messages (openai/openai.go:549-637): a string content is one
    message (with ``reasoning`` as thinking, the tool calls, and for ``tool`` the ``name`` or the
    name of the call its ``tool_call_id`` answers, last such call winning, :724-736); a list gives
    one message per text part, the last carrying the tool calls, name and reasoning; no content
    gives the tool calls and reasoning alone (and no tool name).

    A field of a type Go does not decode (``Message.tool_calls`` not a list, ``function`` not an
    object, ...) is refused before the count (:mod:`~mockoss.profiles.ollama.go_decode`); here
    it is left out.

    Raises:
        Unported: parts other than text, or arguments that are not JSON."""
    listed = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    out: list[Message] = []
    names: dict[Any, str] | None = None
    for message in listed:
        role, reasoning = str(message.get("role") or ""), str(message.get("reasoning") or "")
        name = ""
        if role.lower() == "tool":
            name = str(message.get("name") or "")
            if not name and message.get("tool_call_id"):
                names = _call_names(listed) if names is None else names
                name = names.get(message.get("tool_call_id"), "")
        calls = [_tool_call(call) for call in _calls(message)]
        content = message.get("content")
        if isinstance(content, str):
            out.append(Message(role, content, reasoning, calls, name))
        elif isinstance(content, list):
            for part in content:
                if not isinstance(part, Mapping) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                    raise Unported("content parts other than text")
                out.append(Message(role, part["text"]))
            if out and calls:
                out[-1] = Message(out[-1].role, out[-1].content, reasoning, calls, name)
        else:
            out.append(Message(role, "", reasoning, calls))
    return out


def _calls(message: Mapping[str, Any]) -> list[Any]:
    calls = message.get("tool_calls")
    return calls if isinstance(calls, list) else []


def _call_names(messages: list[Mapping[str, Any]]) -> dict[Any, str]:
    """Call id → function name over every message's tool calls, the last call of an id winning:
    ``nameFromToolCallID`` (``openai/openai.go:724-736``, scanning backwards for each tool
    message) in one pass (the per-message scan was quadratic in the tool results: t18 fuzz F6)."""
    names: dict[Any, str] = {}
    for message in messages:
        for call in _calls(message):
            if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                function = call.get("function")
                names[call["id"]] = str(function.get("name") or "") if isinstance(function, Mapping) else ""
    return names


def openai_chat_prompt_text(body: Mapping[str, Any]) -> str:
    """The prompt text Ollama renders for a ``POST /v1/chat/completions`` body.

    Raises:
        Unported: a prompt the port does not write."""
    think = think_of(requested("chat", body))
    return render_template(openai_chat_messages(body), _tools(body.get("tools")), think)


def responses_prompt_text(body: Mapping[str, Any]) -> str:
    """The prompt text Ollama renders for a ``POST /v1/responses`` body
    (:mod:`~mockoss.profiles.ollama.prompt_responses`; ``reasoning.effort`` as for chat).

    Raises:
        Unported: a prompt the port does not write."""
    from mockoss.profiles.ollama.prompt_responses import responses_messages, responses_tools

    think = think_of(requested("responses", body))
    return render_template(responses_messages(body), _tools(responses_tools(body)), think)


def render_ollama_responses_prompt(body: Mapping[str, Any]) -> list[int]:
    """Prompt token ids for a ``POST /v1/responses`` body (see :func:`responses_prompt_text`)."""
    try:
        return _encode(responses_prompt_text(body))
    except Unported:
        from mockoss.harmony.prompt import render_responses_prompt

        return render_responses_prompt(body)


#: The kinds of :func:`mockoss.body_counts.body_count` under which the OpenAI layer's counts are kept.
_KINDS = {"chat": "ollama.openai.chat", "responses": "ollama.openai.responses"}


def openai_prompt_tokens(endpoint: str, body: Any, counted: int | Callable[[], int], raw: bytes = b"") -> int:
    """The prompt count Ollama reports on its OpenAI layer (``usage.prompt_tokens`` of
    ``/v1/chat/completions``, ``usage.input_tokens`` of ``/v1/responses``, ``endpoint`` ``"chat"``
    or ``"responses"``): its own prompt encoded, kept under the body's bytes ``raw`` in the
    whole-body count cache (:func:`mockoss.body_counts.body_count`: its byte budget, admission
    from a body's second sending on, and ``MockServer.reset``; a resent body then costs a lookup).
    ``counted`` (mockoss's Harmony count of the body, the former approximation) is the answer for
    a body that is not a JSON object or whose prompt the port does not write (:class:`Unported`);
    a function giving it (the server core's, :func:`mockoss.server.profile_hooks.prompt_count`) is
    called only then."""
    if not isinstance(body, Mapping):
        return counted() if callable(counted) else counted
    last = _LAST.get()
    if last is not None and last[0] is body and last[1] == endpoint:
        return last[2]  # the server core's count of this request (OllamaProfile.own_prompt_tokens), then surface's
    text = openai_chat_prompt_text if endpoint == "chat" else responses_prompt_text

    def count() -> int:
        try:
            return len(_encode(text(body)))
        except Unported:
            return counted() if callable(counted) else counted  # (a function of the same bytes: exact to keep)

    found = body_count(_KINDS[endpoint], raw, count) if raw else count()
    _LAST.set((body, endpoint, found))
    return found


#: The last body counted by :func:`openai_prompt_tokens` in this context (held, compared by
#: identity: a parsed body is never modified), its endpoint and count: the server core's count and
#: the surface's of one request encode the prompt once. A context variable, not a global: a big
#: request counted before the server lock (:mod:`mockoss.server.prelock`, on its own thread's
#: copy of the context) finds its count under the lock although small requests were counted
#: meanwhile on other threads (a global was overwritten by them, and the prompt encoded again in
#: process, under the lock: the t18 fuzz stall F5).
_LAST: ContextVar[tuple[Any, str, int] | None] = ContextVar("mockoss_ollama_last_count", default=None)


def _encode(text: str) -> list[int]:
    """``text``'s ids (special-token strings as special tokens), by
    :func:`mockoss.harmony.encoding.encode_text`: in the HTTP layer's prompt worker process when
    it set :data:`~mockoss.harmony.encoding.ENCODE_ELSEWHERE` (a big request counted before the
    server lock, :mod:`mockoss.server.prelock`: openai-harmony's BPE is quadratic in a word's
    length and holds the GIL, one 30,000-character word ~1.1 s of every other client's time; t18
    fuzz F5); the same ids either way."""
    return encode_text(text)


def render_openai_chat_prompt(body: Mapping[str, Any]) -> list[int]:
    """Prompt token ids for a ``POST /v1/chat/completions`` body (see the module docstring)."""
    try:
        return _encode(openai_chat_prompt_text(body))
    except Unported:
        return render_chat_prompt(body)


def _effort(think: Any) -> str | None:
    if think in ("low", "medium", "high"):
        return str(think)
    return "high" if think == "max" else None


def _message(message: Any) -> dict[str, Any] | None:
    if not isinstance(message, Mapping):
        return None
    out: dict[str, Any] = {"role": str(message.get("role") or "").lower(), "content": message.get("content") or ""}
    if message.get("thinking"):
        out["reasoning"] = message["thinking"]
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [
            {
                "id": call.get("id") or f"call_{index}",
                "type": "function",
                "function": {
                    "name": (call.get("function") or {}).get("name", ""),
                    "arguments": json.dumps((call.get("function") or {}).get("arguments") or {}),
                },
            }
            for index, call in enumerate(calls)
            if isinstance(call, Mapping)
        ]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    return out


def _approximate_chat(body: Mapping[str, Any]) -> list[int]:
    """The former approximation: the native body as a Chat Completions body, rendered by
    openai-harmony (``thinking`` → ``reasoning``, arguments as JSON strings, ``think`` levels as
    ``reasoning_effort``)."""
    messages = [m for m in map(_message, body.get("messages") or []) if m is not None]
    chat: dict[str, Any] = {"messages": messages or [{"role": "user", "content": ""}]}
    if body.get("tools"):
        chat["tools"] = body["tools"]
    if (effort := _effort(body.get("think"))) is not None:
        chat["reasoning_effort"] = effort
    return render_chat_prompt(chat)


def render_native_chat_prompt(body: Mapping[str, Any]) -> list[int]:
    """Prompt token ids for a ``POST /api/chat`` body (see the module docstring)."""
    try:
        return _encode(native_chat_prompt_text(body))
    except Unported:
        return _approximate_chat(body)


def render_native_generate_prompt(body: Mapping[str, Any]) -> list[int]:
    """Prompt token ids for a ``POST /api/generate`` body (see the module docstring)."""
    prompt = str(body.get("prompt") or "")
    if body.get("raw"):
        return _encode(prompt)
    messages = [Message("system", str(body["system"]))] if body.get("system") else []
    messages.append(Message("user", prompt))
    return _context_ids(body.get("context")) + _encode(render_template(messages, [], _think(body.get("think"))))


def _context_ids(context: Any) -> list[int]:
    """A ``/api/generate`` request's ``context`` (deprecated), as the prompt's first tokens.

    Ollama detokenizes it and writes the text in front of the rendered prompt, which it then
    tokenizes whole (``ollama/ollama@fb307609:server/routes.go``, ``GenerateHandler``: ``if
    req.Context != nil { … r.Detokenize(…, req.Context) … b.WriteString(s) }``, then ``prompt =
    b.String()`` after the rendered prompt). mockoss keeps the ids as given: the same tokens for a
    context that was itself a tokenization (what Ollama answered the turn before), and no second
    tokenization whose cost could grow with a word's length. A context holding an id the
    vocabulary lacks is left out (what Ollama's detokenizer does with one is not documented)."""
    if not context or not isinstance(context, list):
        return []
    try:
        load_encoding().decode(context)  # checks every id; linear in their number
    except Exception:  # noqa: BLE001  (an id out of the vocabulary: openai-harmony's HarmonyError)
        return []
    return list(context)
