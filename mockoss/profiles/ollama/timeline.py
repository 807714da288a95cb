"""Deterministic timestamps and durations for Ollama's replies.

Ollama stamps every streamed response with ``created_at`` (``time.Now().UTC()``, RFC 3339 with
nanoseconds) and the final one with durations in nanoseconds. mockoss derives them from the
server's fixed ``created`` time and fixed rates, so the same scenario and seed give the same bytes:
the model "loads" for ``load_duration``, reads the prompt at ``prompt_rate`` tokens/s, then emits
one token every ``1/eval_rate`` s; the response for token *i* (0-based) is stamped when that token
is out, the final one when the last token is.
"""

from __future__ import annotations

import functools
from collections.abc import MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockoss.profiles.base import RequestContext
    from mockoss.profiles.ollama import OllamaProfile

__all__ = ["Timeline", "rfc3339"]

_NS = 1_000_000_000


@functools.lru_cache(maxsize=4096)
def _seconds(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")


def rfc3339(unix_ns: int) -> str:
    """Go's ``time.Time`` JSON form in UTC: ``2026-01-01T00:00:00.07Z`` (fraction without trailing
    zeros, omitted when zero)."""
    seconds, fraction = divmod(unix_ns, _NS)
    if not fraction:
        return _seconds(seconds) + "Z"
    return f"{_seconds(seconds)}.{fraction:09d}".rstrip("0") + "Z"


@dataclass(frozen=True, slots=True)
class Timeline:
    """One request's clock.

    Attributes:
        created: unix seconds the request arrived (the server's fixed ``created``).
        prompt_tokens: prompt length in tokens (``prompt_eval_count``).
        eval_count: tokens generated (``eval_count``).
        load_ns: ``load_duration`` in ns.
        prompt_ns_per_token, eval_ns_per_token: ns per prompt token / per generated token.
    """

    created: int
    prompt_tokens: int
    eval_count: int
    load_ns: int
    prompt_ns_per_token: int
    eval_ns_per_token: int

    @classmethod
    def of(cls, profile: OllamaProfile, ctx: RequestContext, eval_count: int) -> Timeline:
        """The clock of one request, at the profile's rates (``load_duration_ms``,
        ``prompt_eval_rate`` and ``eval_rate`` tokens/s)."""
        return cls(
            created=ctx.created,
            prompt_tokens=ctx.prompt_tokens,
            eval_count=eval_count,
            load_ns=profile.load_duration_ms * 1_000_000,
            prompt_ns_per_token=1_000_000_000 // profile.prompt_eval_rate,
            eval_ns_per_token=1_000_000_000 // profile.eval_rate,
        )

    @property
    def prompt_eval_ns(self) -> int:
        return self.prompt_tokens * self.prompt_ns_per_token

    @property
    def eval_ns(self) -> int:
        return self.eval_count * self.eval_ns_per_token

    @property
    def total_ns(self) -> int:
        return self.load_ns + self.prompt_eval_ns + self.eval_ns

    def token_ns(self, position: int) -> int:
        """Unix ns when token ``position`` (0-based) is out; ``eval_count`` gives the end."""
        start = self.created * _NS + self.load_ns + self.prompt_eval_ns
        return start + min(position + 1, self.eval_count) * self.eval_ns_per_token

    def stamp(self, position: int) -> str:
        """:func:`rfc3339` of :meth:`token_ns`."""
        return rfc3339(self.token_ns(position))

    def stamps(self, positions: tuple[int, ...], memo: MutableMapping[object, object], key: object) -> tuple[bytes, ...]:
        """:meth:`stamp` of each position, as UTF-8, kept in ``memo`` under ``key`` for this
        clock (one entry per key, replaced when the clock differs: a prompt of another length
        starts the tokens later, and a memo filling with one entry per prompt length would push
        out the plans it holds)."""
        start = self.created * _NS + self.load_ns + self.prompt_eval_ns
        clock = (start, self.eval_ns_per_token, self.eval_count, positions)
        found = memo.get(key)
        if found is not None and found[0] == clock:  # type: ignore[index]
            return found[1]  # type: ignore[index, no-any-return]
        step, count = self.eval_ns_per_token, self.eval_count
        stamps = tuple(rfc3339(start + min(position + 1, count) * step).encode() for position in positions)
        memo[key] = (clock, stamps)
        return stamps

    @property
    def done_ns(self) -> int:
        return self.created * _NS + self.total_ns

    def metrics_json(self) -> str:
        """The ``Metrics`` fields of the final response, as Go writes them (zero values omitted):
        ``"total_duration":…,"load_duration":…,"prompt_eval_count":…,"prompt_eval_duration":…,
        "eval_count":…,"eval_duration":…``."""
        fields = (
            ("total_duration", self.total_ns),
            ("load_duration", self.load_ns),
            ("prompt_eval_count", self.prompt_tokens),
            ("prompt_eval_duration", self.prompt_eval_ns),
            ("eval_count", self.eval_count),
            ("eval_duration", self.eval_ns),
        )
        return ",".join(f'"{name}":{value}' for name, value in fields if value)
