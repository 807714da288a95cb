"""A server's record of what was warmed before the lock (:class:`Warmup`,
``MockServer._warmup``): each scenario's long completions, the request shapes they were warmed
for, the warm-ups in flight, and the long completion a request will play when the shared cursors
decide it (:func:`_predicted`); and its templated steps whose render may be long for a body's size
(:meth:`Warmup.long_templates`, :mod:`mockoss.server.template_cost`; ``match`` rules predicted from
the validated request), with which of their Faker-seeded warm-ups to skip (:meth:`Warmup.seeded_due`).

Split out of :mod:`mockoss.server.warmup` (moved; :meth:`Warmup.pending` now takes the shared
cursors rather than the server, and :meth:`Warmup.still_pending` is new), which says why and when a warm-up runs and
re-exports the limits below; its :func:`~mockoss.server.warmup.wanted` asks :meth:`Warmup.has_long`
(one identity check for a scenario without long completions or templates) per request, as before.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mockoss.scenario import template as template_module
from mockoss.scenario.conversation import RequestFacts
from mockoss.scenario.loader import Scenario, Step
from mockoss.scenario.player import SESSION_HEADER
from mockoss.scenario.select import answer, first_answer
from mockoss.server.template_cost import MODEL_CHARS, TemplateCost, min_raw_bytes

if TYPE_CHECKING:
    from mockoss.harmony import Completion

__all__ = ["LONG_TOKENS", "MAX_LONG", "PER_REQUEST", "SCENARIOS", "SEEDED_SKIPS", "SHAPES", "Warmup"]

#: A completion of at least this many tokens is warmed before the lock (building a profile's plan
#: costs ~5-50 us a token on the first request of a shape: ~5-50 ms here).
LONG_TOKENS = 1000
#: Long completions of one scenario considered, in file order (the rest are built under the lock).
MAX_LONG = 64
#: Long completions warmed for one request at most (the next request of the shape warms the next).
PER_REQUEST = 4
#: Request shapes remembered per scenario (least recently used forgotten first).
SHAPES = 256
#: Scenarios whose long completions a server remembers (the oldest forgotten first).
SCENARIOS = 16
#: Requests that skip the warm-up of a Faker-seeded templated step after one of its warm-ups was
#: overtaken by more than one request (they took the index it was rendered for: :meth:`Warmup.seeded_due`).
SEEDED_SKIPS = 3


class _Scenario:
    """One scenario's long completions (``longs``; ``index``: ``id(completion)`` -> position),
    its templated steps (``templates``: ``id(step)`` -> :class:`~mockoss.server.template_cost.TemplateCost`,
    pick options included), whether the shared cursors alone pick its steps (``predictable``: no
    rule has ``match`` checks), and the shapes warmed: shape hash -> a bit per position warmed."""

    __slots__ = ("_thresholds", "index", "longs", "predictable", "scenario", "shapes", "skips", "templates")

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.longs = _long_completions(scenario)
        self.index = {id(completion): position for position, completion in enumerate(self.longs)}
        self.templates = {
            id(candidate): TemplateCost(candidate.template)
            for step in scenario.steps
            for candidate in (step, *(option for _weight, option in step.options))
            if candidate.template is not None
        }
        self.predictable = not any(rule.match.checks for rule in scenario.rules)
        self.shapes: OrderedDict[int, int] = OrderedDict()
        self.skips: dict[int, int] = {}  # id(step) -> requests left that skip its seeded warm-up
        self._thresholds: tuple[tuple[int, int], dict[int, float], float] | None = None

    def thresholds(self, model_chars: int = MODEL_CHARS) -> tuple[dict[int, float], float]:
        """``(id(step) -> smallest body that may render it long, the smallest of them)``
        (:func:`~mockoss.server.template_cost.min_raw_bytes`), for the template cap in force and
        the server's longest model name (``request.model`` without one in the body)."""
        cap = template_module.MAX_RENDERED_CHARS
        known = self._thresholds
        if known is None or known[0] != (cap, model_chars):
            each = {key: min_raw_bytes(cost, cap, model_chars) for key, cost in self.templates.items()}
            known = self._thresholds = ((cap, model_chars), each, min(each.values(), default=math.inf))
        return known[1], known[2]


