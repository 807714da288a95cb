"""vLLM ``POST /v1/responses`` streaming for gpt-oss, and the helpers the non-streamed half shares.

Everything here runs once per completion (the result is memoised by
:mod:`mockoss.profiles.vllm.responses`): it replays the segments vLLM's ``HarmonyParser`` yields
through the Responses stream dispatchers and compiles each SSE frame into a ``%``-template whose
only holes are item ids and the ``sequence_number``. A request then only fills those holes.

Sources (vllm-project/vllm):

* ``vllm/parser/harmony.py@053e68ec``: ``HarmonyParser.process_chunk`` (one ``Segment(channel,
  recipient, delta, completed_message)`` per token, recipients through ``_normalize_recipient``,
  reasoning-token count), ``flush`` (``process_eos``; a ``HarmonyError`` there is recovered as a
  ``final`` message holding the decoded raw tokens).
* ``vllm/entrypoints/openai/responses/streaming_events.py`` (the ``is_function_recipient`` era;
  01e4fce0 for the leaf event builders): ``emit_content_delta_events``,
  ``emit_previous_item_done_events``, ``_resolve_mcp_name_label``, ``StreamingState``. The
  segment-driven loop is ``_process_harmony_streaming_events`` after PR #47185 (per-item
  ``content_index`` reset).
* Event field orders: openai-python 2.20.0 models dumped with ``model_dump_json`` (vLLM's
  ``api_router._convert_stream_to_sse_events``), e.g. the function-call ``output_item.done`` item
  really carries ``"id":null`` plus stray ``item_id``/``output_index``/``sequence_number:-1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mockoss.profiles.vllm.segments import is_function_recipient
from mockoss.profiles.wire import dumps

__all__ = [
    "BUILTIN_TOOL_TO_MCP_SERVER_LABEL",
    "MessageView",
    "Segment",
    "StreamShapes",
    "Template",
    "TemplateBuilder",
    "dumps",
    "fill",
    "stream_event_templates",
]

#: ``harmony_utils.BUILTIN_TOOL_TO_MCP_SERVER_LABEL`` (``streaming_events.TOOL_NAME_TO_MCP_SERVER_LABEL``
#: holds the same pairs). Recipient normalisation and the function-recipient rule come from
#: :mod:`mockoss.profiles.vllm.segments`, shared with the chat profile.
BUILTIN_TOOL_TO_MCP_SERVER_LABEL = {"python": "code_interpreter", "browser": "web_search_preview", "container": "container"}

#: A compiled frame: a ``%``-format string and, per hole, an index into the request's id list
#: (``-1`` = the ``sequence_number``).
Template = tuple[str, tuple[int, ...]]

_MARKERS = "\ue000\ue001\ue002\ue003\ue004\ue005\ue006\ue007"


@dataclass(frozen=True, slots=True)
class MessageView:
    """A completed Harmony message as vLLM's Responses code sees it (recipient normalised)."""

    role: str
    channel: str | None
    recipient: str | None
    text: str


#: ``(channel, recipient, delta, completed)`` after one token, as ``HarmonyParser.process_chunk``.
Segment = tuple[str | None, str | None, str, MessageView | None]


class TemplateBuilder:
    """Builds JSON with placeholder ids and compiles it into :data:`Template` s.

    The placeholder marker is a private-use character absent from the completion text, so it can
    never collide with content; ``%`` in content is escaped.
    """

    __slots__ = ("_marker", "count", "seq")

    def __init__(self, avoid: str, start: int = 0) -> None:
        self._marker = next((m for m in _MARKERS if m not in avoid), "\U000f0000")
        self.count = start
        self.seq = f"{self._marker}S{self._marker}"

    def new_id(self) -> str:
        """Reserve the next id slot and return its placeholder (32 hex digits at fill time)."""
        slot = f"{self._marker}{self.count}{self._marker}"
        self.count += 1
        return slot

    def compile(self, obj: Any, *, frame: str | None = None) -> Template:
        """Serialise ``obj``; with ``frame`` (an event type) wrap it as an SSE frame."""
        text = dumps(obj).replace(f'"{self.seq}"', self.seq)
        if frame is not None:
            text = f"event: {frame}\ndata: {text}\n\n"
        parts = text.split(self._marker)
        holes = tuple(-1 if p == "S" else int(p) for p in parts[1::2])
        return "%s".join(p.replace("%", "%%") for p in parts[0::2]), holes


def fill(template: Template, ids: Sequence[str], seq: int = 0) -> str:
    """Fill a :data:`Template` with the request's hex ids and a sequence number."""
    fmt, holes = template
    return fmt % tuple(seq if h < 0 else ids[h] for h in holes)


