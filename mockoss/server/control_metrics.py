"""Prometheus metrics of the fake server (``GET /mockoss/metrics``), with :mod:`prometheus_client`.

``mockoss_requests_total{endpoint, status, scenario}``: requests answered (``endpoint`` is the
generation endpoint's name, ``probe`` for identity and health routes and unknown paths,
``control`` for ``/mockoss/*``; ``scenario`` is empty when none answered, and
:data:`OTHER_SCENARIOS` for every scenario name after the first :data:`MAX_SCENARIO_LABELS`).
``mockoss_stream_frames_total{endpoint}``: SSE events and NDJSON lines sent.
``mockoss_sessions``: test-id sessions held. With ``--record``: ``mockoss_recorder_lag_seconds``
(age of the oldest exchange not yet on disk), ``mockoss_recorder_written``,
``mockoss_recorder_write_seconds_max`` and ``_mean`` (an exchange's wait for its fsync).
Each app has a registry of its own, so several servers can share a process (tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockoss.upstream.record import Recorder

__all__ = ["MAX_SCENARIO_LABELS", "OTHER_SCENARIOS", "Metrics"]

#: Scenario names the ``scenario`` label takes at most (until :meth:`Metrics.clear`); the
#: requests of any further name are counted under :data:`OTHER_SCENARIOS`. Prometheus' own advice
#: is to keep label values bounded (prometheus.io/docs/practices/naming, "Labels": not user IDs,
#: not other unbounded sets); a name per uploaded scenario was not (10,000 names: 10,003 series,
#: 3.4 MB, 0.4 s to render; issue 9 review, eighth session, finding 7). The figure is ours: one
#: per session kept (:data:`mockoss.server.control.MAX_SESSIONS`).
MAX_SCENARIO_LABELS = 256
#: The ``scenario`` label of the requests of names beyond :data:`MAX_SCENARIO_LABELS` (no
#: uploaded scenario can be called so: names start with a letter or digit).
OTHER_SCENARIOS = "(other)"


class Metrics:
    """Prometheus metrics of one app, in a registry of its own (several apps may share a process).

    Requests and frames are counted in plain dicts (:meth:`observe`, on the app's event loop);
    :mod:`prometheus_client` is imported, and the registry built, at the first :meth:`render`: a
    served mockoss that is never scraped does not load it (issue 9: 9 ms and 1.3 MB at start).
    The exposition is the one ``prometheus_client.Counter``/``Gauge`` objects give: a
    ``_total`` and a ``_created`` sample per label set (``_created``: when it was first counted;
    none with ``PROMETHEUS_DISABLE_CREATED_SERIES``, as prometheus_client does), gauges read at
    scrape time.
    """

    def __init__(self, sessions: Callable[[], int], recorder: Recorder | None) -> None:
        self._sessions = sessions
        self._recorder = recorder
        #: (endpoint, status, scenario or "") → [requests, first seen (epoch s)]
        self._requests: dict[tuple[str, int, str], list[float]] = {}
        #: endpoint → [frames, first seen (epoch s)]
        self._frames: dict[str, list[float]] = {}
        #: scenario names with a label value of their own (at most MAX_SCENARIO_LABELS)
        self._scenarios: set[str] = set()
        self._registry: Any = None

    @property
    def registry(self) -> Any:
        """The ``prometheus_client.CollectorRegistry`` the metrics are exposed from (built on first use)."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry

            registry = CollectorRegistry(auto_describe=True)
            registry.register(_Collector(self))
            self._registry = registry
        return self._registry

    def observe(self, endpoint: str, status: int, scenario: str | None, frames: int) -> None:
        """Count a request answered (``scenario``: the name of the one that answered, if any) and
        the stream ``frames`` it sent."""
        key = (endpoint, status, scenario or "")  # None and "" are one label set, as Counter.labels() makes them
        counted = self._requests.get(key)
        if counted is None:
            if scenario and scenario not in self._scenarios:
                if len(self._scenarios) >= MAX_SCENARIO_LABELS:
                    key = (endpoint, status, OTHER_SCENARIOS)
                else:
                    self._scenarios.add(scenario)
            counted = self._requests.get(key)
            if counted is None:
                counted = self._requests[key] = [0.0, time.time()]
        counted[0] += 1
        if frames:
            sent = self._frames.get(endpoint)
            if sent is None:
                sent = self._frames[endpoint] = [0.0, time.time()]
            sent[0] += frames

    def clear(self) -> None:
        """Forget every count and label set, as a server just started (``POST
        /mockoss/reset?all=true``): counters start again from 0 with a new ``_created``, which
        Prometheus reads as a counter reset."""
        self._requests, self._frames, self._scenarios = {}, {}, set()

    def render(self) -> tuple[bytes, str]:
        """The exposition (Prometheus text format) and its content type. Safe on a worker thread
        (it reads the counts as copies of the dicts)."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _Collector:
    """The metric families of one :class:`Metrics`, in the order the registry lists them."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        from prometheus_client import metrics as prometheus_metrics
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        created = getattr(prometheus_metrics, "_use_created", True)
        m = self.metrics
        family = CounterMetricFamily("mockoss_requests", "Requests answered, by endpoint, status and scenario", labels=["endpoint", "status", "scenario"])
        for (endpoint, status, scenario), (count, first) in list(m._requests.items()):
            family.add_metric([endpoint, str(status), scenario], count, created=first if created else None)
        yield family
        family = CounterMetricFamily("mockoss_stream_frames", "Stream frames (SSE events, NDJSON lines) sent, by endpoint", labels=["endpoint"])
        for endpoint, (count, first) in list(m._frames.items()):
            family.add_metric([endpoint], count, created=first if created else None)
        yield family
        yield GaugeMetricFamily("mockoss_sessions", "Test-id sessions held", value=m._sessions())
        recorder = m._recorder
        if recorder is not None:
            yield GaugeMetricFamily("mockoss_recorder_lag_seconds", "Age of the oldest exchange not yet on disk", value=recorder.lag_seconds())
            yield GaugeMetricFamily("mockoss_recorder_written", "Exchanges written to the recording", value=recorder.written)
            yield GaugeMetricFamily("mockoss_recorder_write_seconds_max", "Longest wait of an exchange for its fsync", value=recorder.write_seconds_max)
            yield GaugeMetricFamily("mockoss_recorder_write_seconds_mean", "Mean wait of an exchange for its fsync", value=recorder.write_seconds_mean)
