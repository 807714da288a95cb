"""The fake server's state and request handling, free of any web framework.

:class:`MockServer` validates a request body, picks the next scripted step of the scenario that
applies, hands the step's completion to the active profile, records the exchange and returns the
profile's :class:`~mockoss.profiles.base.Reply`. The HTTP layer only moves bytes.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import ValidationError

from mockoss.endpoints import ENDPOINTS, clear_prompt_caches, endpoint_for_path, prompt_tokens, request_seen
from mockoss.harmony.encoding import check_harmony_library
from mockoss.harmony.lru import BytesLRU, approx_bytes
from mockoss.jsonbody import parse_json
from mockoss.profiles.base import IdSource, Profile, Reply, RequestContext, ServerInfo
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.scenario.loader import Scenario, ScenarioError, Step, load_named, load_scenario
from mockoss.scenario.player import Played, Player
from mockoss.scenario.transport import TRANSPORT_HEADER, TransportError, TransportSpec
from mockoss.server.inputs import lone_surrogate_field, out_of_vocabulary
from mockoss.server.nonfinite import go_decode_error
from mockoss.server.prelock import PRECOUNTED_PROMPT_TOKENS, PROMPT_COUNTER, before_lock
from mockoss.server.records import (
    DEFAULT_LOG_BYTES,
    REQUEST_RECORDS,
    Endpoint,
    RecordedRequest,
    RequestLog,
    header_items,
    new_record,
)
from mockoss.server.replies import (
    SWITCH_HEADER,
    _for_endpoint,
    _model_hint,
    _parse_switches,
    _pydantic_message,
    failure_reply,
)
from mockoss.server.settings import DEFAULT_MAX_BODY_BYTES
from mockoss.server.transport import Delivery
from mockoss.server.validation import validate_request
from mockoss.server.warmup import WARM_BEFORE_LOCK, Warmup, warmed
from mockoss.slotnew import slot_builder

if TYPE_CHECKING:
    from mockoss.upstream import Recorder, Upstream

logger = logging.getLogger("mockoss")

__all__ = ["DEFAULT_CREATED", "MockServer", "RecordedRequest"]

_make_context = slot_builder(RequestContext)

#: Unix time stamped on every object unless configured: 2026-01-01T00:00:00Z. Fixed, so that the
#: same scenario and seed give byte-identical output.
DEFAULT_CREATED = 1767225600
SCENARIO_HEADER = "x-mockoss-scenario"

#: Request fields limiting completion tokens (chat, chat legacy, responses), first set wins.
_LIMIT_FIELDS = ("max_completion_tokens", "max_tokens", "max_output_tokens")

class _Unanswered(NamedTuple):
    """A request mockoss answered itself before any scenario step (no scenario selected, or a
    failure of its own): ``problem`` goes to the request log, which the pytest plugin's failure
    report shows."""

    problem: str


def _not_an_object(body: Any, raw: bytes | None) -> str:
    """Why a body that is not a dict is refused: not a JSON object, unless it is JSON nested deeper
    than the parser recurses (:func:`mockoss.jsonbody.parse_json` raised ``RecursionError``), which
    is said as such. FastAPI (vLLM, SGLang, the reference server) answers that one 400 "There was
    an error parsing the body" (fastapi 0.165.0 ``fastapi/routing.py``)."""
    if body is None and raw:
        try:
            parse_json(raw)
        except RecursionError:
            return "the body is nested deeper than the JSON parser allows (Python's recursion limit)"
        except ValueError:
            pass
    return "the body is not a JSON object"


def _unanswered(problem: str) -> _Unanswered:
    return _Unanswered(problem[:500])


def _share(record: RecordedRequest) -> None:
    """Hand ``record`` to the HTTP request being answered, if it asked (:data:`REQUEST_RECORDS`)."""
    sink = REQUEST_RECORDS.get()
    if sink is not None:
        sink.append(record)


