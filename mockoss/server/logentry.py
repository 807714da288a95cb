"""The request-log entry of one request :class:`~mockoss.server.core.MockServer` answered, and its
hand-over to the HTTP request being answered.

Split out of :mod:`mockoss.server.core` (a pure move): :meth:`MockServer.respond
<mockoss.server.core.MockServer.respond>`, :meth:`~mockoss.server.core.MockServer.play` and
:meth:`~mockoss.server.core.MockServer.record_request` call these module functions directly, as
they did in core (no wrapper per request).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from mockoss.scenario.conversation import SharedHeaders
from mockoss.server.records import REQUEST_RECORDS, Endpoint, RecordedRequest, header_items, new_record

if TYPE_CHECKING:
    from mockoss.scenario.loader import Scenario, Step
    from mockoss.scenario.player import Played


class _Unanswered(NamedTuple):
    """A request mockoss or the emulated server answered itself before any scenario step (no
    scenario selected, a failure of its own, the profile's refusal): ``problem`` (``None`` for a
    refusal) and ``warnings`` (a refusal's hint, :mod:`mockoss.server.request_notes`) go to the
    request log, which the pytest plugin's failure report shows."""

    problem: str | None
    warnings: tuple[str, ...] = ()



def _unanswered(problem: str) -> _Unanswered:
    return _Unanswered(problem[:500])


def _refused_entry(warnings: tuple[str, ...]) -> _Unanswered | None:
    """What a refused request's log entry holds besides its reply: its hint, if any."""
    return _Unanswered(None, warnings) if warnings else None


def _share(record: RecordedRequest) -> None:
    """Hand ``record`` to the HTTP request being answered, if it asked (:data:`REQUEST_RECORDS`)."""
    sink = REQUEST_RECORDS.get()
    if sink is not None:
        sink.append(record)


def _record(
    index: int,
    endpoint: Endpoint,
    raw: bytes,
    headers: Mapping[str, str],
    scenario: Scenario | None,
    step: Step | None,
    played: Played | _Unanswered | None,
    status: int,
    server_log: tuple[str, ...] = (),
) -> RecordedRequest:
    """The request-log record of one answered request (:meth:`MockServer.respond`, :meth:`MockServer.play`)."""
    if isinstance(played, _Unanswered):
        problem, warnings, played = played.problem, played.warnings, None
    else:
        problem, warnings = (played.problem, played.warnings) if played else (None, ())
    # Every field, in RecordedRequest's order (new_record: without the frozen dataclass's __init__).
    return new_record(
        index,
        endpoint,
        raw,
        headers.pairs if type(headers) is SharedHeaders else header_items(headers),  # made once per header block
        scenario.name if scenario else None,  # scenario
        step.index if step and scenario else None,  # step
        status,
        step.completion.text if step and step.completion else None,  # completion
        played.rule_id if played else None,  # rule
        played.turn if played else None,  # turn
        problem,
        warnings,
        bool(played and played.rule is not None and played.step is None and not played.problem),  # exhausted
        server_log,
    )

