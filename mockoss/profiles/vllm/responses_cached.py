"""A non-streamed vLLM ``POST /v1/responses`` reply from a per-request-shape cache (issue 9).

Most Responses requests send ``model`` and ``input`` and nothing the response object echoes. For
those, everything in the reply except the ids and the numbers that follow from the prompt's length
is fixed by (profile, completion, ``max_output_tokens``, model, ``tool_choice``, ``created``), so it
is rendered once, as :func:`mockoss.profiles.vllm.responses.surface_responses` renders it, into a
:class:`~mockoss.profiles.replay.Template` (markers where the ids and the prompt's numbers go),
and memoised on the completion. A request then costs one lookup, its ids and one join: 4 us in
process instead of 24 (measured, a unique 3-turn request on ``clean-answer``), mostly the echo of
the request (:mod:`mockoss.profiles.vllm.responses_echo`), which the full path serialises once
per distinct request body. A completion or an echoed model whose text holds a marker's letters
(:func:`~mockoss.profiles.replay.templatable`) takes the full path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import Reply, RequestContext, ResponsesRequestView
from mockoss.profiles.memos import held
from mockoss.profiles.replay import IdRecorder, Template, templatable
from mockoss.profiles.vllm.chat_plan import with_end_of_script
from mockoss.profiles.vllm.responses_echo import echo_templates, join_echo, usage_json
from mockoss.profiles.vllm.responses_plan import request_plan
from mockoss.profiles.vllm.responses_stream import dumps, fill

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["BODY_KEYS", "cached_reply"]

#: Body fields that the non-streamed path reads beyond the view (``model``, ``tool_choice``,
#: ``max_output_tokens``, ``stream``): the echoed ones (:func:`~mockoss.profiles.vllm.responses_echo.echo_templates`),
#: ``request_id`` (the response id), ``previous_input_messages`` and ``previous_response_id``
#: (checked by :meth:`VllmProfile.surface <mockoss.profiles.vllm.VllmProfile.surface>`), ``tools``.
#: A body with any of them takes the full path.
BODY_KEYS = frozenset(
    {
        "background", "frequency_penalty", "instructions", "max_tool_calls", "metadata", "parallel_tool_calls",
        "presence_penalty", "previous_input_messages", "previous_response_id", "prompt_cache_key",
        "prompt_cache_retention", "reasoning", "request_id", "safety_identifier", "service_tier", "temperature",
        "text", "tools", "top_p", "truncation", "user",
    }
)
_CACHED = "vllm.responses.reply"


def cached_reply(profile: VllmProfile, completion: Completion, request: ResponsesRequestView, ctx: RequestContext) -> Reply | None:
    """What :meth:`VllmProfile.surface <mockoss.profiles.vllm.VllmProfile.surface>` answers a
    non-streamed Responses request whose body has none of :data:`BODY_KEYS` (and no tools, a
    ``tool_choice`` string), the same bytes; ``None`` for any other request, or when the reply is
    an error (the full path answers it).

    Ids are drawn as the full path draws them: the response id, then the output items' ids. The
    entry is kept per profile object (:func:`~mockoss.profiles.memos.held`: hashing the profile's
    switches costs more).
    """
    if request.stream or request.tools or type(request.tool_choice) is not str or not BODY_KEYS.isdisjoint(request.body):
        return None
    engine = with_end_of_script(completion) if profile.end_of_script_eos else completion  # as request_plan
    # The plan's limit (every max_output_tokens that does not cut the answer shares it; the echoed
    # value is a slot filled per request).
    key = (_CACHED, engine.cap(request.max_output_tokens), request.model, request.tool_choice, ctx.created)
    template, ids, output_tokens = held(completion._memo, key, (profile,), lambda: _entry(profile, completion, request, ctx))
    if template is None:
        return None
    next_hex = ctx.ids.next16 if profile.id_digits == 16 else ctx.ids.next
    prompt = ctx.prompt_tokens
    room = profile.max_model_len - prompt  # responses_echo.output_limit
    limit = request.max_output_tokens
    # The markers' order (_entry): the ids, drawn in vLLM's order, then prompt, total and limit.
    values = [next_hex().encode() for _ in range(ids)]
    values += [str(prompt).encode(), str(prompt + output_tokens).encode(), str(room if limit is None else min(limit, room)).encode()]
    return Reply(status=200, body=template.fill(values))


def _entry(
    profile: VllmProfile, completion: Completion, request: ResponsesRequestView, ctx: RequestContext
) -> tuple[Template | None, int, int]:
    """(the body as a template, or ``None`` for an error reply or text that rules out templates;
    how many ids it draws; output tokens) for :func:`cached_reply`.

    The body is rendered by the full path's own pieces with a recorder's markers where the
    request's values go: the response id and the output items' ids (markers ``0`` to ``ids - 1``,
    in drawing order), then the prompt and total tokens and the echoed ``max_output_tokens``
    (the next three; raw JSON numbers).
    """
    if not (templatable(completion.text) and templatable(request.model) and templatable(request.tool_choice)):
        return (None, 0, 0)  # text that could hold a marker (all three are in the key): the full path
    plan = request_plan(profile, completion, request)
    if plan.harmony_error is not None or plan.failure is not None:
        return (None, 0, 0)
    cache_write = profile.responses_body_fields and profile.responses_mapping != "2025"  # as responses_echo.Echo
    head, tail = echo_templates(profile, request, ctx)
    recorder = IdRecorder()
    response_id = recorder.next()
    item_ids = [recorder.next() for _ in range(plan.final_ids)]
    prompt, total, limit = recorder.value("prompt"), recorder.value("total"), recorder.value("limit")
    values: dict[str, Any] = {
        "id": f'"resp_{response_id}"',  # dumps() would escape the marker's NULs
        "incomplete": '{"reason":"max_output_tokens"}' if plan.status == "incomplete" else "null",
        "status": dumps(plan.status),
        "usage": usage_json(prompt, total, plan.output_tokens, plan.reasoning_tokens, cache_write),
        "limit": limit,
    }
    text = join_echo(head, tail, values, fill(plan.output, item_ids))
    return (Template(text), 1 + len(item_ids), plan.output_tokens)
