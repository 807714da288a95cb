"""Scenario state of one server: rule cursors, session turn counters and stored responses.

:class:`~mockoss.server.core.MockServer` holds one :class:`Player` and calls :meth:`Player.play`
for every valid request, under its lock. Which cursors a request moves, and its turn:

* ``X-Mockoss-Session: KEY``: the cursors of ``KEY``; turn = earlier requests of ``KEY`` + 1.
* ``X-Mockoss-Session: auto``, or any request when the server runs with ``auto_session=True``
  (and no header): the cursors of the request's automatic key
  (:func:`~mockoss.scenario.conversation.conversation_key`: its system text and first user
  message); the turn comes from the body (:mod:`mockoss.scenario.conversation`).
* Responses ``previous_response_id`` naming a response this server gave (and stored: the request
  did not say ``store: false``): that response's cursors; turn = its turn + the turn counted in
  the new ``input`` (one ``function_call_output`` → +1). Whether the id was found is also told to
  the profile (:mod:`mockoss.profiles.response_store`: a store's 404 for an unknown id).
* otherwise: one shared set of cursors; the turn comes from the body.

State is bounded: at most :data:`MAX_SESSIONS` session keys (header or automatic) are remembered,
the least recently used forgotten first (a forgotten session starts again at its first step and
turn), and :data:`STORED_RESPONSES` response ids. The shared cursors (no session) are never
forgotten. The player also owns what a profile keeps of the responses themselves
(:attr:`Player.kept`, a :class:`~mockoss.profiles.response_store.KeptResponses` bounded in bytes;
``gptoss-reference``'s store), which the server hands to the profile in the context of each request
the player plays (:attr:`RequestContext.kept <mockoss.profiles.base.RequestContext.kept>`); the
player itself reads no ``store`` field.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, NamedTuple

from mockoss.profiles.response_store import PREVIOUS_STORED, KeptResponses
from mockoss.scenario.conversation import RequestFacts, body_turn, conversation_key, header_of
from mockoss.scenario.loader import Rule, Scenario, Step
from mockoss.scenario.pick import choose, replaced
from mockoss.scenario.select import answer, explain
from mockoss.scenario.template import RenderContext, TemplateRenderError
from mockoss.scenario.tool_check import tool_call_warnings

__all__ = ["MAX_SESSION_KEY_CHARS", "SESSION_HEADER", "Played", "Player", "session_key"]

#: Request header naming a conversation: ``X-Mockoss-Session: KEY`` (``auto``: derive the key).
SESSION_HEADER = "x-mockoss-session"
#: Responses the player remembers for ``previous_response_id`` (oldest forgotten first).
STORED_RESPONSES = 10_000
#: Session keys the player remembers (least recently used forgotten first; mockoss's own bound,
#: so that a client inventing a key per request cannot grow the server without limit).
MAX_SESSIONS = 10_000
#: Longest session key remembered as sent; a longer one is remembered by its SHA-256
#: (:func:`session_key`), so that the keys above cost at most ~1 MB whatever clients send.
MAX_SESSION_KEY_CHARS = 100


def session_key(value: str) -> str:
    """``value`` (an ``X-Mockoss-Session`` header) as the player remembers it: itself, or when
    longer than :data:`MAX_SESSION_KEY_CHARS` (or itself starting ``sha256:``), ``sha256:`` and
    the hex digest of its UTF-8 (the same key for the same value: sessions behave alike, only
    what is kept is bounded). A reviewer
    measured 20,000 requests with 30 KB keys growing a server from 100 MB to 716 MB (issue 9:
    memory bounded in bytes)."""
    if len(value) <= MAX_SESSION_KEY_CHARS and not value.startswith("sha256:"):
        return value
    # A sent key that looks like a digest is digested too: it cannot join a long key's session.
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _touch(table: OrderedDict[str, Any], key: str) -> None:
    """Mark ``key`` of ``table`` as just used; forget the least recently used session keys above
    :data:`MAX_SESSIONS` (never ``""``, the shared cursors)."""
    if key:
        table.move_to_end(key)
        while len(table) > MAX_SESSIONS:
            oldest = next(iter(table))
            if oldest == "":
                table.move_to_end("")
                oldest = next(iter(table))
            del table[oldest]


class Played(NamedTuple):
    """What answers one request (immutable).

    A named tuple rather than a frozen dataclass: built for every request, and a frozen
    dataclass sets each of its six fields through ``object.__setattr__`` (0.5 us a request,
    against 0.15 us here). Read it by attribute name.

    Attributes:
        rule: the rule that answered, ``None`` when none did.
        step: the step, with ``completion`` rendered for this request when it is templated;
            ``None`` when the rule is used up and answers its ``exhausted_error``, or on a problem.
        turn: the request's turn number.
        session: the ``X-Mockoss-Session`` key, else ``""``.
        problem: why the request cannot be answered (no rule matches, a template cannot be
            rendered), for a 400 reply; else ``None``.
        warnings: tool-check problems of the step's tool calls (:mod:`mockoss.scenario.tool_check`).
    """

    rule: Rule | None
    step: Step | None
    turn: int
    session: str
    problem: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def rule_id(self) -> str | None:
        """The rule's name, else ``#N`` (1-based position); ``None`` when no rule answered."""
        if self.rule is None:
            return None
        return self.rule.name or f"#{self.rule.index + 1}"


