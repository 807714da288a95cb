"""Which parser a llama-server request gets: tools, ``tool_choice``, reasoning format, schema.

Reproduces ``oaicompat_chat_params_parse`` (``tools/server/server-common.cpp@006639c3``) and the
request fields it reads, and picks the output parser: the 2026 PEG parser
(:mod:`~mockoss.profiles.llamacpp.gptoss`) or the late-2025 regex parser
(:mod:`~mockoss.profiles.llamacpp.regex_parser`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mockoss.profiles.llamacpp.gptoss import ChatMsg, build_grammar
from mockoss.profiles.llamacpp.incremental import partial_parses

__all__ = [
    "ParserChoice",
    "RequestError",
    "check_chat_params",
    "check_logprobs",
    "check_messages",
    "continuation",
    "parser_for",
]

#: ``common_reasoning_format_from_name`` accepts exactly these.
REASONING_FORMATS = ("none", "auto", "deepseek", "deepseek-legacy")
_JSON_TYPES = {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}


class RequestError(Exception):
    """The request is one llama-server rejects; ``status`` is the HTTP status it answers with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True, slots=True)
class ParserChoice:
    """The parser for one request: ``key`` identifies it for memoisation, ``parse(text, partial)``;
    ``partials(pieces)``, when set, gives the partial parse after each piece in linear time
    (:func:`.incremental.partial_parses`)."""

    key: tuple[Any, ...]
    parse: Callable[[str, bool], ChatMsg]
    partials: Callable[[Iterable[str]], Iterator[Any]] | None = None


#: What a text-only server (no ``--mmproj``) answers to a media content part: ``std::runtime_error``,
#: HTTP 500 (``oaicompat_chat_params_parse``, ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp).
_MEDIA_REFUSALS = {
    "image_url": "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
    "input_audio": "audio input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
}


def check_messages(body: Mapping[str, Any]) -> None:
    """llama-server's message checks in ``oaicompat_chat_params_parse`` (``tools/server/server-common.cpp``),
    before any template runs: a non-assistant message needs a ``content`` key, an assistant message
    a ``content`` or a ``tool_calls`` key (``null`` counts as present), and ``content`` is a
    string, ``null`` or an array. Each failure is an ``std::invalid_argument``: HTTP 400
    ``invalid_request_error``, e.g. ``Assistant message must contain either 'content' or
    'tool_calls'!`` (the client replayed a reasoning-only turn without ``content``). An array's
    parts are ``text``: an ``image_url`` or ``input_audio`` part is a 500 on a text-only server (gpt-oss
    has no projector), any other type a 400 ``unsupported content[].type``, each in its message's
    turn.

    Raises:
        RequestError: the first failing message, 400.
    """
    messages = body.get("messages")
    if not isinstance(messages, list):
        return
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        if message.get("role") != "assistant" and "content" not in message:
            raise RequestError(400, "All non-assistant messages must contain 'content'")
        if message.get("role") == "assistant":
            if "content" not in message and "tool_calls" not in message:
                raise RequestError(400, "Assistant message must contain either 'content' or 'tool_calls'!")
            if "content" not in message:
                continue
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise RequestError(400, "Expected 'content' to be a string or an array")
        for part in content if isinstance(content, list) else ():
            kind = part.get("type") if isinstance(part, Mapping) else None
            kind = kind if isinstance(kind, str) else ""
            if kind in _MEDIA_REFUSALS:  # a text-only model (no --mmproj): std::runtime_error, 500
                raise RequestError(500, _MEDIA_REFUSALS[kind])
            if kind != "text":
                raise RequestError(400, "unsupported content[].type")


def _reasoning_format(body: Mapping[str, Any], default: str) -> str:
    if "reasoning_format" not in body:
        return default
    value = body["reasoning_format"]
    if not isinstance(value, str):
        kind = "null" if value is None else _JSON_TYPES.get(type(value), "object")
        raise RequestError(500, f"[json.exception.type_error.302] type must be string, but is {kind}")
    if value not in REASONING_FORMATS:
        raise RequestError(500, f"Unknown reasoning format: {value}")  # std::runtime_error → 500
    return value


def _response_format(body: Mapping[str, Any]) -> bool:
    """Whether a JSON schema constrains the answer (``json_schema`` or ``response_format``)."""
    schema = body.get("json_schema")
    fmt = body.get("response_format")
    if isinstance(fmt, Mapping):
        kind = fmt.get("type") if isinstance(fmt.get("type"), str) else ""
        if kind in ("json_object", "json_schema"):
            return True
        if kind not in ("", "text"):
            raise RequestError(400, f'response_format type must be one of "text" or "json_object", but got: {kind}')
    return isinstance(schema, Mapping)


def check_chat_params(body: Mapping[str, Any], reasoning_format: str) -> None:
    """``oaicompat_chat_params_parse``'s checks of a chat request before its prefill and template,
    in its order (ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp): ``json_schema``
    with a non-empty ``grammar`` (500 ``Cannot use both json_schema and grammar``,
    ``std::runtime_error``); ``response_format`` (400); the messages (:func:`check_messages`);
    ``reasoning_format`` (500); tools in use (a non-empty ``tools`` list, ``tool_choice`` not
    ``"none"``) with a ``grammar`` key (400 ``Cannot use custom grammar constraints with tools.``);
    a string ``chat_template_kwargs.enable_thinking`` (400). Fields of the wrong type are read
    as absent, as ``json_value`` reads them.

    Raises:
        RequestError: the first failing check.
    """
    grammar = body.get("grammar")
    if body.get("json_schema") is not None and isinstance(grammar, str) and grammar:
        raise RequestError(500, "Cannot use both json_schema and grammar")
    _response_format(body)
    check_messages(body)
    _reasoning_format(body, reasoning_format)
    tools, choice = body.get("tools"), body.get("tool_choice")
    if (
        isinstance(tools, list)
        and tools
        and (choice if isinstance(choice, str) else "auto") != "none"
        and "grammar" in body
    ):
        raise RequestError(400, "Cannot use custom grammar constraints with tools.")
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, Mapping) and isinstance(kwargs.get("enable_thinking"), str):
        raise RequestError(400, 'invalid type for "enable_thinking" (expected boolean, got string)')


