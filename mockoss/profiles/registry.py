"""Name-keyed registry of server profiles."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from mockoss.profiles.lazy import LazyMapping
from mockoss.profiles.releases import TIMELINES, at_release, split_release

if TYPE_CHECKING:
    from mockoss.profiles.base import Profile

__all__ = ["PROFILES", "ProfileError", "get_profile", "unknown_profile_message"]

#: Read-only view of the shipped profiles by name: one line per profile, ``"name":
#: "module:Class"`` (the class is instantiated with no arguments) or ``"module:TABLE"`` (a mapping
#: holding that name). A profile's module is imported when it is first looked up, so a served
#: mockoss imports only the profile it serves (issue 9: start-up time and memory); listing the
#: names imports nothing (:class:`mockoss.profiles.lazy.LazyMapping`).
PROFILES: Mapping[str, Profile] = LazyMapping({
    "vllm": "mockoss.profiles.vllm:VllmProfile",
    "vllm-0.10.1": "mockoss.profiles.vllm.variants:VLLM_VARIANTS",  # the vLLM timeline's aliases
    "vllm-2025": "mockoss.profiles.vllm.variants:VLLM_VARIANTS",
    "llamacpp": "mockoss.profiles.llamacpp:LlamacppProfile",
    "lmstudio": "mockoss.profiles.lmstudio:LmstudioProfile",
    "ollama": "mockoss.profiles.ollama:OllamaProfile",
    "openai": "mockoss.profiles.openai:OpenAIProfile",
    "gptoss-reference": "mockoss.profiles.gptoss_ref:GptossReferenceProfile",
    "sglang": "mockoss.profiles.sglang:SglangProfile",
    "mlx-lm": "mockoss.profiles.mlxlm:MlxLmProfile",
    "trtllm": "mockoss.profiles.trtllm:TrtllmProfile",
    "vllm-mlx": "mockoss.profiles.vllm_mlx:VllmMlxProfile",
})  # fmt: skip


class ProfileError(ValueError):
    """Unknown profile name, or a switch the profile does not have (the message lists the valid ones)."""


#: Dataclass fields of a profile that describe it rather than switch a behaviour.
_IDENTITY_FIELDS = frozenset({"name", "endpoints"})


def switch_names(profile: Profile) -> list[str]:
    """The switches a profile accepts (its dataclass fields, less ``name`` and ``endpoints``)."""
    return [f.name for f in dataclasses.fields(profile) if f.name not in _IDENTITY_FIELDS]  # type: ignore[arg-type]


#: Unknown switch names that get a "did you mean" hint (see :func:`get_profile`).
_HINTED = 8


def unknown_profile_message(name: str) -> str:
    """The message for a ``name`` (``"olama"``, ``"olama@0.11.3"``) whose profile is not registered:
    ``unknown profile 'olama' (did you mean 'ollama'?); profiles: vllm, ... (a release: vllm@0.26.0)``.
    One wording for :func:`get_profile`, ``mockoss serve --profile`` and the pytest marker."""
    import difflib  # error paths only: a plain serve never loads it (issue 9, start-up)

    near = difflib.get_close_matches(split_release(name)[0], list(PROFILES), 1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"unknown profile {name!r}{hint}; profiles: {', '.join(PROFILES)} (a release: vllm@0.26.0)"


#: Whether :func:`get_profile` keeps its release warning to itself in this context: true while a
#: server builds a copy of itself (:meth:`mockoss.server.control.ControlPlane._copy`), whose
#: profile name warned when the server was built (a review: three test-id sessions raised it three
#: more times). A context variable, so that other threads and tasks still warn.
QUIET_RELEASES: ContextVar[bool] = ContextVar("mockoss_quiet_releases", default=False)


def get_profile(name: str, switches: Mapping[str, Any] | None = None, *, warn: bool = True) -> Profile:
    """Return the profile ``name`` with ``switches`` applied.

    ``name`` is a registered profile (``"vllm"``, the newest release) or a release of one,
    ``"<profile>@<release>"`` (``"vllm@0.26.0"``): the switch values of that release on the
    server's timeline (:mod:`mockoss.profiles.releases`), with ``switches`` on top. A version
    between two listed releases gets the behaviour of the listed one before it; one newer than the
    newest listed, or numbered unlike the server's releases, resolves with a warning
    (:func:`mockoss.profiles.releases.at_release`).

    ``warn=False`` skips that warning: for a name already resolved once (a server resolving its
    own profile again for a request's switches); so does a call while :data:`QUIET_RELEASES` is
    true in the caller's context (a test-id session's copy of a server, built with its profile).

    Warns:
        ReleaseWarning: see :func:`mockoss.profiles.releases.release_problem`.

    Raises:
        ProfileError: unknown name or switch; the message lists what is valid.
    """
    server, release = split_release(name)
    try:
        profile = PROFILES[server]
    except KeyError:
        raise ProfileError(unknown_profile_message(name)) from None
    if release is not None:
        return _at_release(profile, name, release, switches or {}, warn and not QUIET_RELEASES.get())
    if not switches:
        return profile
    if "version" in switches and (problem := _alias_version_conflict(name, switches)) is not None:
        raise ProfileError(f"profile {name!r}: {problem}")
    unknown = sorted(set(switches) - set(switch_names(profile)))
    if unknown:
        import difflib

        raise ProfileError(
            f"profile {name!r} has no switch {', '.join(map(repr, unknown))}"
            # Hints for the first few unknown names only: each costs ~140 us (difflib), and a
            # header of a thousand made-up names must not cost a thousand (issue 9, D16).
            + "".join(f" (did you mean {m!r}?)" for u in unknown[:_HINTED] for m in difflib.get_close_matches(u, switch_names(profile), 1))
            + "; "
            + (f"switches: {', '.join(switch_names(profile))}" if switch_names(profile) else "it has no switches")
        )
    try:
        return dataclasses.replace(profile, **switches)  # type: ignore[type-var]
    except (TypeError, ValueError) as exc:
        raise ProfileError(f"profile {name!r}: {exc}") from None


def _alias_version_conflict(name: str, switches: Mapping[str, Any]) -> str | None:
    """:meth:`~mockoss.profiles.timeline.Timeline.version_conflict` for a profile name that is a
    release's alias (``vllm-0.10.1``, ``vllm-2025``: :attr:`~mockoss.profiles.timeline.Timeline.aliases`
    of the timeline named by its first word), else ``None``."""
    if "-" not in name:
        return None  # a bare profile: its version switch is free (and its timeline not loaded)
    timeline = TIMELINES.get(name.split("-", 1)[0])
    release = None if timeline is None else timeline.aliases.get(name)
    if release is None or timeline.version_switch not in switches:  # type: ignore[union-attr]
        return None
    return timeline.version_conflict(release, switches[timeline.version_switch])  # type: ignore[union-attr]


def _at_release(profile: Profile, name: str, release: str, switches: Mapping[str, Any], warn: bool) -> Profile:
    # Here, not at the top: a serve without a release never loads the timeline model (issue 9, start-up).
    from mockoss.profiles.timeline import TimelineError

    unknown = sorted(set(switches) - set(switch_names(profile)))
    if unknown:
        raise ProfileError(f"profile {name!r} has no switch {', '.join(map(repr, unknown))}; switches: {', '.join(switch_names(profile))}")
    try:
        resolved = at_release(profile, release, name=name, extra=switches, warn=warn)
    except TimelineError as exc:
        raise ProfileError(str(exc)) from None
    except (TypeError, ValueError) as exc:
        raise ProfileError(f"profile {name!r}: {exc}") from None
    timeline = TIMELINES.get(split_release(name)[0])  # loaded by at_release: the release is on it
    switch = None if timeline is None else timeline.version_switch
    if switch is not None and switch in switches and (problem := timeline.version_conflict(release, switches[switch])):  # type: ignore[union-attr]
        raise ProfileError(f"profile {name!r}: {problem}")
    return resolved
