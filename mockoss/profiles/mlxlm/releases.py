"""mlx-lm's gpt-oss timeline: the releases the ``mlx-lm`` profile covers.

One release so far: 0.32.2, the wheel the profile is read from. mlx-lm has never had Harmony
handling (its git history has no gpt-oss parser; ``tool_parsers/`` and the reasoning markers never
matched gpt-oss), so no switch of the profile is known to change across releases; earlier releases
are left off until a change is found by diffing their wheels.
"""

from __future__ import annotations

from mockoss.profiles.timeline import Release, Timeline

__all__ = ["MLXLM_TIMELINE"]

MLXLM_TIMELINE = Timeline(
    server="mlx-lm",
    releases=(Release("0.32.2", "", "the release the profile is read from (PyPI wheel)"),),
    changes=(),
)
