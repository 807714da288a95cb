"""mlx-lm's gpt-oss timeline: the releases the ``mlx-lm`` profile covers.

0.32.0, 0.32.1 and 0.32.2: ``tools/mlxlm_diff.py`` run against each release's wheel (``pip download
--no-deps mlx-lm==X``) gives 0 differences in 3,608 replies, so no switch changes among them. mlx-lm
has never had Harmony handling (no gpt-oss parser in its history; ``tool_parsers/`` and the
reasoning markers never match gpt-oss): the markup-in-``content`` behaviour public reports describe
(ml-explore/mlx-lm#875, at 0.30.6; the unmerged fix ml-explore/mlx-lm#1867) holds on every release.

Before 0.32.0 the wire differs in ways this profile does not emulate, so those releases are not on
the timeline (``mlx-lm@0.31.3`` is refused rather than answered wrongly). Read in the repository's
tags: up to 0.31.1 every message and delta carries ``content``, ``reasoning`` and ``tool_calls``
(``""``/``[]`` when empty; 0.31.2 keeps only the non-empty ones); before 0.31.0 ``usage`` has no
``prompt_tokens_details``; before 0.32.0 a non-streamed empty ``content`` is left out instead of
``null`` (ff0c1c6d, ml-explore/mlx-lm#1739) and the server assembles text with a token-level stop
matcher rather than the text state machine (the held-back text at a stop is not discarded).
Release dates were not checked (the wheels carry none and the mirror has no 0.32 tags).
"""

from __future__ import annotations

from mockoss.profiles.timeline import Release, Timeline

__all__ = ["MLXLM_TIMELINE"]

MLXLM_TIMELINE = Timeline(
    server="mlx-lm",
    releases=(
        Release("0.32.0", "", "non-streamed content null when empty (#1739); text state machine; checked by tools/mlxlm_diff.py"),
        Release("0.32.1", "", "checked by tools/mlxlm_diff.py: same wire as 0.32.0"),
        Release("0.32.2", "", "the release the profile is read from; checked by tools/mlxlm_diff.py"),
    ),
    changes=(),
)