class Player:
    """Rule cursors per scenario and session, and request counts per session."""

    __slots__ = ("_cursors", "_responses", "_sessions", "auto_session", "kept")

    def __init__(self, *, auto_session: bool = False) -> None:
        #: Give every request without a session header its automatic conversation key.
        self.auto_session = auto_session
        self._cursors: dict[str, OrderedDict[str, list[int]]] = {}
        self._sessions: OrderedDict[str, int] = OrderedDict()
        self._responses: dict[str, tuple[str, int]] = {}
        #: What a profile keeps of stored responses (RequestContext.kept, mockoss.profiles.response_store).
        self.kept = KeptResponses()

    def clear(self) -> None:
        """Rewind every scenario and forget every session and stored response."""
        self._cursors.clear()
        self._sessions.clear()
        self._responses.clear()
        self.kept.clear()

    def remember(self, response_id: str, played: Played) -> None:
        """Store a Responses reply's id with its session and turn, for ``previous_response_id``."""
        if len(self._responses) >= STORED_RESPONSES:
            del self._responses[next(iter(self._responses))]
        self._responses[response_id] = (played.session, played.turn)

    def rewind(self, scenario_name: str) -> None:
        """Rewind one scenario, in every session."""
        self._cursors.pop(scenario_name, None)

    def play(
        self,
        scenario: Scenario,
        endpoint: str,
        body: Mapping[str, Any],
        headers: Mapping[str, str],
        model: str,
        index: int,
        seed: int | str,
        seen: Any = None,
    ) -> Played:
        """Pick and, if templated, render the step answering one request.

        Args:
            index: the request's index on the server (seeds templates outside sessions).
            seed: the server's seed (a scenario's ``seed:`` wins).
            seen: what the request's validation looked up of the body
                (:func:`mockoss.endpoints.request_seen`), else ``None``: a chat turn is then
                counted from the stored prefix of its messages on
                (:func:`~mockoss.scenario.conversation.body_turn`).

        Never raises for a request it cannot answer: :attr:`Played.problem` then says why
        (:func:`~mockoss.scenario.select.explain`'s explanation, or a :class:`TemplateRenderError`).

        The :class:`RequestFacts` rule matchers read are built only when a rule has ``match``
        checks, or no rule answers; otherwise the turn is read from the body alone
        (:func:`~mockoss.scenario.conversation.body_turn`, the same count).
        """
        # Which cursors and turn (module docstring): a header session, a stored previous
        # response, the automatic key, else the shared cursors ("").
        session = header_of(headers, SESSION_HEADER) or ""
        if session:
            session = session_key(session)
        session_turn = None  # the turn when the server counts it, else the body's (read below)
        previous = body.get("previous_response_id")
        stored = self._responses.get(previous) if isinstance(previous, str) else None
        # For a profile emulating a server's store (mockoss.profiles.response_store): set for every
        # request, so that none reads an earlier request's (issue 9, the breaker's finding 5).
        found = previous if stored is not None else None
        if PREVIOUS_STORED.get() != found:  # (a set copies the context's variables: only when it changes)
            PREVIOUS_STORED.set(found)
        if session and session != "auto":
            count = self._sessions.get(session, 0)
            self._sessions[session] = count + 1
            _touch(self._sessions, session)
            session_turn = count + 1
            index = count
        elif stored is not None:
            session, session_turn = stored
            session_turn += body_turn(body)
        elif session or self.auto_session:  # session is "auto" or ""
            session = conversation_key(endpoint, body)
        by_session = self._cursors.get(scenario.name)
        if by_session is None:
            by_session = self._cursors[scenario.name] = OrderedDict()
        positions = by_session.get(session)
        if positions is None:
            positions = by_session[session] = [0] * len(scenario.rules)
        if session:
            _touch(by_session, session)
        facts = None
        prefix = seen.prefix if seen is not None else None
        for rule in scenario.rules:
            if rule.match.checks:
                facts = RequestFacts(endpoint, body, headers, model, session_turn, prefix)
                break
        found = answer(scenario, facts, positions, endpoint)  # the warm-up predicts with it too
        if found is None:
            if facts is None:
                facts = RequestFacts(endpoint, body, headers, model, session_turn, prefix)
            return Played(None, None, facts.turn, session, explain(scenario, facts, positions))
        rule, step, takes = found
        if not takes:  # recorded for another endpoint: no step taken (the request it was recorded for may follow)
            problem = wrong_endpoint(rule, step, endpoint)  # type: ignore[arg-type]
            return Played(rule, None, _turn(facts, session_turn, body, prefix), session, problem)
        if step is not None and (step.options or step.template is not None):
            used = scenario.seed if scenario.seed is not None else seed
            if step.options:
                start = rule.ends[step.index - 1] if step.index else 0
                step = choose(rule, step, positions[rule.index] - 1 - start, used)
            if step.template is not None:
                ctx = RenderContext(body, model, f"{used}/{session}/{index}")
                try:
                    step = replaced(step, completion=step.template.render(ctx))
                except TemplateRenderError as exc:
                    problem = f"mockoss: {rule.label} ({rule.where}), step {step.index}: {exc}"
                    return Played(rule, None, _turn(facts, session_turn, body, prefix), session, problem)
        warnings = tool_call_warnings(step.tool_calls, body) if step is not None and step.tool_calls else ()
        turn = _turn(facts, session_turn, body, prefix)
        # Played(...) without its named-tuple __new__, which does just this (0.07 us, not 0.19).
        return _new_tuple(Played, (rule, step, turn, session, None, warnings))


