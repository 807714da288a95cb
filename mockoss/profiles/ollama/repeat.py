"""Ollama's token-repeat abort: where its runner stops reading a repeating llama-server stream.

``ollama/ollama@fb3076099:llm/llama_server.go:1692-1702`` (``llamaServerRunner.Completion``)
compares each ``/completion`` stream event's ``strings.TrimSpace(content)`` with the previous
one's and counts the equal ones in a row (``lastToken`` starts as ``""``); when the count passes
30 it returns ``ctx.Err()``, which is nil: no error and no ``Done`` callback, so the reply ends
where it is and looks like a success. The events counted are all of llama-server's: one per
generated token whose UTF-8 is complete, including the control tokens it renders as nothing
(``""``) and whitespace-only pieces (they trim to ``""``), then the stop event (content ``""``).
A run of 32 equal pieces (whitespace-only ones are equal) is cut after the 31st: 31 are sent.

ollama/ollama#18374 (merged 2026-09-10) raises the limit to 100 and returns ``prediction aborted,
token repeat limit reached`` as an error (HTTP 500 non-streamed; an error line once streaming
started): the switch ``token_repeat="100-error"``. Not on the Ollama timeline: the first release
with it is 0.34.1 only by third-party notes (quoting ``tokenRepeat > 100`` in 0.34.1 and v0.40.0),
not read in Ollama's tags (the mirror ends at v0.33.0-rc2), and the timeline's newest release is
the profile's defaults, which follow fb3076099.

The merged code (read at ``ollama/ollama@00f6d620:llm/llama_server.go``, ``llamaServerRunner.Completion``,
its "Token repeat detection" switch; the mirror of Ollama here ends before the merge) is
``if tokenRepeat > 100 { slog.Debug(…); return fmt.Errorf("prediction aborted, token repeat limit
reached") }``, checked before the event's ``fn(resp)`` as before: the aborting event is not
delivered. The routes answer a runner error as any other (``server/routes.go@fb3076099``:
``ChatHandler``/``GenerateHandler`` send ``gin.H{"error": err.Error()}``; ``streamResponse`` writes
it as HTTP 500 JSON before any line, else as the last NDJSON line; the ``/v1`` writers turn the
500 into the OpenAI error and read a later line as an empty response). With
``tool_call_error="v0.11.3"`` too, that shape still wins: Ollama 0.11.3 put only the tool-call
parse's error under the wrong key (``server/routes.go@v0.11.3``: ``ChatHandler`` :1658,
``GenerateHandler`` :367), and sent a runner's error as ``{"error": …}`` (:1703, :405); the parse
never runs on an aborted generation (no ``Done`` callback). See :func:`wrong_key`.
"""

from __future__ import annotations

from collections.abc import Sequence

from mockoss.harmony.encoding import FIRST_SPECIAL

__all__ = ["GO_SPACE", "REPEAT_ERROR", "REPEAT_NOTE", "limit_of", "repeat_abort", "trim_space", "wrong_key"]

#: What Go's ``unicode.IsSpace`` trims (``strings.TrimSpace``): not Python's ``\\x1c``-``\\x1f``.
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
#: The error of ollama/ollama#18374 (``fmt.Errorf`` in ``llm/llama_server.go``).
REPEAT_ERROR = "prediction aborted, token repeat limit reached"

#: The request-log line (``RecordedRequest.server_log``) of a reply the abort cut without an error.
#: Ollama itself logs ``prediction aborted, token repeat limit reached`` at debug level only.
REPEAT_NOTE = (
    "mockoss: the reply stops here without its done response: Ollama's runner saw more than 30 equal "
    "stream events in a row (strings.TrimSpace of the content) and returned no error "
    "(llm/llama_server.go:1692-1702, ollama/ollama@fb3076099; ollama/ollama#18374 made it an error)"
)


def trim_space(text: str) -> str:
    """Go's ``strings.TrimSpace``: ``text`` without leading and trailing Unicode white space."""
    return text.strip(GO_SPACE)


def limit_of(token_repeat: str) -> int:
    """The repeat count past which the runner aborts: 30 (fb3076099), 100 (#18374)."""
    return 100 if token_repeat == "100-error" else 30


def wrong_key(tool_call_error: str, error: str) -> bool:
    """Whether a failed generation's ``error`` takes Ollama 0.11.3's wrong-key shape under the
    profile's ``tool_call_error`` switch (streamed ``{"error parsing tool call": …}``, non-streamed
    ``unexpected error format in response``): only the tool-call parse's error does; the runner's
    repeat abort (:data:`REPEAT_ERROR`) is ``{"error": …}`` in every version (see the module
    docstring: ``server/routes.go@v0.11.3`` :1658 and :367 against :1703 and :405)."""
    return tool_call_error == "v0.11.3" and error != REPEAT_ERROR


def repeat_abort(
    tokens: Sequence[int], texts: Sequence[tuple[int, str]], preserved: frozenset[int], limit: int
) -> int | None:
    """The index of the token whose stream event makes Ollama's runner abort, else ``None``.

    Args:
        tokens: the generated token ids, as emitted (ends with the end-of-generation token, or cut
            at the token limit).
        texts: the ``(token index, text)`` pieces of :func:`~mockoss.profiles.ollama.generation.pieces`
            (the events with text).
        preserved: the special tokens llama-server renders as text; the others send ``""``.
        limit: 30 or 100 (:func:`limit_of`).

    Returns:
        the token index of the aborting event (``len(tokens)`` when it is the stop event): the
        callbacks of the pieces before it were delivered, the ``Done`` one was not.
    """
    text_at = dict(texts)
    last, repeats = "", 0
    for index in range(len(tokens) + 1):
        if index < len(tokens):
            text = text_at.get(index)
            if text is None:
                if tokens[index] < FIRST_SPECIAL or tokens[index] in preserved:
                    continue  # a token inside a UTF-8 sequence: llama-server sends nothing
                text = ""  # a control token llama-server renders as nothing
        else:
            text = ""  # the stop event
        trimmed = trim_space(text)
        if trimmed == last:
            repeats += 1
            if repeats > limit:
                return index
        else:
            last, repeats = trimmed, 0
    return None
