"""How a recording ``mockoss serve`` (``--record``) stops: it says what it waits for, and a second signal stops it.

Without ``--record`` a stop cuts requests in flight after :data:`mockoss.server.run.SHUTDOWN_GRACE_S`.
With it, the exchanges in flight are what the user asked to keep, so the server waits for them.
It used to wait silently and without limit (uvicorn's ``timeout_graceful_shutdown=None``): a
stream stalled ``forever`` held a SIGTERM for 600 s without a word, a second SIGTERM did nothing,
and a SIGINT then gave two tracebacks (the lifespan, which closes the recording, was skipped and
then cancelled under uvicorn's re-raised signal; breaker report, session 12, finding 4). Now:

- on the first SIGTERM or SIGINT, when requests are in flight, one line on stderr:
  ``mockoss: stopping: waiting for N request(s) in flight to finish and be recorded (at most
  600 s; SIGINT or SIGTERM again stops now, keeping what is recorded)``;
- the wait is bounded by :data:`RECORD_GRACE_S` (600 s: the OpenAI SDKs' default request timeout,
  also :data:`mockoss.scenario.transport.MAX_DELAY_MS`, the longest a scripted stall lasts, and an
  upstream's default read timeout);
- a second SIGTERM or SIGINT, or the bound, cuts what is still in flight as a stop without
  ``--record`` does (a request not yet answered gets mockoss's 503, a stream is cut; one line says
  how many), then the lifespan closes the recording as usual: every exchange that finished is in
  the file (:mod:`mockoss.server.durable`), and the process exits by the signal, without traceback.

uvicorn's own second-signal handling (Kludex/uvicorn 0.55.0 ``uvicorn/server.py``
``Server.handle_exit``: a second SIGINT sets ``force_exit``, a second SIGTERM does nothing;
``Server.shutdown`` skips the lifespan's shutdown under ``force_exit``) is replaced here by
overriding ``handle_exit`` and ``_wait_tasks_to_complete``, the wait ``Server.shutdown`` runs
under ``timeout_graceful_shutdown``.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from types import FrameType

import uvicorn

__all__ = ["RECORD_GRACE_S", "RecordingServer"]

#: Longest a recording ``mockoss serve`` waits, once told to stop, for the exchanges in flight (s).
RECORD_GRACE_S = 600.0

#: How long the requests cut at a stop get to end (their awaits return when cancelled).
_CUT_WAIT_S = 2.0


class RecordingServer(uvicorn.Server):
    """uvicorn's server for ``mockoss serve --record`` (module docstring).

    Args:
        config: uvicorn's config, with ``timeout_graceful_shutdown=None`` (this class bounds the wait).
        grace_s: the bound, seconds (:data:`RECORD_GRACE_S`).
    """

    def __init__(self, config: uvicorn.Config, grace_s: float = RECORD_GRACE_S) -> None:
        super().__init__(config)
        self.grace_s = grace_s
        self._stop_now = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """A first signal stops serving (uvicorn's own); a later one ends the wait for requests
        in flight. Runs as the signal handler: it only sets flags."""
        stopping = self.should_exit
        super().handle_exit(sig, frame)  # records the signal, to be raised again at exit
        if stopping:
            self.force_exit = False  # which would skip the lifespan, and so the recording's close
            self._stop_now = True

    async def _wait_tasks_to_complete(self) -> None:
        state = self.server_state
        if state.tasks:
            _say(
                f"waiting for {len(state.tasks)} request(s) in flight to finish and be recorded "
                f"(at most {self.grace_s:g} s; SIGINT or SIGTERM again stops now, keeping what is recorded)"
            )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.grace_s
        while (state.connections or state.tasks) and not self._stop_now and loop.time() < deadline:
            await asyncio.sleep(0.1)
        if tasks := list(state.tasks):
            why = "second signal" if self._stop_now else f"{self.grace_s:g} s passed"
            _say(
                f"{len(tasks)} request(s) still in flight cut ({why}); the recording keeps every exchange that finished"
            )
            for task in tasks:
                task.cancel(msg="mockoss: stopping")
            await asyncio.wait(tasks, timeout=_CUT_WAIT_S)
        waits = [server.wait_closed() for server in self.servers]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*waits), _CUT_WAIT_S)


def _say(text: str) -> None:
    print(f"mockoss: stopping: {text}", file=sys.stderr, flush=True)
