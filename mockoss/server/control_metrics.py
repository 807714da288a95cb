"""Prometheus metrics of the fake server (``GET /mockoss/metrics``), with :mod:`prometheus_client`.

``mockoss_requests_total{endpoint, status, scenario}``: requests answered (``endpoint`` is the
generation endpoint's name, ``probe`` for identity and health routes and unknown paths,
``control`` for ``/mockoss/*``; ``scenario`` is empty when none answered).
``mockoss_stream_frames_total{endpoint}``: SSE events and NDJSON lines sent.
``mockoss_sessions``: test-id sessions held. With ``--record``: ``mockoss_recorder_lag_seconds``
(age of the oldest exchange not yet on disk), ``mockoss_recorder_written``,
``mockoss_recorder_write_seconds_max`` and ``_mean`` (an exchange's wait for its fsync).
Each app has a registry of its own, so several servers can share a process (tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockoss.upstream.record import Recorder

__all__ = ["Metrics"]


class Metrics:
    """Prometheus metrics of one app, in a registry of its own (several apps may share a process)."""

    def __init__(self, sessions: Callable[[], int], recorder: Recorder | None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge

        self.registry = CollectorRegistry(auto_describe=True)
        self._children: dict[tuple[str, int, str | None], Any] = {}
        self.requests = Counter(
            "mockoss_requests", "Requests answered, by endpoint, status and scenario", ["endpoint", "status", "scenario"], registry=self.registry
        )
        self.frames = Counter("mockoss_stream_frames", "Stream frames (SSE events, NDJSON lines) sent, by endpoint", ["endpoint"], registry=self.registry)
        Gauge("mockoss_sessions", "Test-id sessions held", registry=self.registry).set_function(sessions)
        if recorder is not None:
            Gauge("mockoss_recorder_lag_seconds", "Age of the oldest exchange not yet on disk", registry=self.registry).set_function(
                recorder.lag_seconds
            )
            Gauge("mockoss_recorder_written", "Exchanges written to the recording", registry=self.registry).set_function(lambda: recorder.written)
            Gauge(
                "mockoss_recorder_write_seconds_max", "Longest wait of an exchange for its fsync", registry=self.registry
            ).set_function(lambda: recorder.write_seconds_max)
            Gauge(
                "mockoss_recorder_write_seconds_mean", "Mean wait of an exchange for its fsync", registry=self.registry
            ).set_function(lambda: recorder.write_seconds_mean)

    def observe(self, endpoint: str, status: int, scenario: str | None, frames: int) -> None:
        key = (endpoint, status, scenario)
        child = self._children.get(key)
        if child is None:  # labels() costs a lock and a tuple of strings per call: once per label set
            child = self._children[key] = self.requests.labels(endpoint, str(status), scenario or "")
        child.inc()
        if frames:
            self.frames.labels(endpoint).inc(frames)

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


