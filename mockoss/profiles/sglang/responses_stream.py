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

from typing import TYPE_CHECKING, Any

from mockoss.profiles.base import SSE_MEDIA_TYPE, Reply, RequestContext, ResponsesRequestView
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
    from mockoss.harmony import ParserTrace

__all__ = ["stream_events"]



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


def stream_events(request: ResponsesRequestView, trace: ParserTrace, rid: str, ctx: RequestContext, status: str) -> Reply:
    """The SSE frames of SGLang's Harmony Responses stream for ``trace``; see the module docstring."""
    reasoning = request.body.get("reasoning")
    include = request.body.get("include") or ()
    stream = _Stream(rid, isinstance(reasoning, dict) and reasoning.get("summary") is not None, "reasoning.encrypted_content" in include)
    start = response_object(request, rid, ctx, [], "in_progress", None, stream_frame=True)
    stream.send("response.created", response=start)
    stream.send("response.in_progress", response=start)
    content = ""
    roles = _step_roles(trace)
    try:
        for index, (step, delta) in enumerate(zip(trace.steps, content_deltas(trace), strict=True)):
            if step.completed is not None:
                message = step.completed
                texts = [getattr(part, "text", "") for part in message.content]
                for item in items_for(role_of(message), message.channel, message.recipient, texts, ctx.ids):
                    stream.update(item, done=True)
                content = ""
                continue
            content += delta
            if content:
                for item in items_for(roles[index], step.channel, step.recipient, [content], ctx.ids, done=False):
                    stream.update(item)
        if trace.error is not None:
            raise ItemError(f"HarmonyError: {harmony_error_text(trace.error)}")
        failure = builtin_call(trace)
        if failure is not None:
            raise ItemError(f"KeyError: {failure}")
        if stream.model is not None:
            stream.update(stream.model, done=True, status="incomplete" if status != "completed" else "completed")
    except ItemError as exc:
        return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(stream.frames), headers=_STREAM_HEADERS, abort=str(exc))
    final = response_object(request, rid, ctx, stream.emitted, status, usage_object(0), stream_frame=True)
    stream.send(f"response.{status}", response=final)
    return Reply(status=200, media_type=SSE_MEDIA_TYPE, frames=tuple(stream.frames), headers=_STREAM_HEADERS)
