"""llama.cpp's 2026 gpt-oss output parser (``COMMON_CHAT_FORMAT_PEG_NATIVE``), reimplemented.

Sources (ggml-org/llama.cpp):

* ``common/parsers/gpt-oss.cpp@2629d7b5`` (``common_chat_params_init_gpt_oss``): the grammar,
  rebuilt rule for rule in :func:`build_grammar`.
* ``common/chat.cpp`` (``common_chat_peg_parse``): the parser runs over
  ``generation_prompt + output`` (``<|start|>assistant`` + the generated text) with
  ``COMMON_PEG_PARSE_FLAG_LENIENT``; a failed final parse throws
  ``The model produced output that does not match the expected peg-native format``; a failed
  partial parse yields an empty message (the stream simply does not advance).
* ``common/chat-peg-parser.cpp@0082ad91`` (``common_chat_peg_mapper``): reasoning and content
  nodes are concatenated with no separator; a tool call appears once its name node is seen, with
  arguments ``"{"`` until the arguments node arrives; whitespace-only reasoning is dropped.

Earlier builds (llama.cpp b9553, ``tool_call_opens="header"``) built the grammar in
``common/chat.cpp``: :mod:`.grammar_b9553`. Their failed final parse says where it stopped
(``parse_error="position"``, :func:`failed_parse_message`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mockoss.harmony.lru import BytesLRU
from mockoss.profiles.llamacpp import peg
from mockoss.profiles.llamacpp.peg import (
    atomic,
    chars,
    choice,
    literal,
    optional,
    repeat,
    sequence,
    tag,
    until,
)

__all__ = [
    "GENERATION_PROMPT",
    "GRAMMAR_CACHE_BYTES",
    "PEG_FORMAT_ERROR",
    "ChatMsg",
    "Grammar",
    "ParseFailed",
    "blank",
    "build_grammar",
    "clear_grammar_cache",
    "failed_parse_message",
    "fold_nodes",
]

#: ``data.generation_prompt`` for gpt-oss: the prompt ends with it and the parser sees it first.
GENERATION_PROMPT = "<|start|>assistant"
#: ``common_chat_peg_parse``'s exception text for a final parse that does not match
#: (``common_chat_format_name(COMMON_CHAT_FORMAT_PEG_NATIVE)`` is ``peg-native``).
PEG_FORMAT_ERROR = "The model produced output that does not match the expected peg-native format"

_REASONING, _CONTENT, _TOOL_OPEN, _TOOL_NAME, _TOOL_ARGS = "reasoning", "content", "tool-open", "tool-name", "tool-args"
_TRAILING_SPACE = " \t\n\v\f\r"


class ParseFailed(Exception):
    """The final parse did not match the grammar; ``str(exc)`` is llama-server's message
    (:func:`failed_parse_message`: :data:`PEG_FORMAT_ERROR`, or b9553's position and rest)."""


def failed_parse_message(text: str, end: int, wording: str) -> str:
    """The exception text of a failed final parse of ``text`` (``generation_prompt`` + output)
    that stopped at character ``end`` (the root's ``result.end``).

    ``wording``: ``"format"``, :data:`PEG_FORMAT_ERROR` (``common_chat_peg_parse`` of the build the
    profile follows; ggml-org/llama.cpp#26381 shows it at b10216); ``"position"``, llama.cpp
    b9553's ``"Failed to parse input at pos " + to_string(result.end) + ": " +
    effective_input.substr(result.end)`` (Telosnex/fllama@1d28604d
    ``src/llama.cpp/common/chat.cpp:2529``, checked by tests/golden/llamacpp-b9553): ``N`` counts
    UTF-8 bytes (C++ ``std::string``), the rest is the input from there to its end.
    """
    if wording == "position":
        return f"Failed to parse input at pos {len(text[:end].encode())}: {text[end:]}"
    return PEG_FORMAT_ERROR


@dataclass(frozen=True, slots=True)
class ChatMsg:
    """``common_chat_msg`` as the mapper builds it.

    Attributes:
        content: concatenated content nodes (final, preambles; with ``reasoning_format: none``
            also the analysis messages with their markup).
        reasoning_content: concatenated analysis texts (empty when whitespace only).
        tool_calls: ``(name, arguments)`` per call, arguments as raw JSON text.
    """

    content: str = ""
    reasoning_content: str = ""
    tool_calls: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.content or self.reasoning_content or self.tool_calls)


