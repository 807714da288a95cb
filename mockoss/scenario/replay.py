"""``replay:`` steps: an HTTP reply stored byte for byte, returned as is (part of the ``version: 1`` format).

``mockoss serve --record DIR`` writes one when no Harmony completion stands behind a reply: the
output of an upstream server passed through unchanged (:mod:`mockoss.upstream`), or a reply a
scripted step cannot reproduce. Replaying it gives the client the bytes it first received, ids
included, whatever profile or seed the replaying server has. Example::

    steps:
      - replay:
          status: 200
          content_type: "text/event-stream; charset=utf-8"
          frames:
            - "data: {\\"id\\":\\"chatcmpl-…\\",…}\\n\\n"
            - "data: [DONE]\\n\\n"
      - replay:
          status: 429
          headers: {retry-after: "2"}
          body: '{"error":{"message":"Too many requests","type":"RateLimitError","param":null,"code":429}}'

Exactly one of ``body`` (the whole body, UTF-8 text), ``body_base64`` (a body that is not UTF-8)
or ``frames`` (a stream: each element one SSE event or NDJSON line, written in order) is given;
the bytes on the wire are ``body`` or the frames joined. ``abort`` drops the connection after the
frames (no terminating chunk), as the recorded server did. ``content_type`` is written as the
``Content-Type`` (Starlette adds ``; charset=utf-8`` to a ``text/*`` type without a charset).
A status, content type or header that HTTP/1.1 cannot send as given (CR/LF, not Latin-1, not a
token, ``Content-Length``, a 1xx status, a body on a 204) is refused when the scenario loads
(:mod:`mockoss.scenario.replay_http`).

Timing: ``frame_times_ms`` (written by recordings) holds when each frame arrived from the recorded
server, in ms after the request was sent (one value for a ``body``). A replay step without a
``transport:`` of its own is paced from it through the ordinary transport pacing
(:func:`replay_transport`): ``ttft_ms`` is the first frame's time and ``tokens_per_s`` the mean
rate of the later frames, so the first frame and the last arrive when they did and the frames
between are evenly spaced (the transport schedule has one interval per stream, not one per
frame). No jitter: the same recording replays on the same schedule. A step's own ``transport:``
replaces the recorded timing (``transport: {}`` replays at once).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from mockoss.profiles.base import JSON_MEDIA_TYPE, Reply
from mockoss.scenario.replay_http import BODYLESS_STATUSES, HeaderName, HeaderValue, check_header_value, check_headers
from mockoss.scenario.transport import MAX_DELAY_MS, TransportSpec

__all__ = ["ReplaySpec", "compile_replay", "frame_times", "replay_data", "replay_transport", "split_frames"]

#: Response headers a recording keeps besides ``Content-Type`` (lower-case); every other header
#: (``Set-Cookie``, ``Server``, ``Date``…) is left out.
KEPT_HEADERS = ("content-encoding", "retry-after", "x-request-id")

_SSE_EVENT = re.compile(rb".*?(?:\r\n\r\n|\n\n|\r\r)|.+", re.DOTALL)
_LINE = re.compile(rb".*?\n|.+", re.DOTALL)


class ReplaySpec(BaseModel):
    """A stored HTTP reply: ``status``, ``content_type``, extra ``headers`` and the body.

    Raises (as a pydantic ``ValidationError``, a ``FILE:LINE: FIELD:`` scenario error): a status
    outside 200-599, a header or content type HTTP/1.1 cannot send, a body on a 204 or 304
    (:mod:`mockoss.scenario.replay_http`), and the body and timing problems below.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    status: int = Field(ge=200, le=599, description="the final HTTP status (a 1xx is not one)")
    content_type: str = Field(default=JSON_MEDIA_TYPE, min_length=1, description="the Content-Type header")
    headers: Annotated[dict[HeaderName, HeaderValue], AfterValidator(check_headers)] = Field(
        default_factory=dict,
        description="extra response headers, e.g. retry-after (not Content-Length or Transfer-Encoding)",
    )
    body: str | None = Field(default=None, description="the whole body, UTF-8 text")
    body_base64: str | None = Field(default=None, description="the whole body, base64 (bodies that are not UTF-8)")
    frames: list[str] | None = Field(default=None, description="a stream, one element per SSE event / NDJSON line")
    abort: str | None = Field(default=None, description="drop the connection after the frames (why, for logs)")
    frame_times_ms: list[float] | None = Field(
        default=None,
        description="when each frame arrived, ms after the request was sent (one value for a body); "
        "replayed as transport ttft_ms + tokens_per_s unless the step has a transport",
    )

    @field_validator("content_type")
    @classmethod
    def _sendable_content_type(cls, value: str) -> str:
        return check_header_value(value, "the content type")

    @field_validator("body", "body_base64", "frames")
    @classmethod
    def _no_body_on_204(cls, value: str | list[str] | None, info: ValidationInfo) -> str | list[str] | None:
        status = info.data.get("status")
        if status in BODYLESS_STATUSES and value and any(value if isinstance(value, list) else (value,)):
            raise ValueError(f"a {status} reply has no body: give an empty 'body'")
        return value

    @model_validator(mode="after")
    def _one_body(self) -> ReplaySpec:
        if sum(x is not None for x in (self.body, self.body_base64, self.frames)) != 1:
            raise ValueError("give exactly one of 'body', 'body_base64' or 'frames'")
        if self.frame_times_ms is not None:
            count = len(self.frames) if self.frames is not None else 1
            times = self.frame_times_ms
            if len(times) != count:
                raise ValueError(f"'frame_times_ms' has {len(times)} values for {count} frame(s)")
            if any(not 0 <= t <= MAX_DELAY_MS for t in times) or any(b < a for a, b in itertools.pairwise(times)):
                raise ValueError(f"'frame_times_ms' must be non-decreasing ms from 0 to {MAX_DELAY_MS:g}")
        if self.body_base64 is not None:
            try:
                base64.b64decode(self.body_base64, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("'body_base64' is not valid base64") from None
        if "content-type" in {name.lower() for name in self.headers}:
            raise ValueError("give the Content-Type as 'content_type', not in 'headers'")
        return self


def compile_replay(spec: ReplaySpec) -> Reply:
    """The :class:`~mockoss.profiles.base.Reply` a ``replay:`` step answers with, built once.

    An ``application/json`` reply is written with a ``Content-Length``; any other content type is
    written as a stream of the given frames (a single frame for ``body``), which the HTTP layer
    sends with chunked transfer encoding.
    """
    if spec.frames is not None:
        chunks = tuple(frame.encode() for frame in spec.frames)
    elif spec.body is not None:
        chunks = (spec.body.encode(),)
    else:
        chunks = (base64.b64decode(spec.body_base64 or ""),)
    headers = tuple((name.lower(), value) for name, value in spec.headers.items())
    if spec.content_type == JSON_MEDIA_TYPE and spec.abort is None:
        return Reply(spec.status, JSON_MEDIA_TYPE, body=b"".join(chunks), headers=headers)
    return Reply(spec.status, spec.content_type, frames=chunks, headers=headers, abort=spec.abort)


def replay_transport(spec: ReplaySpec) -> TransportSpec | None:
    """The pacing that reproduces a recording's ``frame_times_ms`` (module docstring), else ``None``.

    ``ttft_ms`` = the first frame's time; with two or more frames spread in time, ``tokens_per_s``
    = ``(frames - 1) * 1000 / (last - first)``. Bounded: every recorded time is at most
    :data:`~mockoss.scenario.transport.MAX_DELAY_MS` (the validator checks it).
    """
    times = spec.frame_times_ms
    if not times:
        return None
    values: dict[str, Any] = {"ttft_ms": times[0]}
    span = times[-1] - times[0]
    if len(times) > 1 and span > 0:
        values["tokens_per_s"] = (len(times) - 1) * 1000.0 / span
    return TransportSpec.from_data(values, where="replay.frame_times_ms")


def frame_times(
    chunks: list[bytes] | tuple[bytes, ...], chunk_times_ms: list[float], frames: list[bytes]
) -> list[float]:
    """When each of ``frames`` was complete: the arrival time of the network chunk holding its
    last byte. ``chunks`` (as received, ``chunk_times_ms`` their arrival, ms) and ``frames`` (the
    same bytes cut by :func:`split_frames`) join to the same bytes. Rounded to 0.1 ms and capped at
    :data:`~mockoss.scenario.transport.MAX_DELAY_MS`."""
    ends, total = [], 0
    for chunk in chunks:
        total += len(chunk)
        ends.append(total)
    out, position, at = [], 0, 0
    for frame in frames:
        position += len(frame)
        while at < len(ends) - 1 and ends[at] < position:
            at += 1
        out.append(round(min(chunk_times_ms[at], MAX_DELAY_MS), 1) if chunk_times_ms else 0.0)
    for i in range(1, len(out)):  # clocks are monotonic; keep the list valid whatever the rounding
        out[i] = max(out[i], out[i - 1])
    return out


def split_frames(content_type: str, data: bytes) -> list[bytes]:
    """``data`` cut where its server flushed a unit: after each SSE event (a blank line) for
    ``text/event-stream``, after each line for NDJSON (``application/x-ndjson``); else one piece.
    The pieces joined are ``data``."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "text/event-stream":
        return _SSE_EVENT.findall(data)
    if kind in ("application/x-ndjson", "application/jsonl", "application/json-seq"):
        return _LINE.findall(data)
    return [data] if data else []


def replay_data(
    status: int,
    content_type: str,
    data: bytes | list[bytes] | tuple[bytes, ...],
    headers: dict[str, str] | None = None,
    abort: str | None = None,
    chunk_times_ms: list[float] | None = None,
) -> dict[str, Any]:
    """The ``replay:`` mapping for a reply, ready for YAML (:class:`ReplaySpec` fields).

    Args:
        data: the body, or the frames as written; a stream is cut again by :func:`split_frames`
            so each frame is one event whatever the network's chunking was.
        headers: extra response headers to store (``Content-Type`` aside); pass only those a
            replay should repeat (:data:`KEPT_HEADERS` for an upstream's answer).
        chunk_times_ms: when each element of ``data`` (a list) arrived, ms after the request was
            sent; stored per frame as ``frame_times_ms`` (see :func:`frame_times`).

    A body or stream that is not UTF-8 is stored as ``body_base64``.
    """
    joined = data if isinstance(data, bytes) else b"".join(data)
    kept = {k.lower(): v for k, v in (headers or {}).items() if k.lower() != "content-type"}
    out: dict[str, Any] = {"status": status, "content_type": content_type}
    if kept:
        out["headers"] = kept
    try:
        joined.decode()
    except UnicodeDecodeError:
        out["body_base64"] = base64.b64encode(joined).decode()
    else:
        streamed = content_type != JSON_MEDIA_TYPE or abort is not None
        frames = split_frames(content_type, joined) if streamed else []
        if streamed and len(frames) > 1:
            out["frames"] = [frame.decode() for frame in frames]
        else:
            out["body"] = joined.decode()
    if abort is not None:
        out["abort"] = abort
    if chunk_times_ms is not None and not isinstance(data, bytes) and len(chunk_times_ms) == len(data):
        pieces = [frame.encode() for frame in out["frames"]] if "frames" in out else [joined]
        out["frame_times_ms"] = frame_times(list(data), list(chunk_times_ms), pieces)
    return out
