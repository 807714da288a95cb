"""What the ``mockoss`` and ``mockoss_session`` fixtures give a test: :class:`MockossFixture`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mockoss.pytest_plugin._options import MockossOptions, RealTarget
from mockoss.pytest_plugin._report import (
    REQUESTS_DOC,
    STEPS_DOC,
    TOOLS_DOC,
    describe_requests,
    plural,
    tool_warnings,
    unexpected_requests,
    unused_steps,
)

if TYPE_CHECKING:
    from mockoss.scenario.loader import Scenario
    from mockoss.server.core import MockServer, RecordedRequest
    from mockoss.server.run import ThreadedServer

__all__ = ["MockossFixture", "RealModeError"]


class RealModeError(RuntimeError):
    """Raised in real mode (``--mockoss-real``) by the members that read the request log:
    :attr:`MockossFixture.requests`, :attr:`~MockossFixture.last_request`,
    :meth:`~MockossFixture.assert_request_count` and :meth:`~MockossFixture.assert_all_steps_used`.
    A real server keeps no such log; mark such tests ``@pytest.mark.mockoss_scripted``."""


class MockossFixture:
    """What the ``mockoss`` and ``mockoss_session`` fixtures give a test (public for type hints).

    Attributes:
        real: ``False`` against the fake server; ``True`` under ``--mockoss-real``.
        url: the server root, e.g. ``http://127.0.0.1:PORT``.
        base_url: ``url + "/v1"``, for ``openai.OpenAI(base_url=…)``.
        api_key: ``"unused"`` for the fake server; real mode's key otherwise.
        model: a model name the server serves (``"openai/gpt-oss-20b"`` unless configured).
        profile: the profile the fake server answers as (``None`` in real mode).
        seed: the fake server's seed (``None`` in real mode).
        server: the underlying :class:`~mockoss.server.core.MockServer` (``None`` in real mode).
        unapplied: in real mode, what the test asked for that a real server cannot do, in order:
            ``("profile", name)``, ``("profiles", [...])``, ``("seed", n)``, ``("transport", {...})``,
            ``("switches", {...})``, ``("use", scenario)``; always empty against the fake server.
    """

    def __init__(
        self,
        *,
        server: MockServer | None,
        url: str,
        api_key: str,
        model: str,
        profile: str | None,
        seed: int | str | None,
    ) -> None:
        self.server = server
        self.real = server is None
        self.url = url
        self.base_url = f"{url}/v1"
        self.api_key = api_key
        self.model = model
        self.profile = profile
        self.seed = seed
        self.unapplied: list[tuple[str, Any]] = []
        self._profile_name = profile or "vllm"  # what real mode validates switches against
        self._scenarios: dict[str, Scenario] = {}  # given to the marker or use(), by name
        self._inline = 0
        self._test_failed = False  # set by the plugin: skip the teardown steps check
        #: The test's cassette file (``@pytest.mark.mockoss(cassette=…)``), else ``None``.
        self.cassette: Path | None = None

    # -- construction (the plugin's) -------------------------------------------------------------

    @classmethod
    def scripted(cls, running: ThreadedServer, options: MockossOptions) -> MockossFixture:
        """A fixture on ``running``'s fake server, reset and configured with resolved ``options``.

        Raises:
            ProfileError, ScenarioError, TransportError: a bad profile, switch, scenario or transport.
        """
        from mockoss.scenario.transport import TransportSpec
        from mockoss.server.settings import DEFAULT_MAX_BODY_BYTES

        server = running.server
        transport = (
            None
            if options.transport is None
            else TransportSpec.from_data(options.transport, where="mockoss transport=")
        )
        server.set_profile(options.profile or "vllm", options.switches)  # also the profile's model name
        if options.served_model_names is not None:
            server.served_model_names = tuple(options.served_model_names)
        server.reset()
        server.scenario = None
        server.seed = options.seed if options.seed is not None else 0
        server.transport = transport
        server.auto_session = bool(options.auto_session)
        server.max_body_bytes = DEFAULT_MAX_BODY_BYTES if options.max_body_bytes is None else options.max_body_bytes
        server.body_budget_bytes = options.body_budget_bytes  # None: 4 x max_body_bytes (mockoss.server.limits)
        fixture = cls(
            server=server,
            url=running.url,
            api_key="unused",
            model=server.served_model_names[0],
            profile=options.profile,
            seed=server.seed,
        )
        if options.scenario is not None:
            fixture.use(options.scenario)
        return fixture

    @classmethod
    def against(cls, target: RealTarget, explicit: MockossOptions, options: MockossOptions) -> MockossFixture:
        """A real-mode fixture: validates what ``explicit`` sets, as the fake server would, and
        records it in :attr:`unapplied`.

        Raises:
            ProfileError, ScenarioError, TransportError: a bad profile, switch, scenario or transport.
        """
        from mockoss.profiles.registry import get_profile
        from mockoss.scenario.transport import TransportSpec

        fixture = cls(server=None, url=target.url, api_key=target.api_key, model=target.model, profile=None, seed=None)
        fixture._profile_name = options.profile or "vllm"
        get_profile(fixture._profile_name)
        if explicit.profile is not None:
            fixture.unapplied.append(("profile", explicit.profile))
        if explicit.profiles is not None:
            fixture.unapplied.append(("profiles", list(explicit.profiles)))
        if explicit.seed is not None:
            fixture.unapplied.append(("seed", explicit.seed))
        if explicit.transport is not None:
            TransportSpec.from_data(explicit.transport, where="mockoss transport=")
            fixture.unapplied.append(("transport", explicit.transport))
        for name in ("max_body_bytes", "body_budget_bytes", "served_model_names"):
            if getattr(explicit, name) is not None:
                fixture.unapplied.append((name, getattr(explicit, name)))
        if explicit.switches:
            fixture.switches(**explicit.switches)
        if explicit.scenario is not None:
            fixture.use(explicit.scenario)
        return fixture

    # -- scripting --------------------------------------------------------------------------------

    def use(self, scenario: str | Path | Mapping[str, Any] | Sequence[Any] | Any, *more: Any) -> Scenario:
        """Make ``scenario`` the one that answers, from its first step.

        Accepts a shipped scenario name, a YAML file path, YAML text (a str of several lines), a
        scenario mapping (``{"steps": […]}`` or ``{"rules": […]}``, ``version`` optional), a bare
        list of steps, or :mod:`mockoss.steps` builder items, each positional item one step (or rule):
        ``mockoss.use(tool_call("get_weather", {"city": "Paris"}), final("Sunny."))``; the
        ``mockoss_remote`` fixture takes the same (:mod:`mockoss.pytest_plugin._use_args`). In real
        mode the scenario is still loaded (a broken one fails in both modes) but only recorded in :attr:`unapplied`.

        Raises:
            mockoss.scenario.loader.ScenarioError: the scenario is invalid (file, line and field),
                or no such file or shipped scenario (an empty or over-long name too).
            TypeError: not one of the above (``bytes``, ``None``, a number, a set, a generator...).
        """
        from mockoss.pytest_plugin._use_args import read_use_args
        from mockoss.scenario.loader import load_scenario, scenario_from_bytes, scenario_from_data

        kind, value = read_use_args(scenario, more)
        if kind == "source":
            loaded = load_scenario(value)
        else:
            self._inline += 1
            name = f"inline-{self._inline}"
            if kind == "text":
                loaded = scenario_from_bytes(value.encode("utf-8", "surrogatepass"), name=name, origin="<inline>")
            else:
                loaded = scenario_from_data(value, name=name, default_version=True)
        self._scenarios[loaded.name] = loaded
        if self.server is None:
            self.unapplied.append(("use", scenario))
            return loaded
        return self.server.use_scenario(loaded)

    @staticmethod
    def session(key: str) -> dict[str, str]:
        """Headers that put requests in conversation ``key``: ``{"X-Mockoss-Session": key}``.

        Requests of one session share rule cursors and a turn counter (turn = earlier requests
        in the session + 1) apart from other sessions, e.g.
        ``openai.OpenAI(base_url=mockoss.base_url, api_key="unused", default_headers=mockoss.session("a"))``.
        """
        return {"X-Mockoss-Session": key}

    def switches(self, values: Mapping[str, Any] | None = None, /, **more: Any) -> None:
        """Replace the profile switches for the rest of this test: a dict, keywords or both, e.g.
        ``mockoss.switches({"harmony_error_status": 400})`` or ``mockoss.switches(strict=False)``
        (in real mode: validated, then recorded in :attr:`unapplied`).

        Raises:
            mockoss.profiles.registry.ProfileError: a switch the profile does not have.
            TypeError: ``values`` is not a mapping.
        """
        if values is not None and not isinstance(values, Mapping):
            raise TypeError(f"mockoss.switches() takes a dict of switch values, got {type(values).__name__}")
        switches = {**(values or {}), **more}
        if self.server is not None:
            self.server.set_switches(switches)
            return
        from mockoss.profiles.registry import get_profile

        get_profile(self._profile_name, switches, warn=False)  # warned when the fixture was built
        self.unapplied.append(("switches", dict(switches)))

    def reset(self) -> None:
        """Rewind every scenario, forget every session and clear the request log (no-op in real mode)."""
        if self.server is not None:
            self.server.reset()

    # -- the request log --------------------------------------------------------------------------

    def _log(self, member: str) -> list[RecordedRequest]:
        if self.server is None:
            raise RealModeError(
                f"mockoss.{member}: requests are not recorded in real mode (running against real server "
                f"{self.base_url}); mark the test @pytest.mark.mockoss_scripted, or check mockoss.real first"
            )
        return list(self.server.requests)

    def _cassette_scenario(self) -> Scenario | None:
        """The cassette's recorded scenario (its requests are what a miss is compared with), if any."""
        return self._scenarios.get(self.cassette.stem) if self.cassette is not None else None

    @property
    def requests(self) -> list[RecordedRequest]:
        """Requests received (since this test started, for ``mockoss``), in order: parsed body,
        scenario, rule and step that answered, turn, status, raw Harmony completion.

        Raises:
            RealModeError: in real mode.
        """
        return self._log("requests")

    @property
    def last_request(self) -> RecordedRequest:
        """The latest request (``.body``, ``.messages``, ``.tools``, ``.completion`` …).

        Raises:
            AssertionError: no request was received.
            RealModeError: in real mode.
        """
        __tracebackhide__ = True
        log = self._log("last_request")
        if not log:
            raise AssertionError("mockoss received no request")
        return log[-1]

    def assert_request_count(self, count: int) -> None:
        """Check that exactly ``count`` requests were received.

        Raises:
            AssertionError: another number; the message lists every request and what answered it.
            RealModeError: in real mode.
        """
        __tracebackhide__ = True
        log = self._log("assert_request_count")
        if len(log) != count:
            raise AssertionError(f"mockoss expected {plural(count, 'request')}, received {self.describe(log)}")

    def assert_all_steps_used(self) -> None:
        """Check that every step of the scenarios given to the marker or to :meth:`use` answered
        as many requests as its ``times``.

        Raises:
            AssertionError: one line per unused step, then a hint.
            RealModeError: in real mode.
        """
        __tracebackhide__ = True
        lines = unused_steps(self._scenarios.values(), self._log("assert_all_steps_used"))
        if lines:
            raise AssertionError(
                "\n".join(
                    [
                        f"mockoss: {plural(len(lines), 'scripted step')} never used:",
                        *lines,
                        f"If this is on purpose, drop assert_all_steps_used=True; see {STEPS_DOC}.",
                    ]
                )
            )

    def assert_all_requests_were_expected(self) -> None:
        """Check that the scenario answered every request: none went unmatched by every rule (or
        hit a template error), none was answered by a used-up ``when_exhausted: error`` rule.

        Raises:
            AssertionError: one entry per such request with each rule's reasons, then a hint.
            RealModeError: in real mode.
        """
        __tracebackhide__ = True
        lines = unexpected_requests(self._log("assert_all_requests_were_expected"), self._cassette_scenario())
        if lines:
            count = sum(1 for line in lines if line.startswith("- "))
            raise AssertionError(
                "\n".join(
                    [
                        f"mockoss: {plural(count, 'request')} the scenario did not answer:",
                        *lines,
                        (
                            "If this is on purpose, pass assert_all_requests_were_expected=False "
                            f"(marker or mockoss_config); see {REQUESTS_DOC}."
                        ),
                    ]
                )
            )

    def assert_tool_calls_match_declared_tools(self) -> None:
        """Check that no scripted tool call named an undeclared tool or broke its parameters schema.

        Raises:
            AssertionError: one line per tool-check warning, then a hint.
            RealModeError: in real mode.
        """
        __tracebackhide__ = True
        lines = tool_warnings(self._log("assert_tool_calls_match_declared_tools"))
        if lines:
            raise AssertionError(
                "\n".join(
                    [
                        f"mockoss: {plural(len(lines), 'tool-check warning')}:",
                        *lines,
                        (
                            "If this is on purpose, mark the step tool_mismatch_intended: true "
                            f"(.with_tool_mismatch_intended()); see {TOOLS_DOC}."
                        ),
                    ]
                )
            )

    def check_teardown(self, options: MockossOptions) -> None:
        """The teardown checks ``options`` ask for, in order: requests, steps, tool calls."""
        __tracebackhide__ = True
        if self.server is None or self._test_failed:
            return
        if options.assert_all_requests_were_expected is not False:
            self.assert_all_requests_were_expected()
        if options.assert_all_steps_used:
            self.assert_all_steps_used()
        if options.assert_tool_calls_match_declared_tools:
            self.assert_tool_calls_match_declared_tools()

    def describe(self, requests: Sequence[RecordedRequest] | None = None) -> str:
        """The request log as the failure report's ``mockoss`` section shows it."""
        if self.server is None:
            applied = ", ".join(f"{name}({value!r})" for name, value in self.unapplied) or "none"
            return f"real mode: requests to {self.base_url} are not recorded; not applied: {applied}"
        log = list(self.server.requests) if requests is None else requests
        return describe_requests(log, self.profile or self.server.profile, self.server.seed, self._cassette_scenario())
