"""From a scripted completion to what Ollama's chat handler produces, callback by callback.

Ollama runs gpt-oss on llama-server and reads its ``/completion`` stream (``llm/llama_server.go``
``Completion``, ``ollama/ollama@fb307609``): one callback per token whose text is non-empty, then a
final ``Done`` callback with empty text, ``done_reason`` (``stop``, or ``length`` at the token limit)
and the counts. llama-server renders a special token as text only when it is one of the parser's
preserved tokens (``<|start|> <|end|> <|message|> <|channel|> <|constrain|>``); other special tokens
render as nothing. Generation ends after the first end-of-generation token of the gpt-oss vocabulary,
``<|return|>``, ``<|call|>`` or ``<|endoftext|>`` (llama.cpp b9553 ``src/llama-vocab.cpp:2750-2856``,
the EOG set of o200k_harmony, read at Telosnex/fllama@1d28604d), or at ``num_predict`` tokens; a
script with none of them ends with the ``<|endoftext|>`` the scripted engine emits when it runs out
(:func:`engine_completion`, mockoss's modelling choice, as for vLLM), which ``eval_count`` counts. A token
that ends inside a UTF-8 sequence is held back until the sequence completes.

Each callback's text goes through :class:`~mockoss.profiles.ollama.parser.MessageHandler`; the chat
handler (``server/routes.go`` ``ChatHandler``) sends a response for a callback only when it carries
content, thinking or tool calls, or is the ``Done`` one. :func:`run` records that sequence once per
``(completion, max_tokens, tool names, prefill)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from openai_harmony import HarmonyError

from mockoss.harmony import Completion
from mockoss.harmony.completion import CALL, RETURN, Memo
from mockoss.harmony.encoding import FIRST_SPECIAL, load_encoding
from mockoss.profiles.llama_server import END_OF_TEXT, engine_cap, engine_completion
from mockoss.profiles.ollama.parser import MessageHandler, ParsedToolCall, ToolCallError
from mockoss.profiles.ollama.repeat import REPEAT_ERROR, limit_of, repeat_abort

__all__ = ["END_OF_TEXT", "Chunk", "Generation", "Prefill", "engine_completion", "limit", "pieces", "run"]

#: Token ids llama-server renders as text for Ollama's harmony parser (``PreservedTokens``):
#: ``<|constrain|> <|channel|> <|start|> <|end|> <|message|>``.
PRESERVED = frozenset({200003, 200005, 200006, 200007, 200008})

Prefill = Literal["final", "analysis"] | None


def limit(completion: Completion, max_tokens: int | None) -> int | None:
    """``max_tokens`` as a memo key: :func:`mockoss.profiles.llama_server.engine_cap`."""
    return engine_cap(completion, max_tokens)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One response the chat handler sends before ``Done``.

    Attributes:
        position: index of the emitted token whose callback produced it (0-based).
        content: ``message.content`` of that response.
        thinking: ``message.thinking`` of that response.
    """

    position: int
    content: str
    thinking: str


@dataclass(frozen=True, slots=True)
class Generation:
    """Everything Ollama's handler derives from one completion for one kind of request.

    Attributes:
        chunks: the responses sent before the ``Done`` one.
        final_content, final_thinking: what the ``Done`` callback itself carries (usually empty).
        tool_call: the parsed tool call (sent on the ``Done`` response), else ``None``.
        error: ``error parsing tool call: raw='…', err=…`` when the tool call did not decode (the
            ``Done`` response is then replaced by the error), else ``None``.
        error_cause: the bare Go error (what Ollama 0.11.3 sent under its wrong key), else ``None``.
        done_reason: ``stop``, or ``length`` when cut at the token limit.
        eval_count: tokens generated, the stop token included (llama-server's ``predicted_n``).
        content, thinking: the concatenations a non-streamed reply carries.
        log: the warnings Ollama logs while parsing.
        pieces: the text of each callback, in order (the raw completion as Ollama sees it).
        aborted: the runner's token-repeat abort cut it (:mod:`~mockoss.profiles.ollama.repeat`):
            the pieces before the aborting event were delivered, no ``Done`` callback (with
            ``token_repeat="30-incomplete"`` no error either: ``eval_count`` is then the position
            of the last chunk + 1, for the clock; the replies report no counts).
        memo: per-generation caches of the writers (encoded chunks, reply templates keyed on the
            request's echoed fields), keyed by writer: a :class:`~mockoss.harmony.completion.Memo`,
            bounded in entries and bytes like the completion's own.
    """

    chunks: tuple[Chunk, ...]
    final_content: str
    final_thinking: str
    tool_call: ParsedToolCall | None
    error: str | None
    error_cause: str | None
    done_reason: Literal["stop", "length"]
    eval_count: int
    content: str
    thinking: str
    log: tuple[str, ...]
    pieces: tuple[tuple[int, str], ...]
    aborted: bool = False
    memo: dict[object, object] = field(default_factory=Memo, compare=False, hash=False, repr=False)


