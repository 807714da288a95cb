"""Every server's timeline by profile name, and profiles built for a release (``vllm@0.26.0``).

The timelines themselves are data in each server's package (``mockoss/profiles/<server>/releases.py``);
see :mod:`mockoss.profiles.timeline` for the model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mockoss.profiles.lazy import LazyMapping

if TYPE_CHECKING:
    from mockoss.profiles.timeline import Timeline

__all__ = ["TIMELINES", "at_release", "split_release"]

#: Profile name → its server's timeline (read-only): one line per server, ``"name":
#: "module:TIMELINE"``, imported on first lookup (:class:`mockoss.profiles.lazy.LazyMapping`): a
#: server's timeline module imports its profile package, and a served mockoss needs only its own.
TIMELINES: Mapping[str, Timeline] = LazyMapping({
    "vllm": "mockoss.profiles.vllm.releases:VLLM_TIMELINE",
    "ollama": "mockoss.profiles.ollama.releases:OLLAMA_TIMELINE",
    "llamacpp": "mockoss.profiles.llamacpp.releases:LLAMACPP_TIMELINE",
    "lmstudio": "mockoss.profiles.lmstudio.releases:LMSTUDIO_TIMELINE",
    "gptoss-reference": "mockoss.profiles.gptoss_ref.releases:GPTOSS_REFERENCE_TIMELINE",
    "sglang": "mockoss.profiles.sglang.releases:SGLANG_TIMELINE",
    "mlx-lm": "mockoss.profiles.mlxlm.releases:MLXLM_TIMELINE",
    "trtllm": "mockoss.profiles.trtllm.releases:TRTLLM_TIMELINE",
    "vllm-mlx": "mockoss.profiles.vllm_mlx.releases:VLLM_MLX_TIMELINE",
})  # fmt: skip

P = TypeVar("P")


def split_release(name: str) -> tuple[str, str | None]:
    """``"vllm@0.26.0"`` → ``("vllm", "0.26.0")``; ``"vllm"`` → ``("vllm", None)``."""
    server, sep, release = name.partition("@")
    return (server, release) if sep else (name, None)


def at_release(profile: P, release: str, *, name: str | None = None, extra: Mapping[str, Any] | None = None) -> P:
    """``profile`` (the newest release of its server) with the switch values of ``release``.

    Args:
        profile: a registered profile dataclass (its ``name`` is the timeline's server).
        release: a version on that server's timeline.
        name: the name of the result (default ``"<server>@<release>"``).
        extra: switches set on top (the user's).

    Raises:
        TimelineError: no timeline for the profile, or a release it does not cover.
        TypeError, ValueError: a switch value the profile refuses.
    """
    server = profile.name  # type: ignore[attr-defined]
    timeline = TIMELINES.get(server)
    if timeline is None:
        from mockoss.profiles.timeline import TimelineError  # (the module of timelines: not loaded by a plain serve)

        raise TimelineError(f"profile {server!r} has no timeline; timelines: {', '.join(TIMELINES)}")
    values = {**timeline.switches_at(release), **(extra or {})}
    return dataclasses.replace(profile, name=name or f"{server}@{release}", **values)  # type: ignore[type-var]
