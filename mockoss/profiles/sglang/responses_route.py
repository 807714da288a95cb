"""``POST /v1/responses`` as SGLang serves gpt-oss: the route, which checks the request and hands
it to the non-streamed mapping (:mod:`.responses`) or the stream (:mod:`.responses_stream`).
Sources: see :mod:`.responses`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockoss.profiles.base import JSON_MEDIA_TYPE, SSE_MEDIA_TYPE, Reply, RequestContext, ResponsesRequestView
from mockoss.profiles.sglang.responses import (
    _STREAM_HEADERS,
    NO_MODEL,
    ItemError,
    builtin_call,
    error_body,
    final_items,
    harmony_error_text,
    response_object,
    usage_object,
)
from mockoss.profiles.sglang.responses_checks import invalid, reject
from mockoss.profiles.sglang.responses_stream import stream_events
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.sglang import SglangProfile

__all__ = ["surface_responses"]


def surface_responses(profile: SglangProfile, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply:
    """SGLang's reply to ``POST /v1/responses`` for ``completion``; see the module docstring."""
    problem = invalid(request)
    if problem is not None:
        return Reply(status=400, body=error_body(problem, "Bad Request"))
    refused = reject(request)
    if refused is not None:
        status, message, param = refused
        return Reply(status=status, body=error_body(message, status=status, param=param))
    emission = completion.emit(request.max_output_tokens)
    trace = completion.trace(max_tokens=request.max_output_tokens, library=profile.harmony_library,
                             skip_errors=profile.harmony_errors == "skip")
    rid = ctx.ids.next("resp_")
    if isinstance(request.body.get("request_id"), str):
        rid = request.body["request_id"]  # a body field of SGLang's ResponsesRequest, the response id
    status = "incomplete" if emission.finish_reason == "length" else "completed"
    if request.body.get("model") is None:
        if request.stream:  # the generator raises before its first event
            return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=(), headers=_STREAM_HEADERS, abort=f"ValidationError: {NO_MODEL}")
        return Reply(status=400, body=error_body(NO_MODEL))
    if request.stream:
        return stream_events(request, trace, rid, ctx, status)
    if trace.error is not None:
        return Reply(status=400, body=error_body(harmony_error_text(trace.error)))
    failure = builtin_call(trace)
    if failure is not None:
        return Reply(status=400, body=error_body(failure))
    try:
        output = final_items(trace, ctx.ids)
    except ItemError as exc:
        return Reply(status=400, body=error_body(str(exc)))
    body = response_object(request, rid, ctx, output, status, usage_object(len(emission.tokens)))
    return Reply(status=200, media_type=JSON_MEDIA_TYPE, body=dumps(body).encode())
