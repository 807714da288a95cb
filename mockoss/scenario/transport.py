"""How a reply travels: timing and transport faults, per step (``transport:``), per server, per request.

A :class:`TransportSpec` never changes what the profile answers; the HTTP layer applies it to the
profile's :class:`~mockoss.profiles.base.Reply` (see :mod:`mockoss.server.transport`). Example::

    steps:
      - completion: {messages: [{channel: final, content: "Hello."}]}
        transport: {ttft_ms: 300, tokens_per_s: 50, jitter: 0.1}
      - completion: {messages: [{channel: final, content: "Hello."}]}
        transport: {disconnect_after_frames: 3}        # drop the connection after 3 frames
      - completion: {messages: [{channel: final, content: "Hello."}]}
        transport: {truncate_after_frames: -1}          # no ``data: [DONE]``, response ends cleanly

Frame positions count stream frames (one SSE event, one element of ``Reply.frames``) and may be
negative, counted from the end as Python slices do: ``truncate_after_frames: -1`` writes every
frame but the last. A non-streamed body counts as one frame.

Layers, each overriding the fields it sets: the server default (``MockServer(transport=…)``,
``mockoss serve --ttft-ms/--tokens-per-s``), then the step's ``transport:``, then the request's
``X-Mockoss-Transport: ttft_ms=300,tokens_per_s=50`` header.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

__all__ = [
    "DEFAULT_MALFORMED_TEXT",
    "MAX_DELAY_MS",
    "MAX_TRANSPORT_HEADER_CHARS",
    "TRANSPORT_HEADER",
    "TransportError",
    "TransportSpec",
    "clear_header_cache",
]

#: The request header that overrides the transport of one request, e.g. ``ttft_ms=300,tokens_per_s=50``.
TRANSPORT_HEADER = "x-mockoss-transport"
#: What a malformed frame is unless ``malformed_text`` says otherwise: an SSE frame whose data is
#: not JSON (aimock writes ``{malformed json: <<<chaos>>>``, CopilotKit/aimock@c9af8c3 src/chaos.ts).
DEFAULT_MALFORMED_TEXT = "data: {malformed json: <<<mockoss>>>\n\n"
#: Upper bound of every delay (ms): 10 minutes, the openai SDK's default timeout. A ``forever``
#: stall lasts this long, then the connection is dropped.
MAX_DELAY_MS = 600_000.0

_Ms = Annotated[float, Field(ge=0, le=MAX_DELAY_MS, allow_inf_nan=False)]


class TransportError(ValueError):
    """A transport setting is invalid; ``str()`` names the field and the fix."""


class TransportSpec(BaseModel):
    """Timing and faults for delivering one reply. Every field is optional; unset means "as is".

    Timing: on a stream, frame ``i`` (0-based) is written ``ttft_ms + i * 1000 / tokens_per_s``
    ms after the request, one frame standing for one token; a non-streamed reply (status line,
    headers and body) is written after ``ttft_ms + completion_tokens * 1000 / tokens_per_s`` ms.
    Each field's docstring below is also its description in the scenario JSON Schema.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    # Each field's description is also its description in the scenario JSON Schema (mockoss
    # schema; the line breaks are part of the shipped scenario.schema.json). They are Field
    # descriptions, not attribute docstrings: pydantic's use_attribute_docstrings reads the class
    # source through inspect.getmodule, which resolved the path of every loaded module (~350):
    # building this model cost `mockoss serve` 17-23 ms of CPU at start, 1.5-1.8 ms now (issue 9,
    # benchmarks/bench_start.py). The class docstring's wording ("docstring below") stays: it is
    # the schema's text too.
    ttft_ms: _Ms = Field(default=0.0, description="Time to first token, ms (default 0).")
    tokens_per_s: float | None = Field(
        default=None, gt=0, allow_inf_nan=False,
        description="Frames (tokens) per second after the first; unset: no pacing, frames go out at once.",
    )
    jitter: float = Field(
        default=0.0, ge=0, le=1,
        description="Each delay is multiplied by a factor drawn from [1 - jitter, 1 + jitter], seeded by the\n"
        "server seed and the request index (default 0: exact).",
    )
    disconnect_after_frames: int | None = Field(
        default=None,
        description="Drop the connection after this many frames (no terminating chunk: the client sees an\n"
        "incomplete body); 0 on a non-streamed reply drops it after the headers, before the body.",
    )
    disconnect_after_ms: _Ms | None = Field(
        default=None,
        description="Drop the connection this many ms after the request, whatever was written by then (no\n"
        "effect on a reply complete before).",
    )
    truncate_after_frames: int | None = Field(
        default=None,
        description="End the response cleanly after this many frames; -1 omits chat's `data: [DONE]`. Streams only.",
    )
    malformed_at_frame: int | None = Field(
        default=None,
        description="Replace the frame at this 0-based position (-1: the last) by `malformed_text`; on a\n"
        "non-streamed reply, 0 replaces the body.",
    )
    malformed_text: str = Field(
        default=DEFAULT_MALFORMED_TEXT, min_length=1,
        description="What is written instead, UTF-8 (default `data: {malformed json: <<<mockoss>>>` + blank line).",
    )
    stall_after_frames: int | None = Field(
        default=None, description="After this many frames, write nothing for `stall_ms`. Streams only."
    )
    stall_ms: float | Literal["forever"] = Field(
        default="forever",
        description='The stall, ms, or "forever" (default): nothing more is written and the connection is\n'
        "dropped after 600000 ms unless the client gives up first.",
    )
    frames_per_write: int | None = Field(
        default=None, ge=1,
        description="Frames joined into one write (one HTTP chunk); default 1 when `tokens_per_s` is set,\n"
        "else 64. Streams only.",
    )
    split_special: bool = Field(
        default=False,
        description="Split every write in two: inside the first Harmony special token in its bytes\n"
        "(`<|chan` + `nel|>`) when there is one, else at a seeded byte position. Streams only.",
    )
    split_gap_ms: float = Field(
        default=1.0, ge=0, le=1000, allow_inf_nan=False,
        description="Pause between the two halves of a split write, ms, so that they reach the client in\n"
        "separate reads (default 1).",
    )

    @field_validator("tokens_per_s")
    @classmethod
    def _rate_within_max_delay(cls, value: float | None) -> float | None:
        # Without a floor, tokens_per_s=1e-300 scheduled a reply ~1e300 s away though every
        # other delay is capped at MAX_DELAY_MS (breaker D15): one frame's gap may not exceed it.
        if value is not None and 1000.0 / value > MAX_DELAY_MS:
            raise ValueError(
                f"expected at least {1000.0 / MAX_DELAY_MS:.6g} tokens per second "
                f"(one token per {MAX_DELAY_MS:g} ms, the longest delay)"
            )
        return value

    @field_validator("stall_ms", mode="plain", json_schema_input_type=_Ms | Literal["forever"])
    @classmethod
    def _ms_or_forever(cls, value: Any) -> float | Literal["forever"]:
        if value == "forever":
            return "forever"
        try:
            ms = float(value)
        except (TypeError, ValueError):
            ms = math.nan
        if isinstance(value, bool) or not 0 <= ms <= MAX_DELAY_MS:
            raise ValueError(f"expected a number of ms from 0 to {MAX_DELAY_MS:g}, or 'forever'")
        return ms

    def frame_problem(self, frames: int, streamed: bool) -> str | None:
        """Why ``malformed_at_frame`` names no frame of a reply of ``frames`` frames (a
        non-streamed reply is one), else ``None``.

        Positions run from 0 to ``frames - 1``, or from ``-frames`` to -1 counted from the end
        (module docstring). One outside both left the reply as it was: a clean 200, so a test
        whose position was mistyped (``malformed_at_frame=99999``, ``-100`` on a 20-frame stream)
        passed without its fault (t18 breaker, finding 10). The server answers this in the
        profile's error shape (400) instead of the reply: the position cannot be checked when the
        scenario loads or the header is read, since the frame count depends on the completion,
        the profile and the endpoint. The ``*_after_frames`` counts are not positions: past the
        end they mean "after every frame" (a truncation or a stall there is still "after").
        """
        at = self.malformed_at_frame
        if at is None or -frames <= at < frames:
            return None
        shape = (
            f"a stream of {frames} frames: 0 to {frames - 1}, or {-frames} to -1"
            if streamed
            else "a non-streamed reply, one frame: 0 or -1"
        )
        return (
            f"transport malformed_at_frame={at} names no frame of this reply ({shape}), so the fault "
            "would not happen; fix the position (X-Mockoss-Transport, the step's transport: or the server's)"
        )

    @property
    def paced(self) -> bool:
        """True when frames are spaced in time (``tokens_per_s`` is set)."""
        return self.tokens_per_s is not None

    @classmethod
    def from_data(cls, data: TransportSpec | Mapping[str, Any], *, where: str = "transport") -> TransportSpec:
        """Validate a mapping (``{"ttft_ms": 300}``) or pass a spec through.

        Raises:
            TransportError: ``"{where}: {field}: {problem}"`` for each invalid or unknown field.
        """
        if isinstance(data, TransportSpec):
            return data
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise TransportError(_describe(where, exc)) from None

    @classmethod
    def from_header(cls, text: str) -> TransportSpec:
        """Parse ``X-Mockoss-Transport: name=value[,name=value…]``.

        Values are read as pydantic reads strings (``300``, ``0.5``, ``true``, ``forever``); values
        cannot contain commas, and ``\\n`` in a value stands for a newline (for ``malformed_text``).

        Raises:
            TransportError: an item without ``=``, a repeated or unknown name, or an invalid value,
                e.g. ``X-Mockoss-Transport: ttft_ms: Input should be a valid number…``; a value
                longer than :data:`MAX_TRANSPORT_HEADER_CHARS` (the server answers each with a
                400 in the profile's error shape).
        """
        return _from_header(text)

    @classmethod
    def layered(cls, *layers: TransportSpec | None) -> TransportSpec | None:
        """Merge specs, later layers overriding the fields they set; ``None`` if every layer is ``None``."""
        present = [layer for layer in layers if layer is not None]
        if len(present) <= 1:
            return present[0] if present else None
        values: dict[str, Any] = {}
        for layer in present:
            values.update((name, getattr(layer, name)) for name in layer.model_fields_set)
        return cls.model_construct(_fields_set=set(values), **values)


def _describe(where: str, error: ValidationError) -> str:
    """``"{where}: {field}: {problem}; …"``. An unknown field gets the closest field names as the
    scenario loader gives a misspelt YAML field (:func:`mockoss.scenario.field_hints.field_hint`),
    then the list of fields:
    ``X-Mockoss-Transport: ttf_ms: unknown field (did you mean 'ttft_ms'?); the fields are …``."""
    from mockoss.scenario.field_hints import field_hint  # error paths only (issue 9, start-up)

    names = ", ".join(TransportSpec.model_fields)
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "(value)"
        if item["type"] == "extra_forbidden":
            hint = field_hint(TransportSpec, list(item["loc"]))
            problems.append(f"{field}: unknown field{hint}; the fields are {names}")
        else:
            problems.append(f"{field}: {item['msg']} (got {item['input']!r})")
    return f"{where}: " + "; ".join(problems)


#: Longest ``X-Mockoss-Transport`` value accepted (characters): every field set, with a
#: ``malformed_text`` of a few KiB, fits. A longer value is a 400 (uvicorn accepts headers of up
#: to 16 MB: 300 requests with 1 MB values each kept their spec in the header cache, and grew a
#: server by 500 MB that reset did not free; issue 9 review, the breaker's finding 4).
MAX_TRANSPORT_HEADER_CHARS = 8192
#: Longest value whose parsed spec is kept for the next request with the same value (a test suite
#: sends a few short values, ``ttft_ms=300,tokens_per_s=50``); a longer one is parsed every time.
TRANSPORT_CACHE_CHARS = 256


def _from_header(text: str) -> TransportSpec:
    if len(text) <= TRANSPORT_CACHE_CHARS:
        return _from_short_header(text)
    if len(text) > MAX_TRANSPORT_HEADER_CHARS:
        raise TransportError(
            f"X-Mockoss-Transport: {len(text)} characters, over mockoss's limit of {MAX_TRANSPORT_HEADER_CHARS} "
            "(mockoss.scenario.transport.MAX_TRANSPORT_HEADER_CHARS; every field with a malformed_text of a few KiB fits in it)"
        )
    return _parse_header(text)


def _parse_header(text: str) -> TransportSpec:
    where = "X-Mockoss-Transport"
    values: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise TransportError(f"{where}: expected name=value, got {item!r}")
        if name in values:
            raise TransportError(f"{where}: {name} is given twice")
        values[name] = value.strip().replace("\\n", "\n")
    return TransportSpec.from_data(values, where=where)


#: Specs of short header values (at most 256 of :data:`TRANSPORT_CACHE_CHARS` characters each:
#: ~0.3 MB with their specs); emptied by reset (:func:`clear_header_cache`). Errors are not kept.
_from_short_header = functools.lru_cache(maxsize=256)(_parse_header)


def clear_header_cache() -> None:
    """Forget the parsed header values (``MockServer.reset``, through
    :func:`mockoss.harmony.prompt.caches.clear_caches`)."""
    _from_short_header.cache_clear()
