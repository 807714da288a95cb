"""The fake server's state and request handling, free of any web framework.

:class:`MockServer` validates a request body, picks the next scripted step of the scenario that
applies, hands the step's completion to the active profile, records the exchange and returns the
profile's :class:`~mockoss.profiles.base.Reply`. The HTTP layer only moves bytes.

This module holds the request path (:meth:`MockServer.respond` and what it calls under the lock) and
the server's state; its other jobs are base classes of :class:`MockServer`, in their own modules:
which scenario and profile answer and the settings that choose them (:mod:`mockoss.server.selection`),
the checks of a body before any step (:mod:`mockoss.server.request_check`), the routes outside the
scenario (:mod:`mockoss.server.side_routes`), the real engines' entry ``play``
(:mod:`mockoss.server.engine_entry`); the request-log entry is :mod:`mockoss.server.logentry`.
A method of a base class costs the same one lookup as one of the class itself (CPython caches
attribute lookups per type), so the split adds nothing per request.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mockoss.endpoints import request_seen
from mockoss.harmony.encoding import check_harmony_library
from mockoss.harmony.lru import BytesLRU
from mockoss.jsonbody import parse_json
from mockoss.profiles.base import IdSource, Profile, Reply, RequestContext
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.profiles.response_store import PREVIOUS_STORED
from mockoss.scenario.loader import Scenario, ScenarioError, Step
from mockoss.scenario.player import Played, Player
from mockoss.scenario.transport import TRANSPORT_HEADER, TransportError, TransportSpec
from mockoss.server.engine_entry import EngineEntry, known_endpoint
from mockoss.server.logentry import _record, _refused_entry, _share, _unanswered
from mockoss.server.prelock import PRECOUNTED_PROMPT_TOKENS, PROMPT_COUNTER, before_lock
from mockoss.server.profile_hooks import prompt_count, refusal
from mockoss.server.records import DEFAULT_LOG_BYTES, Endpoint, RecordedRequest, RequestLog
from mockoss.server.replies import _for_endpoint, failure_reply

# VALID_BODY_MAX and PROFILE_CACHE_SIZE moved with their code and are re-exported (tests import them from here).
from mockoss.server.request_check import VALID_BODY_BYTES, VALID_BODY_MAX, RequestChecks  # noqa: F401
from mockoss.server.request_notes import dropped_message_hint, refusal_hint
from mockoss.server.selection import PROFILE_CACHE_SIZE, SCENARIO_HEADER, Selection, reset_refusal  # noqa: F401
from mockoss.server.settings import DEFAULT_MAX_BODY_BYTES
from mockoss.server.side_routes import SideRoutes
from mockoss.server.stored_replies import remember_reply
from mockoss.server.transport import Delivery
from mockoss.server.warmup import WARM_BEFORE_LOCK, Warmup, warmed
from mockoss.slotnew import slot_builder

if TYPE_CHECKING:
    from mockoss._steps_core import Step as BuilderStep
    from mockoss._steps_script import Script
    from mockoss.upstream import Recorder, Upstream

logger = logging.getLogger("mockoss")

__all__ = ["DEFAULT_CREATED", "MockServer", "RecordedRequest"]

_make_context = slot_builder(RequestContext)

#: Unix time stamped on every object unless configured: 2026-01-01T00:00:00Z. Fixed, so that the
#: same scenario and seed give byte-identical output.
DEFAULT_CREATED = 1767225600

#: Request fields limiting completion tokens (chat, chat legacy, responses), first set wins.
_LIMIT_FIELDS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


@dataclass
class MockServer(Selection, RequestChecks, SideRoutes, EngineEntry):
    """A fake gpt-oss server: scenario + profile + request log.

    Args:
        scenario: the default scenario (a loaded :class:`Scenario`, a shipped name, a file path, a
            scenario mapping as a parsed scenario file (``{"steps": […]}``, ``version`` optional), or
            :mod:`mockoss.steps` builder items: a ``script(…)``, a step or a list of steps or rules),
            or ``None`` to require ``X-Mockoss-Scenario`` on every request.
        profile: profile name (``"vllm"``).
        switches: profile switches applied to every request (a scenario's own ``switches`` and the
            ``X-Mockoss-Switch: name=value[,name=value]`` header override them, in that order).
        served_model_names: names ``/v1/models`` lists and requests may use (others get the
            server's "model not found" reply); default: the profile's ``default_model``
            (``openai/gpt-oss-20b`` for vLLM, ``gpt-oss:20b`` for Ollama).
        seed: seeds every id; same scenario + seed ⇒ byte-identical output.
        created: unix seconds stamped on objects.
        request_log_limit: keep only the newest N requests in :attr:`requests` (``None``: no count limit);
            ``mockoss serve`` keeps 10,000.
        request_log_bytes: and at most this many bytes of bodies, headers and completions
            (default 64 MiB; ``None``: no byte limit); the oldest entries go first.
        scenario_dirs: directories whose ``NAME.yaml`` files ``X-Mockoss-Scenario: NAME`` may
            select, besides shipped and registered scenarios (``mockoss serve --scenario-dir``).
        max_body_bytes: the HTTP layer answers larger request bodies with 413 in the profile's
            error shape (default 32 MiB; ``None``: no limit; read per request, so it can be
            changed on a running server).
        body_budget_bytes: the bytes all request bodies still arriving may hold together; past it a
            body gets 503 (:mod:`mockoss.server.limits`; default ``None``: 4 x ``max_body_bytes``).
        transport: default timing and faults for every scripted reply (a
            :class:`~mockoss.scenario.transport.TransportSpec` or a mapping such as
            ``{"ttft_ms": 300, "tokens_per_s": 50}``); a step's ``transport:`` and the
            ``X-Mockoss-Transport`` header override it field by field, in that order.
        upstream: answer from a real OpenAI-compatible server instead of the scenario
            (:class:`mockoss.upstream.Upstream`: pass-through or raw Harmony mode); the HTTP layer
            talks to it, :meth:`respond` surfaces its raw completions.
        recorder: writes every exchange as a scenario step (:class:`mockoss.upstream.Recorder`).
        auto_session: give each conversation its own rule cursors without a header, keyed by its
            system text and first user message (:func:`mockoss.scenario.conversation.conversation_key`);
            ``X-Mockoss-Session: auto`` does the same per request.

    Raises:
        ScenarioError, ProfileError: at construction, for a bad scenario, profile or switch.
        TransportError: at construction, for a bad ``transport``.
    """

    scenario: Scenario | Script | BuilderStep | Mapping[str, Any] | Sequence[Any] | str | None = None
    profile: str = "vllm"
    switches: Mapping[str, Any] = field(default_factory=dict)
    served_model_names: Sequence[str] | None = None
    seed: int | str = 0
    created: int = DEFAULT_CREATED
    request_log_limit: int | None = None
    transport: TransportSpec | Mapping[str, Any] | None = None
    upstream: Upstream | None = None
    recorder: Recorder | None = None
    #: Bytes :attr:`requests` keeps (bodies, headers, completions); the oldest entries go first.
    request_log_bytes: int | None = DEFAULT_LOG_BYTES
    #: Directories whose ``NAME.yaml`` files ``X-Mockoss-Scenario: NAME`` may select (besides the
    #: shipped and registered scenarios); no other file is ever opened for that header.
    scenario_dirs: Sequence[str | Path] = ()
    #: Largest request body the HTTP layer accepts (bytes); larger ones get 413 in the profile's
    #: error shape. ``None``: no limit.
    max_body_bytes: int | None = DEFAULT_MAX_BODY_BYTES
    auto_session: bool = False
    body_budget_bytes: int | None = None
    requests: RequestLog = field(init=False)

    def __post_init__(self) -> None:
        check_harmony_library()  # HarmonyLibraryError: openai-harmony owns the openai_harmony module
        if self.max_body_bytes is not None and self.max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be at least 1 (or None: no limit), got {self.max_body_bytes}")
        if self.body_budget_bytes is not None and self.body_budget_bytes < 1:
            raise ValueError(f"body_budget_bytes must be at least 1 (or None: the default), got {self.body_budget_bytes}")
        if any(not isinstance(name, str) or not name.strip() for name in self.served_model_names or ()):
            raise ValueError(f"served_model_names must be non-empty strings, got {list(self.served_model_names or ())!r}")
        self._lock = threading.Lock()
        #: Resets so far (:meth:`~mockoss.server.selection.Selection.reset`, under the lock): a
        #: request that read another value before the lock is refused there (:meth:`_respond_locked`).
        self._epoch = 0
        self.requests = RequestLog(maxlen=self.request_log_limit, max_bytes=self.request_log_bytes)
        self._handled = 0
        self._scenarios: dict[str, Scenario] = {}
        self._player = Player(auto_session=self.auto_session)  # rule cursors, sessions, stored responses
        self._profiles: OrderedDict[tuple[Any, ...], Profile] = OrderedDict()  # LRU, PROFILE_CACHE_SIZE
        self._base_profile = get_profile(self.profile, self.switches)
        #: Validated requests of bodies sent again, by (endpoint, raw bytes): (base profile,
        #: profile, request); see :meth:`_validate`.
        self._valid_bodies: BytesLRU[tuple[Profile, Profile, Any]] = BytesLRU(VALID_BODY_BYTES)
        # Long completions warmed before the lock, per request shape (mockoss.server.warmup); a
        # templated step's bound counts the longest served name for request.model.
        self._warmup = Warmup(lambda: max(map(len, self.served_model_names)))
        # Without explicit names the server answers to its profile's usual model name, and
        # follows the profile when set_profile() changes it.
        self._models_explicit = bool(self.served_model_names)
        self.served_model_names = tuple(self.served_model_names or ()) or (self._base_profile.default_model,)
        if self.transport is not None:
            self.transport = TransportSpec.from_data(self.transport, where="MockServer(transport=…)")
        if self.scenario is not None:
            self.use_scenario(self.scenario)

    # -- request handling ----------------------------------------------------------------------

    def handle(self, endpoint: Endpoint, raw: bytes, headers: Mapping[str, str] | Sequence[tuple[str, str]]) -> Reply:
        """Answer one request body for generation endpoint ``endpoint`` (e.g. ``"chat"``).

        Never raises on what a client sends: malformed input, unknown scenarios or switches become
        error replies in the profile's error shape (400, or the server's 404 for an unknown model or
        an endpoint it does not have). Raises ``ValueError`` (naming the valid ones) for an
        ``endpoint`` not in :data:`mockoss.endpoints.ENDPOINTS`, as :meth:`respond` does.
        """
        return self.respond(endpoint, raw, headers)[0]

    def respond(
        self,
        endpoint: Endpoint,
        raw: bytes,
        headers: Mapping[str, str] | Sequence[tuple[str, str]],
        step: Step | None = None,
    ) -> tuple[Reply, Delivery | None]:
        """:meth:`handle`, plus how the HTTP layer delivers the reply: ``None`` (at once, as is)
        or a :class:`~mockoss.server.transport.Delivery` when a transport spec applies (server
        default, step ``transport:``, ``X-Mockoss-Transport`` header). Validation errors are never
        delayed; an invalid header is a 400 that consumes no step. ``step`` answers a valid
        request instead of the scenario (an upstream's completion or error, :mod:`mockoss.upstream`);
        a completion the profile refuses before generating (its ``request_refusal``) gets that
        refusal, logged with no step or completion and not recorded, as a scripted request is.
        """
        known_endpoint(endpoint)
        if not isinstance(headers, dict) and not isinstance(headers, Mapping):  # dict first: no ABC check
            headers = dict(headers)
        epoch = self._epoch  # the state this request began in (see Selection.reset)
        # Parsed and validated before the lock: both read only the body, the base profile and
        # caches that take their own locks, and for a big body they take seconds (a 10 MB body of
        # short messages), on a worker thread (mockoss.server.offload) where every other request
        # would wait for this lock meanwhile (issue 9's isolation target). What the validation
        # raises is answered under the lock, as before; so is an invalid transport header, first.
        try:
            body = parse_json(raw)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than Python recurses
            body = None
        base, names = self._base_profile, self.served_model_names
        try:
            checked: Reply | tuple[Profile, Any, str] | BaseException | None = (
                step is None and self._content_type_check(endpoint, headers, base, body is not None, raw)
            ) or self._validate(endpoint, body, raw, base)
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                raise
            checked = exc
        # The transport header too (it reads nothing else); what it raises is answered first, under the lock.
        header = headers.get(TRANSPORT_HEADER)
        try:
            override: TransportSpec | BaseException | None = TransportSpec.from_header(header) if header else None
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                raise
            override = exc
        warm = step is None and WARM_BEFORE_LOCK.get()
        if (PROMPT_COUNTER.get() is None and not warm) or type(checked) is not tuple or isinstance(override, BaseException):
            return self._respond_locked(endpoint, raw, headers, step, body, base, names, checked, override, epoch=epoch)
        # A big body's view, count and declared tools are made now, outside the lock (prelock);
        # on a worker thread, long completions' plans for this shape too (warmup).
        with before_lock(endpoint, raw, body, checked, self.kept) as view, warmed(self, endpoint, raw, body, headers, checked if warm else None, view) as view:
            return self._respond_locked(endpoint, raw, headers, step, body, base, names, checked, override, view, epoch)

    def _respond_locked(
        self,
        endpoint: Endpoint,
        raw: bytes,
        headers: Mapping[str, str],
        step: Step | None,
        body: Any,
        base: Profile,
        names: Any,
        checked: Reply | tuple[Profile, Any, str] | BaseException | None,
        override: TransportSpec | BaseException | None,
        view: Any = None,
        epoch: int | None = None,
    ) -> tuple[Reply, Delivery | None]:
        """The part of :meth:`respond` under the server lock: the request's index, its answer, its
        record. ``view``: the valid request's view, built before the lock (``None``: built here).
        ``epoch``: the server's reset count when the request began; if a reset came since, the
        request is refused here, before it draws an index (:func:`~mockoss.server.selection.reset_refusal`)."""
        with self._lock:
            if epoch is not None and epoch != self._epoch:
                return reset_refusal(base, endpoint), None
            index = self._handled
            self._handled += 1
            if self._base_profile is not base or self.served_model_names is not names:
                # set_profile() or set_switches() ran meanwhile: judged against the server as it
                # is now, under the lock, as every request was before (no reply mixes two profiles).
                checked, view = None, None
            try:
                if isinstance(override, BaseException):  # the header's error comes first, as ever
                    raise override
                if isinstance(checked, BaseException):
                    raise checked
                reply, scenario, step, played = self._answer(endpoint, raw, body, headers, index, step, checked=checked, view=view)
            except TransportError as exc:
                reply, scenario, step, played = _for_endpoint(self._base_profile, endpoint).error(400, f"mockoss: {exc}"), None, None, None
            except BaseException as exc:  # a mockoss bug: answer in the error shape, never a bare 500
                # BaseException: a Rust panic in openai-harmony (pyo3's PanicException) is not an
                # Exception, and must not take the connection down with it.
                if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                    raise
                reply, scenario, step, played = failure_reply(exc, self._base_profile, endpoint, index), None, None, _unanswered(f"mockoss could not answer it: {type(exc).__name__}: {exc}")
            delivery = self._delivery(scenario, step, None if isinstance(override, BaseException) else override, index, body)
            if delivery is not None and reply.status == 200 and (problem := delivery.spec.frame_problem(len(reply.frames) if reply.streamed else 1, reply.streamed)):
                reply, delivery = _for_endpoint(self._base_profile, endpoint).error(400, f"mockoss: {problem}"), None  # a fault position past the reply
            record = _record(index, endpoint, raw, headers, scenario, step, played, reply.status, reply.log)
            self.requests.append(record)
            if isinstance(played, Played) and endpoint == "responses" and reply.status == 200:
                remember_reply(self._player, played, reply, body, delivery)  # its id; a cut reply's kept entry dropped
            _share(record)
            if self.recorder is not None:
                self.recorder.observe(self, record, reply, step)
            return reply, delivery

    kept = property(lambda self: self._player.kept, doc="The player's KeptResponses (mockoss.profiles.response_store).")

    def _delivery(
        self, scenario: Scenario | None, step: Step | None, override: TransportSpec | None, index: int, body: Any
    ) -> Delivery | None:
        """The merged transport of a scripted reply (a step or the exhausted error), else ``None``."""
        step_spec = getattr(step, "transport", None)
        if scenario is None or (self.transport is None and step_spec is None and override is None):
            return None
        if isinstance(self.transport, Mapping):  # assigned after construction
            self.transport = TransportSpec.from_data(self.transport, where="MockServer.transport")
        spec = TransportSpec.layered(self.transport, step_spec, override)
        tokens = 0
        if step is not None and step.completion is not None and isinstance(body, dict):
            # Non-streamed pacing: the tokens the engine emits under the request's limit.
            limit = next((body[k] for k in _LIMIT_FIELDS if isinstance(body.get(k), int)), None)
            tokens = len(step.completion.emit(limit).tokens)
        return Delivery(spec, self.seed, index, tokens)  # type: ignore[arg-type]

    def _answer(
        self, endpoint: Endpoint, raw: bytes, body: Any, headers: Mapping[str, str], index: int, given: Step | None,
        surface: bool = True, checked: Reply | tuple[Profile, Any, str] | None = None, view: Any = None,
    ) -> tuple[Reply, Scenario | None, Step | None, Played | None]:
        if checked is None:  # (respond validates before taking the lock)
            checked = self._validate(endpoint, body, raw)
        if isinstance(checked, Reply):
            return checked, None, None, None
        profile, request, model = checked
        seen = request_seen(request)  # what the validation looked up of the body: for the player and the count
        if given is not None:  # an upstream's answer (mockoss.upstream) or the goldens', not the scenario's
            # A completion meets the server's refusals before generating, as a scripted request
            # does below, and is then not played: no step in the log or a recording, whose replay
            # refuses it before drawing one (llamacpp's checks, SGLang's chat template).
            surfaced = given.completion is not None and given.replay is None and given.error is None
            if surfaced and (refused := refusal(profile, endpoint, body, raw)) is not None:
                return refused, None, None, _refused_entry(refusal_hint(profile, endpoint, body, refused))
            # The upstream holds the responses store: its id is taken as stored (never an earlier
            # request's answer: issue 9, the breaker's finding 5), no kept turns (ctx.kept None).
            PREVIOUS_STORED.set(body.get("previous_response_id") if isinstance(body, dict) else None)
            return self._reply(profile, endpoint, given, request, model, body, raw, index, seen, view), None, given, None
        try:
            scenario = self._scenario_for(headers)
            if scenario is None:
                message = (
                    "mockoss: no scenario selected: call mockoss.use(...) in the test, start the server "
                    f"with --scenario, or send the {SCENARIO_HEADER} header"
                )
                return profile.error(400, message), None, None, _unanswered(message)
            profile = _for_endpoint(self._profile_for(scenario, headers), endpoint)
        except (ScenarioError, ProfileError) as exc:
            return profile.error(400, f"mockoss: {exc}"), None, None, None
        # What the server refuses before generating, under the request's own switches, draws no step.
        if (refused := refusal(profile, endpoint, body, raw)) is not None:
            return refused, None, None, _refused_entry(refusal_hint(profile, endpoint, body, refused))
        self._player.auto_session = self.auto_session  # may be set after construction (pytest fixture)
        played = self._player.play(scenario, endpoint, body, headers, model, index, self.seed, seen)
        if played.problem is not None:  # no rule answers, or a template cannot be rendered
            return profile.error(400, played.problem), scenario, None, played
        step = played.step
        if step is None:
            error = played.rule.exhausted_error  # type: ignore[union-attr]
            return self._scripted_error(profile, error.status, error.message, error.retry_after), scenario, None, played
        if not surface and step.completion is not None and step.replay is None and step.error is None:
            return None, scenario, step, played  # type: ignore[return-value]  # a real engine answers (play())
        reply = self._reply(profile, endpoint, step, request, model, body, raw, index, seen, view, self._player.kept)
        if reply.status == 200 and (dropped := dropped_message_hint(profile, endpoint, step, body)) is not None:
            played = played._replace(warnings=(*played.warnings, dropped))  # a silent drop, said in the log
        return reply, scenario, step, played

    def _reply(
        self, profile: Profile, endpoint: Endpoint, step: Step, request: Any, model: str, body: Any, raw: bytes, index: int,
        seen: Any = None, view: Any = None, kept: Any = None,
    ) -> Reply:
        if step.replay is not None:  # a recorded reply, byte for byte
            return step.replay
        if step.error is not None:
            return self._scripted_error(profile, step.error.status, step.error.message, step.error.retry_after)
        ctx = _make_context(  # RequestContext(ids, created, prompt_tokens, raw_body, kept), mockoss.slotnew
            IdSource(self.seed, index),
            self.created,
            counted if (counted := PRECOUNTED_PROMPT_TOKENS.get()) is not None else prompt_count(profile, endpoint, raw, body, seen),
            raw,
            kept,  # the player's kept responses (mockoss.profiles.response_store), None for an upstream's step
        )
        if view is None:  # else built before the lock (respond, a big body)
            view = request.view(model, body)  # type: ignore[attr-defined]
        return profile.surface(endpoint, step.completion, view, ctx)

    @staticmethod
    def _scripted_error(profile: Profile, status: int, message: str, retry_after: int | None) -> Reply:
        reply = profile.error(status, message)
        if retry_after is None:
            return reply
        return Reply(reply.status, reply.media_type, reply.body, reply.frames, (("retry-after", str(retry_after)),))