def _mcp_name_label(recipient: str) -> tuple[str, str]:
    """``streaming_events._resolve_mcp_name_label``: ``mcp.X`` → (X, X); else (r, label-or-r)."""
    if recipient.startswith("mcp."):
        name = recipient[len("mcp.") :]
        return name, name
    return recipient, BUILTIN_TOOL_TO_MCP_SERVER_LABEL.get(recipient, recipient)


class _Stream:
    """``StreamingState`` plus the dispatchers; appends compiled frames to ``frames``."""

    def __init__(
        self, b: TemplateBuilder, functions: frozenset[str], ignore_recipients: bool, legacy: bool = False, function_calls: bool = True,
        shapes: StreamShapes | None = None,
    ) -> None:
        self.b, self.functions, self.ignore, self.legacy = b, functions, ignore_recipients, legacy
        self.function_calls = function_calls
        self.shapes = shapes or StreamShapes()
        #: per completed message (by identity), the items its output_item.done events sent:
        #: (type, id slot, call_id slot or "") (the context's ``streamed_items_by_message``)
        self.done_items: dict[int, list[tuple[str, str, str]]] = {}
        self._current_done: list[tuple[str, str, str]] = []
        self.frames: list[Template] = []
        self.index, self.content, self.item, self.call = 0, -1, "", ""
        self.added = self.first_fc = False

    def emit(self, kind: str, body: dict[str, Any]) -> None:
        self.frames.append(self.b.compile(body, frame=kind))

    def common(self, kind: str, **fields: Any) -> None:
        """An event whose keys end ``item_id, output_index, sequence_number, type``."""
        self.emit(kind, {**fields, "item_id": self.item, "output_index": self.index, "sequence_number": self.b.seq, "type": kind})

    def added_item(self, item: dict[str, Any]) -> None:
        kind = "response.output_item.added"
        self.emit(kind, {"item": item, "output_index": self.index, "sequence_number": self.b.seq, "type": kind})

    def done_item(self, item: dict[str, Any]) -> None:
        kind = "response.output_item.done"
        self.emit(kind, {"item": item, "output_index": self.index, "sequence_number": self.b.seq, "type": kind})
        item_id = item.get("id") or item.get("item_id") or ""
        self._current_done.append((item["type"], item_id, item.get("call_id") or ""))

    def part(self, kind: str, part: dict[str, Any]) -> None:
        self.emit(kind, {"content_index": self.content, "item_id": self.item, "output_index": self.index, "part": part, "sequence_number": self.b.seq, "type": kind})

    # -- deltas (emit_content_delta_events) ------------------------------------------------
    def delta(self, channel: str | None, recipient: str | None, delta: str) -> None:
        if recipient is None:
            if channel in ("final", "commentary"):
                self.text_delta(delta)
            elif channel == "analysis":
                self.reasoning_delta(delta)
        elif self.legacy:  # streaming_events.py@01e4fce0: only commentary/analysis tool messages
            if channel == "final":
                return  # final + recipient: no events at all, the content vanishes from the stream
            if recipient.startswith("functions."):
                self.function_delta(delta, recipient.removeprefix("functions."))
            elif recipient == "python":
                self.code_delta(delta)
            else:
                self.mcp_delta(delta, recipient)
        elif is_function_recipient(recipient, self.functions):
            self.function_delta(delta, recipient.removeprefix("functions."))
        elif recipient == "python":
            self.code_delta(delta)
        else:  # is_mcp_tool_by_namespace: everything that is not a function call
            self.mcp_delta(delta, recipient)

    def text_delta(self, delta: str) -> None:
        if not self.added:
            self.added, self.item = True, "msg_" + self.b.new_id()
            self.added_item({"id": self.item, "content": [], "role": "assistant", "status": "in_progress", "type": "message", **self.shapes.phase})
            self.content += 1
            self.part("response.content_part.added", {"annotations": [], "text": "", "type": "output_text", "logprobs": []})
        kind = "response.output_text.delta"
        self.emit(kind, {"content_index": self.content, "delta": delta, "item_id": self.item, "logprobs": [], "output_index": self.index, "sequence_number": self.b.seq, "type": kind})

    def reasoning_delta(self, delta: str) -> None:
        if not self.added:
            # 0.32/0.33 emit_reasoning_delta_events: rs_ id, response.content_part.added; the former
            # emulation (responses_stream_events="reasoning_part") used msg_ and reasoning_part.*.
            prefix = "rs_" if self.shapes.content_part else "msg_"
            self.added, self.item = True, prefix + self.b.new_id()
            self.added_item({"id": self.item, "summary": [], "type": "reasoning", "content": None, "encrypted_content": None, "status": "in_progress"})
            self.content += 1
            kind = "response.content_part.added" if self.shapes.content_part else "response.reasoning_part.added"
            self.part(kind, {"text": "", "type": "reasoning_text"})
        kind = "response.reasoning_text.delta"
        self.emit(kind, {"content_index": self.content, "delta": delta, "item_id": self.item, "output_index": self.index, "sequence_number": self.b.seq, "type": kind})

    def function_delta(self, delta: str, name: str) -> None:
        if not self.function_calls:  # vLLM 0.10.1.1: no branch for functions.* (vllm#24076)
            return
        if not self.first_fc:  # two separate uuids in the stream (one shared rid when not streamed)
            self.first_fc, self.item = True, "fc_" + self.b.new_id()
            self.call = "call_" + self.b.new_id()
            self.added_item({"arguments": "", "call_id": self.call, "name": name, "type": "function_call", "id": self.item, **self.shapes.call_fields, "status": "in_progress"})
        kind = "response.function_call_arguments.delta"
        self.emit(kind, {"delta": delta, "item_id": self.item, "output_index": self.index, "sequence_number": self.b.seq, "type": kind})

    def mcp_delta(self, delta: str, recipient: str) -> None:
        if not self.added:
            name, label = _mcp_name_label(recipient)
            self.added, self.item = True, "mcp_" + self.b.new_id()
            self.added_item(_mcp_item(self.item, "", name, label, "in_progress"))
            self.common("response.mcp_call.in_progress")
        self.common_delta("response.mcp_call_arguments.delta", delta)

    def code_delta(self, delta: str) -> None:
        if not self.added:
            self.added, self.item = True, "tool_" + self.b.new_id()
            self.added_item({"id": self.item, "code": None, "container_id": "auto", "outputs": None, "status": "in_progress", "type": "code_interpreter_call"})
            self.common("response.code_interpreter_call.in_progress")
        self.common_delta("response.code_interpreter_call_code.delta", delta)

    def common_delta(self, kind: str, delta: str) -> None:
        self.emit(kind, {"delta": delta, "item_id": self.item, "output_index": self.index, "sequence_number": self.b.seq, "type": kind})

    # -- completed message (emit_previous_item_done_events, then reset_for_new_item) -------
    def done(self, msg: MessageView) -> None:
        text, recipient = msg.text, None if self.ignore else msg.recipient
        if recipient is not None:
            if recipient.startswith("functions.") if self.legacy else is_function_recipient(recipient, self.functions):
                self.function_done(text, recipient.removeprefix("functions."))
            elif recipient == "python":
                self.code_done(text)
            elif self.item.startswith("mcp_"):
                self.mcp_done(text, recipient)
        elif msg.channel == "analysis":
            self.reasoning_done(text)
        elif msg.channel in ("commentary", "final"):
            self.text_done(text)
        # tool_server is None in a mock, so emit_tool_action_events() adds nothing.
        self.done_items[id(msg)] = self._current_done
        self._current_done = []
        self.index += 1
        self.content, self.call, self.added, self.first_fc = -1, "", False, False

    def text_done(self, text: str) -> None:
        kind = "response.output_text.done"
        self.emit(kind, {"content_index": self.content, "item_id": self.item, "logprobs": [], "output_index": self.index, "sequence_number": self.b.seq, "text": text, "type": kind})
        part = {"annotations": [], "text": text, "type": "output_text", "logprobs": None}
        self.part("response.content_part.done", part)
        self.done_item({"id": self.item, "content": [part], "role": "assistant", "status": "completed", "type": "message", **self.shapes.phase})

    def reasoning_done(self, text: str) -> None:
        kind = "response.reasoning_text.done"
        self.emit(kind, {"content_index": self.content, "item_id": self.item, "output_index": self.index, "sequence_number": self.b.seq, "text": text, "type": kind})
        part = {"text": text, "type": "reasoning_text"}
        self.part("response.content_part.done" if self.shapes.content_part else "response.reasoning_part.done", part)
        self.done_item({"id": self.item, "summary": [], "type": "reasoning", "content": [part], "encrypted_content": None, "status": "completed"})

    def function_done(self, arguments: str, name: str) -> None:
        if not self.function_calls:
            return
        kind = "response.function_call_arguments.done"
        if self.shapes.content_part:
            # emit_function_call_done_events (0.32/0.33): the openai model puts ``name`` last; the
            # done item is a ResponseFunctionToolCall with its id plus stray output_index/sequence_number.
            self.emit(kind, {"arguments": arguments, "item_id": self.item, "output_index": self.index, "sequence_number": self.b.seq, "type": kind, "name": name})
            item = {"arguments": arguments, "call_id": self.call, "name": name, "type": "function_call", "id": self.item, **self.shapes.call_fields}
            self.done_item({**item, "status": "completed", "output_index": self.index, "sequence_number": -1})
            return
        self.emit(kind, {"arguments": arguments, "item_id": self.item, "name": name, "output_index": self.index, "sequence_number": self.b.seq, "type": kind})
        self.done_item({"arguments": arguments, "call_id": self.call, "name": name, "type": "function_call", "id": None, "status": "completed", "item_id": self.item, "output_index": self.index, "sequence_number": -1})

    def mcp_done(self, arguments: str, recipient: str) -> None:
        name, label = _mcp_name_label(recipient)
        kind = "response.mcp_call_arguments.done"
        self.emit(kind, {"arguments": arguments, "item_id": self.item, "output_index": self.index, "sequence_number": self.b.seq, "type": kind, "name": name})
        self.common("response.mcp_call.completed")
        self.done_item(_mcp_item(self.item, arguments, name, label, "completed"))

    def code_done(self, code: str) -> None:
        kind = "response.code_interpreter_call_code.done"
        self.emit(kind, {"code": code, "item_id": self.item, "output_index": self.index, "sequence_number": self.b.seq, "type": kind})
        self.common("response.code_interpreter_call.interpreting")
        self.common("response.code_interpreter_call.completed")
        self.done_item({"id": self.item, "code": code, "container_id": "auto", "outputs": [], "status": "completed", "type": "code_interpreter_call"})