def check_logprobs(body: Mapping[str, Any]) -> None:
    """``oaicompat_chat_params_parse``'s ``logprobs`` checks, after the chat template
    (ggml-org/llama.cpp@006639c3:tools/server/server-common.cpp): ``logprobs: true`` with a
    non-empty ``tools`` array in a ``stream: true`` request (400 ``logprobs is not supported with
    tools + stream``); ``top_logprobs`` set (not ``null``) without ``logprobs: true`` (400
    ``top_logprobs requires logprobs to be set to true``; a Responses request's ``top_logprobs``
    meets it too, as the converted body keeps the field). ``json_value`` reads a non-boolean
    ``logprobs``/``stream`` as ``false``.

    Raises:
        RequestError: the first failing check, 400.
    """
    if body.get("logprobs") is True:
        tools = body.get("tools")
        if isinstance(tools, list) and tools and body.get("stream") is True:
            raise RequestError(400, "logprobs is not supported with tools + stream")
    elif body.get("top_logprobs") is not None:
        raise RequestError(400, "top_logprobs requires logprobs to be set to true")


def continuation(body: Mapping[str, Any]) -> str:
    """The text of a trailing assistant message that the gpt-oss parser continues, ``""`` if none.

    llama-server prefills a request that ends with an assistant message (``--prefill-assistant``,
    on by default): ``continue_final_message`` becomes ``AUTO`` (``oaicompat_chat_params_parse``),
    which resolves to ``REASONING`` when the message has ``reasoning_content`` and no content, else
    ``CONTENT`` (``common_chat_templates_apply``). The gpt-oss parser then reads
    ``<|start|>assistant<|channel|>analysis<|message|>{reasoning}`` and, for ``CONTENT``,
    ``<|end|><|start|>assistant<|channel|>final<|message|>{content}`` before the generated text, so
    the parsed message carries the prefilled reasoning and content (``common/parsers/gpt-oss.cpp``).
    Read in copies of those llama.cpp files found by code search (their commit could not be
    resolved); the result is checked against ggml-org/llama.cpp@0042e2079d34:tests/test-chat.cpp
    (GPT-OSS continuation cases, ``tests/conformance/upstream/test_llamacpp.py``). Returns the part
    after ``<|start|>assistant``. In a stream the prefilled text comes first, in the first deltas
    (each parse is diffed against the previous one, starting from an empty message; not observed
    on a real server). The late-2025 regex parser (``parser=regex``) gets no continuation.
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], Mapping):
        return ""
    last = messages[-1]
    if last.get("role") != "assistant":
        return ""
    reasoning = last.get("reasoning_content")
    reasoning = reasoning if isinstance(reasoning, str) else ""
    content = last.get("content")
    if isinstance(content, list):
        content = "".join(
            p.get("text", "") for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    content = content if isinstance(content, str) else ""
    prefix = "<|channel|>analysis<|message|>" + reasoning
    if content or not reasoning:
        prefix += "<|end|><|start|>assistant<|channel|>final<|message|>" + content
    return prefix


def parser_for(
    body: Mapping[str, Any],
    tool_names: tuple[str, ...],
    *,
    reasoning_format: str,
    parser: str,
    tool_call_opens: str = "recipient",
    parse_error: str = "format",
) -> ParserChoice:
    """The parser llama-server builds for ``body``.

    ``tool_choice`` is read as a string (``json_value(body, "tool_choice", "auto")``: an object,
    e.g. a named function, silently counts as ``auto``). ``reasoning_format`` comes from the
    request, else the server's ``--reasoning-format`` (``reasoning_format``). With the PEG parser,
    ``tool_call_opens`` picks the grammar (:func:`.gptoss.build_grammar`) and ``parse_error`` the
    words of a failed final parse (:func:`.gptoss.failed_parse_message`).

    Raises:
        RequestError: ``reasoning_format`` unknown or not a string (500, ``std::runtime_error``),
            unknown ``response_format.type`` (400).
    """
    fmt = _reasoning_format(body, reasoning_format)
    choice = body.get("tool_choice")
    tool_choice = choice if isinstance(choice, str) else "auto"
    extract = fmt != "none"
    schema = _response_format(body)
    if parser == "regex":
        from mockoss.profiles.llamacpp.regex_incremental import regex_partials
        from mockoss.profiles.llamacpp.regex_parser import parse_regex

        calls = bool(tool_names) and tool_choice != "none"
        return ParserChoice(
            ("regex", extract, calls),
            lambda text, partial: parse_regex(text, extract_reasoning=extract, tool_calls=calls, partial=partial),
            lambda pieces: regex_partials(pieces, extract_reasoning=extract, tool_calls=calls),
        )
    grammar = build_grammar(tool_names, tool_choice, extract, schema, tool_call_opens)
    prefill = continuation(body)
    key = ("peg", tool_names, tool_choice, extract, schema, prefill, tool_call_opens, parse_error)
    return ParserChoice(
        key,
        lambda text, partial: grammar.parse(prefill + text, partial=partial, wording=parse_error),
        lambda pieces: partial_parses(grammar, prefill, pieces),
    )