def pieces(tokens: tuple[int, ...], *, preserved: frozenset[int] = PRESERVED) -> list[tuple[int, str]]:
    """The ``(token index, text)`` of each llama-server callback for ``tokens``.

    ``<|return|>``/``<|call|>`` end the list; special tokens outside ``preserved`` have no text; a
    token that leaves a UTF-8 sequence open waits for the tokens that complete it (a sequence still
    open at the end is dropped; one interrupted by a special token is sent as U+FFFD).
    """
    encoding = load_encoding()
    out: list[tuple[int, str]] = []
    pending: list[int] = []
    for index, token in enumerate(tokens):
        if token in (RETURN, CALL):
            break
        if token >= FIRST_SPECIAL:
            if token not in preserved:
                continue
            if pending:  # an unfinished character before a special token: sent as U+FFFD
                out.append((index - 1, encoding.decode(pending)))
                pending.clear()
        pending.append(token)
        try:
            text = encoding.decode_utf8(pending)
        except HarmonyError:
            continue  # inside a multi-byte character
        pending.clear()
        if text:
            out.append((index, text))
    return out


def run(
    completion: Completion,
    max_tokens: int | None,
    tool_names: tuple[str, ...],
    prefill: Prefill,
    token_repeat: str = "30-incomplete",
) -> Generation:
    """Feed ``completion`` (as emitted under ``max_tokens``) through Ollama's harmony handler.

    ``tool_names`` are the declared function names in request order (they drive the name mapping);
    ``prefill`` is ``"final"``/``"analysis"`` when the request ends with an assistant message that
    has content/only thinking; ``token_repeat`` the profile's switch (the runner's repeat abort,
    :mod:`~mockoss.profiles.ollama.repeat`). Cached on the completion.
    """
    # every limit that does not cut the answer shares one entry (Completion.cap)
    max_tokens = limit(completion, max_tokens)
    key = ("ollama.generation", max_tokens, tool_names, prefill, token_repeat)
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = engine_completion(completion).emit(max_tokens)
    handler = MessageHandler.for_request(tool_names, prefill)
    chunks: list[Chunk] = []
    texts = pieces(emission.tokens)
    abort = repeat_abort(emission.tokens, texts, PRESERVED, limit_of(token_repeat))
    if abort is not None:
        texts = [(index, text) for index, text in texts if index < abort]
    for index, text in texts:
        content, thinking, _ = handler.add(text, False)
        if content or thinking:
            chunks.append(Chunk(index, content, thinking))
    error = cause = None
    final_content = final_thinking = ""
    call: ParsedToolCall | None = None
    if abort is not None:  # llm/llama_server.go:1692-1702: no Done callback
        if token_repeat == "100-error":
            error = cause = REPEAT_ERROR
    else:
        try:
            final_content, final_thinking, call = handler.add("", True)
        except ToolCallError as exc:
            error, cause = str(exc), exc.cause
    eval_count = len(emission.tokens)
    if abort is not None:
        eval_count = chunks[-1].position + 1 if chunks else 0
    generation = Generation(
        chunks=tuple(chunks),
        final_content=final_content,
        final_thinking=final_thinking,
        tool_call=call,
        error=error,
        error_cause=cause,
        done_reason="length" if emission.finish_reason == "length" else "stop",
        eval_count=eval_count,
        content="".join(c.content for c in chunks) + final_content,
        thinking="".join(c.thinking for c in chunks) + final_thinking,
        log=tuple(handler.log),
        pieces=tuple(texts),
        aborted=abort is not None,
    )
    completion._memo[key] = generation
    return generation
