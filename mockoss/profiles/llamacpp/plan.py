"""What llama-server computes for one completion, before any request-specific id is drawn.

llama-server re-parses the whole generated text after every token and streams the difference
from the previous parse (``task_result_state::update_chat_msg`` and
``common_chat_msg_diff::compute_diffs``, ggml-org/llama.cpp ``tools/server/server-task.cpp@00efb3e1``
and ``common/chat.cpp@0083bb18``): partial parses (one per token) drive the stream, the final parse
(``is_partial=false``) decides the message or fails with the peg-native error. This module replays
that once per completion and request shape and memoises the result on ``completion._memo``. The
PEG parser's per-token results come from :func:`.incremental.partial_parses`, equal to the
re-parses but linear in the answer's length (measured in process, same run: a 10,000-token
answer's replay ~580 -> ~40 ms; a tool call writing a 10,000-token string, first streamed
request ~12 s -> 0.1-0.3 s; since parses resume after the last completed message, 3,000 short
messages >40 s -> ~0.3 s and tool arguments of 100 JSON objects ~11 s -> ~0.3 s); the regex
parser's from :func:`.regex_incremental.regex_partials`, likewise linear.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mockoss.profiles.llama_server import engine_cap, engine_completion
from mockoss.profiles.llamacpp.gptoss import ChatMsg, ParseFailed
from mockoss.profiles.llamacpp.incremental import Extend, grown
from mockoss.profiles.llamacpp.pieces import token_pieces

if TYPE_CHECKING:
    from mockoss.harmony import Completion

__all__ = ["Diff", "Plan", "Step", "plan_for"]

#: ``common_chat_msg_diff``: ``("reasoning", text)``, ``("content", text)`` or
#: ``("tool", index, name, arguments, with_id)``; ``with_id`` means the delta carries the call's
#: id and ``type`` (its first delta, or a delta that renamed it).
Diff = tuple
#: ``(n_decoded, diffs)`` for one partial result.
Step = tuple[int, tuple[Diff, ...]]
Parse = Callable[[str, bool], ChatMsg]
#: The partial parse after each piece, as :func:`.incremental.partial_parses` gives them.
Partials = Callable[[Iterable[str]], Iterator["ChatMsg | Extend"]]


class DiffError(Exception):
    """``compute_diffs`` threw (a reparse rewrote text already streamed); llama-server turns the
    message into an error frame."""


def _string_diff(last: str, current: str) -> str:
    """``string_diff``: the suffix ``current`` adds to ``last``; ``""`` when ``current`` is a
    prefix of ``last``."""
    if not last:
        return current
    if not current.startswith(last):
        if last.startswith(current):
            return ""
        raise DiffError(f"Invalid diff: '{last}' not found at start of '{current}'")
    return current[len(last) :]


def _calls_error(previous: ChatMsg, current: ChatMsg) -> str:
    lines = [f"Invalid diff: now finding less tool calls!\n  Previous ({len(previous.tool_calls)}):\n"]
    lines += [f"    - name: '{n}', args: '{a}'\n" for n, a in previous.tool_calls]
    lines.append(f"  Current ({len(current.tool_calls)}):\n")
    lines += [f"    - name: '{n}', args: '{a}'\n" for n, a in current.tool_calls]
    lines.append(f"  Current msg text content:\n{current.content}\n")
    return "".join(lines)


def compute_diffs(previous: ChatMsg, current: ChatMsg) -> tuple[Diff, ...]:
    """``common_chat_msg_diff::compute_diffs``.

    Raises:
        DiffError: text already streamed changed, or tool calls disappeared or were renamed.
    """
    diffs: list[Diff] = []
    if previous.reasoning_content != current.reasoning_content:
        diffs.append(("reasoning", _string_diff(previous.reasoning_content, current.reasoning_content)))
    if previous.content != current.content:
        diffs.append(("content", _string_diff(previous.content, current.content)))
    old, new = previous.tool_calls, current.tool_calls
    if len(new) < len(old):
        raise DiffError(_calls_error(previous, current))
    if old:
        index = len(old) - 1
        (old_name, old_args), (new_name, new_args) = old[index], new[index]
        if old_name != new_name and old_name and new_name and not new_name.startswith(old_name):
            raise DiffError("Invalid diff: tool call mismatch!")
        args = _string_diff(old_args, new_args)
        if args or old_name != new_name:
            renamed = old_name != new_name
            diffs.append(("tool", index, new_name if renamed else "", args, renamed))
    for index in range(len(old), len(new)):
        name, args = new[index]
        diffs.append(("tool", index, name, args, True))
    return tuple(diffs)


@dataclass(frozen=True, slots=True)
class Plan:
    """The request-independent outcome of one completion for one request shape.

    Attributes:
        generated: the generated text (``slot.generated_text``).
        n_decoded: tokens sampled, the stop token included (``usage.completion_tokens``).
        finish: ``"stop"`` or ``"length"`` before tool calls are considered.
        message: the final parse for a non-streamed request, or ``None`` when it failed.
        error: the final parse's exception text (:data:`~.gptoss.PEG_FORMAT_ERROR`), else ``None``.
        steps: the stream's partial results, up to the first one whose diff failed.
        stream_error: exception text ending the stream early or at its final update, else ``None``.
        final_diffs: diffs of the final update of a successful stream.
        stream_message: ``oaicompat_msg`` of the final streamed result.
    """

    generated: str
    n_decoded: int
    finish: str
    message: ChatMsg | None
    error: str | None
    steps: tuple[Step, ...]
    stream_error: str | None
    final_diffs: tuple[Diff, ...]
    stream_message: ChatMsg


def _reparses(parse: Parse, pieces: Iterable[str]) -> Iterator[ChatMsg]:
    """Each partial parse from scratch, as llama-server runs them (quadratic in the length)."""
    text = ""
    for piece in pieces:
        text += piece
        yield parse(text, True)


def _replay(
    parse: Parse, pieces: list[tuple[int, str]], partials: Partials | None = None
) -> tuple[tuple[Step, ...], str | None, tuple[Diff, ...], ChatMsg]:
    """The stream's steps. An :class:`~.incremental.Extend` result is the previous partial
    parse, which was not empty (so it is ``state``), with one field extended: its diff is that
    piece (``compute_diffs`` of the two: the other fields are equal, the grown one starts with
    its old text), and ``state`` is only rebuilt when a full result needs it (``pending``), so
    the replay stays linear."""
    state = ChatMsg()
    pending: list[Extend] = []
    text = "".join(piece for _, piece in pieces)
    results = (partials or (lambda p: _reparses(parse, p)))(piece for _, piece in pieces)
    steps: list[Step] = []
    for (n_decoded, _), current in zip(pieces, results):
        diffs: tuple[Diff, ...] = ()
        if isinstance(current, Extend):
            if current.field and current.piece:
                if current.field == "tool":
                    diffs = (("tool", current.index, "", current.piece, False),)
                else:
                    diffs = ((current.field, current.piece),)
                pending.append(current)
        elif not current.empty:
            if pending:
                state, pending = grown(state, pending), []
            try:
                diffs = compute_diffs(state, current)
            except DiffError as exc:
                return tuple(steps), str(exc), (), state
            state = current
        steps.append((n_decoded, diffs))
    if pending:
        state = grown(state, pending)
    try:
        final = parse(text, False)
    except ParseFailed as exc:
        return tuple(steps), str(exc), (), state
    final_diffs: tuple[Diff, ...] = ()
    if not final.empty:
        try:
            final_diffs = compute_diffs(state, final)
        except DiffError as exc:
            return tuple(steps), str(exc), (), state
        state = final
    return tuple(steps), None, final_diffs, state


def plan_for(
    completion: Completion, max_tokens: int | None, key: object, parse: Parse, *, stream: bool, partials: Partials | None = None
) -> Plan:
    """The :class:`Plan` of ``completion`` cut at ``max_tokens`` for the parser ``parse``
    (identified by ``key``), computed once and memoised on ``completion._memo``. The per-token
    replay (``steps`` and the ``stream_*`` fields) is only computed when ``stream`` is true; a
    non-streamed plan has no steps and ``stream_message`` empty. ``partials`` gives the same
    partial parses as ``parse`` faster (:func:`.incremental.partial_parses`), else each token's
    text is parsed from scratch."""
    # What llama-server generates: a script without an end token is followed by the scripted
    # engine's <|endoftext|> (mockoss.profiles.llama_server, as the ollama profile and the goldens).
    engine = engine_completion(completion)
    max_tokens = engine_cap(completion, max_tokens)  # every limit that does not cut the answer shares one entry (Completion.cap)
    memo_key = ("llamacpp.plan", max_tokens, key, stream)
    cached = completion._memo.get(memo_key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    emission = engine.emit(max_tokens)
    pieces = token_pieces(emission.tokens)
    generated = "".join(piece for _, piece in pieces)
    message: ChatMsg | None
    try:
        message, error = parse(generated, False), None
    except ParseFailed as exc:
        message, error = None, str(exc)
    steps: tuple[Step, ...] = ()
    stream_error: str | None = None
    final_diffs: tuple[Diff, ...] = ()
    stream_message = ChatMsg()
    if stream:
        steps, stream_error, final_diffs, stream_message = _replay(parse, pieces, partials)
    plan = Plan(
        generated=generated,
        n_decoded=len(emission.tokens),
        finish=emission.finish_reason,
        message=message,
        error=error,
        steps=steps,
        stream_error=stream_error,
        final_diffs=final_diffs,
        stream_message=stream_message,
    )
    completion._memo[memo_key] = plan
    return plan
