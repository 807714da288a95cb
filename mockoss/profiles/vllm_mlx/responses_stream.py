"""The streamed ``POST /v1/responses`` of vllm-mlx for gpt-oss (waybarrios/vllm-mlx@v0.6.0:
``vllm_mlx/server.py`` ``_stream_responses_request`` and ``_responses_sse_event``).

Events are ``event: TYPE\\ndata: {…}\\n\\n`` (pydantic's compact JSON, ``sequence_number`` first,
from 1). ``response.created`` and ``response.in_progress`` carry the response ``in_progress`` with
``usage: null``. Per engine output (the raw, uncleaned stream of :mod:`.chat`): the reasoning
parser's reasoning opens a ``reasoning`` item (``output_item.added``, ``content_part.added``) and
goes out as ``reasoning_text.delta``; its content goes through the tool parser (with no marker
gate on this branch) and what comes back as content opens the ``message`` item and goes out as
``output_text.delta``. Without a reasoning parser, deltas have the Harmony tokens stripped and
reach the tool parser only once a marker appears. At the end the *raw* text is parsed for calls
again (so a streamed Responses request finds a call that streamed chat loses), the items are
closed in order (reasoning, message — whose text is what was streamed, or the cleaned tool-parser
leftover when nothing was — then each call as ``added`` / ``function_call_arguments.delta`` /
``done``), and ``response.completed`` carries the whole response.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import SSE_MEDIA_TYPE, Reply, RequestContext
from mockoss.profiles.replay import FramesTemplate, IdRecorder, Template, new_id, templatable
from mockoss.profiles.vllm_mlx import cached
from mockoss.profiles.vllm_mlx import parsers as p
from mockoss.profiles.vllm_mlx.engine import coerce_arguments, token_limit
from mockoss.profiles.vllm_mlx.stream import markup_possible
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion
    from mockoss.profiles.vllm_mlx import VllmMlxProfile

__all__ = ["stream_responses"]


def stream_responses(
    profile: VllmMlxProfile, completion: Completion, request: Any, ctx: RequestContext, response: Any, chat_tools: list[dict] | None
) -> Reply:
    """The event stream. ``response(items, count, finish, rid)`` builds the response object as
    :func:`mockoss.profiles.vllm_mlx.responses.surface_responses` does (``finish=None``: in
    progress); ``chat_tools`` are the request's function tools in chat form (``None``: none).

    The events are a template memoised per (limit, tools, ``tool_choice`` ``none``, profile)
    (:mod:`mockoss.profiles.replay`): the three response objects (created, in progress,
    completed) are this request's, their ``output`` the template's items with this request's ids."""
    body = request.body if isinstance(request.body, dict) else {}
    limit = token_limit(body.get("max_output_tokens"), profile.max_tokens)
    outputs = cached.outputs(completion, limit)
    rid = "resp_" + ctx.ids.next()
    choice_none = body.get("tool_choice", "auto") == "none"
    if not templatable(completion.text):
        frames = _events(profile, outputs, choice_none, chat_tools, ctx.ids, lambda items, count, finish: response(items, count, finish, rid))
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))

    def build() -> tuple[object, ...]:
        recorder = IdRecorder()
        objects: list[tuple[Template, str, int, str | None]] = []

        def placeholder(items: list[dict[str, Any]], count: int, finish: str | None) -> str:
            objects.append((Template(dumps(items)), _answer(items), count, finish))
            return recorder.value(f"response {len(objects) - 1}")

        frames = _events(profile, outputs, choice_none, chat_tools, recorder, placeholder)  # type: ignore[arg-type]
        return recorder.frozen(), FramesTemplate(frames), tuple(objects)

    key = ("vllm_mlx.responses.frames", cached.limit_key(completion, limit), cached.tools_key(chat_tools, chat_tools), choice_none, profile)
    calls, template, objects = cached.memoised(completion, key, build)
    skeletons = []
    for _items, answer, count, finish in objects:
        skeleton = response([], count, finish, rid)
        skeleton["output"], skeleton["output_text"] = _OUTPUT, answer
        text = dumps(skeleton)
        if text.count(_OUTPUT_JSON) != 1:  # the request's own fields hold the placeholder: built directly
            frames = _events(profile, outputs, choice_none, chat_tools, ctx.ids, lambda i, c, f: response(i, c, f, rid))
            return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames))
        skeletons.append(text.split(_OUTPUT_JSON))
    ids = IdRecorder.replay(calls, ctx.ids, _Values())  # the response objects' places hold b"" until filled below
    places = [number for number, (function, _name) in enumerate(calls) if function is None]  # "response 0", "response 1", …
    for place, (items, _answer_text, _count, _finish), (head, tail) in zip(places, objects, skeletons, strict=True):
        ids[place] = b"".join((head.encode(), items.fill(ids), tail.encode()))  # its output's ids are drawn ones
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(template.fill(ids)))


