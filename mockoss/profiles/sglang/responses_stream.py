"""``POST /v1/responses`` with ``stream: true`` as SGLang serves gpt-oss (sgl-project/sglang@v0.5.23).

Read from, and checked against by running (``tools/sglang_serving_diff.py``),
``python/sglang/srt/entrypoints/openai/serving_responses.py`` ``responses_stream_generator`` and
``entrypoints/context.py`` ``StreamingHarmonyContext``:

* Frames are ``event: T\\ndata: {...}\\n\\n`` (orjson), ``sequence_number`` from 0; no ``[DONE]``.
  ``response.created`` and ``response.in_progress`` carry the response with ``tools: []``.
* After every decode step (one token) the messages the parser completed are turned into items and
  closed, then the open message is read (``parse_remaining_state``) and its growth sent as deltas.
  An item's ``output_item.added`` comes with its first text (``status: "in_progress"``, empty
  content); a message's ``content_part.added`` with it, a reasoning item has no part events.
  ``output_text`` events carry ``logprobs: []``. On close: ``*.done`` events, then
  ``output_item.done`` with ``status`` ``completed`` (a reasoning item too, unlike the
  non-streamed one's ``null``). A message the parser completes before any of its text was seen
  (empty, or a call the open-state reader skips) is added and closed at once.
* An item still open when the tokens end (``max_output_tokens``) is closed ``incomplete``.
* The last event is ``response.completed`` (or ``response.incomplete``) with the items as streamed
  and a usage of zeros (``StreamingHarmonyContext`` counts no tokens), ``tools: []``.
* A ``HarmonyError``, an unknown recipient or channel, an item whose type changes while open
  (``Harmony changed item type before closing the previous item``) or a built-in tool call (no
  session) raises inside the generator after HTTP 200: the connection drops mid-stream, no error
  event (``Reply.abort``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import SSE_MEDIA_TYPE, Reply, RequestContext, ResponsesRequestView
from mockoss.profiles.replay import Draws, FramesTemplate, IdRecorder, Template
from mockoss.profiles.sglang.responses import (
    _STREAM_HEADERS,
    ItemError,
    builtin_call,
    content_deltas,
    harmony_error_text,
    items_for,
    reasoning_item,
    response_object,
    role_of,
    usage_object,
)
from mockoss.profiles.wire import dumps

if TYPE_CHECKING:
    from mockoss.harmony import Completion, ParserTrace

__all__ = ["output_template", "splice_output", "stream_events"]



class _Stream:
    """``_update_item``'s state: the open item as last sent, and the closed ones."""

    def __init__(self, rid: str, summary: bool, encrypt: bool) -> None:
        self.frames: list[bytes] = []
        self.seq = 0
        self.emitted: list[dict[str, Any]] = []
        self.active: dict[str, Any] | None = None
        self.model: dict[str, Any] | None = None  # the open item's last full snapshot
        self.rid = rid
        self.summary, self.encrypt = summary, encrypt

    def send(self, kind: str, **fields: Any) -> None:
        payload = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        self.frames.append(f"event: {kind}\ndata: {dumps(payload)}\n\n".encode())

    def update(self, item: dict[str, Any], *, done: bool = False, status: str = "completed") -> None:
        if item["type"] == "reasoning":
            text = "\n".join(part["text"] for part in item["content"])
            item = reasoning_item(item["id"], text, item["status"], self.summary, self.encrypt)
        snapshot = dict(item)
        index = len(self.emitted)
        if self.active is None:
            active = dict(snapshot)
            if "status" in active:
                active["status"] = "in_progress"
            for key in ("content", "summary"):
                if key in active:
                    active[key] = []
            for key in ("arguments", "code"):
                if key in active:
                    active[key] = ""
            if "encrypted_content" in active:
                active["encrypted_content"] = None
            self.active = active
            self.send("response.output_item.added", output_index=index, item=dict(active))
            if item["type"] in ("web_search_call", "code_interpreter_call"):
                self.send(f"response.{item['type']}.in_progress", output_index=index, item_id=active["id"])
        elif self.active["type"] != snapshot["type"]:
            raise ItemError(f"Harmony changed item type before closing the previous item, rid={self.rid}")
        active = self.active
        snapshot["id"] = active["id"]
        if "call_id" in active:
            snapshot["call_id"] = active["call_id"]
        self.model = snapshot
        common = {"output_index": index, "item_id": active["id"]}
        for key in ("content", "summary"):
            self._parts(item["type"], key, snapshot.get(key) or [], common, done)
        if "arguments" in snapshot or "code" in snapshot:
            key = "arguments" if "arguments" in snapshot else "code"
            prefix = "response.function_call_arguments" if key == "arguments" else "response.code_interpreter_call_code"
            value, previous = snapshot[key] or "", active[key] or ""
            if not value.startswith(previous):
                raise ItemError(f"Harmony rewrote previously emitted tool input, rid={self.rid}")
            if value[len(previous):]:
                self.send(f"{prefix}.delta", **common, delta=value[len(previous):])
            active[key] = value
            if done:
                self.send(f"{prefix}.done", **common, **{key: value})
        if done:
            if "status" in snapshot:
                snapshot["status"] = status
            if status == "completed" and item["type"] in ("web_search_call", "code_interpreter_call"):
                action = "searching" if item["type"] == "web_search_call" else "interpreting"
                self.send(f"response.{item['type']}.{action}", **common)
                self.send(f"response.{item['type']}.completed", **common)
            self.send("response.output_item.done", output_index=index, item=snapshot)
            self.emitted.append(snapshot)
            self.active = self.model = None

    def _parts(self, kind: str, key: str, parts: list[dict[str, Any]], common: dict[str, Any], done: bool) -> None:
        if not parts:
            return
        summary = key == "summary"
        prefix = "response.reasoning_summary_text" if summary else "response.output_text" if kind == "message" else "response.reasoning_text"
        index_key = "summary_index" if summary else "content_index"
        part_prefix = "response.reasoning_summary_part" if summary else "response.content_part" if kind == "message" else None
        extra = {"logprobs": []} if kind == "message" and not summary else {}
        sent = self.active[key]  # type: ignore[index]
        for index, part in enumerate(parts):
            fields = {**common, index_key: index}
            if index == len(sent):
                empty = {**part, "text": ""}
                sent.append(empty)
                if part_prefix:
                    self.send(f"{part_prefix}.added", **fields, part=empty)
            previous = sent[index]["text"]
            if not part["text"].startswith(previous):
                raise ItemError(f"Harmony rewrote previously emitted text, rid={self.rid}")
            if part["text"][len(previous):]:
                self.send(f"{prefix}.delta", **fields, delta=part["text"][len(previous):], **extra)
            sent[index] = part
            if done:
                self.send(f"{prefix}.done", **fields, text=part["text"], **extra)
                if part_prefix:
                    self.send(f"{part_prefix}.done", **fields, part=part)