def _fold(text: str, nodes: list[peg.Node]) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """:func:`_map` before its last step: content, reasoning with whitespace-only kept, calls."""
    reasoning: list[str] = []
    content: list[str] = []
    calls: list[list[str]] = []
    pending: list[str] | None = None
    current: list[str] | None = None
    for name, start, end in nodes:
        piece = text[start:end]
        if name == _REASONING:
            reasoning.append(piece)
        elif name == _CONTENT:
            content.append(piece)
        elif name == _TOOL_OPEN:
            pending = current = ["", ""]
        elif name == _TOOL_NAME and current is not None:
            current[0] = piece.rstrip(_TRAILING_SPACE)
            if not current[1]:
                current[1] = "{"
            if pending is not None:
                calls.append(pending)
                pending = None
        elif name == _TOOL_ARGS and current is not None and current[0]:
            args = piece.rstrip(_TRAILING_SPACE)
            if args.startswith("{"):
                current[1] = args
    return "".join(content), "".join(reasoning), tuple((n, a) for n, a in calls)


def _map(text: str, nodes: list[peg.Node]) -> ChatMsg:
    """``common_chat_peg_mapper::from_ast`` for the tags the gpt-oss grammar uses."""
    content, reasoning, calls = _fold(text, nodes)
    return ChatMsg(content, reasoning if not blank(reasoning) else "", calls)


def blank(reasoning: str) -> bool:
    """The mapper drops reasoning made of these characters only."""
    return not reasoning.strip(" \n\r\t")


#: :func:`_fold` for :mod:`.incremental`, which maps the nodes of completed messages once.
fold_nodes = _fold


@dataclass(frozen=True, slots=True)
class Grammar:
    """The parser built for one request shape (declared tools, ``tool_choice``, reasoning format)."""

    root: peg.Parser
    #: The message ``root`` repeats first: ``root`` is ``sequence(repeat(message), …)``, so it
    #: parses from a point between two repetitions as from the start (:mod:`.incremental`).
    message: peg.Parser | None = None

    def parse(self, generated: str, *, partial: bool, wording: str = "format") -> ChatMsg:
        """``common_chat_peg_parse`` over ``<|start|>assistant`` + ``generated``.

        Partial parses never raise: a mismatch gives an empty :class:`ChatMsg` (llama-server keeps
        the previous message; b9553 maps the failed result, which holds no nodes: the same). A
        final parse that fails raises :class:`ParseFailed` worded as ``wording`` says
        (:func:`failed_parse_message`).
        """
        text = GENERATION_PROMPT + generated
        kind, end, nodes = self.root(text, 0)
        if kind == peg.FAIL:
            if partial:
                return ChatMsg()
            raise ParseFailed(failed_parse_message(text, end, wording))
        return _map(text, nodes)


#: Byte budget of the built grammars (:func:`build_grammar`): ~60 KB for 20 tools, so about 130
#: request shapes of an agent's size; a grammar bigger than the whole budget is built every time.
GRAMMAR_CACHE_BYTES = 8 * 1024 * 1024
#: A grammar's bytes: this much, plus :data:`_GRAMMAR_TOOL_BYTES` and the name's characters per
#: tool (measured with tracemalloc: ~12 KB without tools, ~2.2 KB a tool besides its name).
_GRAMMAR_BASE_BYTES = 16 * 1024
_GRAMMAR_TOOL_BYTES = 2560
_grammars: BytesLRU[Grammar] = BytesLRU(GRAMMAR_CACHE_BYTES)


def clear_grammar_cache() -> None:
    """Forget every built grammar (``MockServer.reset``, through
    :func:`mockoss.harmony.prompt.caches.clear_caches`)."""
    _grammars.clear()


