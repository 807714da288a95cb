"""Every server's timeline by profile name, and profiles built for a release (``vllm@0.26.0``).

The timelines themselves are data in each server's package (``mockoss/profiles/<server>/releases.py``);
see :mod:`mockoss.profiles.timeline` for the model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from mockoss.profiles.gptoss_ref.releases import GPTOSS_REFERENCE_TIMELINE
from mockoss.profiles.llamacpp.releases import LLAMACPP_TIMELINE
from mockoss.profiles.lmstudio.releases import LMSTUDIO_TIMELINE
from mockoss.profiles.mlxlm.releases import MLXLM_TIMELINE
from mockoss.profiles.ollama.releases import OLLAMA_TIMELINE
from mockoss.profiles.sglang.releases import SGLANG_TIMELINE
from mockoss.profiles.timeline import Timeline, TimelineError
from mockoss.profiles.trtllm.releases import TRTLLM_TIMELINE
from mockoss.profiles.vllm.releases import VLLM_TIMELINE
from mockoss.profiles.vllm_mlx.releases import VLLM_MLX_TIMELINE

__all__ = ["TIMELINES", "at_release", "split_release"]

#: Profile name → its server's timeline (read-only).
TIMELINES: Mapping[str, Timeline] = MappingProxyType(
    {t.server: t for t in (VLLM_TIMELINE, OLLAMA_TIMELINE, LLAMACPP_TIMELINE, LMSTUDIO_TIMELINE, GPTOSS_REFERENCE_TIMELINE, SGLANG_TIMELINE, MLXLM_TIMELINE, TRTLLM_TIMELINE, VLLM_MLX_TIMELINE)}
)

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
        raise TimelineError(f"profile {server!r} has no timeline; timelines: {', '.join(TIMELINES)}")
    values = {**timeline.switches_at(release), **(extra or {})}
    return dataclasses.replace(profile, name=name or f"{server}@{release}", **values)  # type: ignore[type-var]
