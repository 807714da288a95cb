"""Options of the ``mockoss`` marker and fixtures, and the one precedence rule that merges them.

Every setting is resolved the same way, first set wins::

    marker (function > class > module)  >  --mockoss-* option  >  mockoss_config fixture  >  default

``profile`` and ``profiles`` count as one setting: the closest marker naming either decides.
Nothing here imports mockoss's server stack, so loading the plugin stays cheap.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "DEFAULTS",
    "MockossOptions",
    "RealTarget",
    "cli_options",
    "closest",
    "marker_layers",
    "real_target",
    "resolve",
]

#: Model name a real server is asked for unless ``--mockoss-real-model`` / ``MOCKOSS_REAL_MODEL`` says otherwise.
DEFAULT_REAL_MODEL = "openai/gpt-oss-20b"


@dataclass(frozen=True, kw_only=True)
class MockossOptions:
    """The keyword options of ``@pytest.mark.mockoss(...)`` and of the ``mockoss_config`` fixture.

    ``None`` means "not set here" (a farther layer or the default decides).

    Attributes:
        scenario: a shipped scenario name, a YAML path, a scenario mapping or a list of steps
            (as ``mockoss.use`` takes); default none (every request is a 400 until ``use``).
        profile: the profile to serve as, e.g. ``"ollama"``; default ``"vllm"``.
        profiles: run the test once per profile (marker only: pytest parametrises at collection;
            the test id ends in ``[vllm]``, ``[ollama]`` …).
        seed: seeds every id and template; default ``0``.
        switches: profile switches, e.g. ``{"harmony_error_status": 400}``; default none.
        transport: default timing and faults, e.g. ``{"ttft_ms": 300, "tokens_per_s": 50}``.
        assert_all_steps_used: fail at teardown, one line per step no request consumed (steps
            marked ``optional`` excepted), when the test itself passed; default ``False``.
        assert_all_requests_were_expected: fail at teardown, when the test itself passed, on each
            request no rule answered or a used-up ``when_exhausted: error`` rule answered (with
            each rule's reasons); default ``True`` (pytest-httpx's name and default).
        assert_tool_calls_match_declared_tools: fail at teardown on tool-check warnings (a scripted
            call of an undeclared tool, or arguments off its schema); default ``False`` (warnings
            only, in the request log and the failure report).
        auto_session: keep a separate rule cursor per conversation without a header, keyed by its
            system text and first user message; default ``False``.
        cassette: ``True``, a name or a ``.yaml`` path: record this test's exchanges with the
            ``--mockoss-real`` server once and replay them offline (:mod:`mockoss.pytest_plugin._cassette`,
            ``--mockoss-record-mode``); ``False``: no cassette, also when a farther marker (class,
            module) sets one (resolved to ``None``; the sixteenth-session breaker, finding 9, got a
            ``TypeError`` for it); default none.
        scripted_only: skip the test under ``--mockoss-real`` (same as ``@pytest.mark.mockoss_scripted``).
        max_body_bytes: the largest request body the fake server takes (bytes, at least 1); a larger
            one gets 413 in the profile's error shape, as ``serve --max-body-bytes`` and
            ``MockServer(max_body_bytes=…)``; default 32 MiB (issue 9 item 3 asks for it on the
            fixture too: eleventh-session breaker, finding 9).
        body_budget_bytes: the bytes all request bodies still arriving may hold together (bytes, at
            least 1); a body whose next part would pass it gets 503 in the profile's error shape, as
            ``serve --body-budget-bytes`` and ``MockServer(body_budget_bytes=…)``
            (:mod:`mockoss.server.limits`); default 4 x ``max_body_bytes``.
        served_model_names: the model names the fake server answers to and ``/v1/models`` lists,
            the first one ``mockoss.model`` (as ``serve --served-model-name`` and
            ``MockServer(served_model_names=…)``); others get the profile's "model not found". For a
            client that names the model its own way: LiteLLM sends ``gpt-oss-20b`` for
            ``openai/gpt-oss-20b`` (it reads ``openai/`` as its provider); default the profile's
            model name. A replayed cassette answers to the names it was recorded with instead.

    Raises:
        TypeError: an unknown option (the message names the valid ones) or a value of the wrong type.
    """

    scenario: str | Path | Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None
    profile: str | None = None
    profiles: Sequence[str] | None = None
    seed: int | str | None = None
    switches: Mapping[str, Any] | None = None
    transport: Mapping[str, Any] | None = None
    assert_all_steps_used: bool | None = None
    assert_all_requests_were_expected: bool | None = None
    assert_tool_calls_match_declared_tools: bool | None = None
    auto_session: bool | None = None
    cassette: str | bool | None = None
    scripted_only: bool | None = None
    max_body_bytes: int | None = None
    body_budget_bytes: int | None = None
    served_model_names: Sequence[str] | None = None

    def __post_init__(self) -> None:
        _check(self.profile is None or isinstance(self.profile, str), "profile", "a profile name, e.g. 'ollama'")
        profiles_ok = (
            isinstance(self.profiles, (list, tuple))
            and len(self.profiles) > 0
            and all(isinstance(p, str) for p in self.profiles)
        )
        _check(
            self.profiles is None or profiles_ok,
            "profiles",
            "a non-empty list of profile names, e.g. ['vllm', 'ollama']",
        )
        seed_ok = isinstance(self.seed, (int, str)) and not isinstance(self.seed, bool)
        _check(self.seed is None or seed_ok, "seed", "an int or a str")
        _check(self.switches is None or isinstance(self.switches, Mapping), "switches", "a dict of switch values")
        _check(self.transport is None or isinstance(self.transport, Mapping), "transport", "a dict of transport fields")
        cassette_ok = isinstance(self.cassette, bool) or (isinstance(self.cassette, str) and self.cassette != "")
        _check(self.cassette is None or cassette_ok, "cassette", "True, a name, a .yaml path or False (no cassette)")
        names_ok = (
            isinstance(self.served_model_names, (list, tuple))
            and len(self.served_model_names) > 0
            and all(isinstance(n, str) and n.strip() for n in self.served_model_names)
        )
        _check(
            self.served_model_names is None or names_ok,
            "served_model_names",
            "a non-empty list of model names, e.g. ['gpt-oss-20b']",
        )
        for name in ("max_body_bytes", "body_budget_bytes"):
            value = getattr(self, name)
            body_ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
            _check(value is None or body_ok, name, "a number of bytes, at least 1")
        for name in (
            "assert_all_steps_used",
            "assert_all_requests_were_expected",
            "assert_tool_calls_match_declared_tools",
            "auto_session",
            "scripted_only",
        ):
            _check(getattr(self, name) is None or isinstance(getattr(self, name), bool), name, "True or False")
        if self.profile is not None and self.profiles is not None:
            raise TypeError("mockoss: give profile= (one profile) or profiles= (one run per profile), not both")

    @classmethod
    def parse(cls, options: Mapping[str, Any], where: str, args: Sequence[Any] = ()) -> MockossOptions:
        """Build from keyword options, naming ``where`` (e.g. ``"@pytest.mark.mockoss"``) in errors.

        Raises:
            TypeError: positional arguments, an unknown option (with the closest valid name) or
                a wrong type.
        """
        if args:
            raise TypeError(f"{where} takes keyword options only ({', '.join(OPTION_NAMES)}); got {args!r}") from None
        unknown = [name for name in options if name not in OPTION_NAMES]
        if unknown:
            hints = [
                f"{name!r}"
                + "".join(f" (did you mean {m!r}?)" for m in difflib.get_close_matches(name, OPTION_NAMES, 1))
                for name in unknown
            ]
            raise TypeError(f"{where} has no option {', '.join(hints)}; options: {', '.join(OPTION_NAMES)}") from None
        try:
            return cls(**options)
        except TypeError as exc:
            raise TypeError(f"{where}: {exc}") from None

    def over(self, farther: MockossOptions) -> MockossOptions:
        """These options with ``farther``'s filling the ones not set here."""
        mine = self.set_fields()
        if "profile" in mine or "profiles" in mine:  # one setting: the nearer layer decides
            farther = dataclasses.replace(farther, profile=None, profiles=None)
        return dataclasses.replace(farther, **mine)

    def set_fields(self) -> dict[str, Any]:
        """The options set here, by name."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}


def _check(ok: bool, name: str, expected: str) -> None:
    if not ok:
        raise TypeError(f"{name}= takes {expected}")


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(MockossOptions))

#: What applies when no layer sets an option.
DEFAULTS = MockossOptions(
    profile="vllm",
    seed=0,
    switches={},
    assert_all_steps_used=False,
    assert_all_requests_were_expected=True,
    assert_tool_calls_match_declared_tools=False,
    auto_session=False,
    scripted_only=False,
)


def marker_layers(node: pytest.Item | pytest.Collector) -> list[MockossOptions]:
    """The ``mockoss`` markers on ``node`` and its parents, farthest (module) first.

    Raises:
        TypeError: a marker with an unknown option or a wrong type.
    """
    return [
        MockossOptions.parse(m.kwargs, "@pytest.mark.mockoss", m.args)
        for m in reversed(list(node.iter_markers("mockoss")))
    ]


def closest(node: pytest.Item | pytest.Collector, *names: str) -> tuple[str, Any] | None:
    """``(name, value)`` from the closest ``mockoss`` marker that sets one of ``names``, without
    validating anything (collection-time look-ups; the fixture validates at setup)."""
    for marker in node.iter_markers("mockoss"):
        for name in names:
            if name in marker.kwargs:
                return name, marker.kwargs[name]
    return None


def cli_options(config: pytest.Config) -> MockossOptions:
    """The ``--mockoss-profile`` and ``--mockoss-seed`` values as a layer."""
    seed = config.getoption("mockoss_seed")
    if isinstance(seed, str) and seed.lstrip("-").isdigit():
        seed = int(seed)
    return MockossOptions(profile=config.getoption("mockoss_profile"), seed=seed)


def resolve(
    node: pytest.Item | pytest.Collector, config: pytest.Config, config_fixture: Any, profile: str | None
) -> tuple[MockossOptions, MockossOptions]:
    """Merge every layer for ``node``: ``(explicit, resolved)``, where ``explicit`` holds only what
    a layer set and ``resolved`` has the defaults filled in. ``profile`` comes from ``profiles=``
    parametrisation and wins.

    Raises:
        TypeError: a bad marker or ``mockoss_config`` (not a dict, unknown option, wrong type).
    """
    if not isinstance(config_fixture, Mapping):
        raise TypeError(f"mockoss_config must return a dict of mockoss options; got {type(config_fixture).__name__}")
    layers: Iterable[MockossOptions] = [
        MockossOptions.parse(config_fixture, "mockoss_config"),
        cli_options(config),
        *marker_layers(node),
    ]
    explicit = MockossOptions()
    for layer in layers:
        explicit = layer.over(explicit)
    if profile is not None:
        explicit = dataclasses.replace(explicit, profile=profile, profiles=None)
    resolved = explicit.over(DEFAULTS)
    if resolved.cassette is False:  # turned off here, whatever a farther layer set
        resolved = dataclasses.replace(resolved, cassette=None)
    return explicit, resolved


@dataclass(frozen=True)
class RealTarget:
    """The real OpenAI-compatible server of real mode (``--mockoss-real``).

    Attributes:
        url: the server root as given, without a trailing ``/v1``.
        base_url: ``url + "/v1"``, for ``openai.OpenAI(base_url=…)``.
        api_key: ``$MOCKOSS_REAL_API_KEY``, else ``$OPENAI_API_KEY``, else ``"unused"``.
        model: ``--mockoss-real-model``, else ``$MOCKOSS_REAL_MODEL``, else ``"openai/gpt-oss-20b"``.
    """

    url: str
    base_url: str
    api_key: str
    model: str


def real_target(config: pytest.Config) -> RealTarget | None:
    """Real mode's target from ``--mockoss-real`` (else ``$MOCKOSS_REAL_URL``), or ``None``.

    The URL is normalised: trailing slashes dropped, ``/v1`` appended unless it ends in it.

    Raises:
        pytest.UsageError: the URL is not ``http://`` or ``https://``.
    """
    url = config.getoption("mockoss_real") or os.environ.get("MOCKOSS_REAL_URL") or ""
    if not url:
        return None
    if not url.startswith(("http://", "https://")):
        raise pytest.UsageError(
            f"--mockoss-real (or MOCKOSS_REAL_URL): expected an http(s) URL such as http://127.0.0.1:8000, got {url!r}"
        )
    root = url.rstrip("/")
    root = root.removesuffix("/v1")
    key = os.environ.get("MOCKOSS_REAL_API_KEY") or os.environ.get("OPENAI_API_KEY") or "unused"
    model = config.getoption("mockoss_real_model") or os.environ.get("MOCKOSS_REAL_MODEL") or DEFAULT_REAL_MODEL
    return RealTarget(url=root, base_url=f"{root}/v1", api_key=key, model=model)
