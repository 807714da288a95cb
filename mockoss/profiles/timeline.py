"""Server timelines: a server's gpt-oss behaviours as dated changes of its profile's switches.

A :class:`Change` is one behaviour a server changed at one release (a fix, a new field, a
regression), with the public source that shows it, the behaviour before and after, and the switch
of the profile that reproduces it with its value before and after. A release is then the set of
switch values in force at it: :meth:`Timeline.switches_at` takes, for every switch, the ``after``
of the newest change at or before the release, else the ``before`` of its oldest change. The
newest release is the profile's defaults (a test checks that each timeline ends on them).

``get_profile("vllm@0.26.0")`` (:mod:`mockoss.profiles.registry`) resolves a release through the
timeline of its server, and ``mockoss profiles --timeline vllm`` prints the changes with their
sources. No HTTP and no profile code here: timelines are data.

Release names are compared as versions: the runs of digits in the name, left to right
(``0.10.1`` < ``0.10.2`` < ``0.11.0``; llama.cpp's ``b6000`` < ``b7100``); a local or
pre-release suffix (``+gptoss``, ``-rc2``) sorts just before the release it names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

__all__ = ["Change", "Release", "Timeline", "TimelineError", "release_key"]

_DIGITS = re.compile(r"\d+")


class TimelineError(ValueError):
    """An unknown or malformed release, or a timeline whose changes contradict each other."""


#: What a release name looks like: digits and dots, then at most one ``+``/``-`` suffix (after the
#: letters a server puts before its numbers, if any: llama.cpp's ``b9000``).
_PREFIX = re.compile(r"[A-Za-z]*")
_RELEASE = re.compile(r"[0-9]+(?:\.[0-9]+)*(?:[+-][0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?")


def release_key(release: str) -> tuple[int, ...]:
    """The sort key of a release name: its runs of digits as integers up to any ``+`` or ``-``
    suffix, then ``-1`` for a suffixed build (it precedes the release it names) or ``0``:
    ``"0.33.0-rc2"`` → ``(0, 33, 0, -1)`` < ``"0.33.0"`` → ``(0, 33, 0, 0)``; the gpt-oss launch
    build ``0.10.1+gptoss`` came out before ``0.10.1``.

    Raises:
        TimelineError: the name has no digits.
    """
    base, *suffix = re.split(r"[+-]", release, maxsplit=1)
    digits = tuple(int(d) for d in _DIGITS.findall(base))
    if not digits:
        raise TimelineError(f"release {release!r} is not a version (it has no digits)")
    return digits + ((-1,) if suffix else (0,))


@dataclass(frozen=True, slots=True)
class Release:
    """A published release of a server.

    Attributes:
        name: the version as the server names it (``"0.10.1"``, ``"b6115"``, ``"0.11.4"``).
        date: ISO date of the release (``"2025-08-18"``), or ``""`` when not checked.
        note: what the release is known for here, e.g. ``"gpt-oss launch build"``.
    """

    name: str
    date: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class Change:
    """One behaviour a server changed, as a profile switch.

    Attributes:
        release: the first release with the ``after`` behaviour.
        date: ISO date of the source (merge date of a PR, date of a report), or ``""``.
        switch: the profile switch that reproduces the behaviour.
        before, after: the switch's value before and from ``release`` on.
        summary: the behaviour, one line.
        behaviour_before, behaviour_after: what a client saw before and after.
        sources: public sources: ``owner/repo#N`` (issue or PR), ``owner/repo@commit:path``.
        verified: whether the release boundary and both behaviours were checked against the
            server's own code or output (a golden, a release's source); ``False`` when a report or
            a PR description is all there is, or the release the change shipped in is inferred.
        note: how it was checked, or what is uncertain.
    """

    release: str
    switch: str
    before: Any
    after: Any
    summary: str
    behaviour_before: str
    behaviour_after: str
    sources: tuple[str, ...]
    verified: bool
    date: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class Timeline:
    """A server's releases and the changes between them.

    Attributes:
        server: registry name of the server's profile (``"vllm"``).
        releases: known releases, any order (sorted by :func:`release_key` on use).
        changes: the changes, any order.
        aliases: older profile names that are views of a release (``{"vllm-0.10.1": "0.10.1"}``).
        version_switch: a switch that holds the server's version string (Ollama's ``version``,
            reported by ``/api/version``): set to the release's name at each release.
        renamed: releases whose name meant another release in an earlier mockoss, each with the
            release it meant (``{"b9000": "b10864"}``: llama.cpp's followed build was called
            ``b9000`` until 2026-12). Naming one still resolves, as the release the name now
            stands for, with a :class:`~mockoss.profiles.releases.ReleaseWarning` that says
            which release to pin for the behaviour it had.
    """

    server: str
    releases: tuple[Release, ...]
    changes: tuple[Change, ...]
    aliases: Mapping[str, str] = field(default_factory=dict)
    version_switch: str | None = None
    renamed: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        by_switch: dict[str, list[Change]] = {}
        for change in self.changes:
            release_key(change.release)
            by_switch.setdefault(change.switch, []).append(change)
        for switch, changes in by_switch.items():
            ordered = sorted(changes, key=lambda c: release_key(c.release))
            for older, newer in pairwise(ordered):
                if older.after != newer.before:
                    raise TimelineError(
                        f"{self.server} timeline: switch {switch!r} is {older.after!r} after {older.release} "
                        f"but {newer.release} changes it from {newer.before!r}"
                    )

    @property
    def ordered_releases(self) -> list[Release]:
        """Known releases, oldest first."""
        return sorted(self.releases, key=lambda r: release_key(r.name))

    @property
    def newest(self) -> str:
        """The newest known release."""
        return self.ordered_releases[-1].name

    def ordered_changes(self) -> list[Change]:
        """Changes, oldest release first (ties keep their order in :attr:`changes`)."""
        return sorted(self.changes, key=lambda c: release_key(c.release))

    def check_release(self, release: str) -> str:
        """Return ``release`` if a profile can be built for it.

        Any version from the oldest known release on resolves (an unlisted one takes the changes
        up to it), so ``vllm@0.26.1`` works when only ``0.26.0`` is listed.

        Raises:
            TimelineError: not a version (digits and dots, then at most one ``+`` or ``-`` suffix:
                ``0.33.0``, ``0.33.0-rc2``, ``0.10.1+gptoss``, ``2025.09.19``; after the letters the
                timeline's release names start with, if any: ``b9000``), or older than the
                timeline's first release.
        """
        prefix = _PREFIX.match(self.ordered_releases[0].name).group()  # type: ignore[union-attr]  # llama.cpp's "b"
        if not (release.startswith(prefix) and _RELEASE.fullmatch(release, len(prefix))):
            bare = release[1:]
            hint = f" (did you mean {self.server}@{prefix + bare}?)" if release[:1] in "vV" and _RELEASE.fullmatch(bare) else ""
            raise TimelineError(
                f"{self.server}@{release}: {release!r} is not a release name{hint}; "
                f"releases: {', '.join(r.name for r in self.ordered_releases)}"
            )
        key = release_key(release)
        oldest = self.ordered_releases[0]
        if key < release_key(oldest.name):
            raise TimelineError(
                f"{self.server}@{release}: the {self.server} timeline starts at {oldest.name}; "
                f"releases: {', '.join(r.name for r in self.ordered_releases)}"
            )
        return release

    def switches_at(self, release: str) -> dict[str, Any]:
        """The value of every switch the timeline covers at ``release``.

        Raises:
            TimelineError: see :meth:`check_release`.
        """
        key = release_key(self.check_release(release))
        values: dict[str, Any] = {}
        for change in self.ordered_changes():
            if release_key(change.release) <= key:
                values[change.switch] = change.after
            else:
                values.setdefault(change.switch, change.before)
        if self.version_switch is not None:
            values[self.version_switch] = release
        return values

    def version_conflict(self, release: str, version: Any) -> str | None:
        """Why :attr:`version_switch` set to ``version`` contradicts ``release`` (a profile named
        for that release, ``vllm@0.26.0``), else ``None``.

        The switch is the version string the server reports (``GET /version``, Ollama's
        ``/api/version``), and a release sets it to its own name (:meth:`switches_at`). Set on the
        bare profile it is free (any string: a local build's ``0.33.0+cu128``, a string a
        client's version parsing must survive) and changes no behaviour. Beside a release it
        may only name a version that resolves to the same behaviour on this timeline (``0.26.1``
        beside ``0.26.0`` when nothing changed between them): ``vllm@0.26.0`` with
        ``version=0.10.1`` reported 0.10.1 while answering as 0.26.0, so a client gating on the
        version took the wrong path (t18 breaker #6). A value that is not a string is left to
        the profile's own check. The message says what to use instead."""
        switch = self.version_switch
        if switch is None or not isinstance(version, str) or version == release:
            return None

        def behaviour(name: str) -> dict[str, Any]:
            values = self.switches_at(name)
            del values[switch]
            return values

        try:
            if behaviour(version) == behaviour(release):
                return None
            why = "a release with other behaviour"
            instead = f"{self.server}@{version} for that release's behaviour, or "
        except TimelineError:
            why, instead = f"not a release of the {self.server} timeline", ""
        return (
            f"switch {switch}={version!r} contradicts the release {release}: the server would report "
            f"{version} ({why}) while answering as {release}; leave the switch out (the release sets it), "
            f"or use {instead}the profile {self.server!r} with {switch}={version} (its newest behaviour)"
        )

    def changes_between(self, older: str, newer: str) -> list[Change]:
        """Changes that ship after ``older`` and at or before ``newer`` (what an upgrade brings)."""
        low, high = release_key(older), release_key(newer)
        return [c for c in self.ordered_changes() if low < release_key(c.release) <= high]


def format_timeline(timeline: Timeline, *, switches: Sequence[str] | None = None) -> str:
    """The changes of ``timeline`` as text, oldest first: one block per change with its release,
    date, switch (``before → after``), behaviours, sources and whether it is verified."""
    lines = [f"{timeline.server} timeline: {len(timeline.changes)} changes, releases "
             + ", ".join(r.name for r in timeline.ordered_releases)]
    if timeline.aliases:
        lines.append("aliases: " + ", ".join(f"{a} = {timeline.server}@{r}" for a, r in timeline.aliases.items()))
    if timeline.renamed:
        lines.append(
            "renamed: "
            + ", ".join(f"{old} (meant {timeline.server}@{new} in earlier mockoss)" for old, new in timeline.renamed.items())
        )
    for change in timeline.ordered_changes():
        if switches and change.switch not in switches:
            continue
        status = "verified" if change.verified else "UNVERIFIED"
        when = f"{change.release}" + (f" ({change.date})" if change.date else "")
        lines.append("")
        lines.append(f"{when}  {change.switch}: {change.before!r} -> {change.after!r}  [{status}]")
        lines.append(f"  {change.summary}")
        lines.append(f"  before: {change.behaviour_before}")
        lines.append(f"  after:  {change.behaviour_after}")
        lines.append(f"  sources: {', '.join(change.sources)}")
        if change.note:
            lines.append(f"  note: {change.note}")
    return "\n".join(lines)