def _step_roles(trace: ParserTrace) -> list[str]:
    """The role of the message each step belongs to (``parse_remaining_state`` skips a message whose
    ``current_role`` is not assistant: openai-harmony 0.0.4 reads ``assistant<|channel|>…`` as a
    ``tool`` message named so); a message still open at the end counts as assistant."""
    roles: list[str] = []
    start = 0
    for index, step in enumerate(trace.steps):
        roles.append("assistant")
        if step.completed is not None:
            roles[start:index + 1] = [role_of(step.completed)] * (index + 1 - start)
            start = index + 1
    return roles


@dataclass(frozen=True, slots=True)
class _Recorded:
    """A stream's request-independent middle (every event between ``response.in_progress`` and
    the last one), made with an :class:`~mockoss.profiles.replay.IdRecorder`: the frames with id
    markers, the items as streamed (ids as markers), the abort message (``None``: the stream ends
    with its response event; the response id as :data:`_RID`) and the ids drawn, of which the
    frames show a few (:meth:`IdRecorder.sparse <mockoss.profiles.replay.IdRecorder.sparse>`:
    SGLang draws one for the in-progress item at every decode step)."""

    frames: FramesTemplate
    emitted: list[dict[str, Any]]
    emitted_json: str
    emitted_template: Template
    abort: str | None
    draws: Draws


#: The response id in a recorded abort message (the generator's ``rid=`` in ``ItemError``).
_RID = "\x00rid\x00"
_MEMO = "sglang.responses.stream"


def _middle(stream: _Stream, trace: ParserTrace, ids: Any, status: str) -> str | None:
    """Send the events of ``trace`` after ``response.in_progress`` (the Harmony context's decode
    steps, then the open item closed); the abort message if the generator raises, else ``None``."""
    content = ""
    roles = _step_roles(trace)
    try:
        for index, (step, delta) in enumerate(zip(trace.steps, content_deltas(trace), strict=True)):
            if step.completed is not None:
                message = step.completed
                texts = [getattr(part, "text", "") for part in message.content]
                for item in items_for(role_of(message), message.channel, message.recipient, texts, ids):
                    stream.update(item, done=True)
                content = ""
                continue
            content += delta
            if content:
                for item in items_for(roles[index], step.channel, step.recipient, [content], ids, done=False):
                    stream.update(item)
        if trace.error is not None:
            raise ItemError(f"HarmonyError: {harmony_error_text(trace.error)}")
        failure = builtin_call(trace)
        if failure is not None:
            raise ItemError(f"KeyError: {failure}")
        if stream.model is not None:
            stream.update(stream.model, done=True, status="incomplete" if status != "completed" else "completed")
    except ItemError as exc:
        return str(exc)
    return None


