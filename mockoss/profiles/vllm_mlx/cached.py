"""What vllm-mlx computes for a completion, once per request shape (issue 9).

The engine's outputs (mlx-lm's detokenizer over every token), the generated text's token count
(a re-encoding of the whole text), the parsers' results and the streamed chunks depend on the
request only through the token limit, the tools it declares, ``tool_choice`` and the profile's
switches; they are memoised on ``completion._memo``, and a stream's chunks are a template
(:mod:`mockoss.profiles.replay`) a request fills with its head (id, ``created``, model), its
usages and call ids. Before, a 10,000-token answer ran the detokenizer and both streaming parsers
again on every request: ~440 ms for a streamed chat, on the event loop.

The limit in a key: the engine's outputs under a limit ``L`` are those of no limit when
``L >= n + 2``, ``n`` the completion's emitted length (:meth:`Completion.cap
<mockoss.harmony.Completion.cap>` of ``L - 2``): the engine adds a ``<|return|>`` to a script
that stops without one, and its loop and finish test compare the limit with the outputs' count,
at most ``n + 1``. Below that the limit itself is the key (a :class:`~mockoss.harmony.completion.Cut`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockoss.harmony.completion import Cut
from mockoss.profiles.base import IdSource
from mockoss.profiles.replay import FramesTemplate, IdRecorder, new_id, templatable
from mockoss.profiles.vllm_mlx.engine import engine_outputs, limited_tokens, usage
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.base import ChatRequestView, RequestContext
    from mockoss.profiles.vllm_mlx import VllmMlxProfile

__all__ = ["call_id", "chat_stream", "generated_text", "limit_key", "memoised", "outputs", "tools_key"]

Outputs = list[tuple[str, bool, str | None]]
_DATA = b"data: "


def limit_key(completion: Completion, limit: int) -> Cut | None:
    """The memo key of the token limit ``limit`` (see the module docstring)."""
    return None if completion.cap(limit - 2) is None else Cut(limit)


def outputs(completion: Completion, limit: int) -> Outputs:
    """:func:`~.engine.engine_outputs` of the completion under ``limit``, memoised (read only)."""
    key = ("vllm_mlx.outputs", limit_key(completion, limit))
    cached = completion._memo.get(key)
    if cached is None:
        cached = completion._memo[key] = engine_outputs(limited_tokens(completion, limit), limit)
    return cached  # type: ignore[return-value]


def call_id(ids: IdSource | IdRecorder) -> str:
    """A call id: ``call_`` + 8 hex digits (``uuid4().hex[:8]``); from a recorder, its marker."""
    return "call_" + new_id(ids, width=8)


def tools_key(tools: list | None, declared: list | None) -> tuple[bool, str | None]:
    """What of the request's tools a stream depends on: whether the tool parser runs, and the
    declared tools (their schemas coerce a call's arguments), as JSON."""
    return tools is None, (dumps(declared) if declared else None)


def chat_stream(
    profile: VllmMlxProfile, completion: Completion, limit: int, request: ChatRequestView, ctx: RequestContext, rid: str, model: str,
    tools: list | None, declared: list | None,
) -> list[bytes]:
    """The streamed chat's frames (:func:`~.stream.chunk_frames`, then
    :func:`~.stream.finish_frames`), the chunks from a template memoised per (limit, tools,
    profile)."""
    from mockoss.profiles.vllm_mlx.stream import chunk_frames, finish_frames

    head = f'{{"id":"{rid}","object":"chat.completion.chunk","created":{ctx.created},"model":{dumps(model)},"choices":'
    if not templatable(completion.text):
        frames, count = chunk_frames(profile, outputs(completion, limit), head, lambda n: usage(ctx.prompt_tokens, n),
                                     lambda: call_id(ctx.ids), tools, declared)
        return finish_frames(profile, frames, head, request.include_usage, usage(ctx.prompt_tokens, count))
    key = ("vllm_mlx.chat.frames", limit_key(completion, limit), tools_key(tools, declared), profile)
    entry = completion._memo.get(key)
    if entry is None:
        recorder = IdRecorder()
        usage_of: Callable[[int], Any] = lambda n: recorder.value(f"usage {n}")
        # Built with an empty head: every chunk then starts with "data: " and the request's head
        # (id, created, model) goes after it, kept out of the template.
        frames, count = chunk_frames(profile, outputs(completion, limit), "", usage_of, lambda: call_id(recorder), tools, declared)
        assert all(frame.startswith(_DATA) for frame in frames)
        entry = completion._memo[key] = (recorder.frozen(), FramesTemplate([frame[len(_DATA) :] for frame in frames]), count)
    calls, template, count = entry  # type: ignore[misc]
    values = {name: dumps(usage(ctx.prompt_tokens, int(name[6:]))).encode() for function, name in calls if function is None}
    frames = template.fill(IdRecorder.replay(calls, ctx.ids, values), prefix=_DATA + head.encode())
    return finish_frames(profile, frames, head, request.include_usage, usage(ctx.prompt_tokens, count))


def generated_text(completion: Completion, limit: int, aggregated: bool) -> tuple[str, str, int, str]:
    """:func:`~.engine.generated` of the memoised outputs, and the text cleaned
    (:func:`~.parsers.clean_output_text`): ``(raw, finish_reason, completion_tokens, cleaned)``.
    Memoised per (limit, ``aggregated``); without tools the finish compares the re-encoded count
    with this request's limit."""
    from mockoss.profiles.vllm_mlx.engine import generated
    from mockoss.profiles.vllm_mlx.parsers import clean_output_text

    key = ("vllm_mlx.generated", limit_key(completion, limit), aggregated)
    entry = completion._memo.get(key)
    if entry is None:
        raw, finish, count = generated(outputs(completion, limit), limit, aggregated)
        entry = completion._memo[key] = (raw, finish if aggregated else None, count, clean_output_text(raw))
    raw, finish, count, cleaned = entry  # type: ignore[misc]
    if finish is None:
        finish = "length" if count >= limit else "stop"  # generate's re-encoded count against the limit
    return raw, finish, count, cleaned


def memoised(completion: Completion, key: tuple[object, ...], build: Callable[[], Any]) -> Any:
    """``build()``, memoised on the completion under ``key``."""
    entry = completion._memo.get(key)
    if entry is None:
        entry = completion._memo[key] = build()
    return entry
