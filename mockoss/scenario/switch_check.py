"""A scenario file's ``switches:`` checked against the profiles (split out of
:mod:`mockoss.scenario.loader`, imported only for a scenario that has switches): at load, every
switch must belong to a profile and its value must suit one (:func:`check_switches`); when the
scenario is selected, against the profile served (:func:`switch_problem`). Both errors name the
file, the line and the field (issue 9, eleventh-session breaker, finding 6).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import yaml

from mockoss.scenario.compiled import Scenario, ScenarioError
from mockoss.scenario.locate import key_line
from mockoss.scenario.locate import node_line as _node_line

__all__ = ["check_switches", "switch_problem"]


def check_switches(origin: str, root: yaml.Node | None, switches: Mapping[str, Any]) -> None:
    """Every switch must belong to at least one profile, and its value must suit at least one
    profile that has it: a value no profile takes (``harmony_errors: maybe``) is this file's error,
    with its line, for ``mockoss validate`` as for ``serve`` (breaker finding 6, eleventh session:
    validate said ok, and serve's refusal was the one scenario error without a line). Whether the
    value suits the profile actually served (with the server's own switches) is still checked
    when the scenario is selected (:meth:`mockoss.server.core.MockServer.use_scenario`)."""
    if not switches:  # most scenarios: no need to import every profile (issue 9, start-up)
        return
    from mockoss.profiles.registry import PROFILES, switch_names
    from mockoss.suggest import did_you_mean  # difflib: imported by error paths only (issue 9, start-up)

    profiles = {profile.name: profile for profile in PROFILES.values()}
    known = {name for profile in profiles.values() for name in switch_names(profile)}
    lines = _SWITCH_LINES[origin] = {"": key_line(root, "switches")}
    if len(_SWITCH_LINES) > _SWITCH_LINES_KEPT:
        del _SWITCH_LINES[next(iter(_SWITCH_LINES))]
    for switch, value in switches.items():
        line = lines[switch] = _node_line(root, ["switches", switch])
        where = f"{origin}:{line}" if line else origin
        if switch not in known:
            raise ScenarioError(
                f"{where}: switches.{switch}: no profile has this switch; "
                + did_you_mean(switch, sorted(known), "`mockoss profiles`")
            )
        problems = []
        for profile in profiles.values():
            if switch in switch_names(profile):
                try:
                    dataclasses.replace(profile, **{switch: value})  # type: ignore[type-var]
                except (TypeError, ValueError) as exc:
                    problems.append(f"profile {profile.name!r}: {exc}")
                else:
                    break
        else:
            raise ScenarioError(f"{where}: switches.{switch}: no profile takes this value ({problems[0]})")


#: The lines of ``switches:`` and of each switch, by scenario origin, for :func:`switch_problem`
#: (a compiled :class:`Scenario` keeps no YAML tree); the oldest go first past this many files.
_SWITCH_LINES: dict[str, dict[str, int | None]] = {}
_SWITCH_LINES_KEPT = 1024


def switch_problem(scenario: Scenario, profile: str, switches: Mapping[str, Any]) -> str | None:
    """Why ``scenario``'s ``switches:`` do not suit ``profile`` on a server with ``switches``
    (``FILE:LINE: switches.NAME: problem``, like every other scenario error; breaker finding 6,
    eleventh session: this one had no line), or ``None`` when they do. Used when a scenario is
    selected (:meth:`mockoss.server.core.MockServer.use_scenario`) and by ``mockoss validate
    --profile``. Resolves ``profile`` with ``warn=False``: a release's
    :class:`~mockoss.profiles.releases.ReleaseWarning` is the caller's, given once where the release
    was named (``MockServer(profile=…)``, ``serve --profile``), not again per scenario loaded."""
    from mockoss.profiles.registry import ProfileError, get_profile

    try:
        get_profile(profile, {**switches, **scenario.switches}, warn=False)  # warned where the release was named
        return None
    except ProfileError as exc:
        problem = str(exc)
    lines = _SWITCH_LINES.get(scenario.origin, {})
    field = ""
    for switch, value in scenario.switches.items():  # which one: the first refused on its own
        try:
            get_profile(profile, {**switches, switch: value}, warn=False)
        except ProfileError as exc:
            field, problem = switch, str(exc)
            break
    line = lines.get(field)
    where = f"{scenario.origin}:{line}" if line else scenario.origin
    return f"{where}: switches{'.' + field if field else ''}: {problem}"
