"""The openai profile's streams rewritten once per shape, not once per request (issue 9).

The profile rewrites the vLLM profile's frames into OpenAI's shapes (:mod:`.wire`), one JSON
parse and dump per frame: ~70 ms for a 10,000-token answer, on the event loop, on every request.
The rewrite of a frame depends only on that frame (and, for Responses, on the ids earlier frames
named), so it is memoised on the normalised completion's memo and checked against the frames it
was made from: a request whose vLLM frames are those frames, except at the positions that carry
per-request values (``volatile``: rewritten every time), gets the memoised output. The check
compares the frames themselves, so a request of another shape is never answered with the wrong
frames: it rewrites afresh and takes the entry over.

* Chat: every vLLM chunk starts with the same head (id, ``created``, model) and OpenAI's chunk
  starts with its own head made of the same three values, so the memo holds each frame's bytes
  after the head, and a request puts its own head in front. Frames holding a tool call's id or a
  usage object (the prompt's token count) are volatile.
* Responses: vLLM's item ids are drawn per request; the vLLM profile is asked with an id source
  whose ids are slots (:class:`~mockoss.profiles.replay.AsciiIdRecorder`: 32 ASCII characters,
  so the vLLM profile's stream takes its fast path, which cuts frames at offsets known for
  32-character ASCII ids; a marker no request or script served this way holds,
  :func:`slot_free`), so its frames are the same for
  every request of a shape; the slots are filled with the request's own ids (drawn in the same
  order) after the rewrite. The frames holding a response object (which echoes the request,
  ``created`` and usage) are volatile, rewritten with the rewrite's state at their place.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from operator import getitem
from typing import Any

from mockoss.profiles.base import Reply, RequestContext
from mockoss.profiles.openai import wire
from mockoss.profiles.openai.wire import ResponsesRewrite, chat_frame, dumps, loads
from mockoss.profiles.replay import ASCII, AsciiIdRecorder, FramesTemplate, IdRecorder, Template

__all__ = ["chat_frames", "responses_frames", "slot_free"]

_CHAT = "openai.chat.frames"
_RESPONSES = "openai.responses.frames"
_CHOICES = b'"choices":['
#: A frame is volatile when it holds one of these (raw quotes: never inside a JSON string).
_CHAT_VOLATILE = (b'"usage":{', b'"id":"chatcmpl-tool-')
_RESPONSE_VOLATILE = b'"response":{'
_MARK = AsciiIdRecorder.TAG


@dataclass(frozen=True, slots=True)
class _Entry:
    """The memoised rewrite: the frames it was made from (:func:`_stable`: the runs between the
    volatile positions, joined), what to put at each stable position (after the request's head,
    or with slots), and for Responses the rewrite's state before each volatile frame."""

    expected: tuple[bytes, ...]
    volatile: tuple[int, ...]
    out: Any  # chat: tuple[bytes, ...]; Responses: FramesTemplate
    states: tuple[tuple[dict[str, str], dict[int, str]], ...] = ()


def _head(frames: Any) -> bytes | None:
    """The bytes every chunk of vLLM's chat stream starts with (``data: {"id":…,"choices":[``),
    from the first frame; ``None`` when it has none."""
    if not frames:
        return None
    first = frames[0]
    at = first.find(_CHOICES)
    if not first.startswith(b'data: {"id":') or at < 0:
        return None
    return first[: at + len(_CHOICES)]


def _openai_head(head: bytes) -> bytes:
    """OpenAI's chunk head for vLLM's ``head``: the same id, ``created`` and model (as
    :func:`mockoss.profiles.openai.wire._chunk` writes them)."""
    data = loads(head[6:] + b"]}")
    out = {"id": data["id"], "object": "chat.completion.chunk", "created": data["created"], "model": data["model"],
           "service_tier": "default", "system_fingerprint": None, "choices": []}
    return b"data: " + dumps(out).encode()[:-2]


def _stable(frames: Any, volatile: tuple[int, ...], head: bytes = b"") -> tuple[bytes, ...]:
    """The frames between the volatile ones, each run joined, each frame without its first
    ``len(head)`` bytes: the check that a request's frames are those an entry was made from, in
    C-level passes. A frame is one event ending in a blank line and its JSON holds no raw
    newline, so the joined bytes give back the frames (a ``[DONE]`` or error frame where a chunk
    was cannot give the same bytes)."""
    out: list[bytes] = []
    start = 0
    rest = slice(len(head), None)
    for stop in (*volatile, len(frames)):
        run = frames[start:stop]
        out.append(b"".join(map(getitem, run, repeat(rest))) if head else b"".join(run))
        start = stop + 1
    return tuple(out)


