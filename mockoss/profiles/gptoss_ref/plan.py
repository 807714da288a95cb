"""A completion's run through the reference server's loop, once per request shape (issue 9).

What the server streams and returns for a completion depends on the request only through
``max_output_tokens`` (where it cuts the loop), ``metadata.__debug`` (whether a Harmony error of the
final parse is reported or raised) and the release's switches; everything else a request changes is
its ids and the response object's echoed fields (:func:`~.objects.response_object`, built per
request). So the loop (:func:`~.loop.run_loop`: a parser trace over every token), its event frames,
the final parse and the ``output`` items are computed once per (completion, effective limit, debug,
switches) and memoised on ``completion._memo``, with :class:`~mockoss.profiles.replay.IdRecorder`
markers where the ids go; a request draws its ids in the order the loop and ``generate_response``
draw them and joins them in (:mod:`mockoss.profiles.replay`). Before, a 10,000-token answer ran the
parser twice and wrote every event again on each request: ~80 ms (non-streamed) and ~110 ms
(streamed) on the event loop, every time.

The limit in the key is :meth:`Completion.cap <mockoss.harmony.Completion.cap>` of the request's:
the loop keeps at most the completion's tokens up to its first stop token (``<|return|>`` or
``<|call|>``, or the ``<|return|>`` the scripted backend appends), and a limit at least that long
never ends it early, so every such limit gives the same run; ``null`` (``TypeError`` at the first
kept token) is its own key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockoss.harmony import Completion
from mockoss.harmony.library import parse_with
from mockoss.profiles.base import IdSource
from mockoss.profiles.gptoss_ref.loop import run_loop
from mockoss.profiles.gptoss_ref.objects import final_output
from mockoss.profiles.replay import FramesTemplate, IdRecorder, Template, templatable
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.profiles.gptoss_ref import GptossReferenceProfile

__all__ = ["FIRST_EVENT", "Run", "planned_run"]

_MEMO = "gptoss_ref.run"
#: The loop's events follow ``response.created`` and ``response.in_progress`` (sequence numbers 0, 1).
FIRST_EVENT = 2


@dataclass(frozen=True, slots=True)
class Run:
    """One request shape's loop and final parse, ids as markers.

    Attributes:
        calls: the ids the loop and ``generate_response`` draw after the response id, in order
            (:meth:`IdRecorder.replay <mockoss.profiles.replay.IdRecorder.replay>`).
        frames: the loop's event frames, numbered from :data:`FIRST_EVENT`.
        events: how many there are.
        output_tokens: the tokens kept (``usage.output_tokens``; ``__debug`` texts).
        output: the final response's ``output`` list as JSON, or ``None`` when it is not built
            (a crash, or a Harmony error reported under ``__debug``: ``[]``).
        error: the response's ``error`` (a Harmony error under ``__debug``), else ``None``.
        crash: the exception the loop or the final parse raised, else ``None``.
    """

    calls: tuple[tuple[str, object], ...]
    frames: FramesTemplate
    events: int
    output_tokens: tuple[int, ...]
    output: Template | None
    error: dict[str, str] | None
    crash: str | None


def planned_run(profile: GptossReferenceProfile, completion: Completion, max_tokens: int | None, debug: bool, ids: IdSource) -> Run:
    """The memoised :class:`Run` of ``completion`` for a request with ``max_output_tokens``
    ``max_tokens`` (already the default when absent; ``None`` for ``null``) and ``__debug``;
    ``ids``: the request's, drawn from only when the run cannot be a template (then its ``calls``
    are empty: the ids are in the frames already)."""
    if not templatable(completion.text):  # built for this request, with its own ids (replay.templatable)
        return _run(profile, completion, max_tokens, debug, ids)
    limit = "null" if max_tokens is None else completion.cap(max_tokens)
    key = (_MEMO, limit, debug, profile.harmony_library, profile.end_of_script, profile.event_item_ids,
           profile.analysis_recipient_reasoning, profile.stream_browser_calls)
    cached = completion._memo.get(key)
    if cached is None:
        cached = completion._memo[key] = _run(profile, completion, max_tokens, debug, IdRecorder())
    return cached  # type: ignore[return-value]


def _run(profile: GptossReferenceProfile, completion: Completion, max_tokens: int | None, debug: bool, ids: IdRecorder | IdSource) -> Run:
    split = ids.__class__ is IdRecorder  # with the request's own ids: frames and output as they are
    tokens, exhausted = profile._backend_tokens(completion)
    result = run_loop(tokens, max_output_tokens=max_tokens, library=profile.harmony_library, ids=ids,  # type: ignore[arg-type]
                      exhausted=exhausted, rules=profile._rules())
    frames = FramesTemplate([
        f"event: {event['type']}\ndata: {dumps({'sequence_number': number, **event})}\n\n"
        for number, event in enumerate(result.events, FIRST_EVENT)
    ], split=split)
    output: list[dict[str, Any]] | None = None
    error = None
    crash = result.crash
    if crash is None:
        output = []
        if result.output_tokens:  # generate_response's parse of the kept tokens
            trace = parse_with(tuple(result.output_tokens), strict=True, library=profile.harmony_library)  # type: ignore[arg-type]
            problem = trace.error or trace.eos_error
            if problem is not None and not debug:
                output, crash = None, f"HarmonyError: {problem}"
            elif problem is not None:
                error = {"code": "invalid_function_call", "message": problem}
            else:
                try:
                    output = final_output([*trace.messages, *trace.eos_messages], result.ids, ids,  # type: ignore[arg-type]
                                          with_ids=profile.event_item_ids,
                                          analysis_recipient_reasoning=profile.analysis_recipient_reasoning)
                except (IndexError, AttributeError) as exc:
                    output, crash = None, f"IndexError: {exc}"
    calls = ids.frozen() if split else ()  # type: ignore[union-attr]
    return Run(calls, frames, len(result.events), tuple(result.output_tokens),
               None if output is None else Template(dumps(output), split=split), error, crash)