#: Bytes :meth:`MockServer._validate` may keep of validated bodies sent again (parsed data included).
VALID_BODY_BYTES = 16 * 1024 * 1024
#: Larger bodies are always validated (see :meth:`MockServer._validate`).
VALID_BODY_MAX = 8 * 1024
#: Distinct (scenario, ``X-Mockoss-Switch``) profiles kept; the least recently used go first.
PROFILE_CACHE_SIZE = 256


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
        problem, played = played.problem, None
    else:
        problem = played.problem if played else None
    # Every field, in RecordedRequest's order (new_record: without the frozen dataclass's __init__).
    return new_record(
        index,
        endpoint,
        raw,
        header_items(headers),
        scenario.name if scenario else None,  # scenario
        step.index if step and scenario else None,  # step
        status,
        step.completion.text if step and step.completion else None,  # completion
        played.rule_id if played else None,  # rule
        played.turn if played else None,  # turn
        problem,
        played.warnings if played else (),  # warnings
        bool(played and played.rule is not None and played.step is None and not played.problem),  # exhausted
        server_log,
    )


@dataclass
class MockServer:
    """A fake gpt-oss server: scenario + profile + request log.

    Args:
        scenario: the default scenario (a loaded :class:`Scenario`, a shipped name, a file path, or
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

    scenario: Scenario | str | None = None
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
    requests: RequestLog = field(init=False)

    def __post_init__(self) -> None:
        check_harmony_library()  # HarmonyLibraryError: openai-harmony owns the openai_harmony module
        if self.max_body_bytes is not None and self.max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be at least 1 (or None: no limit), got {self.max_body_bytes}")
        if any(not isinstance(name, str) or not name.strip() for name in self.served_model_names or ()):
            raise ValueError(f"served_model_names must be non-empty strings, got {list(self.served_model_names or ())!r}")
        self._lock = threading.Lock()
        self.requests = RequestLog(maxlen=self.request_log_limit, max_bytes=self.request_log_bytes)
        self._handled = 0
        self._scenarios: dict[str, Scenario] = {}
        self._player = Player(auto_session=self.auto_session)  # rule cursors, sessions, stored responses
        self._profiles: OrderedDict[tuple[Any, ...], Profile] = OrderedDict()  # LRU, PROFILE_CACHE_SIZE
        self._base_profile = get_profile(self.profile, self.switches)
        #: Validated requests of bodies sent again, by (endpoint, raw bytes): (base profile,
        #: profile, request); see :meth:`_validate`.
        self._valid_bodies: BytesLRU[tuple[Profile, Profile, Any]] = BytesLRU(VALID_BODY_BYTES)
        self._warmup = Warmup()  # long completions warmed before the lock, per request shape (mockoss.server.warmup)
        # Without explicit names the server answers to its profile's usual model name, and
        # follows the profile when set_profile() changes it.
        self._models_explicit = bool(self.served_model_names)
        self.served_model_names = tuple(self.served_model_names or ()) or (self._base_profile.default_model,)
        if self.transport is not None:
            self.transport = TransportSpec.from_data(self.transport, where="MockServer(transport=…)")
        if self.scenario is not None:
            self.use_scenario(self.scenario)

    # -- configuration -------------------------------------------------------------------------

    def register(self, scenario: Scenario) -> Scenario:
        """Make ``scenario`` selectable by name (``X-Mockoss-Scenario``)."""
        with self._lock:
            self._scenarios[scenario.name] = scenario
            self._player.rewind(scenario.name)
        return scenario

    def use_scenario(self, scenario: Scenario | str | Any) -> Scenario:
        """Set the default scenario and rewind it to its first step.

        Raises:
            ScenarioError: see :func:`~mockoss.scenario.loader.load_scenario`; also when the
                scenario's ``switches`` do not suit the active profile (file and message).
        """
        if isinstance(scenario, Scenario):
            loaded = scenario
        elif isinstance(scenario, str):
            loaded = load_scenario(scenario)
        else:  # builder items (mockoss.steps): a Script, a Step, or a list of steps or rules
            from mockoss.steps import compile_script

            loaded = compile_script(scenario, name="script")
        self._check_switches(loaded)
        self.register(loaded)
        self.scenario = loaded
        return loaded

    def _check_switches(self, scenario: Scenario) -> None:
        if scenario.switches:
            try:
                get_profile(self.profile, {**self.switches, **scenario.switches})
            except ProfileError as exc:
                raise ScenarioError(f"{scenario.origin}: switches: {exc}") from None

    def set_switches(self, switches: Mapping[str, Any]) -> None:
        """Replace the server-wide profile switches.

        Raises:
            ProfileError: a switch the profile does not have.
        """
        profile = get_profile(self.profile, switches)
        with self._lock:  # not while a request builds a switch-header profile from the old switches
            self._base_profile = profile
            self.switches = dict(switches)
            self._profiles.clear()
            self._valid_bodies.clear()

    def set_profile(self, name: str, switches: Mapping[str, Any] | None = None) -> None:
        """Serve as profile ``name`` from the next request on, with ``switches`` replacing the
        server-wide switches (a scenario's ``switches:`` and ``X-Mockoss-Switch`` still apply on top).

        Raises:
            ProfileError: unknown profile or switch (the message lists the valid ones); the server
                keeps its current profile and switches.
        """
        profile = get_profile(name, switches)
        with self._lock:
            self.profile, self._base_profile, self.switches = name, profile, dict(switches or {})
            self._profiles.clear()
            self._valid_bodies.clear()
            if not self._models_explicit:
                self.served_model_names = (profile.default_model,)

    def reset(self) -> None:
        """Rewind every scenario, forget every session, clear the request log, the per-header
        profile cache, the prompt count caches and the caches of request data, Ollama's ``context``
        prompt ids among them (ids restart too)."""
        with self._lock:
            self._player.clear()
            self.requests.clear()
            self._profiles.clear()
            self._valid_bodies.clear()
            self._handled = 0
        clear_prompt_caches()  # request-data caches too (mockoss.harmony.prompt.caches._REQUEST_CACHES)

    def warm_target(self, headers: Mapping[str, str], make_profile: bool = False) -> tuple[Scenario | None, Profile | None, list[int] | None, int]:
        """What a warm-up before the lock (:mod:`mockoss.server.warmup`) reads of the server for a
        request, without the lock unless ``make_profile``: ``(scenario, profile, cursors, index)``.

        ``scenario``: the one answering (``X-Mockoss-Scenario``'s if already loaded, else the
        server's), ``None`` when unknown without loading a file (then the rest is ``None`` too).
        ``profile``: the base profile the reply will be made with (a per-header one for a scenario
        with ``switches:`` or an ``X-Mockoss-Switch`` header: ``None`` while not made, or with
        ``make_profile`` made now under the lock as the request would, ``None`` if it cannot be).
        ``cursors``: a copy of the scenario's shared rule cursors (no session), ``None`` before its
        first such request. ``index``: the index the next request will get."""
        name = headers.get(SCENARIO_HEADER)
        found = self._scenarios.get(name) if name else self.scenario
        if not isinstance(found, Scenario):
            return None, None, None, self._handled
        header = headers.get(SWITCH_HEADER, "")
        profile: Profile | None = self._base_profile
        if found.switches or header:
            profile = self._profiles.get((found.name, header))  # a read: no reordering, no lock
            if profile is None and make_profile:
                try:
                    with self._lock:  # the per-header profile cache, as the request's own lookup
                        profile = self._profile_for(found, headers)
                except Exception:  # noqa: BLE001  (a bad switch: the request answers it)
                    profile = None
        by_session = self._player._cursors.get(found.name)
        shared = by_session.get("") if by_session is not None else None
        return found, profile, None if shared is None else list(shared), self._handled

    # -- request handling ----------------------------------------------------------------------

    def _scenario_for(self, headers: Mapping[str, str]) -> Scenario | None:
        name = headers.get(SCENARIO_HEADER)
        if not name:
            return self.scenario if isinstance(self.scenario, Scenario) else None
        found = self._scenarios.get(name)
        if found is None:
            loaded = load_named(name, self.scenario_dirs)
            self._check_switches(loaded)
            # Called with the lock held: store directly (register() would take the lock again).
            found = self._scenarios[name] = loaded
            self._player.rewind(found.name)
        return found

    def _profile_for(self, scenario: Scenario, headers: Mapping[str, str]) -> Profile:
        header = headers.get(SWITCH_HEADER, "")
        if not scenario.switches and not header:
            return self._base_profile
        key = (scenario.name, header)
        profile = self._profiles.get(key)
        if profile is None:
            merged = {**self.switches, **scenario.switches, **_parse_switches(header)}
            profile = self._profiles[key] = get_profile(self.profile, merged)
            if len(self._profiles) > PROFILE_CACHE_SIZE:
                self._profiles.popitem(last=False)
        else:
            self._profiles.move_to_end(key)
        return profile

    def handle(self, endpoint: Endpoint, raw: bytes, headers: Mapping[str, str] | Sequence[tuple[str, str]]) -> Reply:
        """Answer one request body for generation endpoint ``endpoint`` (e.g. ``"chat"``).

        Never raises: malformed input, unknown scenarios or switches become error replies in the
        profile's error shape (400, or the server's 404 for an unknown model or an endpoint it does
        not have).
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
        request instead of the scenario (an upstream's completion or error, :mod:`mockoss.upstream`).
        """
        if not isinstance(headers, dict) and not isinstance(headers, Mapping):  # dict first: no ABC check
            headers = dict(headers)
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
            checked: Reply | tuple[Profile, Any, str] | BaseException | None = self._validate(endpoint, body, raw, base)
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
            return self._respond_locked(endpoint, raw, headers, step, body, base, names, checked, override)
        # A big body's view, count and declared tools are made now, outside the lock (prelock);
        # on a worker thread, long completions' plans for this shape too (warmup).
        with before_lock(endpoint, raw, body, checked) as view, warmed(self, endpoint, raw, body, headers, checked if warm else None, view) as view:
            return self._respond_locked(endpoint, raw, headers, step, body, base, names, checked, override, view)

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
    ) -> tuple[Reply, Delivery | None]:
        """The part of :meth:`respond` under the server lock: the request's index, its answer, its
        record. ``view``: the valid request's view, built before the lock (``None``: built here)."""
        with self._lock:
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
                reply, scenario, step, played = self._base_profile.error(400, f"mockoss: {exc}"), None, None, None
            except BaseException as exc:  # a mockoss bug: answer in the error shape, never a bare 500
                # BaseException: a Rust panic in openai-harmony (pyo3's PanicException) is not an
                # Exception, and must not take the connection down with it.
                if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                    raise
                reply, scenario, step, played = failure_reply(exc, self._base_profile, endpoint, index), None, None, _unanswered(f"mockoss could not answer it: {type(exc).__name__}: {exc}")
            record = _record(index, endpoint, raw, headers, scenario, step, played, reply.status, reply.log)
            self.requests.append(record)
            if isinstance(played, Played) and endpoint == "responses" and reply.status == 200:
                self._remember(played, reply, body)
            _share(record)
            if self.recorder is not None:
                self.recorder.observe(self, record, reply, step)
            return reply, self._delivery(scenario, step, None if isinstance(override, BaseException) else override, index, body)

    def _remember(self, played: Played, reply: Reply, body: Any) -> None:
        """Store a Responses reply's id for ``previous_response_id`` unless the request said ``store: false``."""
        from mockoss.scenario.conversation import response_id

        if isinstance(body, dict) and body.get("store") is False:
            return
        found = response_id(reply.body, reply.frames)
        if found is not None:
            self._player.remember(found, played)

    def play(
        self, endpoint: Endpoint, raw: bytes, headers: Mapping[str, str]
    ) -> tuple[Reply | None, Step | None, Callable[[int], RecordedRequest]]:
        """Play the scenario step for a request that a real engine answers (:mod:`mockoss.engines`).

        Returns ``(reply, step, log)``: ``reply`` is mockoss's own answer when no engine is needed
        (invalid request, no scenario, scripted error or replay, exhausted rule; ``step`` is then
        the step played, if any), else ``None`` and ``step`` holds the completion the engine must
        emit. Call ``log(status)`` once the status of the answer is known, to add the request to
        :attr:`requests` (scenario, rule, step, turn and completion as :meth:`respond` logs them).
        Never raises for bad input (see :meth:`handle`).
        """
        with self._lock:
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
                reply, scenario, step, played = failure_reply(exc, self._base_profile, endpoint, index), None, None, _unanswered(f"mockoss could not answer it: {type(exc).__name__}: {exc}")

        def log(status: int) -> RecordedRequest:
            record = _record(index, endpoint, raw, headers, scenario, step, played, status)
            with self._lock:
                self.requests.append(record)
            _share(record)
            return record

        return reply, step, log

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

    def _validate(
        self, endpoint: Endpoint, body: Any, raw: bytes | None = None, base: Profile | None = None
    ) -> Reply | tuple[Profile, Any, str]:
        """The error reply a request gets before any step is played, else (profile, request, model).

        ``body`` is ``json.loads(raw)``, unmodified. A body sent again (the same ``raw`` bytes, to
        the same endpoint, under the same base profile) that passed every check of this method
        but the model's is not validated again: its validated request is kept from its second
        sighting (:attr:`_valid_bodies`, bounded in bytes, emptied by :meth:`reset`). Exact,
        because everything those checks read is the body's bytes and the base profile (the
        schema's validators, the surrogate, vocabulary and Go number checks are functions of the
        body alone), and the request object is only read afterwards (its view, its prompt lookup:
        equal data, as equal bytes parse to equal data). Only bodies of up to
        :data:`VALID_BODY_MAX` bytes: hashing a 23 KB agent turn for the key costs ~4 us, and an
        agent never sends the same turn twice (its resent messages are skipped by the validation's
        own lookup, :mod:`mockoss.harmony.prompt.seen`). Profiles with their own request check
        (``check_request``, which may hand state to the reply: gptoss-reference) always validate.
        The model check reads :attr:`served_model_names`, which can change: it always runs.
        Measured over HTTP (``benchmarks/bench_http.py``'s repeated chat body): see issue 9's note.
        ``base``: the base profile to judge by (default: the server's now).
        """
        if base is None:
            base = self._base_profile
        # A dict body only: the same bytes can fail to parse on a deeper stack (json.loads, past
        # jiter's depth, shares the interpreter's recursion limit), and a kept request must not
        # stand in for a body that is None (a review's finding: an unscripted 500).
        keep = raw is not None and type(body) is dict and len(raw) <= VALID_BODY_MAX
        if keep and (hit := self._valid_bodies.get((endpoint, raw))) is not None and hit[0] is base:
            return self._with_model(hit[1], hit[2])
        profile = _for_endpoint(base, endpoint)
        if endpoint not in profile.endpoints:
            return profile.route_error(404, "POST", ENDPOINTS[endpoint].path)
        if profile.name.startswith("ollama") and (go_error := go_decode_error(endpoint, body, raw)) is not None:
            return profile.error(400, go_error)  # NaN or 1e400 in a Go number field (mockoss.server.nonfinite)
        own_check = getattr(profile, "check_request", None)  # a profile validating as its server's own models do
        if own_check is not None and (rejected := own_check(endpoint, body, raw)) is not None:
            return rejected  # type: ignore[no-any-return]
        if not isinstance(body, dict):
            return profile.error(400, f"Invalid request: {_not_an_object(body, raw)}")
        try:
            checked_body = body if own_check is None else {key: body[key] for key in ("input", "model", "stream") if key in body}
            request = validate_request(ENDPOINTS[endpoint].schema, checked_body)  # long lists a slice at a time
        except ValidationError as exc:
            message, param = _pydantic_message(exc)
            return profile.error(400, message, param=param)
        own_surrogates = own_check is not None or profile.name.startswith("ollama")
        field = None if own_surrogates else lone_surrogate_field(body)
        if field is not None:  # see mockoss.server.inputs
            message = f"Invalid request: {field} holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair): not Unicode text (RFC 8259 section 8.2)"
            return profile.error(400, message, param=field)
        if endpoint == "completions" and (token := out_of_vocabulary(body)) is not None:
            return profile.error(400, f"Token id {token} is out of vocabulary")  # vLLM's words, see mockoss.server.inputs
        if keep and own_check is None:
            # What the request holds, measured (lru.approx_bytes) only when it is stored, on the
            # body's second sighting: 2.3-3.3 KB for a short chat, up to ~25x the bytes for a body
            # of many small containers (a review measured 205 KB for 2,700 empty content parts).
            self._valid_bodies.offer((endpoint, raw), (base, profile, request), lambda: approx_bytes(request, self._valid_bodies.limit))
        return self._with_model(profile, request)

    def _with_model(self, profile: Profile, request: Any) -> Reply | tuple[Profile, Any, str]:
        """``(profile, request, model)`` with the model resolved, or the unknown-model reply."""
        model = request.model or self.served_model_names[0]  # type: ignore[attr-defined]
        if model not in self.served_model_names and profile.model_check:
            return _model_hint(profile.model_not_found(model), model, self.served_model_names)
        return profile, request, model

    def precheck(self, endpoint: Endpoint, raw: bytes) -> Reply | None:
        """The error reply :meth:`respond` gives ``raw`` before any step is played (not a JSON
        object, invalid, unknown model, endpoint the profile lacks), else ``None``. Records nothing."""
        try:
            body = parse_json(raw)
        except (ValueError, RecursionError):
            body = None
        checked = self._validate(endpoint, body, raw)
        return checked if isinstance(checked, Reply) else None

    def error_reply(self, endpoint: Endpoint, status: int, message: str) -> Reply:
        """An error reply in the active profile's shape for ``endpoint`` (e.g. 502, upstream down)."""
        return _for_endpoint(self._base_profile, endpoint).error(status, message)

    def record_request(
        self, endpoint: Endpoint, raw: bytes, headers: Mapping[str, str], status: int
    ) -> RecordedRequest:
        """Log a request answered outside :meth:`respond` (passed through to an upstream)."""
        with self._lock:
            record = RecordedRequest(self._handled, endpoint, raw, header_items(headers), None, None, status, None)
            self._handled += 1
            self.requests.append(record)
        _share(record)
        return record

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
        if given is not None:  # an upstream's answer (mockoss.upstream), not the scenario's
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
        return self._reply(profile, endpoint, step, request, model, body, raw, index, seen, view), scenario, step, played

    def _reply(
        self, profile: Profile, endpoint: Endpoint, step: Step, request: Any, model: str, body: Any, raw: bytes, index: int,
        seen: Any = None, view: Any = None,
    ) -> Reply:
        if step.replay is not None:  # a recorded reply, byte for byte
            return step.replay
        if step.error is not None:
            return self._scripted_error(profile, step.error.status, step.error.message, step.error.retry_after)
        ctx = _make_context(  # RequestContext(ids, created, prompt_tokens, raw_body), mockoss.slotnew
            IdSource(self.seed, index),
            self.created,
            counted if (counted := PRECOUNTED_PROMPT_TOKENS.get()) is not None else prompt_tokens(endpoint, raw, body, seen),
            raw,
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

    # -- other routes ---------------------------------------------------------------------------

    @property
    def info(self) -> ServerInfo:
        """What identity endpoints report."""
        return ServerInfo(served_model_names=tuple(self.served_model_names), created=self.created)

    def probe(self, method: str, path: str, body: bytes = b"") -> Reply:
        """Answer a request that is not a generation endpoint: the active profile's identity and
        health routes, then its side routes that read a body (``side_route``: vLLM's
        ``/tokenize``, llama-server's ``/apply-template``, …), else that server's 404 (or 405 for
        a generation path with the wrong method)."""
        profile = self._base_profile
        reply = profile.probe(method, path, self.info)
        if reply is not None:
            return reply
        side_route = getattr(profile, "side_route", None)
        if side_route is not None:
            try:
                reply = side_route(method, path, body, self.info)
            except BaseException as exc:  # a tokenizer panic (vLLM's /tokenize of a 1,000,000-character word): never a bare 500
                if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                    raise
                return failure_reply(exc, profile, None, -1)
            if reply is not None:
                return reply  # type: ignore[no-any-return]
        endpoint = endpoint_for_path(path)
        if endpoint is not None and endpoint.name in profile.endpoints and method != "POST":
            return profile.route_error(405, method, path)
        return profile.route_error(404, method, path)
