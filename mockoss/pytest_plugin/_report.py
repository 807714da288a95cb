"""Text the plugin shows a person: the request log (failure report section, count assertion) and
the steps a test never used (teardown assertion).

Control characters in what a test scripted or a server sent (ESC, NUL, CR, DEL, C1) are shown
escaped, as ``repr`` writes them (``\\x1b[31m``): raw, they recoloured the terminal and garbled
pytest's report (sixteenth-session breaker, finding 13). Newlines split lines; tabs stay.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockoss.scenario.loader import Scenario
    from mockoss.server.core import RecordedRequest

__all__ = [
    "describe_requests",
    "nearest_recorded",
    "plural",
    "printable",
    "tool_warnings",
    "unexpected_requests",
    "unused_steps",
]

#: Where the teardown assertion sends someone whose unused steps are on purpose.
STEPS_DOC = "README.md, section 'Use it from pytest' (assert_all_steps_used)"
#: … and someone whose unanswered requests are on purpose.
REQUESTS_DOC = "README.md, section 'Use it from pytest' (assert_all_requests_were_expected)"
#: … and someone whose tool-check warnings are on purpose.
TOOLS_DOC = "README.md, section 'Tool checks'"


#: C0 controls but tab and newline, DEL and the C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with its control characters (but ``\\t`` and ``\\n``) escaped as ``repr`` does:
    ``"\\x1b[31mred"`` -> ``"\\\\x1b[31mred"``, ``"\\r"`` -> ``"\\\\r"``."""
    return _CONTROL.sub(lambda found: repr(found.group())[1:-1], text)


def plural(count: int, noun: str) -> str:
    """``"1 request"``, ``"2 requests"``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _answered_by(request: RecordedRequest) -> str:
    if request.scenario is None:
        if request.problem:  # mockoss answered it itself (no scenario selected, a failure of its own)
            return f"not scripted: {request.problem}"
        return "not scripted: the server's own error reply"
    where = f"scenario {request.scenario!r}"
    if request.rule is None:
        return f"{where}: no rule answered"
    if request.step is None:
        return f"{where}, rule {request.rule}: no step (the rule is used up, or its template failed)"
    turn = f", turn {request.turn}" if request.turn is not None else ""
    # A step without a completion is a scripted error, or a recorded reply replayed as its bytes.
    kind = (
        "" if request.completion is not None else " (scripted error)" if request.status >= 400 else " (replayed bytes)"
    )
    return f"{where}, rule {request.rule}, step {request.step}{turn}{kind}"


def _unanswered(request: RecordedRequest) -> bool:
    """The scenario did not answer ``request``: no rule matched, a template failed, or a used-up
    ``when_exhausted: error`` rule answered it."""
    return request.scenario is not None and bool(request.problem or request.exhausted)


def _why_unanswered(request: RecordedRequest, recorded: Scenario | None) -> list[str]:
    """Why the scenario did not answer ``request`` (unindented): the used-up rule, or each rule's
    reasons; with ``recorded`` (a cassette) and no rule matching, the nearest recorded request and
    a word diff (:func:`nearest_recorded`)."""
    lines = []
    if request.exhausted:
        lines.append(f"rule {request.rule} is used up (when_exhausted: error) and answered its exhausted_error")
    lines.extend((request.problem or "").splitlines())
    if recorded is not None and request.problem and request.rule is None:
        lines.extend(nearest_recorded(request, recorded))
    return lines


def describe_request(request: RecordedRequest, recorded: Scenario | None = None) -> list[str]:
    """Two lines or more: ``#0 POST /v1/chat/completions -> 200: scenario 'x', rule #1, step 0, turn 1``,
    then its tool-check warnings (``warning: …``) and hints (``hint: …``: why the server refused
    it or dropped a message, :mod:`mockoss.server.request_notes`), then what the emulated server logged for it (``server log: …``), then, for a request the
    scenario did not answer, why (each rule's reasons; with the cassette ``recorded``, the nearest
    recorded request and a word diff: the lines the teardown check gives, so that a test whose
    client raised on the 400 first shows them too), then the raw Harmony completion when there is
    one (continuation lines aligned under its start)."""
    from mockoss.endpoints import ENDPOINTS
    from mockoss.server.records import HINT

    endpoint = ENDPOINTS.get(request.endpoint)
    path = endpoint.path if endpoint is not None else request.endpoint
    lines = [f"#{request.index} POST {path} -> {request.status}: {_answered_by(request)}"]
    # A hint (mockoss.server.request_notes) says why the server answered so; a warning, a tool check.
    lines.extend(f"  {w}" if w.startswith(HINT) else f"  warning: {w}" for w in request.warnings)
    lines.extend(f"  server log: {line}" for line in getattr(request, "server_log", ()))
    if _unanswered(request):
        lines.extend(f"  {line}" for line in _why_unanswered(request, recorded))
    if request.completion is not None:
        first, *rest = request.completion.split("\n")
        lines.append(f"  completion: {first}")
        lines.extend(f"              {line}" for line in rest)
    return [printable(line) for line in lines]


def describe_requests(
    requests: Sequence[RecordedRequest], profile: str, seed: int | str, recorded: Scenario | None = None
) -> str:
    """The log, one entry per request (:func:`describe_request`, ``recorded``: the cassette's
    scenario, if any), under a line saying how many there were."""
    head = f"{plural(len(requests), 'request')} (profile {profile!r}, seed {seed!r})"
    lines = [head + (":" if requests else "")]
    for request in requests:
        lines.extend(describe_request(request, recorded))
    return "\n".join(lines)


def unused_steps(scenarios: Iterable[Scenario], requests: Sequence[RecordedRequest]) -> list[str]:
    """One line per step that answered fewer requests than its ``times``, in file order:
    ``scenario mockoss:scenarios/x.yaml:7, rule #1, step 2 (note): never answered``."""
    answered = Counter((r.scenario, r.rule, r.step) for r in requests if r.step is not None)
    lines = []
    for scenario in scenarios:
        for rule in scenario.rules:
            rule_id = rule.name or f"#{rule.index + 1}"
            for step in rule.steps:
                count = answered[(scenario.name, rule_id, step.index)]
                if count >= step.times or step.optional:
                    continue
                note = f" ({step.note})" if step.note else ""
                used = "never answered" if count == 0 else f"answered {count} of its {step.times} times"
                lines.append(printable(f"- {rule.where}, {rule.label}, step {step.index}{note}: {used}"))
    return lines


