"""What vLLM's ``POST /v1/responses`` makes of one completion, independent of the request's ids
and echo: the plan (:class:`ResponsesPlan`, memoised on the completion per limit and switches) that
:mod:`mockoss.profiles.vllm.responses` fills per request. Its one job is the mapping from
Harmony to output items and stream events, as templates; the reply's assembly (ids, echo, frames,
errors) is the route module's.

What is reproduced, and from where (vllm-project/vllm unless noted):

* Parsing: the unified ``HarmonyParser`` (``vllm/parser/harmony.py@053e68ec``) that
  ``HarmonyContext`` uses since PR #47185: recipients pass through ``_normalize_recipient``, so
  ``<|channel|>final <|constrain|>json`` is a plain final message; at the end ``flush()`` calls
  ``process_eos`` and recovers a ``HarmonyError`` there as a ``final`` message holding the raw
  tokens. A ``HarmonyError`` while processing a token is caught and the token skipped
  (``process_chunk`` at v0.32.0/v0.33.0; switch ``harmony_errors``, ``"raise"`` for releases that
  surfaced it).
* Output items: ``responses/harmony.py@004ae2c0`` ``harmony_to_response_output(message,
  function_tool_names, incomplete)``; the last message is ``incomplete`` when ``flush()`` produced
  it (output cut by ``max_output_tokens``).
* Stream events: :func:`~mockoss.profiles.vllm.responses_stream.stream_event_templates`, joined
  into one template per plan (:func:`_join_events`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from openai_harmony import Message

from mockoss.harmony import Completion, ParserTrace, load_encoding
from mockoss.profiles.vllm.chat_plan import with_end_of_script
from mockoss.profiles.vllm.responses_stream import (
    BUILTIN_TOOL_TO_MCP_SERVER_LABEL,
    MessageView,
    Segment,
    StreamShapes,
    Template,
    TemplateBuilder,
    stream_event_templates,
)
from mockoss.profiles.vllm.segments import is_function_recipient, normalize_recipient

if TYPE_CHECKING:
    from mockoss.profiles.base import ResponsesRequestView
    from mockoss.profiles.vllm import VllmProfile

__all__ = ["ResponsesPlan", "profile_shapes", "request_plan"]


class _ItemError(Exception):
    """An exception ``harmony_to_response_output`` raises, with the HTTP status it maps to."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True, slots=True)
class ResponsesPlan:
    """Everything about one (completion, limit, switches) that does not depend on the request."""

    harmony_error: str | None
    failure: tuple[int, str] | None  # an _ItemError while building the output items
    output: Template  # the JSON array of output items; holes index the final ids
    stream_output: Template  # the same after a stream: holes index the stream ids (ids reused)
    final_ids: int
    events: tuple[Template, ...]  # stream frames; holes index the stream ids (empty when joined)
    joined: Template | None  # the same frames as one template, sequence numbers filled in (_join_events)
    cuts: dict[int, tuple[int, ...]]  # the joined frames' byte offsets, per id length (16 and 32 hex digits)
    stream_ids: int
    status: str
    output_tokens: int
    reasoning_tokens: int


def _view(message: Message) -> MessageView:
    role = message.author.role
    content = message.content
    return MessageView(
        role=getattr(role, "value", role),
        channel=message.channel,
        recipient=normalize_recipient(message.recipient),
        text=getattr(content[0], "text", "") if content else "",
    )


def _replay(trace: ParserTrace) -> tuple[list[Segment], list[MessageView], bool, int]:
    """``HarmonyParser.process_chunk`` over the trace, then ``flush()``.

    Returns (segments, completed messages, whether ``flush`` produced the last one, reasoning
    tokens). Reasoning tokens are the non-special tokens after which the parser's channel is
    ``analysis``, or ``commentary`` with a (normalised) recipient: tool-call arguments count;
    stop tokens, ``<|message|>`` and header tokens do not.
    """
    segments: list[Segment] = []
    messages: list[MessageView] = []
    reasoning = 0
    skipped = {index for index, _ in trace.skipped}  # process_chunk: no segment for a token that raised
    for index, step in enumerate(trace.steps):
        if index in skipped:
            continue
        recipient = normalize_recipient(step.recipient)
        # _is_reasoning_token (vllm-project/vllm@v0.32.0:vllm/parser/harmony.py): special tokens
        # (<|message|>, ids from 199998 up) are not counted.
        if (step.channel == "analysis" or (step.channel == "commentary" and recipient is not None)) and step.token < 199998:
            reasoning += 1
        done = _view(step.completed) if step.completed is not None else None
        if done is not None:
            messages.append(done)
        segments.append((step.channel, recipient, step.delta or "", done))
    flushed = False
    if trace.error is None and trace.eos_error is not None:
        text = load_encoding().decode(list(trace.pending_tokens))
        done = MessageView("assistant", "final", None, text)
        segments += [("final", None, text, None), ("final", None, "", done)]
        messages.append(done)
        flushed = True
    elif trace.error is None and trace.eos_messages:
        done = _view(trace.eos_messages[0])
        segments.append((done.channel, done.recipient, "", done))
        messages.append(done)
        flushed = True
    return segments, messages, flushed, reasoning


