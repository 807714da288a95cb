"""What counts as a crash in ``bench_fuzz.py``: the checks of a reply, and the tally of a part.

A crash is an answer mockoss did not script (see ``bench_fuzz.py``'s docstring): the 500 of
:func:`mockoss.server.replies.failure_reply` (``mockoss internal error``), a body or stream that is
not what the profile promises (strict JSON, every SSE ``data:`` JSON or ``[DONE]``, NDJSON lines,
the stream's terminator), or a hung request.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from benchlib import split_sse

INTERNAL = b"mockoss internal error"
#: A request answered in process after this many seconds counts as hung.
HUNG_S = 10.0
#: Crash samples kept (with their reproducers) per part.
KEEP = 40


def _refuse(constant: str) -> Any:
    raise ValueError(f"not JSON: {constant}")


def strict_json(text: bytes | str) -> Any:
    """``json.loads`` without Python's ``NaN``/``Infinity`` extension (RFC 8259)."""
    return json.loads(text, parse_constant=_refuse)


def _error_object(data: bytes | None) -> bool:
    """An SSE ``data:`` holding ``{"error": …}``: how llama.cpp (``format_oai_sse``), vLLM and
    others end a stream that failed after HTTP 200."""
    if not data or not data.startswith(b"{"):
        return False
    try:
        value = strict_json(data)
    except ValueError:
        return False
    return isinstance(value, dict) and "error" in value


def sse_problem(frames: list[bytes], responses: bool, aborted: bool) -> str | None:
    """The first problem of an SSE stream (``None``: every ``data:`` JSON, the terminator last)."""
    last_event = last_data = None
    for frame in frames:
        if not frame.endswith(b"\n\n"):
            return f"SSE frame not ended by a blank line: {frame[:80]!r}"
        event = None
        for line in frame[:-2].split(b"\n"):
            field, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if field == b"data":
                if value != b"[DONE]":
                    try:
                        strict_json(value)
                    except (ValueError, UnicodeDecodeError) as exc:
                        return f"SSE data not JSON ({exc}): {value[:80]!r}"
                last_data = value
            elif field == b"event":
                event = value
            elif field not in (b"", b"id", b"retry"):
                return f"SSE line not a field: {line[:80]!r}"
        last_event = event
    if aborted or _error_object(last_data):
        return None  # a profile that drops the connection, or ends the stream with an error object
    if not frames:
        return "empty stream"
    if responses:
        if last_event not in (b"response.completed", b"response.incomplete", b"response.failed", b"error"):
            kind = last_event or (last_data or b"")[:60]
            return f"Responses stream without its terminator (last event {kind!r})"
    elif last_data != b"[DONE]":
        return f"stream without data: [DONE] (last {(last_data or b'')[:60]!r})"
    return None


def ndjson_problem(frames: list[bytes], aborted: bool) -> str | None:
    last = None
    for frame in frames:
        for line in frame.splitlines():
            if line.strip():
                try:
                    last = strict_json(line)
                except (ValueError, UnicodeDecodeError) as exc:
                    return f"NDJSON line not JSON ({exc}): {line[:80]!r}"
    if aborted:
        return None
    if not isinstance(last, dict) or not (last.get("done") is True or "error" in last):
        return f"NDJSON stream without a done or error line (last {str(last)[:60]!r})"
    return None


def reply_problem(
    status: int, media_type: str, body: bytes, frames: list[bytes], endpoint: str, aborted: bool
) -> str | None:
    """Why a reply is a crash, or ``None``."""
    if status == 500 and INTERNAL in body:
        return "500: " + body[body.find(INTERNAL) :][:300].decode("utf-8", "replace")
    if media_type.startswith("text/event-stream"):
        return sse_problem(frames, endpoint == "responses", aborted)
    if media_type.startswith("application/x-ndjson"):
        return ndjson_problem(frames, aborted)
    if media_type.startswith("application/json") and body:
        try:
            strict_json(body)
        except (ValueError, UnicodeDecodeError) as exc:
            return f"JSON body not JSON ({exc}): {body[:80]!r}"
    return None


class Tally:
    """Counts of one part: cases, statuses, crashes (with up to :data:`KEEP` samples)."""

    def __init__(self, name: str) -> None:
        self.name, self.cases, self.crashes, self.statuses = name, 0, 0, Counter()
        self.samples: list[dict[str, Any]] = []
        self.kinds: Counter[str] = Counter()
        self.extra: dict[str, Any] = {}

    def crash(self, problem: str, **repro: Any) -> None:
        self.crashes += 1
        kind = re.sub(r"\d+", "N", problem.split("\n")[0])[:120]
        self.kinds[f"{repro.get('profile', '')} {repro.get('endpoint', '')}: {kind}"] += 1
        if len(self.samples) < KEEP:
            self.samples.append({"problem": problem[:500], **repro})

    def note(self, what: str, **repro: Any) -> None:
        """Keep a sample of a documented but notable answer (a scripted 5xx, a dropped connection)."""
        notes = self.extra.setdefault("notable", [])
        kind = what.split(":")[0]
        if sum(note["what"].split(":")[0] == kind for note in notes) < 10:
            notes.append({"what": what[:300], **repro})

    def summary(self) -> dict[str, Any]:
        ok4 = sum(n for s, n in self.statuses.items() if isinstance(s, int) and 400 <= s < 500)
        return {
            "cases": self.cases,
            "crashes": self.crashes,
            "4xx": ok4,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items(), key=str)},
            "crash_kinds": dict(self.kinds.most_common(30)),
            "samples": self.samples,
            **self.extra,
        }


def media_type(reply: Any) -> str:
    """The content type a reply is sent with: its ``content-type`` header, else its media type."""
    return next((v for k, v in reply.headers if k.lower() == "content-type"), reply.media_type)


def frames_of(content_type: str, body: bytes) -> list[bytes]:
    """A body as frames: SSE frames, or NDJSON lines (each with its newline)."""
    if content_type.startswith("text/event-stream"):
        return split_sse(body)
    return [line + b"\n" for line in body.split(b"\n") if line.strip()]


def documented(profile: str, problem: str, status: int, body: bytes, request: Any) -> bool:
    """Whether ``problem`` is an answer the profile documents as its server's own (not a crash).

    * mlx-lm labels its bare ``Not Found`` text ``application/json`` (``route_error``;
      ``mlx_lm/server.py`` ``do_POST``);
    * mlx-lm ends a stream without ``data: [DONE]`` when ``stream_options`` lacks
      ``include_usage`` (a ``KeyError`` after the finish chunk; ``mockoss/profiles/mlxlm/wire.py``).

    Ollama's cut streams are checked by ``fuzz_inprocess.ollama_cut`` (it needs the server).
    """
    if profile.split("@")[0] != "mlx-lm":
        return False
    if status == 404 and body == b"Not Found" and problem.startswith("JSON body not JSON"):
        return True
    options = request.get("stream_options", None) if isinstance(request, dict) else None
    return (
        status == 200
        and "without data: [DONE]" in problem
        and options is not None
        and not (isinstance(options, dict) and "include_usage" in options)
    )
