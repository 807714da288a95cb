"""vLLM ``POST /v1/responses`` for gpt-oss (Harmony path), non-streamed and streamed.

The reply, per request: ids drawn in vLLM's order, the request's echo, the stream's frames and
the error framing, around the plan of :mod:`mockoss.profiles.vllm.responses_plan` (the Harmony
parse, output items and stream events, made once per completion, limit and switches). Sources
(vllm-project/vllm unless noted):

* Parsing, output items and stream events: :mod:`mockoss.profiles.vllm.responses_plan` and
  :mod:`mockoss.profiles.vllm.responses_stream`.
* Response object and status: ``responses/serving.py`` ``responses_full_generator`` (``length`` →
  ``incomplete``; no output item at all → ``incomplete``) and ``ResponsesResponse.from_request``
  (``responses/protocol.py@010a69ce``), dumped with ``model_dump()`` (no ``exclude_none``) and
  written by ``JSONResponse``; the echo of the request: :mod:`mockoss.profiles.vllm.responses_echo`.
* A non-streamed request with no echoed field is answered from a cache of the finished body
  (:mod:`mockoss.profiles.vllm.responses_cached`, same bytes).
* Field orders and fields of the body and output items: vLLM 0.32/0.33 as dumped with the openai
  types they ship (``phase``, ``async``/``caller``/``namespace``, penalties, transfer params,
  prompt-cache fields in 0.33; checked against the goldens), switches ``responses_body_fields``
  and ``responses_prompt_cache_fields``; without them, openai-python 2.20.0's (the former
  emulation).
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

from mockoss.profiles.base import (
    SSE_MEDIA_TYPE,
    IdSource,
    Reply,
    RequestContext,
    ResponsesRequestView,
)
from mockoss.profiles.sse import SseEvents, whole_event
from mockoss.profiles.vllm.errors import ERROR_TYPES
from mockoss.profiles.vllm.responses_echo import Echo
from mockoss.profiles.vllm.responses_plan import ResponsesPlan, profile_shapes, request_plan
from mockoss.profiles.vllm.responses_stream import dumps, fill

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["request_plan", "surface_responses"]  # request_plan: responses_plan's, named here as before


def _hex_ids(ids: IdSource, count: int, digits: int = 32) -> list[str]:
    """``count`` random id parts of ``digits`` hex digits (switch ``id_digits``)."""
    return [ids.next16() if digits == 16 else ids.next() for _ in range(count)]


def _response_frame(kind: str, response: str, seq: int) -> str:
    return f'event: {kind}\ndata: {{"response":{response},"sequence_number":{seq},"type":"{kind}"}}\n\n'


def _stream(profile: VllmProfile, plan: ResponsesPlan, echo: Echo, ids: IdSource) -> Reply:
    stream_hex = _hex_ids(ids, plan.stream_ids, profile.id_digits)
    initial = echo.render("in_progress", "[]", None)
    frames = [_response_frame("response.created", initial, 0).encode(), _response_frame("response.in_progress", initial, 1).encode()]
    if plan.joined is not None:
        fmt, holes = plan.joined
        data = (fmt % tuple([stream_hex[h] for h in holes])).encode()
        width = len(stream_hex[0]) if stream_hex else 32
        # Each frame's length is known when every id is ASCII of one known width (a caller may pass
        # other ids: the OpenAI profile's slot ids are 32 ASCII characters, others need not be).
        cuts = plan.cuts.get(width) if all(len(h) == width and h.isascii() for h in stream_hex) else None
        if cuts is not None and cuts[-1] == len(data):
            frames += [data[start:end] for start, end in pairwise(cuts)]
        else:  # ids of another length: cut at each frame's end
            events = data.split(b"\n\n")
            events.pop()  # after the last "\n\n"
            frames += [event + b"\n\n" for event in events]
    else:
        frames += [fill(t, stream_hex, seq).encode() for seq, t in enumerate(plan.events, 2)]
    # The joined events are whole SSE events (checked when the plan was made; an id holds no
    # newline), so the frames can say so (SseEvents) once the few others are checked too: the
    # transport then counts the stream's separators without scanning its bytes (~1.9 ms for a
    # 10,000-token answer's 2.3 MB).
    events = plan.joined is not None and not any("\n" in h for h in stream_hex)
    failure = (profile.harmony_error_status, plan.harmony_error) if plan.harmony_error is not None else plan.failure
    if failure is None:
        if profile_shapes(profile)[2]:  # reuse_streamed_item_ids: the output holds the streamed ids
            output = fill(plan.stream_output, stream_hex)
        else:
            output = fill(plan.output, _hex_ids(ids, plan.final_ids, profile.id_digits))
        frames.append(_response_frame("response.completed", echo.render(plan.status, output, plan), len(frames)).encode())
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=_frames(frames, events))
    status, message = failure
    if profile.responses_stream_error == "error_event":
        error = {"code": ERROR_TYPES.get(status, "InternalServerError"), "message": message, "param": None, "sequence_number": len(frames), "type": "error"}
        frames.append(f"event: error\ndata: {dumps(error)}\n\n".encode())
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=_frames(frames, events))
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=_frames(frames, events), abort=message)


def _frames(frames: list[bytes], events: bool) -> tuple[bytes, ...]:
    """``frames`` as :class:`~mockoss.profiles.sse.SseEvents` when ``events`` (the item events,
    between the two head frames and the last frame, are known whole events) and the head frames and
    the last are whole events too, else a tuple."""
    if events and whole_event(frames[0]) and whole_event(frames[1]) and whole_event(frames[-1]):
        return SseEvents(frames)
    return tuple(frames)


def surface_responses(profile: VllmProfile, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
    """Surface ``completion`` the way current vLLM answers ``POST /v1/responses`` for gpt-oss.

    Non-streamed (200, ``application/json``)::

        {"id":"resp_<hex>","created_at":…,"incomplete_details":null|{"reason":"max_output_tokens"},
         "instructions":…,"metadata":…,"model":…,"object":"response","output":[…],
         "parallel_tool_calls":…,"temperature":1.0,"tool_choice":…,"tools":[…],"top_p":1.0,
         "background":false,"max_output_tokens":…,"max_tool_calls":null,"previous_response_id":null,
         "prompt":null,"reasoning":…,"service_tier":"auto","status":"completed"|"incomplete",
         "text":null,"top_logprobs":null,"truncation":"disabled",
         "usage":{"input_tokens":P,"input_tokens_details":{"cached_tokens":0,
           "input_tokens_per_turn":[P],"cached_tokens_per_turn":[0]},"output_tokens":N,
           "output_tokens_details":{"reasoning_tokens":R,"tool_output_tokens":0,
           "output_tokens_per_turn":[N],"tool_output_tokens_per_turn":[0]},"total_tokens":P+N},
         "user":null,"input_messages":null,"output_messages":null}

    Output items per message (``harmony_to_response_output``, ``responses/harmony.py@004ae2c0``):
    non-assistant author → none; ``browser.*`` → ``web_search_call`` (``cursor:`` prefix; none
    when truncated); declared or ``functions.*`` function → ``function_call`` (``fc_``/``call_``
    share one hex); ``python``/``browser``/``container`` → ``reasoning``; any other recipient →
    ``mcp_call`` (server_label = first dotted segment, name = last); no recipient: ``analysis`` →
    ``reasoning`` (``rs_``), ``commentary``/``final`` → ``message`` (``msg_``), other channel →
    ``ValueError("Unknown channel: …")`` (0.32.0; ``VLLMValidationError`` in 0.33.0) → 400
    ``BadRequestError`` (vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/responses/harmony.py,
    @v0.33.0 the same path), or no item with ``responses_unknown_channel="drop"``. The message/function/MCP item cut by ``max_output_tokens``
    has ``status: "incomplete"``. ``HarmonyError`` → ``profile.error(harmony_error_status, text)``.

    Streamed (200, ``text/event-stream``, ``event: T\\ndata: {…}\\n\\n`` frames, no ``[DONE]``,
    ``sequence_number`` from 0): ``response.created``, ``response.in_progress``, the item events of
    :func:`~mockoss.profiles.vllm.responses_stream.stream_event_templates`, then
    ``response.completed`` carrying the non-streamed response rebuilt with fresh ids (vLLM parses
    twice). On a ``HarmonyError`` the events before the failing token are sent and the stream is
    cut (a :class:`Reply` with ``abort`` set); the same after all events for a ``ValueError``.

    Switches read from ``profile``: ``strict``, ``harmony_error_status``,
    ``responses_ignore_recipients_without_tools`` (with no declared tools, recipients are ignored:
    final/commentary → message, analysis → reasoning, stream text/reasoning only),
    ``responses_stream_error`` (``"cut"``; ``"error_event"`` sends an OpenAI ``error`` event
    instead) and ``max_model_len``.

    Ids are drawn from ``ctx.ids`` in vLLM's order: the response id, then (streamed) the stream
    item ids, then the output item ids.
    """
    plan = request_plan(profile, completion, request)
    if not request.stream:
        if plan.harmony_error is not None:
            return profile.error(profile.harmony_error_status, plan.harmony_error)
        if plan.failure is not None:
            return profile.error(*plan.failure)
    echo = Echo(profile, request, ctx)
    if request.stream:
        return _stream(profile, plan, echo, ctx.ids)
    body = echo.render(plan.status, fill(plan.output, _hex_ids(ctx.ids, plan.final_ids, profile.id_digits)), plan)
    return Reply(status=200, body=body.encode())
