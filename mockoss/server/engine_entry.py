"""The server's entry for requests a real engine answers (:mod:`mockoss.engines`): :meth:`EngineEntry.play`
plays the scenario step and leaves the reply to the engine, where :meth:`MockServer.respond
<mockoss.server.core.MockServer.respond>` surfaces it with the profile; and :func:`known_endpoint`,
the check of an endpoint name both entries make first.

Split out of :mod:`mockoss.server.core` (a pure move): :class:`EngineEntry` is a base class of
``MockServer``; its method reads the attributes ``MockServer.__post_init__`` sets (``_lock``,
``_epoch``, ``_handled``, ``_base_profile``, ``requests``) and calls ``MockServer._answer``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from mockoss.endpoints import ENDPOINTS
from mockoss.jsonbody import parse_json
from mockoss.server.logentry import _record, _share, _unanswered
from mockoss.server.replies import failure_reply

if TYPE_CHECKING:
    from mockoss.profiles.base import Reply
    from mockoss.scenario.loader import Step
    from mockoss.server.records import Endpoint, RecordedRequest

__all__ = ["EngineEntry", "known_endpoint"]


class EngineEntry:
    """The real engines' entry of :class:`~mockoss.server.core.MockServer` (its base class)."""

    def play(
        self, endpoint: Endpoint, raw: bytes, headers: Mapping[str, str]
    ) -> tuple[Reply | None, Step | None, Callable[[int], RecordedRequest]]:
        """Play the scenario step for a request that a real engine answers (:mod:`mockoss.engines`).

        Returns ``(reply, step, log)``: ``reply`` is mockoss's own answer when no engine is needed
        (invalid request, no scenario, scripted error or replay, exhausted rule; ``step`` is then
        the step played, if any), else ``None`` and ``step`` holds the completion the engine must
        emit. Call ``log(status)`` once the status of the answer is known, to add the request to
        :attr:`requests` (scenario, rule, step, turn and completion as :meth:`respond` logs them).
        Never raises for bad input; an unknown ``endpoint`` name is a ``ValueError`` (see :meth:`handle`).
        """
        known_endpoint(endpoint)
        with self._lock:
            epoch = self._epoch
            index = self._handled
            self._handled += 1
            try:
                body = parse_json(raw)
            except (ValueError, RecursionError):
                body = None
            try:
                reply, scenario, step, played = self._answer(endpoint, raw, body, headers, index, None, surface=False)
            except BaseException as exc:  # as in respond(): never a bare 500
                if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                    raise
                reply, scenario, step, played = (
                    failure_reply(exc, self._base_profile, endpoint, index),
                    None,
                    None,
                    _unanswered(f"mockoss could not answer it: {type(exc).__name__}: {exc}"),
                )

        def log(status: int) -> RecordedRequest:
            record = _record(index, endpoint, raw, headers, scenario, step, played, status)
            with self._lock:
                if epoch != self._epoch:  # the engine answered after a reset: not the next test's request
                    return record
                self.requests.append(record)
            _share(record)
            return record

        return reply, step, log


def known_endpoint(endpoint: str) -> None:
    """Raise ``ValueError`` naming the valid names when ``endpoint`` is not one of
    :data:`mockoss.endpoints.ENDPOINTS` (a caller's mistake, which was an unscripted 500)."""
    if endpoint not in ENDPOINTS:
        raise ValueError(f"unknown endpoint {endpoint!r}; endpoints: {', '.join(ENDPOINTS)}")