def _long_completions(scenario: Scenario) -> tuple[Completion, ...]:
    """The scenario's distinct completions of at least :data:`LONG_TOKENS` tokens, in file order
    (``pick`` options included; templated steps are rendered per request and left out), at most
    :data:`MAX_LONG`."""
    found: dict[int, Completion] = {}
    for step in scenario.steps:
        for candidate in (step, *(option for _weight, option in step.options)):
            completion = candidate.completion
            if completion is not None and candidate.replay is None and len(completion.tokens) >= LONG_TOKENS:
                found.setdefault(id(completion), completion)
    return tuple(found.values())[:MAX_LONG]


class Warmup:
    """A server's record of what was warmed (:attr:`MockServer._warmup`); thread-safe."""

    def __init__(self, model_chars: Callable[[], int] | None = None) -> None:
        # The length of the longest name request.model may resolve to (the server's served names,
        # which may change: read per request), for the bound of a templated render (issue 9,
        # eleventh-session review TC, finding 1 (d)).
        self._model_chars = model_chars
        self._lock = threading.Lock()
        self._scenarios: OrderedDict[int, _Scenario] = OrderedDict()
        self._last: tuple[object, bool] = (None, False)  # (scenario, has_long) last asked about
        self._inflight: dict[tuple[int, int, int], threading.Event] = {}  # (state, shape, position) being warmed

    def _state(self, scenario: Scenario) -> _Scenario:
        state = self._scenarios.get(id(scenario))  # a dict read: atomic, no lock
        if state is not None and state.scenario is scenario:
            return state
        state = _Scenario(scenario)  # outside the lock: reads every step once
        with self._lock:
            self._scenarios[id(scenario)] = state
            while len(self._scenarios) > SCENARIOS:
                self._scenarios.popitem(last=False)
        return state

    def has_long(self, scenario: Scenario | str) -> bool:
        """Whether ``scenario`` holds a long completion or a templated step (computed once per
        scenario; ``False`` for anything but a :class:`Scenario`). The last one asked about is
        kept: one identity check for a server's every request."""
        last = self._last
        if last[0] is scenario:
            return last[1]
        if not isinstance(scenario, Scenario):
            return False
        state = self._state(scenario)
        found = bool(state.longs or state.templates)
        self._last = (scenario, found)
        return found

    def pending(
        self,
        scenario: Scenario,
        shape: int,
        body: Any,
        headers: Mapping[str, str],
        cursors: list[int] | None,
        auto_session: bool,
        endpoint: str | None = None,
    ) -> tuple[_Scenario, tuple[int, ...]] | None:
        """``(state, positions)``: the long completions ``state.longs[i]`` to warm for ``shape``
        before this request (the one it will play, when :func:`_predicted` knows it from the
        scenario's shared ``cursors``; else the first :data:`PER_REQUEST` not warmed, in file
        order), else ``None`` (nothing to warm). ``endpoint``: the request's (a step recorded for
        another one is not played, so not warmed: :func:`_played`)."""
        state = self._state(scenario)
        if not state.longs:
            return None
        with self._lock:
            warmed = state.shapes.get(shape, 0)
            if warmed:
                state.shapes.move_to_end(shape)
        played = _predicted(state, body, headers, cursors, auto_session, endpoint)
        candidates = range(len(state.longs)) if played is None else played
        todo = tuple(position for position in candidates if not warmed >> position & 1)[:PER_REQUEST]
        return (state, todo) if todo else None

    def has_long_completions(self, scenario: Scenario) -> bool:
        """Whether ``scenario`` (one :meth:`has_long` said yes of) holds a long completion, not
        only templated steps."""
        return bool(self._state(scenario).longs)

    def _model_length(self) -> int:
        """The longest name ``request.model`` may resolve to without the body naming one."""
        return MODEL_CHARS if self._model_chars is None else self._model_chars()

    def may_warm(self, scenario: Scenario, raw_bytes: int) -> bool:
        """:meth:`has_long_completions` or :meth:`may_render_long`, one state lookup: whether a
        request of ``raw_bytes`` bytes on ``scenario`` is worth reading for a warm-up."""
        state = self._state(scenario)
        return bool(state.longs) or self.may_render_long(scenario, raw_bytes, state)

    def may_render_long(self, scenario: Scenario, raw_bytes: int, state: _Scenario | None = None) -> bool:
        """Whether a templated step of ``scenario`` may render long for a body of ``raw_bytes``
        bytes (:mod:`mockoss.server.template_cost`): one comparison, the thresholds computed once
        per scenario and template cap."""
        state = self._state(scenario) if state is None else state
        if not state.templates:
            return False
        key = (template_module.MAX_RENDERED_CHARS, self._model_length())
        known = state._thresholds
        if known is not None and known[0] == key:
            return raw_bytes >= known[2]
        return raw_bytes >= state.thresholds(key[1])[1]

    def long_templates(
        self,
        scenario: Scenario,
        raw_bytes: int,
        body: Any,
        headers: Mapping[str, str],
        cursors: list[int] | None,
        auto_session: bool,
        matched: tuple[str, str] | None = None,
        endpoint: str | None = None,
    ) -> tuple[Step, ...] | None:
        """The templated steps to render and warm before the lock for a body of ``raw_bytes``
        bytes: those the request will play (the step :func:`_predicted` reads from the shared
        ``cursors``; a ``pick`` step: its options) whose render may reach
        :data:`~mockoss.server.template_cost.LONG_CHARS`, at most :data:`PER_REQUEST`; ``None``
        when some templated step may and which one plays is not known before the lock (then the
        request is only answered on a worker thread). Arithmetic on ``raw_bytes`` for most
        requests: the body is read only when a step may render long. ``matched``: the request's
        ``(endpoint, resolved model)`` once validated, with which rules with ``match`` checks are
        predicted too (:func:`_played`); without it they are unknown (``None``). ``endpoint``: the
        request's, when ``matched`` is not given (a step recorded for another one is not played)."""
        state = self._state(scenario)
        if not state.templates:
            return ()
        each, smallest = state.thresholds(self._model_length())
        if raw_bytes < smallest:
            return ()
        played = _played(state, body, headers, cursors, auto_session, matched, endpoint)
        if played is None:
            return None
        return tuple(
            step for step in played if step.template is not None and raw_bytes >= each.get(id(step), math.inf)
        )[:PER_REQUEST]

    def seeded_due(self, scenario: Scenario, step: Step) -> bool:
        """Whether to warm ``step`` (templated, Faker-seeded: its text depends on the request's
        index) for this request: not for the next :data:`SEEDED_SKIPS` requests after one of its
        warm-ups was overtaken by more than one request (:meth:`seeded_outcome`). Why: the index
        is taken under the lock, and beside a busy client other requests take the predicted one
        while the warm-up runs (~0.2 s for 100,000 characters): the request then renders another
        text under the lock, and the warm-up was only work competing with it for the interpreter
        (the templated request 1.3-3x slower: issue 9, eleventh-session breaker, finding 3).
        Overtaken by one request (a client that asks now and then), it keeps warming: that
        request did not wait for this one's build, and the next one likely comes after it."""
        state = self._state(scenario)
        with self._lock:
            left = state.skips.get(id(step), 0)
            if left:
                state.skips[id(step)] = left - 1
        return not left

    def seeded_outcome(self, scenario: Scenario, step: Step, taken: int) -> None:
        """Record that ``taken`` requests took an index while a Faker-seeded warm-up of ``step``
        ran: 0, it kept its index; 2 or more, the next :data:`SEEDED_SKIPS` requests skip it."""
        state = self._state(scenario)
        with self._lock:
            if not taken:
                state.skips.pop(id(step), None)
            elif taken > 1:
                state.skips[id(step)] = SEEDED_SKIPS

    def still_pending(self, state: _Scenario, shape: int, positions: tuple[int, ...]) -> tuple[int, ...]:
        """Those of ``positions`` not warmed for ``shape`` yet (another request may have, since
        :meth:`pending` was asked on the event loop)."""
        with self._lock:
            warmed = state.shapes.get(shape, 0)
        return tuple(position for position in positions if not warmed >> position & 1)

    def claim(
        self, state: _Scenario, shape: int, positions: tuple[int, ...]
    ) -> tuple[list[int], list[threading.Event]]:
        """``(mine, theirs)``: the positions this request warms (now claimed), and the events of
        those another request is warming now (set when it is done)."""
        mine: list[int] = []
        theirs: list[threading.Event] = []
        with self._lock:
            for position in positions:
                key = (id(state), shape, position)
                running = self._inflight.get(key)
                if running is None:
                    self._inflight[key] = threading.Event()
                    mine.append(position)
                else:
                    theirs.append(running)
        return mine, theirs

    def release(self, state: _Scenario, shape: int, positions: list[int]) -> None:
        """Record that ``state.longs[i]`` for each of ``positions`` were warmed for ``shape`` (or
        failed: the lock's side answers), and wake the requests waiting for them."""
        bits = sum(1 << position for position in positions)
        with self._lock:
            state.shapes[shape] = state.shapes.get(shape, 0) | bits
            state.shapes.move_to_end(shape)
            while len(state.shapes) > SHAPES:
                state.shapes.popitem(last=False)
            for position in positions:
                self._inflight.pop((id(state), shape, position)).set()


