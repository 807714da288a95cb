"""Which scenario and which profile answer a request, and the server-wide settings that choose
them: :class:`Selection`, a base class of :class:`~mockoss.server.core.MockServer` (registering
and selecting scenarios, profile switches, the per-header profile cache, :meth:`~Selection.reset`,
and what a warm-up before the lock reads of the server).

Split out of :mod:`mockoss.server.core` (moved; :meth:`Selection.warm_target` came with the
warm-up's once-per-request decision): ``self._scenario_for`` and
``self._profile_for`` on the request path are the same one method lookup as before (no wrapper
call, no new object between); the methods read and write the attributes ``MockServer.__post_init__``
sets (``_lock``, ``_scenarios``, ``_player``, ``_profiles``, ``_base_profile``, ``_valid_bodies``,
``_handled``, ``requests``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mockoss.endpoints import clear_prompt_caches
from mockoss.profiles.base import Profile, Reply
from mockoss.profiles.registry import get_profile
from mockoss.scenario.loader import Scenario, ScenarioError, changed_on_disk, load_named, load_scenario, switch_problem
from mockoss.server.replies import SCENARIO_HEADER, SWITCH_HEADER, _for_endpoint, _parse_switches
from mockoss.server.scenario_compile import load_named_elsewhere, one_at_a_time

#: Distinct (scenario, ``X-Mockoss-Switch``) profiles kept; the least recently used go first.
PROFILE_CACHE_SIZE = 256


class Selection:
    """Scenario and profile selection of :class:`~mockoss.server.core.MockServer` (its base class)."""

    #: Largest ``--scenario-dir`` file a request may name, bytes; a larger one is refused unread
    #: with a 400 naming the file, its size and the limit. A served mockoss sets it to
    #: ``--max-scenario-bytes`` (``ControlOptions.max_scenario_bytes``, the uploads' cap, 4 MiB by
    #: default: :func:`mockoss.server.control.install`); ``None`` (in process): the loader's
    #: :data:`~mockoss.scenario.loader.MAX_SCENARIO_BYTES`.
    max_scenario_dir_bytes: int | None = None

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
        elif isinstance(scenario, str) or hasattr(scenario, "__fspath__"):  # a name or a file path
            loaded = load_scenario(scenario if isinstance(scenario, str) else str(scenario.__fspath__()))
        elif isinstance(scenario, Mapping):  # a parsed scenario file, as mockoss.use takes it (eleventh-session breaker, finding 9)
            from mockoss.scenario.loader import scenario_from_data

            loaded = scenario_from_data(scenario, name="script", default_version=True)
        else:  # builder items (mockoss.steps): a Script, a Step, or a list of steps or rules
            from mockoss.steps import compile_script

            loaded = compile_script(scenario, name="script")
        self._check_switches(loaded)
        self.register(loaded)
        self.scenario = loaded
        return loaded

    def _check_switches(self, scenario: Scenario) -> None:
        if scenario.switches and (problem := switch_problem(scenario, self.profile, self.switches)):
            raise ScenarioError(problem)  # FILE:LINE: switches.NAME: ... (eleventh-session breaker, finding 6)

    def set_switches(self, switches: Mapping[str, Any]) -> None:
        """Replace the server-wide profile switches.

        Raises:
            ProfileError: a switch the profile does not have.
        """
        profile = get_profile(self.profile, switches, warn=False)  # the release was warned about when set
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
        prompt ids among them (ids restart too).

        A request that began before the reset and still waits for the lock is not answered from
        the state after it: it would take the next test's first step, be logged as its request #0
        (the pytest fixture resets before every test) or draw an index there, shifting its ids
        (issue 9, eleventh-session breaker, finding 1). Requests wait before the lock on a worker
        thread: a big body's prompt counted in the worker process (:mod:`mockoss.server.offload`),
        the first request on a long answer warmed (:mod:`mockoss.server.warmup`), a long templated
        render. So the reset counts itself (``_epoch``, under the lock); :meth:`MockServer.respond
        <mockoss.server.core.MockServer.respond>` reads the count when it begins, and one that
        finds it changed once it has the lock answers 503 in its profile's error shape with
        ``x-should-retry: false`` (:func:`reset_refusal`), before it draws
        an index, plays a step or writes the log; an engine's answer that ends after a reset
        (:meth:`~mockoss.server.core.MockServer.play`) is not logged. "Began" is when the whole
        body was read and ``respond`` called: a body still arriving at the reset is a request of
        the new state. A request that has its reply already (being sent, or paced) is delivered
        as is: it touches no state after the reset."""
        with self._lock:
            self._epoch += 1
            self._player.clear()
            self.requests.clear()
            self._profiles.clear()
            self._valid_bodies.clear()
            self._handled = 0
        clear_prompt_caches()  # request-data caches too (mockoss.harmony.prompt.caches._REQUEST_CACHES)

    def warm_target(self, headers: Mapping[str, str], make_profile: bool = False) -> tuple[Scenario | None, Profile | None, list[int] | None, int]:
        """What a warm-up before the lock (:mod:`mockoss.server.warmup`) reads of the server for a
        request, without the lock unless ``make_profile``: ``(scenario, profile, cursors, index)``.

        ``scenario``: the one answering (``X-Mockoss-Scenario``'s if already loaded and its file
        unchanged, or with ``make_profile`` loaded now as the request would, outside the lock:
        :meth:`_load_before_lock`; else the server's), ``None`` when unknown without loading a
        file (then the rest is ``None`` too: the HTTP layer sends such a request to a worker
        thread, :func:`mockoss.server.warmup.wanted`).
        ``profile``: the base profile the reply will be made with (a per-header one for a scenario
        with ``switches:`` or an ``X-Mockoss-Switch`` header: ``None`` while not made, or with
        ``make_profile`` made now under the lock as the request would, ``None`` if it cannot be).
        ``cursors``: a copy of the scenario's shared rule cursors (no session), ``None`` before its
        first such request. ``index``: the index the next request will get."""
        name = headers.get(SCENARIO_HEADER)
        found = self._scenarios.get(name) if name else self.scenario
        if found is not None and name and self.scenario_dirs and changed_on_disk(found):
            found = None  # its file changed: to be read again, as one not loaded yet (one stat)
        if found is None and name and make_profile:
            # Not loaded yet: load it now, on the warm-up's worker thread and outside the lock, so
            # that other clients keep being answered meanwhile and its long completions are warmed
            # before the lock too. A name that cannot be loaded is left to the request, which
            # answers the error.
            found = self._load_before_lock(name)
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

    def _load_before_lock(self, name: str) -> Scenario | None:
        """Load the scenario ``name`` (``X-Mockoss-Scenario``), not loaded yet or changed on disk,
        on this worker thread and outside the server lock, then keep it under the lock, where the
        request's own lookup (:meth:`_scenario_for`) finds it loaded: the same object, so the same
        reply bytes. The upload's compile path (:func:`~mockoss.server.scenario_compile.load_named_elsewhere`:
        the same loader, long texts tokenized in the worker process). Compiled under the lock on
        the event loop, a 548 KB file of 5,001 rules held every other client 3.7 s on its first
        request and again after each edit (the fifteenth session's breaker, F4; issue 9: at most
        50 ms more than alone). One compile per file at a time, across servers (a test-id
        session is another server): the others wait on their own threads, then find it loaded, or
        in the loader's cache of compiled files. ``None``: it does not load (its error is the
        request's)."""
        with one_at_a_time((tuple(map(str, self.scenario_dirs)), name)):
            before = self._scenarios.get(name)
            if before is not None and not (self.scenario_dirs and changed_on_disk(before)):
                return before  # loaded meanwhile, by the request before this one
            try:
                loaded = load_named_elsewhere(name, self.scenario_dirs, self.max_scenario_dir_bytes)
                self._check_switches(loaded)
            except Exception:  # noqa: BLE001
                return None
            with self._lock:
                if self._scenarios.get(name) is before:  # not registered, uploaded or read meanwhile
                    self._keep(name, before, loaded)
                return self._scenarios.get(name)

    def _keep(self, name: str, found: Scenario | None, loaded: Scenario) -> Scenario:
        """Store ``loaded`` as ``name`` (lock held; :meth:`register` would take it again) unless it
        is ``found`` (a file touched but not changed gives the same object back: its place in the
        steps is kept), rewinding it."""
        if loaded is not found:
            found = self._scenarios[name] = loaded
            self._player.rewind(found.name)
        return found

    def _scenario_for(self, headers: Mapping[str, str]) -> Scenario | None:
        name = headers.get(SCENARIO_HEADER)
        if not name:
            return self.scenario if isinstance(self.scenario, Scenario) else None
        found = self._scenarios.get(name)
        # A --scenario-dir file is read again when it changed on disk (one stat per use; breaker
        # finding 5c, eleventh session); only servers given directories pay for the check.
        # Over HTTP a request naming a file not loaded yet or changed goes to a worker thread, which
        # loads it before the lock (warm_target, _load_before_lock): here it is found loaded. An
        # in-process call, or a file changed again in between, loads it here, lock held.
        if found is None or (self.scenario_dirs and changed_on_disk(found)):
            loaded = load_named(name, self.scenario_dirs, max_bytes=self.max_scenario_dir_bytes)
            self._check_switches(loaded)
            found = self._keep(name, found, loaded)
        return found

    def _profile_for(self, scenario: Scenario, headers: Mapping[str, str]) -> Profile:
        header = headers.get(SWITCH_HEADER, "")
        if not scenario.switches and not header:
            return self._base_profile
        key = (scenario.name, header)
        profile = self._profiles.get(key)
        if profile is None:
            merged = {**self.switches, **scenario.switches, **_parse_switches(header)}
            profile = self._profiles[key] = get_profile(self.profile, merged, warn=False)  # warned when set
            if len(self._profiles) > PROFILE_CACHE_SIZE:
                self._profiles.popitem(last=False)
        else:
            self._profiles.move_to_end(key)
        return profile


#: The message of :func:`reset_refusal`.
RESET_MESSAGE = (
    "mockoss: the server was reset while this request waited (a test ended, or POST /mockoss/reset): "
    "it began before the reset and is not answered from the state after it. Send it again if it is still wanted."
)


def reset_refusal(profile: Profile, endpoint: str) -> Reply:
    """The answer to a request a reset overtook (see :meth:`~mockoss.server.selection.Selection.reset`):
    503 in the error shape of the profile the request began with, and ``x-should-retry: false``,
    which the OpenAI SDKs obey before their status rules (openai/openai-python
    ``src/openai/_base_client.py`` ``_should_retry``, 3.57.0: they retry a 503 otherwise, and the
    retry would begin after the reset, in the next test's state)."""
    reply = _for_endpoint(profile, endpoint).error(503, RESET_MESSAGE)
    return Reply(reply.status, reply.media_type, reply.body, reply.frames, (*reply.headers, ("x-should-retry", "false")))