def _reasoning(text: str, b: TemplateBuilder) -> dict[str, Any]:
    return {"id": "rs_" + b.new_id(), "summary": [], "type": "reasoning", "content": [{"text": text, "type": "reasoning_text"}], "encrypted_content": None, "status": None}


def _web_search(text: str, recipient: str, b: TemplateBuilder, fields: bool = False) -> dict[str, Any]:
    """``_parse_browser_tool_call``: the ``cursor:`` prefix, the invalid-JSON placeholder. With
    ``fields`` (``responses_body_fields``) the search action in the field order of the openai types
    vLLM 0.32/0.33 dump (``type, queries, query, sources``; both goldens)."""
    try:
        call = json.loads(text)
    except json.JSONDecodeError:
        retry = f"Invalid JSON args, caught and retried: {text}"
        call = {"query": retry, "url": retry, "pattern": retry}
    if not isinstance(call, dict):
        raise _ItemError(500, f"'{type(call).__name__}' object has no attribute 'get'")
    if recipient == "browser.search":
        query = f"cursor:{call.get('query', '')}"
        action: dict[str, Any] = (
            {"type": "search", "queries": None, "query": query, "sources": None}
            if fields
            else {"query": query, "type": "search", "queries": None, "sources": None}
        )
    elif recipient == "browser.open":
        action = {"type": "open_page", "url": f"cursor:{call.get('url', '')}"}
    elif recipient == "browser.find":
        action = {"pattern": call.get("pattern", ""), "type": "find_in_page", "url": f"cursor:{call.get('url', '')}"}
    else:
        raise _ItemError(400, f"Unknown browser action: {recipient}")
    return {"id": "ws_" + b.new_id(), "action": action, "status": "completed", "type": "web_search_call"}


def _items(
    m: MessageView, incomplete: bool, b: TemplateBuilder, functions: frozenset[str], ignore: bool, fields: bool = True,
    unknown_channel: str = "error",
) -> list[dict[str, Any]]:
    """``harmony_to_response_output`` for one message (plus the no-tools switch); ``fields`` is the
    ``responses_body_fields`` switch (function calls' ``async``/``caller``/``namespace``, messages' ``phase``);
    ``unknown_channel`` is the ``responses_unknown_channel`` switch (``"drop"``: no item for a
    message without recipient on a channel other than analysis/commentary/final)."""
    if m.role != "assistant":
        return []
    recipient = None if ignore else m.recipient
    status = "incomplete" if incomplete else "completed"
    if recipient is not None:
        if recipient.startswith("browser."):
            return [] if incomplete else [_web_search(m.text, recipient, b, fields)]
        if is_function_recipient(recipient, functions):
            rid = b.new_id()
            name = recipient.removeprefix("functions.")
            extra = {"async": None, "caller": None, "namespace": None} if fields else {}
            return [{"arguments": m.text, "call_id": "call_" + rid, "name": name, "type": "function_call", "id": "fc_" + rid, **extra, "status": status}]
        if recipient in BUILTIN_TOOL_TO_MCP_SERVER_LABEL:
            return [_reasoning(m.text, b)]
        # "All other recipients are MCP calls" (_parse_mcp_recipient: first and last segment).
        parts = recipient.split(".")
        return [{"id": "mcp_" + b.new_id(), "arguments": m.text, "name": parts[-1], "server_label": parts[0], "type": "mcp_call", "approval_request_id": None, "error": None, "output": None, "status": status}]
    if m.channel == "analysis":
        return [_reasoning(m.text, b)]
    if m.channel in ("commentary", "final"):
        content = [{"annotations": [], "text": m.text, "type": "output_text", "logprobs": None}]
        phase = {"phase": None} if fields else {}
        return [{"id": "msg_" + b.new_id(), "content": content, "role": "assistant", "status": status, "type": "message", **phase}]
    if unknown_channel == "drop":
        return []
    raise _ItemError(400, f"Unknown channel: {m.channel}")  # ValueError / VLLMValidationError → BadRequestError


