"""``POST /v1/responses`` as SGLang serves gpt-oss: the route, which checks the request and hands
it to the non-streamed mapping (:mod:`.responses`) or the stream (:mod:`.responses_stream`).
Sources: see :mod:`.responses`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import JSON_MEDIA_TYPE, SSE_MEDIA_TYPE, Reply, RequestContext, ResponsesRequestView
from mockoss.profiles.replay import Draws, IdRecorder, Template
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
from mockoss.profiles.sglang.responses_stream import output_template, splice_output, stream_events
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion, ParserTrace
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
        variant = (profile.harmony_library, profile.harmony_errors)
        return stream_events(request, trace, rid, ctx, status, completion, completion.cap(request.max_output_tokens), variant)
    if trace.error is not None:
        return Reply(status=400, body=error_body(harmony_error_text(trace.error)))
    failure = builtin_call(trace)
    if failure is not None:
        return Reply(status=400, body=error_body(failure))
    if "\x00" in completion.text:  # the id slots are made of NUL characters
        try:
            output = final_items(trace, ctx.ids)
        except ItemError as exc:
            return Reply(status=400, body=error_body(str(exc)))
        body = response_object(request, rid, ctx, output, status, usage_object(len(emission.tokens)))
        return Reply(status=200, media_type=JSON_MEDIA_TYPE, body=dumps(body).encode())
    key = (_MEMO, completion.cap(request.max_output_tokens), profile.harmony_library, profile.harmony_errors)
    recorded = completion._memo.get(key)
    if recorded is None:
        recorded = completion._memo[key] = _record_items(trace)
    output, output_json, template, problem, draws = recorded  # type: ignore[misc]
    if problem is not None:
        return Reply(status=400, body=error_body(problem))
    values = draws.replay(ctx.ids)
    body = response_object(request, rid, ctx, output, status, usage_object(len(emission.tokens)))
    return Reply(status=200, media_type=JSON_MEDIA_TYPE, body=splice_output(dumps(body), output_json, template, values).encode())


_MEMO = "sglang.responses.items"


def _record_items(trace: ParserTrace) -> tuple[list[dict[str, Any]], str, Template | None, str | None, Draws]:
    """``final_items`` of ``trace`` with its ids as markers (:class:`IdRecorder`): (items, their
    JSON, its :func:`output_template`, the ``ItemError`` message or ``None``, the ids drawn and
    which of them the items show)."""
    ids = IdRecorder()
    try:
        output = final_items(trace, ids)
    except ItemError as exc:
        return [], "[]", None, str(exc), ids.sparse(())
    written = dumps(output)
    template = output_template(written)
    return output, written, template, None, ids.sparse(template.slots)