def chat_frames(vllm: Reply, include_usage: bool, memo: Any) -> Reply:
    """:func:`mockoss.profiles.openai.wire.chat_frames`, memoised on ``memo`` (see the module)."""
    frames = vllm.frames
    head = _head(frames)
    if head is None:
        return wire.chat_frames(vllm, include_usage)
    key = (_CHAT, include_usage, len(frames))
    entry = memo.get(key)
    if entry is not None and _stable(frames, entry.volatile, head) != entry.expected:
        entry = None
    prefix = _openai_head(head)
    if entry is None:
        entry = _chat_entry(frames, head, prefix, include_usage)
        if len(entry.volatile) * 2 <= len(frames):  # else nothing worth keeping (continuous usage stats)
            memo[key] = entry
    out = list(map(b"".join, zip(repeat(prefix), entry.out)))
    for index in entry.volatile:
        out[index] = chat_frame(frames[index], include_usage)
    return Reply(status=vllm.status, media_type=vllm.media_type, frames=tuple(out), abort=vllm.abort)


def _chat_entry(frames: Any, head: bytes, prefix: bytes, include_usage: bool) -> _Entry:
    skip = len(prefix)
    volatile: list[int] = []
    out: list[bytes] = []
    for index, frame in enumerate(frames):
        rewritten = b""
        if frame.startswith(head) and head not in frame[len(head):] and not any(marker in frame for marker in _CHAT_VOLATILE):
            rewritten = chat_frame(frame, include_usage)
        if rewritten.startswith(prefix):
            out.append(rewritten[skip:])
        else:
            volatile.append(index)
            out.append(b"")
    return _Entry(_stable(frames, tuple(volatile), head), tuple(volatile), tuple(out))


def slot_free(completion: Any, request: Any) -> bool:
    """Whether neither the script nor the request (its model and body, as JSON: what the vLLM
    profile can write into a frame) holds the slots' marker; then the memoised path serves the
    request, else the direct one."""
    if _MARK in completion.text or _MARK in request.model:
        return False
    try:
        return _MARK not in dumps(request.body)
    except (TypeError, ValueError):  # not JSON data: the direct path answers
        return False


def responses_frames(vllm: Reply, ids: AsciiIdRecorder, ctx: RequestContext, memo: Any) -> Reply:
    """:func:`mockoss.profiles.openai.wire.responses_frames` of a vLLM stream made with ``ids``
    (:class:`~mockoss.profiles.replay.AsciiIdRecorder`), memoised on ``memo``, with the slots filled by the ids ``ctx.ids`` gives
    in the same order (see the module)."""
    frames = vllm.frames
    key = (_RESPONSES, len(frames))
    entry = memo.get(key)
    if entry is not None and _stable(frames, entry.volatile) != entry.expected:
        entry = None
    if entry is None:
        entry = _responses_entry(frames)
        memo[key] = entry
    values = IdRecorder.replay(ids.calls, ctx.ids)
    out = entry.out.fill(values)
    for index, (renamed, call_ids) in zip(entry.volatile, entry.states, strict=True):
        out[index] = Template(ResponsesRewrite(renamed, call_ids).frame(frames[index]), marks=ASCII).fill(values)
    abort = vllm.abort if vllm.abort is None else Template(vllm.abort, marks=ASCII).fill(values).decode()
    return Reply(status=vllm.status, media_type=vllm.media_type, frames=tuple(out), abort=abort)


def _responses_entry(frames: Any) -> _Entry:
    rewrite = ResponsesRewrite()
    volatile: list[int] = []
    states: list[tuple[dict[str, str], dict[int, str]]] = []
    out: list[bytes] = []
    for index, frame in enumerate(frames):
        if _RESPONSE_VOLATILE in frame:
            volatile.append(index)
            states.append((dict(rewrite.renamed), dict(rewrite.call_ids)))
        rewritten = rewrite.frame(frame)
        out.append(b"" if volatile and volatile[-1] == index else rewritten)
    return _Entry(_stable(frames, tuple(volatile)), tuple(volatile), FramesTemplate(out, marks=ASCII), tuple(states))