def build_grammar(
    tools: tuple[str, ...],
    tool_choice: str,
    extract_reasoning: bool,
    response_format: bool = False,
    tool_call_opens: str = "recipient",
) -> Grammar:
    """``common_chat_params_init_gpt_oss``'s parser, built once per request shape and kept in a
    cache of :data:`GRAMMAR_CACHE_BYTES` (an ``lru_cache`` of 256 grammars, keyed by the whole
    tool-name tuple, held ~8 MB for each request declaring 2,000 tools with 2 KB names, whatever
    reset did: issue 9 review, the breaker's finding 9). ``tool_choice`` is kept as the grammar
    reads it (``"none"``, ``"required"``, else ``"auto"``), so an unknown value of any length
    shares ``"auto"``'s grammar. Args and grammar: :func:`_build_grammar`; ``tool_call_opens``
    ``"header"`` builds llama.cpp b9553's grammar instead (:func:`.grammar_b9553.build_b9553`).
    """
    choice = tool_choice if tool_choice == "none" or tool_choice == "required" else "auto"
    key = (tools, choice, extract_reasoning, response_format, tool_call_opens)
    grammar = _grammars.get(key)
    if grammar is None:
        if tool_call_opens == "header":
            from mockoss.profiles.llamacpp.grammar_b9553 import build_b9553  # (only when a request asks for b9553)

            built = Grammar(*build_b9553(tools, choice, extract_reasoning, response_format))
        else:
            built = _build_grammar(tools, choice, extract_reasoning, response_format)
        grammar = _grammars.put(
            key,
            built,
            _GRAMMAR_BASE_BYTES + _GRAMMAR_TOOL_BYTES * len(tools) + 4 * sum(map(len, tools)),
        )
    return grammar


def _build_grammar(
    tools: tuple[str, ...], tool_choice: str, extract_reasoning: bool, response_format: bool = False
) -> Grammar:
    """Build ``common_chat_params_init_gpt_oss``'s parser.

    Args:
        tools: declared function names, in request order (``foreach_function``).
        tool_choice: ``"auto"``, ``"none"`` or ``"required"`` (anything else counts as ``auto``).
        extract_reasoning: ``reasoning_format != none``; when false, analysis messages (with
            their ``<|channel|>analysis<|message|>`` … ``<|end|>`` markup) become content.
        response_format: a JSON schema was requested (``response_format`` / ``json_schema``).

    Grammar: ``(start any)* (tool_call | start final)`` with tools and ``tool_choice != none``
    (no ``start final`` branch for ``required``); ``(start analysis)* start response_format``
    with a response format; else ``(start any)* start (final | unsolicited)``, where
    ``unsolicited`` consumes a call to any recipient and drops it.
    """
    start_assistant = sequence(literal("<|start|>"), literal("assistant"))
    end = literal("<|end|>")
    content = until("<|end|>")
    channel = sequence(literal("<|channel|>"), choice(literal("commentary"), literal("analysis")))
    constrain_type = chars("[A-Za-z0-9_-]", 1, -1)
    constraint = optional(sequence(peg.space(), optional(literal("<|constrain|>")), constrain_type))
    stray = optional(sequence(literal("<|channel|>"), literal("commentary"), optional(literal(" to=assistant"))))
    start_analysis = sequence(stray, literal("<|channel|>"), literal("analysis"), literal("<|message|>"))
    if extract_reasoning:
        analysis = sequence(start_analysis, tag(_REASONING, content), end)
    else:
        analysis = tag(_CONTENT, sequence(start_analysis, content, end))
    preamble = sequence(literal("<|channel|>"), literal("commentary"), literal("<|message|>"), tag(_CONTENT, content), end)
    final = sequence(stray, literal("<|channel|>"), literal("final"), literal("<|message|>"), tag(_CONTENT, content))
    unsolicited = atomic(sequence(optional(channel), literal(" to="), content, end))
    any_message = choice(preamble, analysis)

    if response_format:
        formatted = sequence(
            literal("<|channel|>"), literal("final"), constraint, literal("<|message|>"), tag(_CONTENT, peg.json_value)
        )
        leading = sequence(start_assistant, analysis)
        return Grammar(sequence(repeat(leading), start_assistant, formatted), leading)

    if tools and tool_choice != "none":
        args = tag(_TOOL_ARGS, peg.json_value)
        in_role = choice(
            *(
                sequence(tag(_TOOL_NAME, literal(name)), channel, constraint, literal("<|message|>"), args)
                for name in tools
            )
        )
        in_channel = choice(
            *(sequence(tag(_TOOL_NAME, literal(name)), constraint, literal("<|message|>"), args) for name in tools)
        )
        to_functions = tag(_TOOL_OPEN, literal(" to=functions."))
        tool_call = choice(
            sequence(start_assistant, to_functions, in_role),
            sequence(start_assistant, channel, to_functions, in_channel),
        )
    message = sequence(start_assistant, any_message)
    prefix = repeat(message)
    if tools and tool_choice != "none":
        if tool_choice == "required":
            return Grammar(sequence(prefix, tool_call), message)
        return Grammar(sequence(prefix, choice(tool_call, sequence(start_assistant, final))), message)
    return Grammar(sequence(prefix, start_assistant, choice(final, unsolicited)), message)