def unexpected_requests(requests: Sequence[RecordedRequest], recorded: Scenario | None = None) -> list[str]:
    """One entry per request the scenario did not answer: no rule matched (with each rule's
    reasons, indented), a template failed, or a used-up ``when_exhausted: error`` rule answered.
    With ``recorded`` (a cassette), an unmatched request also gets the nearest recorded request
    and a word diff of the two last user messages (:func:`nearest_recorded`)."""
    lines = []
    for request in requests:
        if not _unanswered(request):
            continue
        head, *_ = describe_request(request)
        lines.append(f"- {head.removeprefix(f'#{request.index} ')} (request #{request.index})")
        lines.extend(f"    {printable(line)}" for line in _why_unanswered(request, recorded))
    return lines


def _word_diff(old: str, new: str) -> str:
    """``What is [-2 + 2-]{+3 + 3+}?``: git's word-diff markers over the changed spans."""
    import difflib

    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(old[i1:i2])
            continue
        if i2 > i1:
            out.append(f"[-{old[i1:i2]}-]")
        if j2 > j1:
            out.append(f"{{+{new[j1:j2]}+}}")
    return "".join(out)


def nearest_recorded(request: RecordedRequest, recorded: Scenario) -> list[str]:
    """The recorded exchange whose last user message is closest to ``request``'s (its step
    ``note`` holds it, as :class:`mockoss.upstream.Recorder` writes it), and a word diff."""
    import difflib

    from mockoss.scenario.conversation import RequestFacts

    body = request.body if isinstance(request.body, dict) else {}
    last = RequestFacts(request.endpoint, body, {}, "").last("user")
    if last is None:
        return []
    received = last[1]
    best: tuple[float, str, str] | None = None
    for rule in recorded.rules:
        for step in rule.steps:
            note = (step.note or "").split(": ", 1)[-1]
            ratio = difflib.SequenceMatcher(None, note, received, autojunk=False).ratio()
            if best is None or ratio > best[0]:
                best = (ratio, f"{rule.label} ({rule.where})", note)
    if best is None:
        return []
    return [f"nearest recorded request: {best[1]}", f"  last user message: {_word_diff(best[2], received)}"]


def tool_warnings(requests: Sequence[RecordedRequest]) -> list[str]:
    """One line per tool-check warning: ``- request #0 (rule #1, step 0): tool call 'x': …``. A
    hint on the emulated server's answer (``hint: …``, :mod:`mockoss.server.request_notes`: a
    refusal's cause, a dropped message) is no tool-check problem and is left out."""
    from mockoss.server.records import HINT

    return [
        printable(f"- request #{r.index} (rule {r.rule}, step {r.step}): {warning}")
        for r in requests
        for warning in r.warnings
        if not warning.startswith(HINT)
    ]