_new_tuple = tuple.__new__


def wrong_endpoint(rule: Rule, step: Step, endpoint: str) -> str:
    """The 400 message for a request to ``endpoint`` that reached a step recorded for another
    endpoint (``endpoint:``, written by ``mockoss serve --record``).

    The case it reports (the sixteenth session's newcomer, item 2b): a pass-through front with
    profile vllm relayed Ollama's ``POST /api/chat`` upstream and recorded it; replayed under
    ``--profile vllm`` that request was the profile's 404 and took no step, so the next
    ``/v1/chat/completions`` got the recorded NDJSON with 200 and every later reply was one step
    late, silently. Now the request that reaches the misplaced step is refused and takes none."""
    from mockoss.endpoints import route_label as route

    return (
        f"mockoss: {rule.label} ({rule.where}), steps[{step.index}] was recorded for {route(step.endpoint or '')}, "
        f"but this request is {route(endpoint)}; a recording answers its requests in the order they were recorded, "
        f"so this request took no step. If the request to {route(step.endpoint or '')} was refused (404), replay "
        "with a profile that serves it: the recording's first line names one."
    )


def _turn(facts: RequestFacts | None, session_turn: int | None, body: Mapping[str, Any], prefix: Any) -> int:
    """The request's turn: the facts' when built, else the server's count, else the body's."""
    if facts is not None:
        return facts.turn
    return session_turn if session_turn is not None else body_turn(body, prefix)