#: Where a response object's ``output`` goes (a NUL-holding text, checked to occur once).
_OUTPUT = "\x00mockoss-output\x00"
_OUTPUT_JSON = dumps(_OUTPUT)


class _Values(dict):  # type: ignore[type-arg]
    """The values a replay reads: none yet (the response objects are filled in after the ids are
    drawn: their ``output`` holds ids); ``b""`` in their places until then."""

    def __missing__(self, key: str) -> bytes:
        return b""


def _answer(items: list[dict[str, Any]]) -> str:
    """``output_text``: the message items' text (``_build_response_object``)."""
    return "".join(part["text"] for item in items if item["type"] == "message" for part in item["content"] if part["type"] == "output_text")


def _events(
    profile: VllmMlxProfile, outputs: Any, choice_none: bool, chat_tools: list[dict] | None, ids: Any, response: Any
) -> list[bytes]:
    """The events of the engine's ``outputs``; ``response(items, count, finish)`` is the text of
    the response object an event carries."""
    frames: list[bytes] = []
    seq = 1

    def event(kind: str, payload: dict[str, Any]) -> None:
        nonlocal seq
        frames.append(f"event: {kind}\ndata: {dumps({'sequence_number': seq, 'type': kind, **payload})}\n\n".encode())
        seq += 1

    event("response.created", {"response": response([], 0, None)})
    event("response.in_progress", {"response": response([], 0, None)})
    reasoner: Any = p.REASONING_PARSERS[profile.reasoning_parser][1]() if profile.reasoning_parser is not None else None
    use_tools = chat_tools is not None and not choice_none and profile.tool_call_parser is not None
    tooler = p.HarmonyToolStream(new_id=lambda: "call_" + new_id(ids, width=8), fixed=profile.harmony_call_fix) if use_tools else None
    fixed = profile.harmony_call_fix
    guard = profile.stream_finish_guard  # 0.5.0: finished outputs and reasoning content reach the tool parser
    raw = text = reasoning = tool_text = ""
    markup = False
    slots: dict[str, tuple[str, int]] = {}  # "rs" / "msg" -> (item id, output index)

    def open_item(kind: str) -> tuple[str, int]:
        if kind not in slots:
            slots[kind] = (f"{kind}_" + ids.next(), len(slots))
            ident, index = slots[kind]
            if kind == "rs":
                item = {"id": ident, "type": "reasoning", "summary": [], "content": [], "status": "in_progress"}
                part = {"type": "reasoning_text", "text": ""}
            else:
                item = {"id": ident, "type": "message", "role": "assistant", "content": [], "status": "in_progress"}
                part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            event("response.output_item.added", {"output_index": index, "item": item})
            event("response.content_part.added", {"item_id": ident, "output_index": index, "content_index": 0, "part": part})
        return slots[kind]

    def emit_text(content: str) -> None:
        nonlocal text
        ident, index = open_item("msg")
        text += content
        event("response.output_text.delta", {"item_id": ident, "output_index": index, "content_index": 0, "delta": content, "logprobs": []})

    def tool_content(result: dict | None) -> str:
        return "" if result is None else result.get("content") or ""

    count, finish = 0, None
    for done, (delta, finished, reason) in enumerate(outputs, 1):
        count, finish = (min(done, len(outputs) - 1) if finished and reason == "stop" else done), reason
        if not delta and not (guard and ((reasoner is not None and finished) or (tooler is not None and markup and finished))):
            continue
        previous, raw = raw, raw + delta
        if reasoner is not None:
            message = reasoner.feed(previous, raw, delta)
            if message is None:
                if not (guard and finished and tooler is not None and markup):
                    continue
                message = p.Delta()
            if message.reasoning:
                ident, index = open_item("rs")
                reasoning += message.reasoning
                event("response.reasoning_text.delta", {"item_id": ident, "output_index": index, "content_index": 0, "delta": message.reasoning})
            content = message.content or ""
            if guard and tooler is not None and (content or (finished and markup)):
                before, tool_text = tool_text, tool_text + content
                content = tool_content(tooler.feed(before, tool_text, content))
            if content:
                emit_text(content)
            continue
        content = p.SPECIAL_TOKENS.sub("", delta)
        if tooler is not None and (delta or (guard and finished and markup)):
            if not markup and not markup_possible(tool_text[-512:] + delta if delta else "", fixed):
                tool_text += delta
            else:
                markup = True
                before, tool_text = tool_text, tool_text + delta
                content = tool_content(tooler.feed(before, tool_text, delta))
        if content:
            emit_text(content)
    calls: list = []
    leftover: str | None = raw
    if (use_tools or (not profile.tool_parse_needs_tools and not choice_none)) and profile.tool_call_parser is not None:
        calls, leftover = p.tool_calls_with_fallback(raw, fixed=fixed, tools_declared=bool(chat_tools))
    final_text = text if text or calls or not leftover else p.clean_output_text(leftover)
    items: list[dict[str, Any]] = []
    if "rs" in slots:
        ident, index = slots["rs"]
        item = {"id": ident, "type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": reasoning}], "status": "completed"}
        event("response.reasoning_text.done", {"item_id": ident, "output_index": index, "content_index": 0, "text": reasoning})
        event("response.content_part.done", {"item_id": ident, "output_index": index, "content_index": 0, "part": item["content"][0]})
        event("response.output_item.done", {"output_index": index, "item": item})
        items.append(item)
    if "msg" in slots or final_text:
        ident, index = open_item("msg")
        part = {"type": "output_text", "text": final_text, "annotations": [], "logprobs": []}
        item = {"id": ident, "type": "message", "role": "assistant", "content": [part], "status": "completed"}
        event("response.output_text.done", {"item_id": ident, "output_index": index, "content_index": 0, "text": final_text, "logprobs": []})
        event("response.content_part.done", {"item_id": ident, "output_index": index, "content_index": 0, "part": part})
        event("response.output_item.done", {"output_index": index, "item": item})
        items.append(item)
    for call in calls:
        index = len(slots) + sum(1 for i in items if i["type"] == "function_call")
        item = {"id": "fc_" + ids.next(), "type": "function_call", "call_id": "call_" + new_id(ids, width=8), "name": call.name,
                "arguments": coerce_arguments(call.arguments, call.name, chat_tools) if call.coerce else call.arguments, "status": "completed"}
        event("response.output_item.added", {"output_index": index, "item": {**item, "status": "in_progress"}})
        event("response.function_call_arguments.delta", {"item_id": item["id"], "output_index": index, "delta": item["arguments"]})
        event("response.output_item.done", {"output_index": index, "item": item})
        items.append(item)
    event("response.completed", {"response": response(items, count, finish or "stop")})
    return frames
