"""Real backends behind mockoss: pass-through, raw Harmony completions, record and replay.

* :class:`Upstream` (``mockoss serve --upstream URL``): a real OpenAI-compatible gpt-oss server.
  ``mode="pass"`` forwards requests unchanged and relays the answers
  (:mod:`mockoss.upstream.proxy`); ``mode="raw"`` asks its ``/v1/completions`` for the raw
  Harmony completion and surfaces it through any profile (:mod:`mockoss.upstream.raw`).
* :class:`Recorder` (``--record DIR``): every exchange as a scenario step, replayable byte for
  byte (:mod:`mockoss.upstream.record`), with optional redaction of personal details in prompts
  (:mod:`mockoss.upstream.redact`).

Example::

    from mockoss.server.core import MockServer
    from mockoss.upstream import Recorder, Upstream

    server = MockServer(upstream=Upstream("http://127.0.0.1:8000", mode="raw"), profile="ollama",
                        recorder=Recorder("recordings", "session"))

:class:`Recorder` is imported on first use (PEP 562 module ``__getattr__``): the recorder pulls in
the scrubber, redactor, journal and replay writer, which ``mockoss serve`` without ``--record``
never needs, and importing them cost its cold start ~5 ms (issue 9, benchmarks/bench_start.py;
:func:`mockoss.lazynames.module_getattr`).
"""

from typing import TYPE_CHECKING

from mockoss.lazynames import module_getattr
from mockoss.upstream.config import Upstream, UpstreamError

if TYPE_CHECKING:
    from mockoss.upstream.record import Recorder

__all__ = ["Recorder", "Upstream", "UpstreamError"]

__getattr__ = module_getattr(globals(), {"Recorder": "mockoss.upstream.record"})