def _predicted(
    state: _Scenario,
    body: Any,
    headers: Mapping[str, str],
    cursors: list[int] | None,
    auto_session: bool,
    endpoint: str | None = None,
) -> tuple[int, ...] | None:
    """The positions in ``state.longs`` of what the request will play, when the server's shared
    cursors pick it (no session header, no automatic sessions, no ``previous_response_id``, no
    rule with ``match`` checks): the step :func:`~mockoss.scenario.select.answer` gives on
    ``cursors``, a copy of those cursors (:meth:`MockServer.warm_target
    <mockoss.server.core.MockServer.warm_target>`; a ``pick`` step: each of its options); ``()``
    when that step is not a long completion (short, templated, an error). ``None``: unknown (the
    player decides it from the request, under the lock). A read of the player's state without
    the lock: another request may move the cursors meanwhile, which only warms a step the
    request does not play."""
    steps = _played(state, body, headers, cursors, auto_session, None, endpoint)
    if steps is None:
        return None
    return tuple(
        state.index[id(candidate.completion)] for candidate in steps if id(candidate.completion) in state.index
    )


def _played(
    state: _Scenario,
    body: Any,
    headers: Mapping[str, str],
    cursors: list[int] | None,
    auto_session: bool,
    matched: tuple[str, str] | None = None,
    endpoint: str | None = None,
) -> tuple[Step, ...] | None:
    """The step the request will play, when the shared cursors pick it (see :func:`_predicted`),
    or a ``pick`` step's options; ``()`` for none (an exhausted rule); ``None``: unknown.

    Rules with ``match`` checks too when ``matched`` (``(endpoint, resolved model)``) is given:
    outside a session, what they read is the request alone (its body, headers, resolved model and
    endpoint, and the turn counted from its body: :class:`~mockoss.scenario.conversation.RequestFacts`
    built as the player builds them, ``session_turn`` ``None``), so the rule the player will pick
    on the same cursors is known before the lock (a ``rules:`` echo was built under the lock:
    issue 9, eleventh-session breaker, finding 3).

    The step is the player's: :func:`mockoss.scenario.select.answer` decides it, its ``endpoint:``
    included, on the request's endpoint (``endpoint``, else ``matched``'s). A step recorded for
    another endpoint takes no step there (a 400), so nothing is warmed: ``()`` (before session 18
    the prediction skipped that check and warmed, and recorded as warmed, a step the player then
    refused). Without the endpoint, such a step is unknown (``None``)."""
    if auto_session or headers.get(SESSION_HEADER) or (type(body) is dict and "previous_response_id" in body):
        return None
    facts = None
    if not state.predictable:
        if matched is None or type(body) is not dict:
            return None
        facts = RequestFacts(matched[0], body, headers, matched[1])
    scenario = state.scenario
    positions = cursors if cursors is not None and len(cursors) == len(scenario.rules) else [0] * len(scenario.rules)
    endpoint = matched[0] if endpoint is None and matched is not None else endpoint
    try:
        if endpoint is None:
            found = first_answer(scenario, facts, positions)
            if found is not None and found[1] is not None and found[1].endpoint is not None:
                return None  # recorded for one endpoint, and which one this request is for is not known here
        else:
            found = answer(scenario, facts, positions, endpoint)
            if found is not None and not found[2]:
                return ()  # recorded for another endpoint: the player refuses the request, which takes no step
    except Exception:  # noqa: BLE001  # a check that cannot read this body: the player answers it under the lock
        return None
    step = found[1] if found is not None else None
    if step is None:
        return ()
    return tuple(option for _weight, option in step.options) if step.options else (step,)