def profile_shapes(profile: VllmProfile) -> tuple[bool, bool, bool]:
    """(0.32/0.33 stream events, body fields, id reuse) for ``profile``; the 2025 mapping (the dated
    ``vllm-2025``/``vllm-0.10.1`` profiles) keeps the shapes mockoss emulated for it before."""
    if profile.responses_mapping == "2025":
        return (False, False, False)
    return (profile.responses_stream_events == "content_part", profile.responses_body_fields, profile.responses_reuse_stream_ids)


def _reuse_ids(items: list[dict[str, Any]], streamed: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """``reuse_streamed_item_ids`` (vllm-project/vllm@v0.32.0:vllm/entrypoints/openai/responses/utils.py):
    pair rebuilt items with the items streamed for the same message by type, in order; a paired
    item takes the streamed ``id`` (and ``call_id``), an unpaired one keeps its own."""
    remaining = list(streamed)
    out = []
    for item in items:
        for i, (kind, item_id, call_id) in enumerate(remaining):
            if kind != item["type"]:
                continue
            item = {**item, "id": item_id}
            if kind == "function_call":
                item["call_id"] = call_id
            del remaining[i]
            break
        out.append(item)
    return out


def _build_plan(
    completion: Completion, max_tokens: int | None, strict: bool, functions: frozenset[str], ignore: bool, mapping: str = "2026",
    function_call_events: bool = True, parse: tuple[str, bool] = ("oss-harmony", True),
    shapes: tuple[bool, bool, bool] = (True, True, True), unknown_channel: str = "error",
) -> ResponsesPlan:
    # shapes: (responses_stream_events == "content_part", responses_body_fields, responses_reuse_stream_ids)
    # parse: (harmony_library, skip_errors); vLLM 0.32/0.33's HarmonyContext.append_output feeds
    # HarmonyParser.process_chunk, which skips erroring tokens (vllm/entrypoints/openai/responses/context.py).
    trace = completion.trace(max_tokens=max_tokens, strict=strict, library=parse[0], skip_errors=parse[1])
    segments, messages, flushed, reasoning = _replay(trace)
    content_part, fields, reuse = shapes
    items_of = lambda m, incomplete, b: _items(m, incomplete, b, functions, ignore, fields, unknown_channel)
    if mapping == "2025":  # recipients as parsed (no _normalize_recipient), 2025 rules
        from mockoss.profiles.vllm.responses_2025 import items_2025, raw_view

        raw = [raw_view(m) for m in (*trace.messages, *trace.eos_messages)]
        messages = raw + messages[len(raw) :]
        items_of = lambda m, incomplete, b: items_2025(
            m, incomplete, b, _reasoning, _web_search, lambda c: _ItemError(400, f"Unknown channel: {c}")
        )
    legacy = mapping == "2025"
    if legacy:  # the 2025 stream saw recipients as parsed, without _normalize_recipient
        from mockoss.profiles.vllm.responses_2025 import raw_view

        steps = trace.steps
        segments = [
            (c, steps[i].recipient, d, raw_view(steps[i].completed) if steps[i].completed is not None else m)
            if i < len(steps)
            else (c, r, d, m)
            for i, (c, r, d, m) in enumerate(segments)
        ]
    stream_ids = TemplateBuilder(completion.text)
    streamed: dict[int, list[tuple[str, str, str]]] = {}
    events = stream_event_templates(
        segments, stream_ids, function_tool_names=functions, ignore_recipients=ignore, legacy=legacy,
        function_call_events=function_call_events, shapes=StreamShapes(content_part, fields), done_items=streamed,
    )
    final_ids = TemplateBuilder(completion.text)
    items: list[dict[str, Any]] = []
    stream_items: list[dict[str, Any]] = []
    failure = None
    if trace.error is None:
        try:
            for index, message in enumerate(messages):
                last = flushed and index == len(messages) - 1
                items += items_of(message, last, final_ids)
                if reuse:
                    stream_items += _reuse_ids(items_of(message, last, stream_ids), streamed.get(id(message), []))
        except _ItemError as exc:
            failure, items, stream_items = (exc.status, exc.message), [], []
    length = completion.emit(max_tokens).finish_reason == "length"
    return ResponsesPlan(
        harmony_error=trace.error,
        failure=failure,
        output=final_ids.compile(items),
        stream_output=stream_ids.compile(stream_items) if reuse else final_ids.compile(items),
        final_ids=final_ids.count,
        **_join_events(events),
        stream_ids=stream_ids.count,
        status="incomplete" if length or not items else "completed",
        output_tokens=len(trace.tokens),
        reasoning_tokens=reasoning,
    )


#: Characters tried as the id-slot marker of a joined events template (the first absent from it).
_JOIN_MARKERS = "\U000f00a1\U000f00a2\U000f00a3\U000f00a4"


def _join_events(events: list[Template]) -> dict[str, Any]:
    """``events``, the stream's item events (sequence numbers from 2), as one template whose
    sequence numbers are filled in and whose holes are only the stream ids, so a request fills
    them all with one ``%`` and cuts the encoded text at each ``"\n\n"``: one frame per event.
    A 10,000-token answer's stream filled and encoded each of its ~10,700 events on every
    request, ~10 ms on the event loop (issue 9, eighth session); the join costs ~2.

    Kept as separate templates (``joined`` ``None``) unless every event, filled, ends with its one
    ``"\n\n"`` (JSON escapes newlines, so an event is ``event: T\ndata: {…}\n\n``) and does not
    start with a newline, the cut's premise; also when no marker character is absent."""
    separate: dict[str, Any] = {"events": tuple(events), "joined": None, "cuts": {}}
    whole = "".join(fmt for fmt, _ in events)
    marker = next((m for m in _JOIN_MARKERS if m not in whole), None)
    if marker is None:
        return separate
    parts: list[str] = []
    holes: list[int] = []
    sizes: list[tuple[int, int]] = []  # per frame: its bytes without the ids, its ids
    width = len(marker.encode())
    for seq, (fmt, slots) in enumerate(events, 2):
        filled = fmt % tuple(marker if h >= 0 else seq for h in slots)
        if filled.find("\n\n") != len(filled) - 2 or filled.startswith("\n"):
            return separate
        parts.append(filled.replace("%", "%%").replace(marker, "%s"))
        ids = [h for h in slots if h >= 0]
        holes += ids
        sizes.append((len(filled.encode()) - width * len(ids), len(ids)))
    cuts = {digits: tuple(accumulate((size + digits * count for size, count in sizes), initial=0)) for digits in (16, 32)}
    return {"events": (), "joined": ("".join(parts), tuple(holes)), "cuts": cuts}


def _plan(
    completion: Completion, max_tokens: int | None, strict: bool, functions: frozenset[str], ignore: bool, mapping: str = "2026",
    function_call_events: bool = True, parse: tuple[str, bool] = ("oss-harmony", True),
    shapes: tuple[bool, bool, bool] = (True, True, True), unknown_channel: str = "error",
) -> ResponsesPlan:
    max_tokens = completion.cap(max_tokens)  # every limit that does not cut the answer shares a plan
    key = ("vllm.responses", max_tokens, strict, functions, ignore, mapping, function_call_events, parse, shapes, unknown_channel)
    plan = completion._memo.get(key)
    if plan is None:
        plan = completion._memo[key] = _build_plan(
            completion, max_tokens, strict, functions, ignore, mapping, function_call_events, parse, shapes, unknown_channel
        )
    return plan  # type: ignore[return-value]


def request_plan(profile: VllmProfile, completion: Completion, request: ResponsesRequestView) -> ResponsesPlan:
    """The plan (memoised on ``completion``) of ``completion`` for ``request`` under ``profile``:
    with the scripted engine's ``<|endoftext|>`` (``end_of_script_eos``), the request's limit and
    declared function tools, and the profile's parse and mapping switches."""
    if profile.end_of_script_eos:  # the scripted engine's <|endoftext|> after a script without a stop token
        completion = with_end_of_script(completion)
    ignore = profile.responses_ignore_recipients_without_tools and not request.tools
    mapping = profile.responses_mapping
    # The 2025 mapping (dated variants) keeps its former error handling: errors surface.
    parse = (profile.harmony_library, profile.harmony_errors == "skip" and mapping == "2026")
    return _plan(
        completion, request.max_output_tokens, profile.strict, request.function_tool_names, ignore, mapping,
        profile.responses_stream_function_calls, parse,
        profile_shapes(profile), profile.responses_unknown_channel,
    )