def _mcp_item(item_id: str, arguments: str, name: str, label: str, status: str) -> dict[str, Any]:
    """``McpCall`` in openai-python 2.20.0 field order."""
    return {"id": item_id, "arguments": arguments, "name": name, "server_label": label, "type": "mcp_call", "approval_request_id": None, "error": None, "output": None, "status": status}


@dataclass(frozen=True, slots=True)
class StreamShapes:
    """Item and event shapes that changed between releases (see the ``responses_*`` switches).

    ``content_part``: 0.32/0.33 reasoning events and function-call done events; ``body_fields``:
    ``phase`` on messages and ``async``/``caller``/``namespace`` on function calls.
    """

    content_part: bool = True
    body_fields: bool = True

    @property
    def phase(self) -> dict[str, Any]:
        return {"phase": None} if self.body_fields else {}

    @property
    def call_fields(self) -> dict[str, Any]:
        return {"async": None, "caller": None, "namespace": None} if self.body_fields else {}


def stream_event_templates(
    segments: Iterable[Segment],
    builder: TemplateBuilder,
    *,
    function_tool_names: frozenset[str],
    ignore_recipients: bool,
    legacy: bool = False,
    function_call_events: bool = True,
    shapes: StreamShapes | None = None,
    done_items: dict[int, list[tuple[str, str, str]]] | None = None,
) -> list[Template]:
    """Replay vLLM's ``_process_harmony_streaming_events`` over parser segments.

    For each segment: a non-empty delta goes to the delta dispatcher (``final``/``commentary``
    without recipient → ``output_text``; ``analysis`` without recipient → ``reasoning_text`` on an
    item with id ``msg_…``; any recipient: declared/``functions.`` function → ``function_call``,
    ``python`` → ``code_interpreter_call``, anything else (``browser.*`` and ``final`` + recipient
    included) → ``mcp_call`` with name/server_label from ``_resolve_mcp_name_label``); a
    completed message emits its ``*.done`` events and advances ``output_index`` even when it
    emitted nothing. Faithful oddities: a message without any delta gets done events with the
    previous item's id; MCP done events need the current item id to start with ``mcp_``.

    ``ignore_recipients`` reproduces "[Bugfix][Responses] Ignore Harmony recipients when no tools
    are configured": recipients are treated as absent, so only text/reasoning events remain.

    ``legacy`` is the 2025 dispatch (``streaming_events.py@01e4fce0``, ``emit_content_delta_events``):
    recipients as parsed (the caller passes them un-normalised), ``functions.`` by prefix only, and
    a ``final`` message with a recipient emits no events at all.

    ``function_call_events=False`` is vLLM 0.10.1.1 (vllm-project/vllm#24076; PR #25728's
    "before" trace; PR #24317 added the events): a function-call message emits no event (it still
    takes an ``output_index``; unverified), the stream shows only reasoning and text.

    Returns:
        One template per frame, between ``response.in_progress`` and ``response.completed``.
    """
    stream = _Stream(builder, function_tool_names, ignore_recipients, legacy, function_call_events, shapes)
    for channel, recipient, delta, completed in segments:
        if delta:
            stream.delta(channel, None if ignore_recipients else recipient, delta)
        elif completed is not None:
            stream.done(completed)
    if done_items is not None:  # filled for the caller: the ids each message's done events sent
        done_items.update(stream.done_items)
    return stream.frames
