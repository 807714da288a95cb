"""Classify one HTTP exchange with an OpenAI-compatible server into an outcome key.

An outcome key is a short, stable string naming what a client would branch on, in the form
``"<status> — <detail>"`` (or ``"connection error — …"`` / ``"timeout — …"`` when no complete
HTTP exchange happened). Keys are built from the body alone, never from ids, timings or text
content, so that sending the same request N times gives a small set of keys to count. Examples::

    200 — reasoning, mcp_call(tool/mcp)            Responses: output item types in order
    200 — reasoning, function_call(get_weather)
    200 — reasoning, message
    200 — reasoning, tool_calls: get_weather       Chat Completions: choice 0's message
    200 — reasoning, content [finish_reason=length]
    500 — InternalServerError: unexpected tokens remaining in message header: Some("to=functions.x")
    200 — stream error chunk: InternalServerError: unexpected tokens remaining in message header: …
    200 — stream dropped after reasoning
    connection error — ConnectError: [Errno 111] Connection refused
    timeout — ReadTimeout
    timeout — no complete answer within 30 s

Rules (the ``detail`` part):

* Responses (``POST /v1/responses``), status 2xx: the ``output`` items in order, joined by
  ``", "``: ``reasoning``; ``message`` (``message(empty)`` when no ``output_text`` part has text,
  ``message(refusal)`` when a part is a refusal); ``function_call(NAME)``;
  ``mcp_call(SERVER_LABEL/NAME)``; any other item by its ``type``. ``(no output)`` when empty.
  A ``status`` other than ``completed`` is appended: ``[status=incomplete: max_output_tokens]``.
* Chat Completions (``POST /v1/chat/completions``), status 2xx: choice 0's message as
  ``reasoning`` (``reasoning`` or ``reasoning_content`` non-empty), ``content`` (non-empty text),
  ``tool_calls: NAME, NAME`` (last, so the names may contain commas), ``(empty)`` when none; a
  ``finish_reason`` other than ``stop``/``tool_calls`` is appended: ``[finish_reason=length]``.
* Streams are consumed whole and classified from the final state: Responses from the
  ``response.completed`` (or ``response.incomplete``) event's ``response``; chat from the
  accumulated deltas of choice 0. A stream that fails is its own class: ``stream error chunk: …``
  (chat ``data: {"error": …}``), ``stream error event: …`` / ``stream response.failed: …``
  (Responses), ``stream dropped after …`` (the connection closed mid-body; what arrived so far is
  listed), ``stream ended without [DONE] after …`` / ``stream ended without response.completed
  after …``.
* Errors (status ≥ 300): ``TYPE: MESSAGE`` from vLLM's ``{"error": {"message", "type", …}}``, its
  older flat ``{"object": "error", "message", "type", …}``, Ollama's ``{"error": "…"}`` (message
  only) or FastAPI's ``{"detail": …}``; else the body's first line. Messages are kept exact (quoted
  recipients included) but cut to their first line and :data:`MAX_TEXT` characters.

Everything here is pure: :func:`classify` maps an :class:`Exchange` (what the runner saw) to a key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["MAX_TEXT", "Exchange", "classify", "sse_data"]

#: Longest error message or name kept in a key, in characters (longer ones end in ``…``).
MAX_TEXT = 100
SEP = " — "
#: ``finish_reason`` values that need no mention in a chat outcome.
_NORMAL_FINISH = frozenset({"stop", "tool_calls", None})


@dataclass(frozen=True, slots=True)
class Exchange:
    """What one request got back, as the runner saw it.

    Attributes:
        endpoint: ``"responses"`` or ``"chat"`` (the names of :data:`mockoss.endpoints.ENDPOINTS`).
        stream: the request asked for ``"stream": true``.
        status: the HTTP status, or ``None`` when no response head arrived.
        body: the body bytes received (only a prefix when the transfer failed).
        media_type: the ``Content-Type`` without parameters, e.g. ``"text/event-stream"``.
        failure: ``"connection"`` (refused, reset, closed early) or ``"timeout"`` when the
            transfer did not complete, else ``None``.
        failure_text: for a connection failure ``"ExceptionName: first line of its message"``;
            for a timeout, which one (``"ReadTimeout"``, ``"no complete answer within 30 s"``).
    """

    endpoint: Literal["responses", "chat"]
    stream: bool
    status: int | None
    body: bytes = b""
    media_type: str = ""
    failure: Literal["connection", "timeout"] | None = None
    failure_text: str = ""


def _cut(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= MAX_TEXT else line[: MAX_TEXT - 1] + "…"


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


# -- errors ----------------------------------------------------------------------------------------


def _error_text(payload: Any, raw: bytes = b"") -> str:
    """``TYPE: MESSAGE`` (or ``MESSAGE``) from an error body of any known server."""
    if isinstance(payload, Mapping):
        inner = payload.get("error")
        if isinstance(inner, Mapping):
            payload = inner
        elif isinstance(inner, str):
            return _cut(inner) or "(empty error)"
        elif "detail" in payload and "message" not in payload:
            detail = payload["detail"]
            return _cut(detail if isinstance(detail, str) else json.dumps(detail))
        kind, message = payload.get("type"), payload.get("message")
        message = _cut(message if isinstance(message, str) else json.dumps(message) if message else "")
        if kind:
            return f"{kind}: {message}" if message else str(kind)
        return message or _cut(json.dumps(payload))
    text = raw.decode("utf-8", "replace")
    return _cut(text) or "(empty body)"


# -- Responses -------------------------------------------------------------------------------------


def _item_label(item: Mapping[str, Any]) -> str:
    kind = item.get("type") or "(untyped item)"
    if kind == "function_call":
        return f"function_call({_cut(str(item.get('name') or ''))})"
    if kind == "mcp_call":
        return f"mcp_call({_cut(str(item.get('server_label') or ''))}/{_cut(str(item.get('name') or ''))})"
    if kind == "message":
        parts = [p for p in _list(item.get("content")) if isinstance(p, Mapping)]
        if any(p.get("type") == "refusal" for p in parts):
            return "message(refusal)"
        if any(p.get("text") for p in parts):
            return "message"
        return "message(empty)"
    return str(kind)


def _items_text(items: Sequence[Any], empty: str) -> str:
    labels = [_item_label(item) for item in items if isinstance(item, Mapping)]
    return ", ".join(labels) if labels else empty


def _response_text(response: Mapping[str, Any]) -> str:
    text = _items_text(_list(response.get("output")), "(no output)")
    status = response.get("status")
    if status not in ("completed", None):
        reason = _map(response.get("incomplete_details")).get("reason")
        text += f" [status={status}: {reason}]" if reason else f" [status={status}]"
    return text


def _responses_stream(events: Iterator[Any], dropped: bool) -> str:
    seen: dict[int, Mapping[str, Any]] = {}
    for event in events:
        if not isinstance(event, Mapping):
            continue
        kind = event.get("type")
        if kind in ("response.completed", "response.incomplete") and isinstance(event.get("response"), Mapping):
            return _response_text(event["response"])
        if kind == "response.failed":
            error = _map(_map(event.get("response")).get("error"))
            code, message = error.get("code"), _cut(str(error.get("message") or ""))
            return f"stream response.failed: {code}: {message}" if code else f"stream response.failed: {message}"
        if kind == "error" or (kind is None and "error" in event):
            if kind == "error":
                code, message = event.get("code"), _cut(str(event.get("message") or ""))
                return f"stream error event: {code}: {message}" if code else f"stream error event: {message}"
            return f"stream error event: {_error_text(event)}"
        if kind in ("response.output_item.added", "response.output_item.done") and isinstance(
            event.get("item"), Mapping
        ):
            seen[_int(event.get("output_index"))] = event["item"]
    so_far = _items_text([seen[i] for i in sorted(seen)], "any output")
    how = "stream dropped" if dropped else "stream ended without response.completed"
    return f"{how} after {so_far}" if seen else f"{how} before any output"


# -- Chat Completions ------------------------------------------------------------------------------


def _chat_text(reasoning: bool, content: bool, tools: Sequence[str], finish: Any) -> str:
    parts = []
    if reasoning:
        parts.append("reasoning")
    if content:
        parts.append("content")
    if tools:
        parts.append("tool_calls: " + ", ".join(_cut(name) or "(unnamed)" for name in tools))
    text = ", ".join(parts) if parts else "(empty)"
    return text if finish in _NORMAL_FINISH else f"{text} [finish_reason={finish}]"


def _chat_completion_text(payload: Mapping[str, Any]) -> str:
    choices = _list(payload.get("choices"))
    if not choices or not isinstance(choices[0], Mapping):
        return "(no choices)"
    message = _map(choices[0].get("message"))
    calls = _list(message.get("tool_calls"))
    tools = [str(_map(_map(call).get("function")).get("name") or "") for call in calls]
    reasoning = bool(message.get("reasoning") or message.get("reasoning_content"))
    return _chat_text(reasoning, bool(message.get("content")), tools, choices[0].get("finish_reason"))


def _chat_stream(frames: Iterator[str], dropped: bool) -> str:
    reasoning, content, finish, done = False, False, None, False
    tools: dict[int, str] = {}
    for data in frames:
        if data.strip() == "[DONE]":
            done = True
            continue
        chunk = _json(data.encode())
        if not isinstance(chunk, Mapping):
            continue
        if "error" in chunk:
            return f"stream error chunk: {_error_text(chunk)}"
        for choice in _list(chunk.get("choices")):
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = _map(choice.get("delta"))
            reasoning = reasoning or bool(delta.get("reasoning") or delta.get("reasoning_content"))
            content = content or bool(delta.get("content"))
            for call in map(_map, _list(delta.get("tool_calls"))):
                index = _int(call.get("index"))
                tools[index] = tools.get(index, "") + str(_map(call.get("function")).get("name") or "")
            finish = choice.get("finish_reason") or finish
    text = _chat_text(reasoning, content, [tools[i] for i in sorted(tools)], finish)
    if done and not dropped:
        return text
    so_far = f"after {text}" if text != "(empty)" else "before any output"
    return f"stream dropped {so_far}" if dropped else f"stream ended without [DONE] {so_far}"


# -- entry points ----------------------------------------------------------------------------------


def sse_data(body: bytes) -> Iterator[str]:
    """Yield the ``data:`` payload of every complete server-sent event in ``body``.

    Events end at a blank line (``\\n\\n`` or ``\\r\\n\\r\\n``); a trailing partial event (a
    dropped connection) is skipped. Multi-line ``data:`` fields are joined with ``\\n``.
    """
    text = body.decode("utf-8", "replace").replace("\r\n", "\n")
    events = text.split("\n\n")
    for event in events[:-1]:
        lines = [line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")]
        if lines:
            yield "\n".join(lines)


def _success_text(exchange: Exchange) -> str:
    dropped = exchange.failure == "connection"
    if exchange.stream and exchange.media_type == "text/event-stream":
        frames = sse_data(exchange.body)
        if exchange.endpoint == "responses":
            return _responses_stream((_json(data.encode()) for data in frames), dropped)
        return _chat_stream(frames, dropped)
    if dropped:
        return "body dropped mid-transfer"
    payload = _json(exchange.body)
    if not isinstance(payload, Mapping):
        return f"unparseable body: {_error_text(None, exchange.body)}"
    if "error" in payload and "choices" not in payload and "output" not in payload:
        return f"error body: {_error_text(payload)}"
    if exchange.endpoint == "responses":
        return _response_text(payload)
    return _chat_completion_text(payload)


def classify(exchange: Exchange) -> str:
    """Return the outcome key of one exchange (see the module docstring for the rules).

    Pure and total: never raises, whatever the body holds.
    """
    if exchange.failure == "timeout":
        return f"timeout{SEP}{_cut(exchange.failure_text) or 'timed out'}"
    if exchange.status is None:
        return f"connection error{SEP}{_cut(exchange.failure_text) or 'no response'}"
    if 200 <= exchange.status < 300:
        return f"{exchange.status}{SEP}{_success_text(exchange)}"
    return f"{exchange.status}{SEP}{_error_text(_json(exchange.body), exchange.body)}"
