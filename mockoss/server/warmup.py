"""Build a long scripted answer's plans before the server lock, so that the first request of each
shape does not hold every other client.

What a profile computes for a completion and a request shape (the parser trace, the plan, the
per-token deltas, the reply's byte template) is memoised on ``completion._memo`` and reused by
later requests, which only fill in their ids, ``created`` and usage. The first request of a shape
built all of it under the server lock, on the event loop, and again for every ``max_tokens`` that
cuts the answer short: over HTTP, another client's small request waited 0.5-0.6 s behind the first
request on a 40,000-token answer (vLLM, chat and Responses, streamed or not), 0.6 s behind each new
cut of a 100,000-token one, 0.1-0.45 s at 10,000 tokens depending on the profile (issue 9: at most
50 ms more than alone).

So for a server whose scenario holds long completions (:data:`LONG_TOKENS` or more), the HTTP
layer (:class:`mockoss.server.offload.Gate`, and the short path of
:mod:`mockoss.server.fastpath`) answers a request whose shape has not been warmed on a worker
thread with :data:`WARM_BEFORE_LOCK` set, and :meth:`MockServer.respond
<mockoss.server.core.MockServer.respond>` calls :func:`warmed` before it takes the lock: the
profile's own ``surface`` for the long completion the request will play (see below), on the
request's own view, prompt count and ``created``, with a throwaway id source, its reply
discarded. The interpreter hands the GIL to the event loop every few milliseconds meanwhile
(5 ms, ``sys.getswitchinterval``), so other clients keep being answered; the reply itself is then
made under the lock, as before, from the memo entries the warm-up left (the same bytes: a memo
entry is a pure function of its key, and every key is built from the same profile object, view
and context values). Measured over HTTP after, on the shared 2-core machine at load ~3: 15-55 ms
at 10,000 and 40,000 tokens, 50-115 ms at 100,000, where what remains is mostly the interpreter's
full garbage collections while the plan's objects are built (26-53 ms each, holding the GIL
whichever thread runs them); at load ~5 all of these about doubled.

Which completions: the step is picked under the lock (rule cursors, sessions, matches on the
body). Where the server's shared cursors alone decide it (no session, no ``match`` rules: a
script played in order, the usual case), the step the request will play is read from a copy of
those cursors (:func:`_predicted`), and only its completion is warmed; a request whose step is
warmed for its shape, or short, stays on the event loop. Otherwise the scenario's long
completions are warmed in file order, at most :data:`PER_REQUEST` per request, each once per
shape; a completion that is never played then costs one warm-up per shape, on a thread. Two
requests that need the same warm-up at once (a burst of first requests) build it once: the
second waits for the first on its own thread (:meth:`Warmup.claim`).

What ``surface`` changes besides memos and caches: nothing. The request log, the recorder, stored
Responses ids and rule cursors are all written by the server under the lock, outside ``surface``
(:meth:`MockServer._respond_locked <mockoss.server.core.MockServer._respond_locked>`); a
profile's other state is request-data caches keyed by the request (Ollama's ``context`` prompt
ids), which the real call would fill the same. The server's kept responses
(``gptoss-reference``'s store) reach a warm-up read only
(:class:`~mockoss.profiles.response_store.KeptReader` in ``RequestContext.kept``): a continuation
is rendered with its earlier turns, as under the lock (an agent loop's tool output alone is a 500
without the stored call, and its plans would then be built under the lock), and nothing is kept
under the id the warm-up predicted. Checked over every profile, shipped scenario,
endpoint, stream mode and six ``max_tokens`` (the team's byte-compare matrix, 32,863 replies)
with every completion warmed before each new shape and the warm-up's ids drawn from another
request index: no reply differs. Memo stores take a lock (:class:`mockoss.harmony.completion.Memo`),
so a warm-up may run beside a locked call.

Templated steps (rendered per request: :mod:`mockoss.scenario.template`) are not in the scenario's
long completions: each request renders its own text. One whose render may reach
:data:`~mockoss.server.template_cost.LONG_CHARS` for the request's body (a bound from the body's
length alone, without false negatives: :mod:`mockoss.server.template_cost`, which says why) sends
the request to a worker thread too; there, when the shared cursors say it will play (as above),
it is rendered as the player will render it (same body, model and seed text, the index the
request will most likely get) and surfaced, before the lock; the request's own render under the
lock then finds that :class:`~mockoss.harmony.Completion` in the template's cache (keyed by the
rendered texts), its plans built. Its long message texts are tokenized in the prompt worker
process (:func:`mockoss.server.prompt_client.encode_in_worker`, the same ids; started on first
use: that first request takes ~1 s longer, nobody else waits for it), since openai-harmony's
``encode`` holds the GIL to its end. Rules with ``match`` checks are predicted on the thread, once
the request is validated (its resolved model; the checks read the request alone outside a session:
:func:`~mockoss.server.warm_record._played`); a request of a session, or with automatic sessions, is
answered on the thread only, its render under the lock as before. A Faker value is seeded by the
request's index, taken under the lock: beside a busy client another request takes the predicted
index while the warm-up runs, the render under the lock is then another text, and the warm-up was
waste competing with it for the interpreter; so a warm-up overtaken that way stops, and when more
than one request overtook it, the step's next few requests skip it (:meth:`Warmup.seeded_due`).
Breaker's reproducer (``/tmp/brk11/repro_template_wait.sh``, 100,000 characters,
``--max-template-chars 200000``), c25797f / a452901 / this alternated in one run, twice, load ~4: a
``rules:`` echo held another client's small chat at worst 474-482 / 286-394 ms, now 15-35 ms; a
Faker-seeded static text's second and third requests took 0.24-0.52 / 0.61-0.81 s, now 0.16-0.38 s
(a452901's waste of a warm-up rendered for another index). What is left: a Faker-seeded long render
beside a busy client is still built under the lock (another client waits as before: 131-479 ms
here, c25797f 370-459 ms); that needs the request's index known before the lock (reserved when its warm-up starts) or
the build moved after the lock's pick, both in :mod:`mockoss.server.core`. Over
HTTP (``/tmp/o/tmplblk.py``; old and new alternated in one run, 2 cores at load ~5): an echo of a
200,000-character message (``--max-template-chars 400000``) held another client's ``/health`` and
small chat 1.3-2.6 s, now 1-43 ms and 6-35 ms (30-174 ms and 24-199 ms tokenizing in process);
24 echoes of 8,000 characters (the default cap) 110-145 ms, now 2-12 ms and 10-25 ms. Same bytes:
a render is a pure function of its texts, and a warmed and an unwarmed reply are compared on
every profile (``tests/server/test_template_offload.py``).

Order: a request that arrives while an earlier one is warming up may take the lock first, and so
the earlier index and scripted step (its ids are seeded by the index), as with a big body answered
off the loop; requests sent one after another are answered in order, as before.

A request's shape (:func:`shape_of`) is its body without the conversation (``messages``,
``input``, ``prompt``, …), plus the last message's role and whether it has text (Ollama's
prefill), the endpoint and the ``X-Mockoss-Switch`` header: what a profile's memo keys read
(``max_tokens``, ``stream``, tools, ``tool_choice``, options). A shape it misses (a key that reads
the conversation) only leaves that request's plan to be built under the lock, as before; a shape
finer than needed only warms again, on a thread. Shapes are remembered per server and scenario,
:data:`SHAPES` at most (as hashes: a false match only skips a warm-up).

The record of what was warmed (:class:`Warmup`, the limits :data:`LONG_TOKENS`, :data:`MAX_LONG`,
:data:`PER_REQUEST`, :data:`SHAPES`, re-exported here) is :mod:`mockoss.server.warm_record`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from mockoss.endpoints import request_seen
from mockoss.harmony.encoding import ENCODE_ELSEWHERE
from mockoss.jsonbody import parse_json_and_hand_on
from mockoss.profiles.base import IdSource, RequestContext
from mockoss.scenario.template import RenderContext
from mockoss.server.prelock import PRECOUNTED_PROMPT_TOKENS
from mockoss.server.profile_hooks import prompt_count
from mockoss.server.prompt_client import encode_in_worker
from mockoss.server.replies import SCENARIO_HEADER, SWITCH_HEADER, _for_endpoint
from mockoss.server.request_notes import skipped_tokens
from mockoss.server.warm_record import LONG_TOKENS, MAX_LONG, PER_REQUEST, SHAPES, Warmup, _Scenario

#: The server: a :class:`mockoss.server.core.MockServer` (which imports this module, so it is not
#: imported here: that would be an import circle).
_Server = Any

__all__ = ["LONG_TOKENS", "MAX_LONG", "PER_REQUEST", "SHAPES", "WARM_BEFORE_LOCK", "Warmup", "shape_of", "wanted", "warmed"]

#: Seconds a request waits at most for another request's warm-up of the plans it needs.
INFLIGHT_WAIT_S = 60.0

#: Set (``True``) by the HTTP layer while :meth:`MockServer.respond` runs on a worker thread: warm
#: the scenario's long completions for this request's shape before the lock (:func:`warmed`).
#: Unset (the event loop, in-process callers): nothing is done, the reply is built as before.
WARM_BEFORE_LOCK: ContextVar[bool] = ContextVar("mockoss_warm_before_lock", default=False)

#: Body fields holding the conversation, left out of a request's shape (:func:`shape_of`).
_CONVERSATION = frozenset({"messages", "input", "prompt", "context", "previous_response_id", "conversation", "suffix"})


def shape_of(endpoint: str, body: Any, headers: Mapping[str, str]) -> int | None:
    """A hash of what, besides the conversation, makes a request's reply (see the module
    docstring); ``None`` for a body it cannot read (no warm-up). ~2 us for a chat body without
    tools; a declared tool list is written out too (``repr``: ~0.6 us per tool, twice as fast as
    ``json.dumps``; a list of more than 64 items an item at a time, so that the interpreter can
    hand the GIL to the event loop between them)."""
    if type(body) is not dict:
        return None
    rest = {key: value for key, value in body.items() if key not in _CONVERSATION}
    last: Any = None
    for key in ("messages", "input"):
        items = body.get(key)
        if type(items) is list and items and type(items[-1]) is dict:
            item = items[-1]
            last = (key, item.get("role"), item.get("type"), bool(item.get("content")), bool(item.get("thinking")))
        elif items is not None:
            last = (key, type(items).__name__)
    try:
        # Parsed JSON: its repr is as exact as its text (keys in the order sent). A long list
        # (100,000 declared tools) an item at a time: one repr() of it all would hold the GIL.
        text = tuple(
            (key, tuple([repr(item) for item in value])) if type(value) is list and len(value) > 64 else (key, repr(value))
            for key, value in rest.items()
        )
        # A role or type that is not a string (``"role": [1e-400]``, bench_fuzz's case) makes
        # ``last`` unhashable: such a body is refused by validation, so it gets no warm-up.
        return hash((endpoint, headers.get(SWITCH_HEADER, ""), last, text))
    except (RecursionError, MemoryError, TypeError):
        return None


def _shape_key(profile: Any, endpoint: str, body: Any, headers: Mapping[str, str]) -> int | None:
    """:func:`shape_of` for ``profile``, the base profile the reply is made with: the profiles'
    memo keys hold the profile object, so a new one (``set_profile``, ``set_switches``, a
    per-header profile made again after ``reset``) is warmed again."""
    shape = shape_of(endpoint, body, headers)
    return None if shape is None else hash((shape, id(profile)))


#: The decision :func:`wanted` took for the request being handled (its task's context, which the
#: gate's worker thread runs a copy of): ``(server, endpoint, raw, profile, shape, pending,
#: templates)``, so that the gate (after the HTTP short path's fallback) and :func:`warmed` do not
#: take it again (``templates``: :meth:`Warmup.long_templates`' answer).
_DECIDED: ContextVar[tuple[Any, ...] | None] = ContextVar("mockoss_warm_decided", default=None)


def _decided(server: _Server, endpoint: str, raw: bytes) -> tuple[Any, ...] | None:
    """The decision taken for this request (same server, endpoint and body), else ``None``."""
    decided = _DECIDED.get()
    if decided is not None and decided[0] is server and decided[1] == endpoint and (decided[2] is raw or decided[2] == raw):
        return decided
    return None


def wanted(server: _Server, endpoint: str, raw: bytes, headers: Mapping[str, str]) -> bool:
    """Whether a small request should be answered on a worker thread to warm long completions
    first (:class:`mockoss.server.offload.Gate`, on the event loop). Costs an identity check for
    a scenario without long completions; for one with, the body's parse (handed on to the answer,
    :func:`mockoss.jsonbody.parse_json_and_hand_on`), its shape and the step it will play. Taken
    once per request: the HTTP short path asks, then the gate after its fallback, then the warm-up
    on the worker thread (:func:`warmed`); the later ones reuse the first answer (:data:`_DECIDED`)."""
    warming = server._warmup
    if SCENARIO_HEADER not in headers:
        scenario = server.scenario
        if not warming.has_long(scenario):
            return False  # the usual case, decided without the body
        if not warming.may_warm(scenario, len(raw)):
            return False  # templated steps only, none long for a body this size: by its length alone
    decided = _decided(server, endpoint, raw)
    if decided is not None:
        return decided[3] is None or decided[5] is not None or decided[6] != ()
    scenario, profile, cursors, _index = server.warm_target(headers)
    if scenario is None and headers.get(SCENARIO_HEADER):
        # A scenario named by the header and not loaded yet: whether it holds long completions
        # is unknown without reading its file, so the request goes to a worker thread, where
        # _prepare loads it (warm_target(make_profile=True)) and warms what it will play. Built
        # on the event loop, the first streamed reply of a 3,000-message completion (llamacpp)
        # or of a 6,000-token answer with tools (sglang) held every other client for seconds.
        _DECIDED.set((server, endpoint, raw, None, None, None, None))
        return True
    if scenario is None or not warming.has_long(scenario):
        return False
    longs = warming.has_long_completions(scenario)
    # A templated step that may render long for a body this size (mockoss.server.template_cost):
    # arithmetic on the length; the body is read only then.
    maybe = warming.may_render_long(scenario, len(raw))
    if not longs and not maybe:
        return False
    try:
        body = parse_json_and_hand_on(raw)
    except (ValueError, RecursionError):
        return False
    # Those it will play, rendered and warmed on the thread; None: one may, which is not known.
    templates = warming.long_templates(scenario, len(raw), body, headers, cursors, server.auto_session, endpoint=endpoint) if maybe else ()
    shape = pending = None
    want = False
    if longs:
        if profile is None:  # a per-header profile made under the lock: new, its plans not built
            want = True
        else:
            shape = _shape_key(profile, endpoint, body, headers)
            if shape is not None:
                pending = warming.pending(scenario, shape, body, headers, cursors, server.auto_session, endpoint)
                want = pending is not None
    if not want and templates == ():
        return False
    _DECIDED.set((server, endpoint, raw, profile, shape, pending, templates))
    return True


@contextmanager
def warmed(
    server: _Server, endpoint: str, raw: bytes, body: Any, headers: Mapping[str, str], checked: Any, view: Any
) -> Iterator[Any]:
    """While :data:`WARM_BEFORE_LOCK` is set, for a valid request (``checked``: ``(profile,
    request, model)``): warm the scenario's long completions not yet warmed for its shape, then
    hand on the view and the prompt count it made for them to the reply under the lock (the
    count in :data:`~mockoss.server.prelock.PRECOUNTED_PROMPT_TOKENS`). Yields the view
    (``view`` as given when nothing was done). Anything that fails is left to the lock's side,
    which does it again and answers as before."""
    prepared = _prepare(server, endpoint, raw, body, headers, checked, view) if WARM_BEFORE_LOCK.get() and type(checked) is tuple else None
    if prepared is None:
        yield view
        return
    found, shape, positions, profile, view, counted, index, templates, scenario = prepared
    token = PRECOUNTED_PROMPT_TOKENS.set(counted) if PRECOUNTED_PROMPT_TOKENS.get() is None else None
    kept = server.kept.reader()  # the server's kept responses, read only (see the module docstring)
    try:
        warming = server._warmup
        mine, theirs = warming.claim(found, shape, positions) if positions else ([], [])
        try:
            # index: the one the request will most likely get (ids are never memoised)
            for position in mine:
                _surface(profile, endpoint, found.longs[position], view, RequestContext(IdSource(server.seed, index), server.created, counted, raw, kept))
        finally:
            if positions:
                warming.release(found, shape, mine)
        if templates:
            # Rendered as the player will under the lock (its seed text: mockoss.scenario.player),
            # into the template's cache, which hands the same Completion, plans built, to the
            # request's own render (same texts); another index (faker) only misses the cache.
            # Its long message texts are tokenized in the prompt worker process (the same ids,
            # mockoss.harmony.encoding.encode_text): openai-harmony's encode holds the GIL to
            # its end, ~40 ms for 200,000 characters, every other client waiting meanwhile.
            _checked_profile, _request, model = checked
            used = scenario.seed if scenario.seed is not None else server.seed
            for step in templates:
                # A Faker value is seeded by the index: once another request has taken it, this
                # request renders another text under the lock, and a warm-up of this one only
                # competes with it for the interpreter (the templated request 1.3-3x slower beside
                # a busy client: issue 9, eleventh-session breaker, finding 3), so it stops; when
                # more than one request took an index meanwhile (a busy client), the step's next
                # few requests skip it (Warmup.seeded_due).
                seeded = step.template.uses_faker
                if seeded and not warming.seeded_due(scenario, step):
                    continue
                if seeded and (taken := _taken_since(server, headers, index)):
                    warming.seeded_outcome(scenario, step, taken)
                    continue
                encoding = ENCODE_ELSEWHERE.set(encode_in_worker)
                try:
                    completion = step.template.render(RenderContext(body, model, f"{used}//{index}"))
                except Exception:  # noqa: BLE001, S112  # the request's own render answers it (a 400)
                    continue
                finally:
                    ENCODE_ELSEWHERE.reset(encoding)
                if seeded and (taken := _taken_since(server, headers, index)):
                    warming.seeded_outcome(scenario, step, taken)
                    continue
                _surface(profile, endpoint, completion, view, RequestContext(IdSource(server.seed, index), server.created, counted, raw, kept))
                if seeded:
                    warming.seeded_outcome(scenario, step, _taken_since(server, headers, index))
        _wait(theirs)
        yield view
    finally:
        if token is not None:
            PRECOUNTED_PROMPT_TOKENS.reset(token)


def _taken_since(server: _Server, headers: Mapping[str, str], index: int) -> int:
    """How many requests took an index since ``index``, the one this request was expected to
    get (the server's count, read as :meth:`warm_target <mockoss.server.core.MockServer.warm_target>`
    gives it: a few dictionary reads)."""
    return server.warm_target(headers)[3] - index


def _surface(profile: Any, endpoint: str, completion: Any, view: Any, ctx: RequestContext) -> None:
    """``profile.surface(…)`` for its memos, its reply discarded; what fails is left to the lock's
    side, which answers the step it plays, as before."""
    try:
        profile.surface(endpoint, completion, view, ctx)
        skipped_tokens(profile, endpoint, completion)  # the hint's memo (request_notes), read under the lock
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise


def _wait(events: list[threading.Event]) -> None:
    """Wait (on this worker thread) for the warm-ups other requests are running of the plans this
    one needs, at most :data:`INFLIGHT_WAIT_S` in all: two first requests of a shape build them
    once, not twice at the same time."""
    deadline = time.monotonic() + INFLIGHT_WAIT_S
    for event in events:
        event.wait(max(0.0, deadline - time.monotonic()))


def _prepare(
    server: _Server, endpoint: str, raw: bytes, body: Any, headers: Mapping[str, str], checked: Any, view: Any
) -> tuple[_Scenario | None, int | None, tuple[int, ...], Any, Any, int, int, tuple[Any, ...], Any] | None:
    """What :func:`warmed` needs: ``(state, shape, positions, profile, view, prompt count,
    index, templated steps, scenario)``, else ``None`` (nothing to warm, or a step failed: done
    again under the lock). The positions and templated steps :func:`wanted` chose on the event
    loop for this request (positions less those another request warmed since); chosen here when it
    did not (an in-process caller, a per-header profile not made then)."""
    decided = _decided(server, endpoint, raw)
    scenario, base, cursors, index = server.warm_target(headers, make_profile=True)
    warming = server._warmup
    found, shape, positions, templates = None, None, (), None
    if decided is not None and decided[3] is not None and decided[3] is base:
        shape, pending, templates = decided[4], decided[5], decided[6]
        if pending is not None:
            found, positions = pending[0], warming.still_pending(pending[0], shape, pending[1])
    elif base is not None and scenario is not None:
        shape = _shape_key(base, endpoint, body, headers)
        pending = warming.pending(scenario, shape, body, headers, cursors, server.auto_session, endpoint) if shape is not None else None
        if pending is not None:
            found, positions = pending
    if type(body) is not dict:
        templates = ()
    elif templates is None and scenario is not None and base is not None:
        # The request's endpoint and resolved model: rules with ``match`` checks are predicted too.
        templates = warming.long_templates(scenario, len(raw), body, headers, cursors, server.auto_session, (endpoint, checked[2]))
    if not positions and not templates:
        return None
    try:
        _profile, request, model = checked
        profile = _for_endpoint(base, endpoint)
        if view is None:
            view = request.view(model, body)
        counted = PRECOUNTED_PROMPT_TOKENS.get()
        if counted is None:
            counted = prompt_count(profile, endpoint, raw, body, request_seen(request))  # as core._reply counts
    except Exception:  # noqa: BLE001
        return None
    return found, shape, positions, profile, view, counted, index, templates or (), scenario