def _recorded(completion: Completion, trace: ParserTrace, key: tuple[object, ...], summary: bool, encrypt: bool, status: str) -> _Recorded:
    """The memoised middle of the stream for ``key`` (:class:`_Recorded`)."""
    cached = completion._memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    ids = IdRecorder()
    stream = _Stream(_RID, summary, encrypt)
    stream.seq = 2  # after response.created and response.in_progress
    abort = _middle(stream, trace, ids, status)
    frames = FramesTemplate(stream.frames)
    emitted_json = dumps(stream.emitted)
    recorded = _Recorded(frames, stream.emitted, emitted_json, output_template(emitted_json), abort, ids.sparse(frames.used))
    completion._memo[key] = recorded
    return recorded


def stream_events(
    request: ResponsesRequestView, trace: ParserTrace, rid: str, ctx: RequestContext, status: str,
    completion: Completion | None = None, limit: object = None, variant: tuple[object, ...] = (),
) -> Reply:
    """The SSE frames of SGLang's Harmony Responses stream for ``trace``; see the module docstring.

    With ``completion`` (whose text holds no NUL character, which the id slots are made of), the
    events after ``response.in_progress`` are memoised on it per (``limit``: the token limit as
    ``Completion.cap`` gives it, ``variant``: what else ``trace`` was made with, the request's
    ``reasoning.summary`` and ``include`` of ``reasoning.encrypted_content``) with their ids as
    markers (:mod:`mockoss.profiles.replay`), and a request fills in its ids: the same bytes as
    computing them."""
    reasoning = request.body.get("reasoning")
    include = request.body.get("include") or ()
    summary = isinstance(reasoning, dict) and reasoning.get("summary") is not None
    encrypt = "reasoning.encrypted_content" in include
    start = response_object(request, rid, ctx, [], "in_progress", None, stream_frame=True)
    head = _Stream(rid, summary, encrypt)
    head.send("response.created", response=start)
    head.send("response.in_progress", response=start)
    if completion is None or "\x00" in completion.text:
        stream = head
        abort = _middle(stream, trace, ctx.ids, status)
        if abort is not None:
            return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(stream.frames), headers=_STREAM_HEADERS, abort=abort)
        final = response_object(request, rid, ctx, stream.emitted, status, usage_object(0), stream_frame=True)
        stream.send(f"response.{status}", response=final)
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(stream.frames), headers=_STREAM_HEADERS)
    recorded = _recorded(completion, trace, (_MEMO, limit, *variant, summary, encrypt, status), summary, encrypt, status)
    values = recorded.draws.replay(ctx.ids)
    frames = head.frames + recorded.frames.fill(values)
    if recorded.abort is not None:
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames), headers=_STREAM_HEADERS, abort=recorded.abort.replace(_RID, rid))
    final = response_object(request, rid, ctx, recorded.emitted, status, usage_object(0), stream_frame=True)
    kind = f"response.{status}"
    payload = {"type": kind, "sequence_number": len(frames), "response": final}
    frames.append(f"event: {kind}\ndata: {splice_output(dumps(payload), recorded.emitted_json, recorded.emitted_template, values)}\n\n".encode())
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(frames), headers=_STREAM_HEADERS)


def output_template(output_json: str) -> Template:
    """The template :func:`splice_output` fills for an output whose JSON is ``output_json``."""
    return Template('"output":' + output_json)


def splice_output(text: str, output_json: str, template: Template, values: Mapping[int, bytes]) -> str:
    """``text`` (a response object written with an output whose JSON is ``output_json``, id
    markers in it; ``template``: :func:`output_template` of it) with the output's markers filled:
    only inside the ``output`` list (the request's own fields, written before and after it, are
    left as they are, whatever they hold)."""
    written = '"output":' + output_json
    at = text.index(written)  # the first: no earlier field's JSON can hold '"output":' unescaped
    return text[:at] + template.fill(values).decode() + text[at + len(written):]
