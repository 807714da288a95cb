"""The fake server's state and request handling, free of any web framework.

:class:`MockServer` validates a request body, picks the next scripted step of the scenario that
applies, hands the step's completion to the active profile, records the exchange and returns the
profile's :class:`~mockoss.profiles.base.Reply`. The HTTP layer only moves bytes.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import ValidationError

from mockoss.endpoints import ENDPOINTS, endpoint_for_path, prompt_tokens
from mockoss.profiles.base import IdSource, Profile, Reply, RequestContext, ServerInfo
from mockoss.profiles.registry import ProfileError, get_profile
from mockoss.scenario.loader import Scenario, ScenarioError, Step, load_scenario

logger = logging.getLogger("mockoss")

__all__ = ["DEFAULT_CREATED", "DEFAULT_MODEL", "MockServer", "RecordedRequest"]

DEFAULT_MODEL = "openai/gpt-oss-20b"
#: Unix time stamped on every object unless configured: 2026-01-01T00:00:00Z. Fixed, so that the
#: same scenario and seed give byte-identical output.
DEFAULT_CREATED = 1767225600
SCENARIO_HEADER = "x-mockoss-scenario"
SWITCH_HEADER = "x-mockoss-switch"

#: An endpoint name from :data:`mockoss.endpoints.ENDPOINTS`, e.g. ``"chat"``.
Endpoint = str


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received, for assertions.

    Kept as received (raw bytes, header pairs) and parsed on access, so a long-running server's
    log costs little memory and no garbage-collector time.

    Attributes:
        index: 0-based position since the last reset.
        endpoint: the endpoint name, e.g. ``"chat"`` or ``"responses"``.
        raw: the request body as received.
        header_items: request headers as ``(lower-cased name, value)`` pairs.
        scenario: name of the scenario that answered, else ``None``.
        step: index of the scripted step that answered, else ``None``.
        status: HTTP status of the reply.
        completion: the raw Harmony completion text behind the reply, else ``None``.
    """

    index: int
    endpoint: Endpoint
    raw: bytes
    header_items: tuple[tuple[str, str], ...]
    scenario: str | None
    step: int | None
    status: int
    completion: str | None

    @property
    def body(self) -> Any:
        """The parsed JSON body, or ``None`` if it was not JSON."""
        try:
            return json.loads(self.raw)
        except ValueError:
            return None

    @property
    def headers(self) -> dict[str, str]:
        """Request headers, lower-cased names."""
        return dict(self.header_items)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Chat ``messages`` of the request (empty for other endpoints)."""
        body = self.body
        return list(body.get("messages", [])) if isinstance(body, dict) else []

    @property
    def tools(self) -> list[dict[str, Any]]:
        """Declared ``tools`` of the request."""
        body = self.body
        return list(body.get("tools") or []) if isinstance(body, dict) else []


def _pydantic_message(error: ValidationError) -> tuple[str, str | None]:
    first = error.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    lines = [f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in error.errors()]
    return "Invalid request: " + "; ".join(lines), (loc or None)


def _parse_switches(header: str) -> dict[str, Any]:
    switches: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in header.split(","))):
        name, sep, value = item.partition("=")
        if not sep:
            raise ProfileError(f"{SWITCH_HEADER}: expected name=value, got {item!r}")
        switches[name.strip()] = yaml.safe_load(value)
    return switches


@dataclass
class MockServer:
    """A fake gpt-oss server: scenario + profile + request log.

    Args:
        scenario: the default scenario (a loaded :class:`Scenario`, a shipped name or a file path),
            or ``None`` to require ``X-Mockoss-Scenario`` on every request.
        profile: profile name (``"vllm"``).
        switches: profile switches applied to every request (a scenario's own ``switches`` and the
            ``X-Mockoss-Switch: name=value[,name=value]`` header override them, in that order).
        served_model_names: names ``/v1/models`` lists and requests may use; others get vLLM's 404.
        seed: seeds every id; same scenario + seed ⇒ byte-identical output.
        created: unix seconds stamped on objects.
        request_log_limit: keep only the newest N requests in :attr:`requests` (``None``: all);
            ``mockoss serve`` keeps 10,000.

    Raises:
        ScenarioError, ProfileError: at construction, for a bad scenario, profile or switch.
    """

    scenario: Scenario | str | None = None
    profile: str = "vllm"
    switches: Mapping[str, Any] = field(default_factory=dict)
    served_model_names: Sequence[str] = (DEFAULT_MODEL,)
    seed: int | str = 0
    created: int = DEFAULT_CREATED
    request_log_limit: int | None = None
    requests: deque[RecordedRequest] = field(init=False)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = deque(maxlen=self.request_log_limit)
        self._handled = 0
        self._scenarios: dict[str, Scenario] = {}
        self._cursors: dict[str, int] = {}
        self._profiles: dict[tuple[Any, ...], Profile] = {}
        self.served_model_names = tuple(self.served_model_names) or (DEFAULT_MODEL,)
        self._base_profile = get_profile(self.profile, self.switches)
        if self.scenario is not None:
            self.use_scenario(self.scenario)

    # -- configuration -------------------------------------------------------------------------

    def register(self, scenario: Scenario) -> Scenario:
        """Make ``scenario`` selectable by name (``X-Mockoss-Scenario``)."""
        with self._lock:
            self._scenarios[scenario.name] = scenario
            self._cursors.pop(scenario.name, None)
        return scenario

    def use_scenario(self, scenario: Scenario | str) -> Scenario:
        """Set the default scenario and rewind it to its first step.

        Raises:
            ScenarioError: see :func:`~mockoss.scenario.loader.load_scenario`.
        """
        loaded = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        self.register(loaded)
        self.scenario = loaded
        return loaded

    def set_switches(self, switches: Mapping[str, Any]) -> None:
        """Replace the server-wide profile switches.

        Raises:
            ProfileError: a switch the profile does not have.
        """
        self._base_profile = get_profile(self.profile, switches)
        self.switches = dict(switches)
        self._profiles.clear()

    def reset(self) -> None:
        """Rewind every scenario and clear the request log (ids restart too)."""
        with self._lock:
            self._cursors.clear()
            self.requests.clear()
            self._handled = 0

    # -- request handling ----------------------------------------------------------------------

    def _scenario_for(self, headers: Mapping[str, str]) -> Scenario | None:
        name = headers.get(SCENARIO_HEADER)
        if not name:
            return self.scenario if isinstance(self.scenario, Scenario) else None
        found = self._scenarios.get(name)
        if found is None:
            found = self.register(load_scenario(name))
        return found

    def _next_step(self, scenario: Scenario) -> Step | None:
        position = self._cursors.get(scenario.name, 0)
        self._cursors[scenario.name] = position + 1
        if position < len(scenario.steps):
            return scenario.steps[position]
        return scenario.steps[-1] if scenario.when_exhausted == "repeat_last" else None

    def _profile_for(self, scenario: Scenario, headers: Mapping[str, str]) -> Profile:
        header = headers.get(SWITCH_HEADER, "")
        if not scenario.switches and not header:
            return self._base_profile
        key = (scenario.name, header)
        profile = self._profiles.get(key)
        if profile is None:
            merged = {**self.switches, **scenario.switches, **_parse_switches(header)}
            profile = self._profiles[key] = get_profile(self.profile, merged)
        return profile

    def handle(self, endpoint: Endpoint, raw: bytes, headers: Mapping[str, str] | Sequence[tuple[str, str]]) -> Reply:
        """Answer one request body for generation endpoint ``endpoint`` (e.g. ``"chat"``).

        Never raises: malformed input, unknown scenarios or switches become error replies in the
        profile's error shape (400, or the server's 404 for an unknown model or an endpoint it does
        not have).
        """
        if not isinstance(headers, Mapping):
            headers = dict(headers)
        with self._lock:
            index = self._handled
            self._handled += 1
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            try:
                reply, scenario, step = self._answer(endpoint, raw, body, headers, index)
            except Exception as exc:  # a mockoss bug: answer in the error shape, never a bare 500
                logger.exception("mockoss failed to answer request %d", index)
                message = f"mockoss internal error (a bug, please report it): {type(exc).__name__}: {exc}"
                reply, scenario, step = self._base_profile.error(500, message), None, None
            self.requests.append(
                RecordedRequest(
                    index=index,
                    endpoint=endpoint,
                    raw=raw,
                    header_items=tuple(headers.items()),
                    scenario=scenario.name if scenario else None,
                    step=step.index if step else None,
                    status=reply.status,
                    completion=step.completion.text if step and step.completion else None,
                )
            )
            return reply

    def _answer(
        self, endpoint: Endpoint, raw: bytes, body: Any, headers: Mapping[str, str], index: int
    ) -> tuple[Reply, Scenario | None, Step | None]:
        profile = self._base_profile
        if endpoint not in profile.endpoints:
            return profile.route_error(404, "POST", ENDPOINTS[endpoint].path), None, None
        if not isinstance(body, dict):
            return profile.error(400, "Invalid request: the body is not a JSON object"), None, None
        try:
            request = ENDPOINTS[endpoint].schema.model_validate(body)
        except ValidationError as exc:
            message, param = _pydantic_message(exc)
            return profile.error(400, message, param=param), None, None
        model = request.model or self.served_model_names[0]  # type: ignore[attr-defined]
        if model not in self.served_model_names:
            return profile.model_not_found(model), None, None
        try:
            scenario = self._scenario_for(headers)
            if scenario is None:
                message = f"mockoss: no scenario selected; start with --scenario or send {SCENARIO_HEADER}"
                return profile.error(400, message), None, None
            profile = self._profile_for(scenario, headers)
        except (ScenarioError, ProfileError) as exc:
            return profile.error(400, f"mockoss: {exc}"), None, None
        step = self._next_step(scenario)
        if step is None:
            error = scenario.exhausted_error
            return self._scripted_error(profile, error.status, error.message, error.retry_after), scenario, None
        if step.error is not None:
            reply = self._scripted_error(profile, step.error.status, step.error.message, step.error.retry_after)
            return reply, scenario, step
        ctx = RequestContext(
            ids=IdSource(self.seed, index), created=self.created, prompt_tokens=prompt_tokens(endpoint, raw)
        )
        view = request.view(model, body)  # type: ignore[attr-defined]
        return profile.surface(endpoint, step.completion, view, ctx), scenario, step

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

    def probe(self, method: str, path: str) -> Reply:
        """Answer a request that is not a generation endpoint: the active profile's identity and
        health routes, else that server's 404 (or 405 for a generation path with the wrong method)."""
        profile = self._base_profile
        reply = profile.probe(method, path, self.info)
        if reply is not None:
            return reply
        endpoint = endpoint_for_path(path)
        if endpoint is not None and endpoint.name in profile.endpoints and method != "POST":
            return profile.route_error(405, method, path)
        return profile.route_error(404, method, path)
